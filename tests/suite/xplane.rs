//! JAX / XLA profiles (`*.xplane.pb`, protobuf XSpace) read like Chrome traces.
//!
//! Expected figures come from the file itself through a schema-free protobuf walk written here
//! (planes = field 1 of the space, name = field 2, lines = field 3, events = field 4 of a line,
//! duration_ps = field 3 of an event), not from the reader under test.

use crate::common;

use traceprism::report::summary::summary;

const JAX: &str = "jax_conv_mi300x.xplane.pb";

/// Length-delimited and varint fields of one message: (field, varint value, bytes).
fn fields(b: &[u8]) -> Vec<(u64, u64, &[u8])> {
    let mut out = Vec::new();
    let mut i = 0;
    let varint = |i: &mut usize| {
        let mut v = 0u64;
        let mut s = 0;
        loop {
            let c = b[*i];
            *i += 1;
            v |= u64::from(c & 0x7f) << s;
            s += 7;
            if c < 0x80 {
                return v;
            }
        }
    };
    while i < b.len() {
        let key = varint(&mut i);
        match key & 7 {
            0 => out.push((key >> 3, varint(&mut i), &b[0..0])),
            1 => i += 8,
            5 => i += 4,
            2 => {
                let len = varint(&mut i) as usize;
                out.push((key >> 3, 0, &b[i..i + len]));
                i += len;
            }
            w => panic!("wire type {w}"),
        }
    }
    out
}

/// Per GPU plane (by device number): event count and summed duration (ns), over all its lines.
fn gpu_events(bytes: &[u8]) -> std::collections::BTreeMap<i32, (usize, i64)> {
    let mut out = std::collections::BTreeMap::new();
    for (device, _, count, dur) in gpu_lines(bytes) {
        let entry = out.entry(device).or_insert((0, 0));
        entry.0 += count;
        entry.1 += dur;
    }
    out
}

#[test]
fn a_jax_xplane_reads_as_kernels_per_device_with_the_files_counts_and_times() {
    let bytes = std::fs::read(common::fixture(JAX)).unwrap();
    let expected = gpu_events(&bytes);
    assert_eq!(expected.len(), 8, "eight GPU planes");
    let a = common::analysis(JAX);
    let g = &a.trace.gpu;
    for (&device, &(count, dur)) in &expected {
        let rows: Vec<usize> = (0..g.len()).filter(|&i| g.device[i] == device).collect();
        assert_eq!(rows.len(), count, "device {device}: events");
        assert_eq!(rows.iter().map(|&i| g.dur[i]).sum::<i64>(), dur, "device {device}: time");
    }
    let s = summary(&a);
    assert_eq!(s.devices.len(), 8);
    assert_eq!(s.vendor, traceprism::model::Vendor::Amd, "device_vendor stat says AMD");
    // Every kernel links to its host launch (correlation_id), and XLA's names find their family.
    assert_eq!(s.links.kernels_unlinked, 0);
    for i in a.trace.kernel_rows() {
        let (name, cat) = (a.trace.name(g.name[i]), a.categories.name(i));
        let want = if name.starts_with("Im3d2Col") || name.starts_with("Cijk_") {
            "Conv" // im2col and the GEMM of XLA's cudnn-conv custom call
        } else if name.contains("transpose_fusion") {
            "Memory-Reshape"
        } else if name.starts_with("__amd_rocclr_copyBuffer") {
            "Memory-Copy"
        } else {
            panic!("unexpected kernel {name}")
        };
        assert_eq!(cat, want, "{name}");
    }
    assert_eq!(s.workload, "single_pass", "{:?}", s.workload_evidence);
}

#[test]
fn a_cut_xplane_is_a_clear_error_with_its_offset_never_a_panic() {
    let bytes = std::fs::read(common::fixture(JAX)).unwrap();
    for cut in [10, 1000, bytes.len() / 2, bytes.len() - 3] {
        let err = traceprism::read_trace(&bytes[..cut]).err().unwrap_or_else(|| panic!("cut at {cut} read"));
        assert!(err.message.contains("XSpace"), "cut at {cut}: {}", err.message);
        assert!(err.byte_offset.is_some(), "cut at {cut}: no offset in {}", err.message);
    }
}

