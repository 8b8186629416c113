// Downloads made in the browser (Blob + object URL): nothing leaves the machine.
import { zipStore } from './zip.js';

/** Saves `data` (string or Uint8Array) as a file named `name`. */
export function saveFile(name, data, type = 'text/csv;charset=utf-8') {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Saves several files as one uncompressed zip. files: [{name, text}]. */
export function saveZip(name, files) {
  const enc = new TextEncoder();
  saveFile(name, zipStore(files.map((f) => ({ name: f.name, data: enc.encode(f.text) }))), 'application/zip');
}
