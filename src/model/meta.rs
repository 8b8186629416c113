//! Trace-level facts: devices, vendor, rank, and the other top-level keys.

use serde::Serialize;

/// The accelerator's vendor, from the trace header.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// NVIDIA (CUDA).
    Nvidia,
    /// AMD (ROCm/HIP).
    Amd,
    /// Google (TPU: XLA ops on `/device:TPU:N` planes).
    Google,
    /// Huawei (Ascend NPU: torch_npu's `Ascend Hardware` timeline).
    Huawei,
    /// Meta (MTIA: `mtia_ccp_events` on a process per device).
    Meta,
    #[default]
    /// Neither could be told from the trace.
    Unknown,
}

/// One entry of `deviceProperties`.
#[derive(Debug, Default, Clone, Serialize)]
pub struct DeviceInfo {
    /// Device index.
    pub id: i64,
    /// Device name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Global memory, bytes.
    pub total_global_mem: u64,
    /// Compute capability, major (NVIDIA) or gfx major (AMD).
    pub compute_major: i64,
    /// Compute capability, minor.
    pub compute_minor: i64,
    /// Streaming multiprocessors (compute units on AMD).
    pub num_sms: i64,
    /// Warp (wavefront) size.
    pub warp_size: i64,
}

impl DeviceInfo {
    /// An NVIDIA GPU by what CUPTI writes: a 32-wide warp or an NVIDIA product name.
    fn looks_nvidia(&self) -> bool {
        let n = self.name.to_ascii_lowercase();
        self.warp_size == 32 || ["nvidia", "tesla", "geforce", "quadro"].iter().any(|v| n.contains(v))
    }
}

/// Whether a top-level string value is a secret: under a secret-looking key, or shaped like one.
fn is_secret(key: &str, value: &str) -> bool {
    use crate::support::secrets::{find, holds_value, key_looks_secret};
    (key_looks_secret(key) && holds_value(value)) || find(value.as_bytes()).is_some()
}

/// Header facts of a trace.
#[derive(Debug, Default, Clone, Serialize)]
pub struct TraceMeta {
    /// `deviceProperties`, one per GPU.
    pub devices: Vec<DeviceInfo>,
    /// The vendor, from device names and runtime calls.
    pub vendor: Vendor,
    /// `distributedInfo.rank` / `world_size` when present.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<i64>,
    /// `baseTimeNanoseconds`, when the trace records it.
    pub base_time_ns: Option<i64>,
    /// True when the header says `with_stack` or python frames are present.
    pub with_stack: bool,
    /// Whether the profile recorded shapes (ops carry `Input Dims`).
    pub record_shapes: bool,
    /// Whether the input was the object form (`{"traceEvents": ...}`) or a bare array.
    pub object_form: bool,
    /// Other top-level keys with scalar values (versions, trace id...), as text; the value of a
    /// secret-looking key is [`crate::support::secrets::REDACTED`]. Numbers and switches inside
    /// top-level objects follow under dotted keys (`vllm_config.scheduler_config.max_num_seqs`).
    pub other: Vec<(String, String)>,
    /// Where the header holds secret-looking metadata (`metadata.env.HF_TOKEN`): the paths of
    /// values under a key named like a credential, or shaped like one. Never the values.
    pub secret_keys: Vec<String>,
    /// CUDA graph replays an Nsight Systems export recorded whole, when it recorded any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whole_graph_replays: Option<WholeGraphReplays>,
    /// How many `other` entries came from inside top-level objects.
    #[serde(skip)]
    settings: usize,
}

/// CUDA graph replays recorded whole (Nsight Systems' `--cuda-graph-trace=graph`, its default):
/// each is one GPU event standing for kernels the export does not hold.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WholeGraphReplays {
    /// How many replays.
    pub count: u64,
    /// Their summed duration (ns).
    pub ns: u64,
}

/// Levels of a top-level object whose numbers are kept as settings.
pub const MAX_SETTING_DEPTH: usize = 4;
/// Settings kept from inside top-level objects, at most.
pub const MAX_SETTINGS: usize = 512;

impl TraceMeta {
    /// Reads a top-level key/value pair of the trace object.
    pub fn absorb(&mut self, key: &str, value: &serde_json::Value) {
        use crate::support::secrets::secret_paths;
        use serde_json::Value;
        match value {
            Value::String(s) if is_secret(key, s) => self.secret_keys.push(key.to_string()),
            _ => secret_paths(key, value, &mut self.secret_keys),
        }
        match key {
            "deviceProperties" => {
                if let Value::Array(items) = value {
                    for d in items {
                        let int = |k: &str| d.get(k).and_then(Value::as_i64).unwrap_or(0);
                        self.devices.push(DeviceInfo {
                            id: int("id"),
                            name: d.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
                            total_global_mem: d.get("totalGlobalMem").and_then(Value::as_u64).unwrap_or(0),
                            compute_major: int("computeMajor"),
                            compute_minor: int("computeMinor"),
                            num_sms: int("numSms"),
                            warp_size: int("warpSize"),
                        });
                    }
                    let says = |v: &str| {
                        items.iter().any(|d| d.get("vendor").and_then(Value::as_str).is_some_and(|s| s.eq_ignore_ascii_case(v)))
                    };
                    if says("google") {
                        self.vendor = Vendor::Google;
                    } else if self.devices.iter().any(|d| d.warp_size == 64) {
                        self.vendor = Vendor::Amd;
                    } else if self.vendor == Vendor::Unknown && self.devices.iter().any(|d| d.looks_nvidia()) {
                        // Not every accelerator is a GPU of one of two vendors (Meta's MTIA
                        // writes `ARTEMIS` with no warp size): NVIDIA only when it says so.
                        self.vendor = Vendor::Nvidia;
                    }
                }
            }
            "distributedInfo" => {
                self.rank = value.get("rank").and_then(Value::as_i64);
                self.world_size = value.get("world_size").and_then(Value::as_i64);
            }
            "baseTimeNanoseconds" => self.base_time_ns = value.as_i64(),
            "roctracer_version" | "hip_runtime_version" | "hip_driver_version" => {
                self.vendor = Vendor::Amd;
                self.push_other(key, value);
            }
            "with_stack" => self.with_stack = value.as_i64().unwrap_or(0) != 0 || value.as_bool() == Some(true),
            "record_shapes" => self.record_shapes = value.as_i64().unwrap_or(0) != 0 || value.as_bool() == Some(true),
            _ => self.push_other(key, value),
        }
    }

