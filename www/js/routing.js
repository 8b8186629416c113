// The page's views and their addresses (#view/args?params). Which view shows a table is declared
// by the core with the table (report::TABLES), not guessed here from its name.

/** The views, in tab order. */
export const VIEWS = ['timeline', 'overview', 'categories', 'phases', 'layers', 'ops', 'kernels', 'report', 'code', 'compare', 'ranks', 'watch', 'rules'];

/** The view shown first after a trace loads. */
export const FIRST_VIEW = 'timeline';

/**
 * Parses `#view/arg1/arg2?key=value&...`: the view, its path arguments and its parameters.
 * @param {string} hash
 * @returns {{view: string, args: string[], params: Record<string, string>}}
 */
export function parseHash(hash) {
  const [path, query = ''] = hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter(Boolean).map((p) => decodeURIComponent(p));
  const view = VIEWS.includes(parts[0]) ? parts[0] : FIRST_VIEW;
  return { view, args: parts.slice(1), params: Object.fromEntries(new URLSearchParams(query)) };
}

/**
 * The hash of a view, its arguments and parameters (the inverse of {@link parseHash}).
 * @param {string} view
 * @param {string[]} [args]
 * @param {Record<string, string>} [params]
 */
export function formatHash(view, args = [], params = {}) {
  const query = new URLSearchParams(params).toString();
  return '#' + [view, ...args].map(encodeURIComponent).join('/') + (query ? `?${query}` : '');
}

/** Reads the view, arguments and parameters from the URL. */
export function readHash() {
  return parseHash(location.hash);
}

/**
 * Writes the view (and args, params) into the URL hash: replacing the current entry, or, with
 * `record`, as a new history entry (Back returns to the previous window).
 */
export function writeHash(view, args = [], params = {}, record = false) {
  const h = formatHash(view, args, params);
  if (location.hash === h) return;
  if (record) history.pushState(null, '', h);
  else history.replaceState(null, '', h);
}
