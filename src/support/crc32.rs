//! CRC-32 (ISO-HDLC, the one gzip and ZIP use).

/// The CRC-32 of `data` (zlib-rs's, already the inflater's: it uses PCLMULQDQ where present).
pub fn crc32(data: &[u8]) -> u32 {
    zlib_rs::crc32::crc32(0, data)
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_value() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(super::crc32(b"123456789"), 0xCBF4_3926);
    }
}
