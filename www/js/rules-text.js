// The user's category rules in the page: where they are kept, and which line an error names.

/** localStorage key of the user's rules (TOML text, the CLI's `--rules` format). */
export const RULES_KEY = 'traceprism.categoryRules';

/** The user's category rules kept in this browser ('' if none, or when storage is off). */
export function userRules() {
  try {
    return localStorage.getItem(RULES_KEY) || '';
  } catch {
    return '';
  }
}

/**
 * The 1-based line of `text` that the core's error `message` is about: the TOML parser's
 * `line N`, or the header of the N-th (0-based) user `[[rule]]`, `[[category]]` or `[[sequence]]`
 * the message names. Null when the message names no place.
 * @param {string} message
 * @param {string} text
 * @returns {number | null}
 */
export function errorLine(message, text) {
  const toml = message.match(/at line (\d+)/);
  if (toml) return Number(toml[1]);
  const item = message.match(/user (rule|category|sequence) (\d+)/);
  if (!item) return null;
  const header = `[[${item[1]}]]`;
  let seen = -1;
  const lines = text.split('\n');
  for (let k = 0; k < lines.length; k++) {
    if (lines[k].trim().startsWith(header) && ++seen === Number(item[2])) return k + 1;
  }
  return null;
}

/**
 * How many rules, categories and sequences a rules text declares (by their headers).
 * @param {string} text
 */
export function countRules(text) {
  const count = (h) => text.split('\n').filter((l) => l.trim().startsWith(h)).length;
  return { rules: count('[[rule]]'), categories: count('[[category]]'), sequences: count('[[sequence]]') };
}
