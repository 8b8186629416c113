//! Meta's MTIA (issue 62): two real traces from HTA's test data
//! (`tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz`, an inference service on an
//! `ARTEMIS` device, and `tests/data/mtia_trace_single_rank/mtia_rank_0.json.gz`, a training step
//! with no `deviceProperties`). The device's work is `mtia_ccp_events` on a process per device
//! (`MTIA N`), each event on its stream's thread with the `correlation` of its `mtia_runtime`
//! call. Every count here is taken from the raw JSON with serde_json.

use crate::common::*;
use std::collections::HashSet;
use traceprism::model::{GpuKind, Vendor, WarningKind};

const INFERENCE: &str = "mtia_inference_hta.json.gz";
const TRAINING: &str = "mtia_train_single_rank_hta.json.gz";

/// Raw facts of an MTIA trace: (kernels, DMA transfers, their bytes, kernels whose correlation a
/// runtime call carries, stream waits and records).
fn raw(name: &str) -> (usize, usize, i64, usize, usize) {
    let doc: serde_json::Value = serde_json::from_slice(&plain_fixture(name)).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let runtime: HashSet<i64> =
        events.iter().filter(|e| e["cat"] == "mtia_runtime").filter_map(|e| e["args"]["correlation"].as_i64()).collect();
    let device: Vec<&serde_json::Value> = events.iter().filter(|e| e["cat"] == "mtia_ccp_events" && e["ph"] == "X").collect();
    let waits = device.iter().filter(|e| e["name"] == "event_wait" || e["name"] == "event_record").count();
    let dma: Vec<_> = device.iter().filter(|e| e["name"] == "dma_request").collect();
    let bytes = dma.iter().filter_map(|e| e["args"]["size"].as_i64()).sum();
    let kernels: Vec<_> =
        device.iter().filter(|e| !matches!(e["name"].as_str(), Some("dma_request" | "event_wait" | "event_record"))).collect();
    let linked = kernels.iter().filter(|e| e["args"]["correlation"].as_i64().is_some_and(|c| runtime.contains(&c))).count();
    (kernels.len(), dma.len(), bytes, linked, waits)
}

#[test]
fn mtia_device_events_are_kernels_and_copies_of_a_meta_device() {
    for (name, device) in [(INFERENCE, "ARTEMIS"), (TRAINING, "MTIA 9")] {
        let (kernels, dma, bytes, linked, waits) = raw(name);
        let a = analysis(name);
        let t = &a.trace;
        println!(
            "{name}: {kernels} kernels ({linked} with their runtime call), {dma} DMA transfers, {waits} stream waits/records"
        );
        assert_eq!(t.meta.vendor, Vendor::Meta, "{name}");
        assert_eq!(t.meta.device_label(), device, "{name}");
        assert_eq!(t.meta.device_kind(), "MTIA");
        assert_eq!(t.kernel_rows().count(), kernels, "{name}");
        let copies = (0..t.gpu.len()).filter(|&r| t.gpu.kind[r] == GpuKind::Memcpy).count();
        assert_eq!(copies, dma, "{name}");
        assert_eq!(t.copies.bytes.iter().sum::<i64>(), bytes, "{name}: bytes of the DMA transfers");
        let with_launch = t.kernel_rows().filter(|&r| t.gpu.launch[r] != traceprism::model::NONE).count();
        assert_eq!(with_launch, linked, "{name}: kernels linked to their runtime call");
        // Nothing of the device is left unread; its stream waits are not work.
        assert!(
            !t.warnings.counts.keys().any(|k| matches!(k, WarningKind::UnreadCategory(c) if c.starts_with("mtia"))),
            "{name}"
        );
        assert!(waits > 0 || name == TRAINING);
        assert!(t.gpu.name.iter().all(|&n| !matches!(t.name(n), "event_wait" | "event_record")));
        // The health report says what the device is.
        let h = traceprism::analysis::health::health(&a);
        let k = h.iter().find(|c| c.check.as_str() == "kernels").unwrap();
        assert!(k.found.ends_with("kernels (MTIA ops)"), "{}", k.found);
    }
}

#[test]
fn the_training_step_on_mtia_is_categorised_and_timed() {
    let a = analysis(TRAINING);
    let s = traceprism::report::summary::summary(&a);
    // Every kernel named by a rule: the FC layers are the GEMMs.
    let unnamed = a.trace.kernel_rows().filter(|&r| !a.categories.is_named(r)).count();
    assert_eq!(unnamed, 0);
    let gemm: i64 = a.trace.kernel_rows().filter(|&r| a.categories.family(r) == "GEMM").map(|r| a.trace.gpu.dur[r]).sum();
    let fc: i64 = a
        .trace
        .kernel_rows()
        .filter(|&r| {
            let n = a.trace.name(a.trace.gpu.name[r]);
            n.starts_with("fc-") || n.starts_with("batch_matmul-")
        })
        .map(|r| a.trace.gpu.dur[r])
        .sum();
    assert_eq!(gemm, fc);
    // The roofline has op shapes but no MTIA peaks: it says so instead of guessing a GPU's.
    let roof = traceprism::report::roofline::roofline_summary(&a);
    let text = format!("{roof:?}");
    assert!(text.contains("not for this device: no MTIA peaks known"), "{text}");
    assert!(s.timeline.iter().any(|d| d.device == 9 && d.busy > 0));
}
