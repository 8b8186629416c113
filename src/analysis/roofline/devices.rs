//! Device peaks (compute and memory roofs) from `rules/devices.toml`, chosen from the trace's
//! `deviceProperties` or named by the user.

use super::flops::Precision;
use crate::model::DeviceInfo;
use serde::{Deserialize, Serialize};

const DEVICES_TOML: &str = include_str!("../../rules/devices.toml");

/// One device's dense peaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peaks {
    /// Table key (`H100-SXM`), or `custom`.
    pub key: String,
    /// The device's label (`H100-SXM`).
    pub label: String,
    #[serde(default)]
    /// Words that name it in `deviceProperties` (each list: all of them, lower case).
    pub names: Vec<Vec<String>>,
    #[serde(default)]
    /// Its streaming multiprocessors (compute units), when the table knows them.
    pub sms: Option<i64>,
    /// `major.minor`.
    #[serde(default)]
    pub compute: Option<String>,
    /// Dense bf16/fp16 tensor TFLOP/s.
    pub bf16: f64,
    /// Dense fp8 tensor TFLOP/s (0 = none).
    #[serde(default)]
    pub fp8: f64,
    /// FP32 TFLOP/s (0 = unknown).
    #[serde(default)]
    pub fp32: f64,
    /// HBM bandwidth, TB/s.
    pub hbm: f64,
    /// GPU-to-GPU link bandwidth one way per GPU (NVLink, Infinity Fabric), GB/s: the roof of a
    /// collective's bus bandwidth (0 = unknown).
    #[serde(default)]
    pub link: f64,
}

impl Peaks {
    /// Compute roof (TFLOP/s) for a precision: fp8 falls back to bf16 on devices without fp8,
    /// fp32 to bf16 when unknown (tensor-core TF32 is then the better guess of the two).
    pub fn compute_tflops(&self, p: Precision) -> f64 {
        match p {
            Precision::Fp8 if self.fp8 > 0.0 => self.fp8,
            Precision::Fp32 if self.fp32 > 0.0 => self.fp32,
            _ => self.bf16,
        }
    }
    /// Attainable TFLOP/s at an arithmetic intensity (FLOP/byte): `min(peak, intensity · bandwidth)`.
    pub fn roof(&self, p: Precision, intensity: f64) -> f64 {
        self.compute_tflops(p).min(intensity * self.hbm)
    }
    /// Ridge point (FLOP/byte) where the memory roof meets the compute roof.
    pub fn ridge(&self, p: Precision) -> f64 {
        if self.hbm > 0.0 {
            self.compute_tflops(p) / self.hbm
        } else {
            f64::INFINITY
        }
    }
}

#[derive(Deserialize)]
struct File {
    device: Vec<Peaks>,
}

/// Every device in the built-in table, in file order.
pub fn table() -> Vec<Peaks> {
    toml::from_str::<File>(DEVICES_TOML).map(|f| f.device).unwrap_or_default()
}

/// Picks peaks: `choice` (a table key, or `bf16=…,fp8=…,fp32=…,hbm=…` custom peaks) wins;
/// otherwise the first device of the trace, by name, then by SM count and compute capability.
pub fn select(devices: &[DeviceInfo], choice: Option<&str>) -> Option<Peaks> {
    let table = table();
    if let Some(c) = choice.map(str::trim).filter(|c| !c.is_empty()) {
        if c.contains('=') {
            return custom(c);
        }
        return table.into_iter().find(|d| d.key.eq_ignore_ascii_case(c));
    }
    let dev = devices.first()?;
    let name = dev.name.to_ascii_lowercase();
    if !name.is_empty() {
        let hit = table.iter().find(|d| d.names.iter().any(|all| all.iter().all(|s| name.contains(&s.to_ascii_lowercase()))));
        if let Some(d) = hit {
            return Some(d.clone());
        }
    }
    let cc = format!("{}.{}", dev.compute_major, dev.compute_minor);
    table.into_iter().find(|d| d.sms == Some(dev.num_sms) && d.compute.as_deref() == Some(cc.as_str()))
}

/// Parses `bf16=989,fp8=1979,hbm=3.35` (TFLOP/s and TB/s) into custom peaks.
fn custom(spec: &str) -> Option<Peaks> {
    let mut p = Peaks {
        key: "custom".into(),
        label: format!("custom ({spec})"),
        names: vec![],
        sms: None,
        compute: None,
        bf16: 0.0,
        fp8: 0.0,
        fp32: 0.0,
        hbm: 0.0,
        link: 0.0,
    };
    for part in spec.split(',') {
        let (k, v) = part.split_once('=')?;
        let v: f64 = v.trim().parse().ok()?;
        match k.trim() {
            "bf16" | "fp16" => p.bf16 = v,
            "fp8" => p.fp8 = v,
            "fp32" => p.fp32 = v,
            "hbm" => p.hbm = v,
            "link" => p.link = v,
            _ => return None,
        }
    }
    (p.bf16 > 0.0 && p.hbm > 0.0).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str, sms: i64, major: i64, minor: i64) -> DeviceInfo {
        DeviceInfo { name: name.into(), num_sms: sms, compute_major: major, compute_minor: minor, ..Default::default() }
    }

    #[test]
    fn table_parses_and_picks_by_name_then_sms() {
        assert!(table().len() >= 10);
        assert_eq!(select(&[dev("NVIDIA H100 80GB HBM3", 132, 9, 0)], None).unwrap().key, "H100-SXM");
        assert_eq!(select(&[dev("NVIDIA H800", 132, 9, 0)], None).unwrap().key, "H800");
        // One-way link bandwidth per GPU, the roof of a collective's bus bandwidth.
        assert_eq!(select(&[dev("NVIDIA H100 80GB HBM3", 132, 9, 0)], None).unwrap().link, 450.0);
        assert_eq!(select(&[dev("AMD Instinct MI300X", 304, 9, 4)], None).unwrap().link, 448.0);
        assert_eq!(select(&[dev("NVIDIA H100 PCIe", 114, 9, 0)], None).unwrap().link, 0.0, "unknown: no NVLink bridge said");
        assert_eq!(select(&[dev("NVIDIA B300 SXM6 AC", 148, 10, 3)], None).unwrap().key, "B300");
        assert_eq!(select(&[dev("AMD Instinct MI300X", 304, 9, 4)], None).unwrap().key, "MI300X");
        assert_eq!(select(&[dev("NVIDIA A100-SXM4-80GB", 108, 8, 0)], None).unwrap().key, "A100-80GB");
        assert_eq!(select(&[dev("", 304, 9, 4)], None).unwrap().key, "MI300X");
        assert!(select(&[dev("", 7, 1, 0)], None).is_none());
        assert_eq!(select(&[], Some("b200")).unwrap().hbm, 8.0);
        let c = select(&[], Some("bf16=100,hbm=2")).unwrap();
        assert_eq!(c.ridge(Precision::Bf16), 50.0);
        assert!(select(&[], Some("bf16=x")).is_none());
    }
}
