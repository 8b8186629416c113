// What a file is, from its first bytes: the page sends a JAX profile (protobuf XSpace) down the
// one-worker path, since the parallel readers split JSON text, and an Nsight Systems export
// (SQLite) through the SQLite module.

/** The first 16 bytes of every SQLite database file. */
const SQLITE_MAGIC = 'SQLite format 3\0';

/**
 * Whether `head` (the file's first bytes) is an SQLite database's. Mirrors the core's
 * `looks_like_sqlite`.
 * @param {Uint8Array} head
 */
export function looksLikeSqlite(head) {
  if (head.length < SQLITE_MAGIC.length) return false;
  for (let i = 0; i < SQLITE_MAGIC.length; i++) if (head[i] !== SQLITE_MAGIC.charCodeAt(i)) return false;
  return true;
}

/**
 * Reads a protobuf varint at `at`; returns `[value, next]` or null when the bytes end first.
 * @param {Uint8Array} b
 * @param {number} at
 * @returns {[number, number] | null}
 */
function varint(b, at) {
  let value = 0;
  for (let shift = 0, i = at; i < b.length && shift < 35; shift += 7, i++) {
    value += (b[i] & 0x7f) * 2 ** shift;
    if (b[i] < 0x80) return [value, i + 1];
  }
  return null;
}

/**
 * Whether `head` (the file's first bytes) starts like a serialized XSpace: field 1 (a plane,
 * length-delimited) whose first fields are its id and a name starting with `/`. Mirrors the
 * core's `looks_like_xspace`.
 * @param {Uint8Array} head
 */
export function looksLikeXSpace(head) {
  if (head[0] !== 0x0a) return false;
  let v = varint(head, 1);
  if (!v) return false;
  let at = v[1];
  for (let k = 0; k < 2; k++) {
    const key = head[at];
    if (key === 0x08) {
      v = varint(head, at + 1);
      if (!v) return false;
      at = v[1];
    } else if (key === 0x12) {
      v = varint(head, at + 1);
      return !!v && head[v[1]] === 0x2f;
    } else {
      return false;
    }
  }
  return false;
}
