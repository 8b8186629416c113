//! torch_npu's schema (issue 62): a bare JSON array with no `traceEvents`, every `ts` a string, the
//! device's tasks as `ph: X` events without `cat` on a process named `Ascend Hardware`, pids
//! above 2^32. No public torch_npu trace small enough to keep was found (the one indexed, a
//! `trace_view.json`, is an 870 MB LFS object), so the file is written here from those facts.

use crate::common::*;

/// A torch_npu-style trace: 20 device tasks on `Ascend Hardware`, 21 host ops (one
/// `ProfilerStep#1`), one `CANN` event without `cat`.
fn npu_trace() -> Vec<u8> {
    let host: u64 = (3u64 << 32) + 17;
    let mut ev = vec![
        serde_json::json!({"ph": "M", "name": "process_name", "pid": host, "tid": 0, "args": {"name": "Python"}}),
        serde_json::json!({"ph": "M", "name": "process_name", "pid": host + 1, "tid": 0, "args": {"name": "Ascend Hardware"}}),
        serde_json::json!({"ph": "M", "name": "process_name", "pid": host + 2, "tid": 0, "args": {"name": "CANN"}}),
        serde_json::json!({"ph": "X", "name": "ProfilerStep#1", "pid": host, "tid": 7, "ts": "1699529623100000.000", "dur": 2000, "cat": "cpu_op", "args": {}}),
        serde_json::json!({"ph": "X", "name": "AscendCL@aclnnMatmul", "pid": host + 2, "tid": 9, "ts": "1699529623100105.000", "dur": 3}),
    ];
    for i in 0..20u32 {
        let t = 1_699_529_623_100_100.0 + 50.0 * f64::from(i);
        ev.push(serde_json::json!({"ph": "X", "name": "aten::mm", "pid": host, "tid": 7, "ts": format!("{t:.3}"), "dur": 5, "cat": "cpu_op", "args": {}}));
        let name = if i % 2 == 1 { "MatMulV2" } else { "Add" };
        ev.push(serde_json::json!({"ph": "X", "name": name, "pid": host + 1, "tid": 2, "ts": format!("{:.3}", t + 10.0), "dur": 30, "args": {"Task Type": "AI_CORE"}}));
    }
    serde_json::to_vec(&ev).unwrap()
}

#[test]
fn an_npu_trace_reads_its_device_tasks_as_device_work() {
    let a = analyse_bytes(&npu_trace());
    let t = &a.trace;
    assert_eq!(t.kernel_rows().count(), 20, "every Ascend Hardware task is device work");
    assert_eq!(t.meta.vendor, traceprism::model::Vendor::Huawei);
    assert_eq!(t.meta.devices.len(), 1);
    // String timestamps read exactly: the first task starts 110 µs after the step.
    let first = t.kernel_rows().map(|i| t.gpu.ts[i]).min().unwrap();
    let step = (0..t.ops.len()).find(|&i| t.name(t.ops.name[i]) == "ProfilerStep#1").expect("ProfilerStep#1 is an op");
    assert_eq!(first - t.ops.ts[step], 110_000);
    assert_eq!(t.kernel_rows().map(|i| t.gpu.dur[i]).sum::<i64>(), 20 * 30_000);
    // Host ops on a pid above 2^32 keep their thread.
    assert_eq!(t.ops.len(), 21);
    // The CANN event without `cat` is counted, not dropped.
    let unread: u64 = t.warnings.counts.iter().filter(|(k, _)| format!("{k:?}").contains("(no cat)")).map(|(_, &n)| n).sum();
    assert_eq!(unread, 1);
    assert!(t.stats.notes.iter().any(|n| n.contains("Ascend Hardware")), "{:?}", t.stats.notes);
}
