// Which view shows which table (by table name, so tables added to the core later find a home).

/** The views, in tab order. */
export const VIEWS = ['overview', 'categories', 'phases', 'layers', 'ops', 'kernels', 'report', 'compare'];

/** The view a table belongs to. */
export function viewOfTable(name) {
  if (/^roofline/.test(name)) return 'report';
  if (/^compare/.test(name)) return 'compare';
  if (/timeline|idle|summary_all|^trace/.test(name)) return 'overview';
  if (/categor|famil/.test(name)) return 'categories';
  if (/phase|pass|prefill|decode/.test(name)) return 'phases';
  if (/layer/.test(name)) return 'layers';
  if (/^ops|^op_|_ops$/.test(name)) return 'ops';
  if (/kernel/.test(name)) return 'kernels';
  return 'overview';
}

/** Reads `#view/arg1/arg2` from the URL. */
export function readHash() {
  const parts = decodeURIComponent(location.hash.replace(/^#/, '')).split('/').filter(Boolean);
  const view = VIEWS.includes(parts[0]) ? parts[0] : 'overview';
  return { view, args: parts.slice(1) };
}

/** Writes the view (and args) into the URL hash without adding history noise. */
export function writeHash(view, args = []) {
  const h = '#' + [view, ...args].map(encodeURIComponent).join('/');
  if (location.hash !== h) history.replaceState(null, '', h);
}
