//! What a file that is not a trace looks like, so the error can say so ("a zip archive", "an
//! SQLite database") instead of only "not JSON".

/// The first bytes of every SQLite database (an Nsight Systems export is one).
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Whether `bytes` start like an SQLite database.
pub fn looks_like_sqlite(bytes: &[u8]) -> bool {
    bytes.starts_with(SQLITE_MAGIC)
}

/// The message for input whose first non-blank bytes are `start` and that is neither Chrome-trace
/// JSON nor a JAX `XSpace`.
pub fn not_a_trace(start: &[u8]) -> &'static str {
    const KNOWN: &[(&[u8], &str)] = &[
        (b"PK\x03\x04", "the input is a zip archive, not a trace: unzip it and open the .json or .json.gz inside"),
        (SQLITE_MAGIC, "the input is an SQLite database (an Nsight Systems export?), not a Chrome-trace JSON"),
        (b"\x28\xb5\x2f\xfd", "the input is zstd-compressed: decompress it first (zstd -d), or give the .json / .json.gz"),
        (b"BZh", "the input is bzip2-compressed: decompress it first (bunzip2), or give the .json / .json.gz"),
        (b"\xfd7zXZ", "the input is xz-compressed: decompress it first (unxz), or give the .json / .json.gz"),
        (b"\x80", "the input looks like a Python pickle, not a trace"),
        (b"<", "the input is HTML or XML (a web page saved instead of the trace?), not a trace"),
        (b"\x0a", "the input looks like protobuf but not a JAX XSpace (a Perfetto .pftrace? Perfetto UI opens it)"),
    ];
    KNOWN
        .iter()
        .find(|(magic, _)| start.starts_with(magic))
        .map_or("the input is neither Chrome-trace JSON nor a JAX XSpace (expected '{' or '[' at the start)", |(_, what)| what)
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_what_the_input_looks_like() {
        assert!(super::not_a_trace(b"PK\x03\x04rest").contains("zip"));
        assert!(super::not_a_trace(b"SQLite format 3\0").contains("SQLite"));
        assert!(super::not_a_trace(b"<!DOCTYPE html>").contains("HTML"));
        assert!(super::not_a_trace(b"hello").contains("neither Chrome-trace JSON nor a JAX XSpace"));
    }
}
