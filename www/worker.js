// The Web Worker that owns the wasm core. The page never touches the core directly: it sends
// requests `{id, op, ...}` and gets back `{id, value}` or `{id, error}`.
//
// ops: start {options} · push {buffer} → progress · finish → {summary, tables} ·
//      table {name} · csv {name} · rollup · memory
import init, { Analyzer } from './pkg/traceprism.js';

const ready = init();
let analyzer = null;

function memoryBytes() {
  try {
    return Analyzer.memory_bytes();
  } catch {
    return null;
  }
}

const ops = {
  start({ options }) {
    if (analyzer) analyzer.free();
    analyzer = new Analyzer(JSON.stringify(options || {}));
    return null;
  },
  push({ buffer }) {
    analyzer.push(new Uint8Array(buffer));
    return analyzer.progress();
  },
  finish() {
    const summary = analyzer.finish();
    return { summary, tables: analyzer.table_names(), memory: memoryBytes() };
  },
  table({ name }) {
    return analyzer.table(name);
  },
  csv({ name }) {
    return analyzer.csv(name);
  },
  rollup() {
    return analyzer.rollup();
  },
  memory() {
    return memoryBytes();
  },
};

self.onmessage = async (event) => {
  const { id, op } = event.data;
  try {
    await ready;
    if (!ops[op]) throw new Error(`unknown request ${op}`);
    if (op !== 'start' && !analyzer) throw new Error('no trace loaded');
    const value = ops[op](event.data);
    self.postMessage({ id, value });
  } catch (err) {
    // Errors from the core arrive as JS Errors carrying the core's message; a wasm trap
    // (RuntimeError) leaves the module unusable, so say so.
    const trap = err instanceof WebAssembly.RuntimeError;
    const message = (err && err.message) || String(err);
    self.postMessage({ id, error: trap ? `internal error in the analyzer (${message}); please report it` : message });
  }
};
