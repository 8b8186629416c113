// The page's status line: its state, the error box, the input's warnings and notes, progress.
// Text only: whatever comes from a trace goes in as textContent.

/** The page's element with that id (any: the page knows what each id is). @type {(id: string) => any} */
export const $ = (id) => document.getElementById(id);

/** Sets the page's state (`body[data-state]`: empty, loading, ready, error, cancelled). */
export function setState(state) {
  document.body.dataset.state = state;
}

/** Shows `message` in the error box, or hides it when empty. */
export function showError(message) {
  const box = $('error');
  box.textContent = message;
  box.hidden = !message;
}

/**
 * The banner for secret-looking metadata: the key paths (never the values), as the CLI's WARNING says it.
 * @param {string[]} keys
 */
export function secretWarning(keys) {
  const shown = keys.slice(0, 5).join(', ');
  const more = keys.length > 5 ? ` and ${keys.length - 5} more` : '';
  return `Warning: the trace holds secret-looking metadata (${shown}${more}): redact it before sharing the trace itself (traceprism's outputs never copy it)`;
}

/**
 * The banner for the health report's warnings other than truncation and secrets (they have their
 * own): one line per problem, as the CLI's WARNING lines say it.
 * @param {{check: string, status: string, found: string, fix: string}[]} health
 */
export function healthWarning(health) {
  return health
    .filter((c) => c.status === 'warning' && c.check !== 'truncation' && c.check !== 'secret_metadata')
    .map((c) => `Warning: ${c.check}: ${c.found}${c.fix ? ` (fix: ${c.fix})` : ''}`)
    .join('\n');
}

/** Shows how the input ended (a truncation warning, notes), or hides both when `summary` is null. */
export function showInputStatus(summary) {
  const input = (summary && summary.input) || {};
  const warning = $('input-warning');
  warning.textContent = input.truncation ? `Warning: ${input.truncation.message}` : '';
  warning.hidden = !input.truncation;
  const secrets = (summary && summary.secret_metadata) || [];
  const secretBox = $('input-secrets');
  secretBox.textContent = secrets.length ? secretWarning(secrets) : '';
  secretBox.hidden = !secrets.length;
  const healthBox = $('input-health');
  healthBox.textContent = healthWarning((summary && summary.health) || []);
  healthBox.hidden = !healthBox.textContent;
  const note = $('input-note');
  note.textContent = (input.notes || []).map((/** @type {string} */ n) => `Note: ${n}`).join('\n');
  note.hidden = !(input.notes || []).length;
  // Graph replays: how much was replayed and what gave it ops (the CLI's `graphs` line).
  const graphs = $('input-graphs');
  graphs.textContent = summary && summary.graph_replays ? `Graphs: ${summary.graph_replays.note}` : '';
  graphs.hidden = !graphs.textContent;
}

/** Shows or hides the progress bar with a fraction and a line of text. */
export function setProgress(visible, fraction = 0, text = '') {
  $('progress').hidden = !visible;
  $('progress-bar').value = fraction;
  $('progress-text').textContent = text;
}