    /// The input is an Nsight Systems export of `schema_version`: Nsight Systems traces CUDA, so
    /// its exports are NVIDIA's; the version is kept as the setting `nsys.EXPORT_SCHEMA_VERSION`.
    pub fn nsight_export(&mut self, schema_version: &str) {
        if self.vendor == Vendor::Unknown {
            self.vendor = Vendor::Nvidia;
        }
        self.other.push(("nsys.EXPORT_SCHEMA_VERSION".to_string(), schema_version.to_string()));
    }

    fn push_other(&mut self, key: &str, value: &serde_json::Value) {
        let text = match value {
            serde_json::Value::String(s) if is_secret(key, s) => crate::support::secrets::REDACTED.to_string(),
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Object(_) => return self.push_settings(key, value, 1),
            serde_json::Value::Array(_) => return,
            other => other.to_string(),
        };
        self.other.push((key.to_string(), text));
    }

    /// The numbers and switches inside a top-level object (an engine's configuration written with
    /// `prof.add_metadata_json`: `vllm_config.scheduler_config.max_num_seqs`), as `other` entries
    /// with dotted keys, [`MAX_SETTING_DEPTH`] levels and [`MAX_SETTINGS`] entries at most.
    /// Strings are left out: they are where credentials hide.
    fn push_settings(&mut self, path: &str, value: &serde_json::Value, depth: usize) {
        let serde_json::Value::Object(fields) = value else { return };
        for (k, v) in fields {
            if self.settings >= MAX_SETTINGS {
                return;
            }
            let key = format!("{path}.{k}");
            match v {
                serde_json::Value::Number(_) | serde_json::Value::Bool(_) => {
                    self.settings += 1;
                    self.other.push((key, v.to_string()));
                }
                serde_json::Value::Object(_) if depth < MAX_SETTING_DEPTH => self.push_settings(&key, v, depth + 1),
                _ => {}
            }
        }
    }

    /// Adds header facts read by another reader of the same document.
    pub fn merge(&mut self, other: TraceMeta) {
        if self.devices.is_empty() {
            self.devices = other.devices;
        }
        if (self.vendor == Vendor::Unknown || other.vendor == Vendor::Amd) && other.vendor != Vendor::Unknown {
            self.vendor = other.vendor;
        }
        self.rank = self.rank.or(other.rank);
        self.world_size = self.world_size.or(other.world_size);
        self.base_time_ns = self.base_time_ns.or(other.base_time_ns);
        self.whole_graph_replays = self.whole_graph_replays.or(other.whole_graph_replays);
        self.with_stack |= other.with_stack;
        self.record_shapes |= other.record_shapes;
        self.other.extend(other.other);
        for k in other.secret_keys {
            if !self.secret_keys.contains(&k) {
                self.secret_keys.push(k);
            }
        }
    }

    /// The value of the header setting `key` (a top-level scalar or a dotted setting), as text.
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.other.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// What kind of accelerator the trace's devices are, in a word: `GPU`, `TPU`, `NPU` (Ascend),
    /// `MTIA`; `GPU` when the vendor is unknown (Kineto's own assumption).
    pub fn device_kind(&self) -> &'static str {
        match self.vendor {
            Vendor::Google => "TPU",
            Vendor::Huawei => "NPU",
            Vendor::Meta => "MTIA",
            Vendor::Nvidia | Vendor::Amd | Vendor::Unknown => "GPU",
        }
    }

    /// A short device label: the first device's name, or the vendor.
    pub fn device_label(&self) -> String {
        match self.devices.iter().find(|d| !d.name.is_empty()) {
            Some(d) => d.name.clone(),
            None => match self.vendor {
                Vendor::Amd => "AMD GPU".into(),
                Vendor::Nvidia => "NVIDIA GPU".into(),
                Vendor::Google => "Google TPU".into(),
                Vendor::Huawei => "Ascend NPU".into(),
                Vendor::Meta => "Meta MTIA".into(),
                Vendor::Unknown => "unknown GPU".into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_inside_a_configuration_object_are_kept_by_path_and_its_strings_are_not() {
        let mut m = TraceMeta::default();
        // A made-up token, assembled here so no scanner mistakes the source for a leak.
        let token = format!("hf_{}", "abcdefghijklmnopqrstuvwxyz0123456789");
        let config = serde_json::json!({
            "scheduler_config": { "max_num_seqs": 256, "chunked_prefill": true, "policy": "fcfs" },
            "hf_token": token,
        });
        m.absorb("vllm_config", &config);
        assert!(m.other.contains(&("vllm_config.scheduler_config.max_num_seqs".into(), "256".into())));
        assert!(m.other.contains(&("vllm_config.scheduler_config.chunked_prefill".into(), "true".into())));
        assert!(m.other.iter().all(|(_, v)| !v.contains("hf_") && v != "\"fcfs\""), "{:?}", m.other);
        assert_eq!(m.secret_keys.len(), 1, "the token is found, never kept: {:?}", m.secret_keys);
    }
}