#[test]
fn files_that_are_no_trace_say_what_they_look_like() {
    for (bytes, says) in
        [(&b"PK\x03\x04zipped"[..], "zip"), (b"SQLite format 3\0...", "SQLite"), (b"<html>", "HTML"), (b"hello", "JAX XSpace")]
    {
        let Err(err) = traceprism::read_trace(bytes) else { panic!("read without an error") };
        assert!(err.message.contains(says), "{}", err.message);
    }
}

#[test]
fn a_jax_trace_in_chrome_json_form_with_no_stream_events_points_to_its_xplane() {
    // Processes named after XLA planes, events with no `cat`, but none on a `Stream` thread.
    let text = br#"{"traceEvents":[
        {"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:GPU:0"}},
        {"ph":"M","pid":2,"name":"process_name","args":{"name":"/host:CPU"}},
        {"ph":"X","pid":1,"tid":17,"ts":1.0,"dur":2.0,"name":"loop_add_fusion","args":{"hlo_op":"add.1"}}]}"#;
    let Err(err) = traceprism::read_trace(&text[..]) else { panic!("read without an error") };
    assert!(err.message.contains("JAX") && err.message.contains("xplane.pb"), "{}", err.message);
}

#[test]
fn a_gzipped_xplane_reads_as_the_plain_one() {
    let bytes = std::fs::read(common::fixture(JAX)).unwrap();
    let plain = traceprism::read_trace(&bytes[..]).unwrap();
    let gz = common::gzip(&bytes);
    let zipped = traceprism::read_trace(&gz[..]).unwrap();
    assert_eq!(zipped.gpu.len(), plain.gpu.len());
    assert_eq!(zipped.gpu.dur, plain.gpu.dur);
    // Cut short: a clear error, not a panic.
    let Err(err) = traceprism::read_trace(&gz[..gz.len() / 2]) else { panic!("a cut gzip read") };
    assert!(err.message.contains("gzip"), "{}", err.message);
}

/// xprof's Chrome-JSON export of the same profile (`xspace_to_tool_data([pb], "trace_viewer@^")`,
/// xprof 2.20.1, the converter TraceLens loads JAX profiles with).
const JAX_JSON: &str = "jax_conv_mi300x.trace.json.gz";

/// From the JSON text: per device (from the process name `… /device:GPU:N`), the events on its
/// `Stream #…` threads and their summed duration in ns.
fn stream_events(text: &[u8]) -> std::collections::BTreeMap<i32, (usize, i64)> {
    let v: serde_json::Value = serde_json::from_slice(text).expect("json");
    let events = v["traceEvents"].as_array().expect("events");
    let meta = |what: &str| -> std::collections::HashMap<(i64, i64), String> {
        events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == what)
            .map(|e| {
                ((e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap_or(0)), e["args"]["name"].as_str().unwrap().to_string())
            })
            .collect()
    };
    let (processes, threads) = (meta("process_name"), meta("thread_name"));
    let mut out = std::collections::BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let (pid, tid) = (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap());
        let Some(device) = processes.get(&(pid, 0)).and_then(|p| p.split_once("/device:GPU:")) else { continue };
        if !threads.get(&(pid, tid)).is_some_and(|t| t.starts_with("Stream")) {
            continue;
        }
        let entry = out.entry(device.1.parse::<i32>().unwrap()).or_insert((0usize, 0i64));
        entry.0 += 1;
        entry.1 += (e["dur"].as_f64().unwrap() * 1000.0).round() as i64;
    }
    out
}

