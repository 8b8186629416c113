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

/**
 * Reads any zip (stored or deflated entries) through its central directory: Map name → Buffer.
 * Throws on a malformed archive or a CRC mismatch, so it doubles as a validity check.
 */
export async function readZip(buf) {
  const zlib = await import('node:zlib');
  let end = -1;
  for (let o = buf.length - 22; o >= Math.max(0, buf.length - 22 - 65535); o--) {
    if (buf.readUInt32LE(o) === 0x06054b50) { end = o; break; }
  }
  if (end < 0) throw new Error('no end of central directory');
  const entries = buf.readUInt16LE(end + 10);
  let o = buf.readUInt32LE(end + 16);
  const out = new Map();
  for (let k = 0; k < entries; k++) {
    if (buf.readUInt32LE(o) !== 0x02014b50) throw new Error('bad central directory entry');
    const method = buf.readUInt16LE(o + 10);
    const crc = buf.readUInt32LE(o + 16);
    const packed = buf.readUInt32LE(o + 20), size = buf.readUInt32LE(o + 24);
    const nameLen = buf.readUInt16LE(o + 28), extraLen = buf.readUInt16LE(o + 30), commentLen = buf.readUInt16LE(o + 32);
    const local = buf.readUInt32LE(o + 42);
    const name = buf.subarray(o + 46, o + 46 + nameLen).toString('utf8');
    if (buf.readUInt32LE(local) !== 0x04034b50) throw new Error(`bad local header for ${name}`);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const body = buf.subarray(start, start + packed);
    const data = method === 0 ? body : method === 8 ? zlib.inflateRawSync(body) : null;
    if (!data) throw new Error(`${name}: unsupported compression ${method}`);
    if (data.length !== size) throw new Error(`${name}: size ${data.length}, directory says ${size}`);
    if (zlib.crc32 && zlib.crc32(data) >>> 0 !== crc) throw new Error(`${name}: CRC mismatch`);
    out.set(name, data);
    o += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}
