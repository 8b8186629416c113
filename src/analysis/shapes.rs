//! Reads tensor shapes from a CPU op's `Input Dims` text (kept verbatim in the model).

/// Parses `Input Dims` JSON text (`[[4, 512], [2048, 16], []]`) into one dims list per input.
/// Inputs that are tensor lists or scalars become empty lists. Returns an empty vector on bad text.
pub fn parse_dims(text: &str) -> Vec<Vec<i64>> {
    let Ok(serde_json::Value::Array(inputs)) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    inputs
        .iter()
        .map(|input| match input {
            serde_json::Value::Array(dims) => dims.iter().filter_map(|d| d.as_i64()).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// Parses `Input type` JSON text (`["c10::BFloat16", "float"]`) into strings.
pub fn parse_types(text: &str) -> Vec<String> {
    serde_json::from_str::<Vec<serde_json::Value>>(text)
        .map(|v| v.into_iter().map(|x| x.as_str().unwrap_or("").to_string()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_real_input_dims() {
        assert_eq!(
            parse_dims("[[32000, 2048], [4, 512], [], [], []]"),
            vec![vec![32000, 2048], vec![4, 512], vec![], vec![], vec![]]
        );
        assert_eq!(parse_dims("[[[1, 2], [3]], [5]]"), vec![vec![], vec![5]]);
        assert!(parse_dims("not json").is_empty());
        assert_eq!(parse_types(r#"["c10::BFloat16", "Scalar"]"#), vec!["c10::BFloat16", "Scalar"]);
    }
}