#[test]
fn a_jax_trace_in_chrome_json_reads_like_its_xplane() {
    let expected = stream_events(&common::plain_fixture(JAX_JSON));
    assert_eq!(expected.len(), 8, "eight GPU processes");
    let json = common::analysis(JAX_JSON);
    let g = &json.trace.gpu;
    for (&device, &(count, dur)) in &expected {
        let rows: Vec<usize> = (0..g.len()).filter(|&i| g.device[i] == device).collect();
        assert_eq!(rows.len(), count, "device {device}: events");
        let ours: i64 = rows.iter().map(|&i| g.dur[i]).sum();
        assert!((ours - dur).abs() <= count as i64, "device {device}: time {ours} ns against {dur} ns");
    }
    // The same profile read from its XSpace: the same kernels, each in the same category and
    // linked the same way, and the same module executions as passes.
    let pb = common::analysis(JAX);
    let kernels = |a: &traceprism::Analysis| {
        let g = &a.trace.gpu;
        let mut v: Vec<(i32, i32, i64, i64, String, String, String)> = a
            .trace
            .kernel_rows()
            .map(|i| {
                let launch = g.launch[i];
                let launcher = if launch == traceprism::model::NONE {
                    String::new()
                } else {
                    a.trace.name(a.trace.launches.name[launch as usize]).to_string()
                };
                (
                    g.device[i],
                    g.stream[i],
                    g.ts[i] - a.trace.time_origin_ns,
                    g.dur[i],
                    a.trace.name(g.name[i]).to_string(),
                    a.categories.name(i).to_string(),
                    launcher,
                )
            })
            .collect();
        v.sort();
        v
    };
    let (from_json, from_pb) = (kernels(&json), kernels(&pb));
    assert_eq!(from_json.len(), 235);
    let mismatched: Vec<_> = from_json
        .iter()
        .zip(&from_pb)
        .filter(|(a, b)| {
            (a.0, a.1, &a.4, &a.5, &a.6) != (b.0, b.1, &b.4, &b.5, &b.6) || (a.3 - b.3).abs() > 1 || (a.2 - b.2).abs() > 1_000
        })
        .collect();
    assert!(mismatched.is_empty(), "{} kernels differ, first {:?}", mismatched.len(), mismatched.first());
    let (sj, sp) = (summary(&json), summary(&pb));
    assert_eq!(sj.links.kernels_unlinked, 0);
    assert_eq!(sj.vendor, traceprism::model::Vendor::Amd, "hip launches say AMD");
    assert_eq!(sj.devices.len(), 8);
    assert_eq!(
        (sj.passes, &sj.workload, &sj.top_ops.iter().map(|o| &o.name).collect::<Vec<_>>()),
        (sp.passes, &sp.workload, &sp.top_ops.iter().map(|o| &o.name).collect::<Vec<_>>())
    );
    assert_eq!(json.phases.passes.len(), pb.phases.passes.len(), "one pass per module execution, as from the XSpace");
    assert!(sj.input.notes.iter().any(|n| n.contains("Chrome JSON")));
}

#[test]
fn a_jax_transformer_training_step_reads_with_its_attention_backward() {
    // JAX 0.8 + Transformer Engine 2.8 on ROCm (MI355X, gfx950): a 2-layer model's forward and
    // value_and_grad, TE fused attention with dropout (TraceLens' te_fused_attn fixture).
    let a = common::analysis("jax_te_fused_attn_train_mi355.xplane.pb");
    let s = summary(&a);
    assert_eq!(s.workload, "training", "{:?}", s.workload_evidence);
    let g = &a.trace.gpu;
    for i in a.trace.kernel_rows() {
        let name = a.trace.name(g.name[i]);
        let cat = a.categories.name(i);
        if name.contains("FmhaBwd") {
            assert_eq!(cat, "Attention-Backward", "{name}");
        } else if name.contains("FmhaFwd") {
            assert_eq!(cat, "Attention-Forward", "{name}");
        } else if name.starts_with("gemm_fusion_dot") || name.starts_with("Cijk_") {
            assert!(cat.starts_with("GEMM"), "{name}: {cat}");
        } else if name.contains("reduce_fusion") {
            assert_eq!(cat, "Reduce", "{name}");
        }
        assert_ne!(cat, "Other", "{name}");
    }
}

