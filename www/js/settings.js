// The page's settings, made from the options the core declares (`declared_options`, the same
// declaration the CLI's flags, MCP's schema and the Python keywords are made from): the phase
// method in the header, and the comparison's fields in the compare view.

/** @typedef {import('./worker-ops.js').DeclaredOption} DeclaredOption */
/** @typedef {import('./worker-ops.js').DeclaredOptions} DeclaredOptions */

/**
 * The comparison's settings as the core's defaults give them (labels empty: the core's own).
 * @param {DeclaredOption[]} declared
 * @returns {Record<string, any>}
 */
export function compareDefaults(declared) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const d of declared) out[d.field] = d.default ?? '';
  return out;
}

/**
 * The comparison's fields the page shows, one per option a user sets (a face-internal one, the
 * files' names, is the page's to set): `input` is `text`, `number` or `select`.
 * @param {DeclaredOption[]} declared
 * @returns {{field: string, label: string, input: 'text'|'number'|'select', title: string, min?: number}[]}
 */
export function compareFields(declared) {
  return declared
    .filter((d) => d.flags.length > 0 && d.kind !== 'internal')
    .map((d) => {
      const input = d.kind === 'choice' ? 'select' : d.kind === 'text' ? 'text' : 'number';
      const min = d.kind === 'count' || d.kind === 'share' ? 0 : d.field === 'ratio_threshold' ? 1 : undefined;
      return { field: d.field, label: d.field.replaceAll('_', ' '), input, title: d.doc, ...(min === undefined ? {} : { min }) };
    });
}

/**
 * The choices of a choice option, its default first selected: `[{value, selected}]`.
 * @param {DeclaredOption} d
 * @param {string} [current] the value chosen so far (else the default)
 */
export function choicesOf(d, current) {
  const chosen = current || d.default;
  return (d.choices || []).map((value) => ({ value, selected: value === chosen }));
}

/**
 * The declared option `field` of a list, or undefined.
 * @param {DeclaredOption[]} declared
 * @param {string} field
 */
export function declaredField(declared, field) {
  return declared.find((d) => d.field === field);
}
