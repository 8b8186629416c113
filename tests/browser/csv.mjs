// Test helpers independent of the page's code: an RFC 4180 CSV parser and a stored-zip reader.

/** Parses RFC 4180 CSV text into rows of fields. */
export function parseCsv(text) {
  const rows = [];
  let row = [], field = '', i = 0, quoted = false;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i += 2; continue; }
      if (c === '"') { quoted = false; i++; continue; }
      field += c; i++; continue;
    }
    if (c === '"') { quoted = true; i++; continue; }
    if (c === ',') { row.push(field); field = ''; i++; continue; }
    if (c === '\r' && text[i + 1] === '\n') { row.push(field); rows.push(row); row = []; field = ''; i += 2; continue; }
    if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; i++; continue; }
    field += c; i++;
  }
  if (field !== '' || row.length) { row.push(field); rows.push(row); }
  return rows;
}

/** Reads the entries of a zip with stored (uncompressed) entries: Map name → Buffer. */
export function readStoredZip(buf) {
  const out = new Map();
  let o = 0;
  while (o + 30 <= buf.length && buf.readUInt32LE(o) === 0x04034b50) {
    const method = buf.readUInt16LE(o + 8);
    const size = buf.readUInt32LE(o + 18);
    const nameLen = buf.readUInt16LE(o + 26);
    const extraLen = buf.readUInt16LE(o + 28);
    if (method !== 0) throw new Error('compressed zip entry');
    const name = buf.subarray(o + 30, o + 30 + nameLen).toString('utf8');
    const start = o + 30 + nameLen + extraLen;
    out.set(name, buf.subarray(start, start + size));
    o = start + size;
  }
  return out;
}