#[test]
fn an_unnamed_device_is_named_from_its_compute_units_and_architecture() {
    // ROCm leaves `name` empty in the vLLM trace's deviceProperties (304 CUs, gfx 9.4, 192 GiB:
    // an MI300X by AMD's data sheet); the JAX profile's plane stats give the same counts.
    let v: serde_json::Value =
        serde_json::from_slice(&common::plain_fixture("vllm_gptoss_mixed_piecewise_mi300x.json.gz")).unwrap();
    let d = &v["deviceProperties"][0];
    assert_eq!((d["name"].as_str(), d["numSms"].as_i64(), d["computeMajor"].as_i64()), (Some(""), Some(304), Some(9)));
    for name in ["vllm_gptoss_mixed_piecewise_mi300x.json.gz", JAX] {
        let s = summary(&common::analysis(name));
        assert!(s.device.starts_with("AMD Instinct MI300X (by its 304 CUs"), "{name}: {}", s.device);
    }
    // A named device keeps its own name.
    assert_eq!(summary(&common::analysis("sglang_qwen3-8b_decode_graph_mi300x.json.gz")).device, "AMD Instinct MI300X");
}

/// Per GPU plane line: (device, line name, event count, summed duration in ns).
fn gpu_lines(bytes: &[u8]) -> Vec<(i32, String, usize, i64)> {
    device_lines(bytes, "/device:GPU:")
}

/// Per line of the planes named `prefix` + N: (N, line name, event count, summed duration in ns).
fn device_lines(bytes: &[u8], prefix: &str) -> Vec<(i32, String, usize, i64)> {
    let mut out = Vec::new();
    for (f, _, plane) in fields(bytes) {
        if f != 1 {
            continue;
        }
        let pf = fields(plane);
        let name = pf.iter().find(|x| x.0 == 2).map(|x| std::str::from_utf8(x.2).unwrap()).unwrap_or("");
        let Some(device) = name.strip_prefix(prefix) else { continue };
        for (_, _, line) in pf.iter().filter(|x| x.0 == 3) {
            let lf = fields(line);
            let line_name = lf.iter().find(|x| x.0 == 2).map(|x| String::from_utf8_lossy(x.2).into_owned()).unwrap_or_default();
            let events: Vec<_> = lf.iter().filter(|x| x.0 == 4).collect();
            let dur = events.iter().map(|(_, _, e)| fields(e).iter().find(|x| x.0 == 3).map_or(0, |x| x.1 as i64) / 1000).sum();
            out.push((device.parse().unwrap(), line_name, events.len(), dur));
        }
    }
    out
}

#[test]
fn a_tensorflow_xspace_reads_only_its_stream_lines_as_device_events() {
    // tensorflow/profiler's demo profile of a GPU training step: its GPU planes hold `Stream #…`
    // lines and the lines derived from them (`TensorFlow Ops`, `TensorFlow Name Scope`, `Steps`),
    // which were once read as kernels too (340 ms of "kernel time", 82% "Other").
    let name = "tf_gpu_multi_worker.xplane.pb";
    let lines = gpu_lines(&std::fs::read(common::fixture(name)).unwrap());
    let stream = |l: &&(i32, String, usize, i64)| l.1.starts_with("Stream");
    let copies = |l: &&(i32, String, usize, i64)| l.1.contains("Memcpy") || l.1.contains("Memset");
    let kernels: Vec<_> = lines.iter().filter(stream).filter(|l| !copies(l)).collect();
    let derived: Vec<_> = lines.iter().filter(|l| !stream(l)).collect();
    assert!(derived.iter().any(|l| l.1 == "TensorFlow Ops") && derived.iter().any(|l| l.1 == "Steps"), "{derived:?}");
    let (want_kernels, want_time): (usize, i64) = (kernels.iter().map(|l| l.2).sum(), kernels.iter().map(|l| l.3).sum());
    let want_copies: usize = lines.iter().filter(stream).filter(copies).map(|l| l.2).sum();

    let a = common::analysis(name);
    let s = summary(&a);
    assert_eq!(s.counts.kernels, want_kernels);
    assert_eq!(s.counts.memcpy + s.counts.memset, want_copies);
    assert_eq!(a.trace.kernel_rows().map(|i| a.trace.gpu.dur[i]).sum::<i64>(), want_time);
    // Per device too.
    for device in kernels.iter().map(|l| l.0).collect::<std::collections::BTreeSet<_>>() {
        let want: i64 = kernels.iter().filter(|l| l.0 == device).map(|l| l.3).sum();
        let got: i64 = a.trace.kernel_rows().filter(|&i| a.trace.gpu.device[i] == device).map(|i| a.trace.gpu.dur[i]).sum();
        assert_eq!(got, want, "device {device}");
    }
    let derived_events: usize = derived.iter().map(|l| l.2).sum();
    assert!(
        s.input
            .notes
            .iter()
            .any(|n| n.starts_with(&format!("{derived_events} events of {} derived device lines", derived.len()))),
        "{:?}",
        s.input.notes
    );
    // TensorFlow's Eigen expression kernels and Philox generators find their families.
    for i in a.trace.kernel_rows() {
        assert_ne!(a.categories.name(i), "Other", "{}", a.trace.name(a.trace.gpu.name[i]));
    }
}

