//! Ids as JavaScript can hold them.

/// Largest magnitude a JavaScript number holds exactly.
const JS_SAFE: u64 = 1 << 53;

/// Serializes an id (a process, thread, device or stream number) as an integer when a
/// JavaScript number holds it exactly, else as the nearest float: a JAX profile's host threads
/// carry 64-bit hashes, which the worker's conversion would refuse, and the page only prints them.
pub fn js_safe<S: serde::Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
    if v.unsigned_abs() <= JS_SAFE {
        s.serialize_i64(*v)
    } else {
        s.serialize_f64(*v as f64)
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize)]
    struct Id(#[serde(serialize_with = "super::js_safe")] i64);

    #[test]
    fn small_ids_stay_integers_large_ones_become_floats() {
        assert_eq!(serde_json::to_string(&Id(7)).unwrap(), "7");
        assert_eq!(serde_json::to_string(&Id(-1472503042444199177)).unwrap(), "-1.4725030424441992e+18");
    }
}
