// Number and name formatting for display. CSV export never goes through here: it comes from the core.

/** Formats a cell like the core's CSV text: integers as is, floats with at most 3 decimals. */
export function cellText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return formatNumber(v);
  return String(v);
}

/** At most 3 decimals, trailing zeros dropped (the core's `format_float`). */
export function formatNumber(v) {
  if (!Number.isFinite(v)) return '';
  if (Number.isInteger(v)) return String(v);
  let s = v.toFixed(3).replace(/0+$/, '').replace(/\.$/, '');
  return s === '-0' ? '0' : s;
}

/** A duration in µs, scaled to a readable unit. */
export function formatUs(us) {
  if (us === null || us === undefined || !Number.isFinite(us)) return '—';
  const a = Math.abs(us);
  if (a >= 1e6) return `${(us / 1e6).toFixed(3)} s`;
  if (a >= 1e3) return `${(us / 1e3).toFixed(3)} ms`;
  return `${us.toFixed(3)} µs`;
}

/** Thousands-grouped integer. */
export function formatCount(n) {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—';
}

/** Bytes as KB/MB/GB. */
export function formatBytes(b) {
  if (!Number.isFinite(b)) return '—';
  const units = ['B', 'KB', 'MB', 'GB'];
  let i = 0;
  while (b >= 1024 && i < units.length - 1) {
    b /= 1024;
    i++;
  }
  return `${b.toFixed(i ? 1 : 0)} ${units[i]}`;
}

/**
 * Shortens a demangled C++ kernel name for display: drops the return type, template arguments
 * and parameter list (`void at::native::foo<float, 4>(int, ...)` → `at::native::foo<…>`).
 * The full name stays available on hover.
 */
export function shortKernelName(name) {
  if (typeof name !== 'string' || name.length <= 60) return name;
  let s = name.replace(/^(void|std::enable_if<.*?>::type)\s+/, '').replace(/\(anonymous namespace\)/g, '{anon}');
  let out = '';
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '<') {
      if (depth === 0) out += '<…>';
      depth++;
    } else if (c === '>' && depth > 0) {
      depth--;
    } else if (c === '(' && depth === 0) {
      break;
    } else if (depth === 0) {
      out += c;
    }
  }
  out = out.trim();
  if (!out) out = s;
  return out.length > 120 ? out.slice(0, 117) + '…' : out;
}
