//! Trace-supplied numbers at the edge of `i64` (issue 62): timestamps and durations near
//! `i64::MAX` nanoseconds must go through every analysis, table, finding, budget and the health
//! report without a panic (a debug build checks overflow) and without a wrapped result: no time
//! in any table is negative, every step's budget still sums to its window.

use crate::common::*;
use traceprism::table::Cell;

/// A small trace with a kernel, its launch and its op near `i64::MAX` ns, one at 0, and one whose
/// duration alone is near `i64::MAX`.
fn extreme_trace() -> Vec<u8> {
    let far: f64 = 9.2e15; // µs: 9.2e18 ns, within 0.3% of i64::MAX
    let mut ev = Vec::new();
    for (k, (ts, dur)) in [(1.0, 5.0), (far, 4.0), (2.0, far), (far - 10.0, far)].into_iter().enumerate() {
        let corr = 100 + k as i64;
        ev.push(serde_json::json!({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {"External id": corr}}));
        ev.push(serde_json::json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts, "dur": dur.min(3.0), "args": {"correlation": corr, "External id": corr}}));
        ev.push(serde_json::json!({"ph": "X", "cat": "kernel", "name": "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "pid": 0, "tid": 7, "ts": ts + 1.0, "dur": dur, "args": {"device": 0, "stream": 7, "correlation": corr, "External id": corr}}));
        ev.push(serde_json::json!({"ph": "X", "cat": "user_annotation", "name": format!("ProfilerStep#{k}"), "pid": 1, "tid": 1, "ts": ts, "dur": dur + 2.0, "args": {}}));
    }
    serde_json::to_vec(&serde_json::json!({"traceEvents": ev})).unwrap()
}

#[test]
fn timestamps_and_durations_near_i64_max_go_through_every_analysis() {
    let a = analyse_bytes(&extreme_trace());
    let mut checked = 0;
    let mut wrapped = Vec::new();
    for def in traceprism::report::TABLES {
        let t = (def.build)(&a);
        for (c, name) in t.columns.iter().enumerate() {
            for row in &t.rows {
                if let Some(Cell::Micros(ns)) = row.get(c) {
                    if *ns < 0 {
                        wrapped.push(format!("{}.{name}: {ns} ns", t.name));
                    }
                    checked += 1;
                }
            }
        }
    }
    wrapped.dedup();
    assert!(checked > 0 && wrapped.is_empty(), "{}", wrapped.join("\n"));
    for step in &a.budget().steps {
        let sum: i64 = step.rows.iter().map(|r| r.ns).sum();
        assert!(sum >= 0 && step.end_ns >= step.start_ns, "{step:?}");
    }
    let _ = traceprism::analysis::findings::findings(&a);
    let _ = traceprism::analysis::health::health(&a);
    let _ = traceprism::report::summary::summary(&a);
}