/// A device plane of a kind we do not read (made here by renaming GPU 0's plane in place:
/// `/device:GPU:0` and `/device:FOO:0` have one length, so the protobuf stays valid) is never read as
/// host CPU ops: its events are counted in a warning named after the plane, and the other GPUs
/// read as before.
#[test]
fn a_device_plane_of_another_kind_is_counted_never_read_as_host_ops() {
    let bytes = std::fs::read(common::fixture(JAX)).unwrap();
    let plane0: usize = gpu_lines(&bytes).iter().filter(|l| l.0 == 0).map(|l| l.2).sum();
    assert!(plane0 > 0);
    let needle = b"/device:GPU:0";
    let at = memchr::memmem::find(&bytes, needle).expect("GPU 0's plane");
    let mut tpu = bytes.clone();
    tpu[at..at + needle.len()].copy_from_slice(b"/device:FOO:0");
    let base = summary(&traceprism::Analysis::new(common::read_bytes(&bytes).unwrap(), Default::default()).unwrap());
    let a = traceprism::Analysis::new(common::read_bytes(&tpu).unwrap(), Default::default()).unwrap();
    let s = summary(&a);
    let kind = &traceprism::model::WarningKind::UnreadCategory("xspace /device:FOO:".into());
    assert!(kind.sentence().contains("'xspace /device:FOO:' not read"), "a warning named by the plane");
    assert_eq!(s.warnings.counts[kind], plane0 as u64, "every event of the plane counted");
    assert!(!a.trace.gpu.device.contains(&0), "no kernel of the unknown plane");
    assert_eq!(s.counts.cpu_ops, base.counts.cpu_ops, "no event of it read as a host op");
    let unread = s.health.iter().find(|c| c.check == traceprism::analysis::health::CheckId::UnreadEvents).unwrap();
    assert!(unread.found.contains("process \"/device:FOO:0\""), "{}", unread.found);
}

