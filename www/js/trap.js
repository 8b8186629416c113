// What to say when the wasm core traps (a RuntimeError: the module cannot go on). A trap right
// after an allocation failed is the tab's memory ceiling, not a bug: the user is told the figures
// and that the CLI reads the trace.
import { formatBytes } from './format.js';

/** The most memory a wasm32 module can address. */
export const WASM_MAX_BYTES = 4 * 2 ** 30;

/**
 * The message for a trap of the core.
 * @param {string} message the RuntimeError's message
 * @param {number} failedBytes bytes of the allocation that failed (0: none did)
 * @param {number|null} memoryBytes the module's memory when it trapped
 * @param {number|null} fileBytes the size of the trace being read, when known
 * @returns {string}
 */
export function trapMessage(message, failedBytes, memoryBytes, fileBytes) {
  if (!(failedBytes > 0)) return `internal error in the analyzer (${message}); please report it`;
  const file = fileBytes ? `This ${formatBytes(fileBytes)} trace` : 'This trace';
  const held = memoryBytes ? `, holding ${formatBytes(memoryBytes)}` : '';
  return `${file} is too large for a browser tab: the analyzer asked for ${formatBytes(failedBytes)} more${held}, past what the tab gives it (WebAssembly's limit is ${formatBytes(WASM_MAX_BYTES)}). The traceprism command-line tool reads it: traceprism summary <file>. The page is ready for another trace.`;
}