/// A TPU's XSpace (openxla/xprof's test profile of four TPU v6e chips): each chip's `XLA Ops` line
/// is its device work, read as the device's ops with the file's counts and times; the chips are
/// named as the planes name them, by Google; the other lines only span or repeat those ops.
#[test]
fn tpu_chips_read_as_devices_with_their_xla_ops() {
    let name = "jax_tpu_v6e4_hostoffload.xplane.pb";
    let lines = device_lines(&std::fs::read(common::fixture(name)).unwrap(), "/device:TPU:");
    let ops: Vec<_> = lines.iter().filter(|l| l.1 == "XLA Ops").collect();
    assert_eq!(ops.len(), 4, "{lines:?}");
    let a = common::analysis(name);
    let s = summary(&a);
    assert_eq!(s.counts.kernels, ops.iter().map(|l| l.2).sum::<usize>());
    for l in &ops {
        let rows: Vec<usize> = a.trace.kernel_rows().filter(|&i| a.trace.gpu.device[i] == l.0).collect();
        assert_eq!(rows.len(), l.2, "TPU {}", l.0);
        assert_eq!(rows.iter().map(|&i| a.trace.gpu.dur[i]).sum::<i64>(), l.3, "TPU {}", l.0);
    }
    assert_eq!(a.trace.meta.vendor, traceprism::model::Vendor::Google);
    assert_eq!(a.trace.meta.devices.len(), 4);
    assert!(a.trace.meta.devices.iter().all(|d| d.name.starts_with("TPU v6 Lite")), "{:?}", a.trace.meta.devices);
    // Its XLA fusions, copies and collectives find their families.
    let other: i64 = a.trace.kernel_rows().filter(|&i| a.categories.name(i) == "Other").map(|i| a.trace.gpu.dur[i]).sum();
    let all: i64 = a.trace.kernel_rows().map(|i| a.trace.gpu.dur[i]).sum();
    eprintln!("TPU: {} ops, {:.1}% of their time Other", s.counts.kernels, 100.0 * other as f64 / all as f64);
    // Every op of a program run whose launch the host recorded links to that launch.
    let want = tpu_ops_in_launched_runs(&std::fs::read(common::fixture(name)).unwrap());
    let t = &a.trace;
    let linked = t.kernel_rows().filter(|&i| t.gpu.launch[i] != traceprism::model::NONE).count();
    eprintln!("TPU: {linked} of {} ops linked to their program's launch (raw: {want})", s.counts.kernels);
    assert!(want > 5000, "{want}");
    assert_eq!(linked, want);
    assert!(t.kernel_rows().filter(|&i| t.gpu.launch[i] != traceprism::model::NONE).all(|i| {
        let l = t.gpu.launch[i] as usize;
        t.launches.is_graph[l] && t.name(t.launches.name[l]) == "DoEnqueueProgram"
    }));
    // Ops overlap on a chip's line only under an asynchronous op still waiting (`copy-done.4`):
    // the health report says so instead of calling it a clock error.
    let mut rows: Vec<usize> = t.kernel_rows().collect();
    rows.sort_by_key(|&i| (t.gpu.device[i], t.gpu.stream[i], t.gpu.ts[i]));
    // The op reaching furthest on the current line: (device, stream, end, row).
    let mut last_end: Option<(i32, i32, i64, usize)> = None;
    let (mut overlaps, mut under_async) = (0usize, 0usize);
    for &i in &rows {
        if let Some((d, st, end, p)) = last_end {
            if (d, st) == (t.gpu.device[i], t.gpu.stream[i]) && t.gpu.ts[i] < end {
                overlaps += 1;
                let spanning = t.name(t.gpu.name[p]);
                under_async += (spanning.contains("-done") || spanning.contains("-start")) as usize;
            }
        }
        let keep = last_end.filter(|&(d, st, end, _)| (d, st) == (t.gpu.device[i], t.gpu.stream[i]) && end >= t.gpu.end(i));
        last_end = keep.or(Some((t.gpu.device[i], t.gpu.stream[i], t.gpu.end(i), i)));
    }
    eprintln!("TPU: {under_async} of {overlaps} overlapping ops start under an asynchronous op");
    assert!(overlaps > 0 && under_async * 100 >= overlaps * 95, "{under_async} of {overlaps}");
    let overlap = s.health.iter().find(|c| c.check.as_str() == "stream_overlap").unwrap();
    assert!(overlap.found.contains("asynchronous XLA ops"), "{}", overlap.found);
    // The health report never asks a JAX profile for torch.profiler's switches.
    for c in &s.health {
        assert!(
            !c.fix.contains("torch.profiler") && !c.fix.contains("ProfilerActivity") && !c.fix.contains("record_shapes"),
            "{}: {}",
            c.check,
            c.fix
        );
    }
}

/// A binary XSpace mangled by a text pipeline is named as such, with the byte where it shows,
/// never "cut short?": decoded as UTF-8 with replacement characters, or with its line endings
/// rewritten to CRLF.
#[test]
fn an_xspace_re_encoded_as_text_is_named_as_such() {
    let bytes = std::fs::read(common::fixture(JAX)).unwrap();
    let lossy = String::from_utf8_lossy(&bytes).into_owned().into_bytes();
    let first = lossy.windows(3).position(|w| w == "\u{FFFD}".as_bytes()).expect("the file holds bytes that are no UTF-8");
    let err = common::read_bytes(&lossy).expect_err("a re-encoded XSpace does not read");
    assert!(err.message.contains("not a valid XSpace: the bytes look re-encoded as text"), "{}", err.message);
    assert_eq!(err.byte_offset, Some(first as u64), "{}", err.message);
    let mut crlf = Vec::with_capacity(bytes.len() + bytes.len() / 64);
    for &b in &bytes {
        if b == b'\n' {
            crlf.push(b'\r');
        }
        crlf.push(b);
    }
    match common::read_bytes(&crlf) {
        Err(e) => assert!(e.message.contains("re-encoded as text") && e.message.contains("carriage return"), "{}", e.message),
        Ok(t) => panic!("a CRLF-rewritten XSpace read as {} kernels", t.gpu.len()),
    }
}

/// TPU ops whose start falls in a program run (`XLA Modules` event) that consumes a flow some host
/// event produced: a run's flow id (a stat value of 2^40 or more) is found among the host
/// events' stat values. Times are each line's `timestamp_ns` (field 3) plus the event's
/// `offset_ps` (field 2) / 1000.
fn tpu_ops_in_launched_runs(bytes: &[u8]) -> usize {
    // Per event: (start ns, end ns, large stat values).
    type Events = Vec<(i64, i64, Vec<u64>)>;
    let events = |line: &[u8]| -> Events {
        let lf = fields(line);
        let base = lf.iter().find(|x| x.0 == 3).map_or(0, |x| x.1 as i64);
        lf.iter()
            .filter(|x| x.0 == 4)
            .map(|(_, _, e)| {
                let ef = fields(e);
                let start = base + ef.iter().find(|x| x.0 == 2).map_or(0, |x| x.1 as i64) / 1000;
                let dur = ef.iter().find(|x| x.0 == 3).map_or(0, |x| x.1 as i64) / 1000;
                let big = ef
                    .iter()
                    .filter(|x| x.0 == 4)
                    .flat_map(|(_, _, st)| fields(st).into_iter().filter(|f| f.0 == 3 || f.0 == 4).map(|f| f.1))
                    .filter(|&v| v >= 1 << 40)
                    .collect();
                (start, start + dur, big)
            })
            .collect()
    };
    let mut host_values = std::collections::HashSet::new();
    let mut tpu: Vec<(Events, Events)> = Vec::new();
    for (_, _, plane) in fields(bytes).into_iter().filter(|x| x.0 == 1) {
        let pf = fields(plane);
        let name = pf.iter().find(|x| x.0 == 2).map(|x| String::from_utf8_lossy(x.2).into_owned()).unwrap_or_default();
        let line_named = |want: &str| {
            pf.iter().filter(|x| x.0 == 3).map(|x| x.2).find(|l| fields(l).iter().any(|f| f.0 == 2 && f.2 == want.as_bytes()))
        };
        if name.starts_with("/host:") {
            for (_, _, line) in pf.iter().filter(|x| x.0 == 3) {
                host_values.extend(events(line).into_iter().flat_map(|e| e.2));
            }
        } else if name.starts_with("/device:TPU:") {
            tpu.push((
                line_named("XLA Modules").map(events).unwrap_or_default(),
                line_named("XLA Ops").map(events).unwrap_or_default(),
            ));
        }
    }
    let mut n = 0;
    for (runs, ops) in tpu {
        let launched: Vec<_> = runs.iter().filter(|r| r.2.iter().any(|v| host_values.contains(v))).collect();
        n += ops.iter().filter(|o| launched.iter().any(|r| r.0 <= o.0 && o.0 < r.1)).count();
    }
    n
}
