//! Nsight Systems exports (issue 47), read like Kineto traces: checked by independent count —
//! SQL of this test's own against the export (kernels, summed kernel time, kernels whose runtime
//! call is in the export by process and correlation id, memcpy and memset counts, time and bytes) — on
//! every nsys fixture; read by column name, so a renamed optional column still reads and a
//! renamed needed one is an error naming it and the schema version; secrets in its environment
//! tables flagged by name, never shown.

use crate::common;
use traceprism::analysis::health::CheckId;

use rusqlite::Connection;
use std::collections::HashMap;
use std::path::PathBuf;
use traceprism::model::{GpuKind, InputFormat, NONE};
use traceprism::{Analysis, Options};

const FIXTURES: [&str; 2] = ["nsys/h100_2gpu_1s.sqlite", "nsys/mfu_2gpu_before.sqlite"];

fn analyse_file(path: &std::path::Path) -> traceprism::Result<Analysis> {
    traceprism::analyze_path(path, Options::default())
}

fn count(db: &Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |r| r.get::<_, Option<i64>>(0)).unwrap().unwrap_or(0)
}

/// A copy of a fixture in a temporary folder, changed by `edit` (SQL run on the copy).
fn edited(name: &str, tag: &str, edit: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("traceprism-nsys-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("export.sqlite");
    std::fs::copy(common::fixture(name), &copy).unwrap();
    let db = Connection::open(&copy).unwrap();
    for sql in edit {
        db.execute_batch(sql).unwrap();
    }
    copy
}

#[test]
fn every_export_reads_with_the_counts_its_own_sql_gives() {
    for name in FIXTURES {
        let path = common::fixture(name);
        let db = Connection::open(&path).unwrap();
        let kernels = count(&db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
        let kernel_ns = count(&db, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL");
        // A kernel's launch: the runtime row with its correlation id in its process.
        let linked = count(
            &db,
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
             WHERE r.correlationId = k.correlationId AND r.globalTid / 16777216 % 16777216 = k.globalPid / 16777216 % 16777216)",
        );
        let memcpy = count(&db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY");
        let memcpy_ns = count(&db, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY");
        let memset = count(&db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET");
        let memcpy_bytes = count(&db, "SELECT sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY");
        let memset_bytes = count(&db, "SELECT sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMSET");
        let runtime = count(&db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME");
        let devices = count(&db, "SELECT count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL");

        let a = analyse_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let t = &a.trace;
        let g = &t.gpu;
        let ours = |kind: GpuKind| (0..g.len()).filter(|&i| g.kind[i] == kind).collect::<Vec<_>>();
        let (k, m, s) = (ours(GpuKind::Kernel), ours(GpuKind::Memcpy), ours(GpuKind::Memset));
        let linked_ours = k.iter().filter(|&&i| g.launch[i] != NONE).count() as i64;
        eprintln!(
            "{name}: kernels {} / {kernels}, kernel time {} / {kernel_ns} ns, linked {linked_ours} / {linked}, memcpy {} / {memcpy}, memset {} / {memset}, runtime {} / {runtime}",
            k.len(),
            k.iter().map(|&i| g.dur[i]).sum::<i64>(),
            m.len(),
            s.len(),
            t.launches.len()
        );
        assert_eq!(t.stats.format, InputFormat::NsysSqlite);
        assert_eq!(k.len() as i64, kernels, "{name}: kernels");
        assert_eq!(k.iter().map(|&i| g.dur[i]).sum::<i64>(), kernel_ns, "{name}: kernel time");
        assert_eq!(linked_ours, linked, "{name}: kernels linked to their launch");
        assert_eq!((m.len() as i64, m.iter().map(|&i| g.dur[i]).sum::<i64>()), (memcpy, memcpy_ns), "{name}: memcpy");
        assert_eq!(s.len() as i64, memset, "{name}: memset");
        let counts = traceprism::report::summary::summary(&a).counts;
        eprintln!(
            "{name}: memcpy bytes {} / {memcpy_bytes}, memset bytes {} / {memset_bytes}",
            counts.memcpy_bytes, counts.memset_bytes
        );
        assert!(memcpy_bytes > 0, "{name}: an export with copies to count");
        assert_eq!((counts.memcpy_bytes as i64, counts.memset_bytes as i64), (memcpy_bytes, memset_bytes), "{name}: bytes");
        assert_eq!(t.launches.len() as i64, runtime, "{name}: runtime calls");
        let mut ours_devices: Vec<i32> = k.iter().map(|&i| g.device[i]).collect();
        ours_devices.sort_unstable();
        ours_devices.dedup();
        assert_eq!(ours_devices.len() as i64, devices, "{name}: devices");
        assert!(t.stats.notes.iter().any(|n| n.contains("Nsight Systems export (SQLite, schema 3.25.0)")), "{:?}", t.stats.notes);
        assert_eq!(t.meta.vendor, traceprism::model::Vendor::Nvidia);
        assert!(t.meta.secret_keys.is_empty(), "{name}: no credential in its environment tables: {:?}", t.meta.secret_keys);
    }
}

#[test]
fn the_training_capture_is_training_and_its_nvtx_ops_are_cpu_ops() {
    // The 2-GPU torchrun training capture: emit_nvtx ranges (`aten::addmm, seq = …, op_id = …`) are its CPU ops.
    let a = analyse_file(&common::fixture(FIXTURES[1])).unwrap();
    assert_eq!(a.phases.workload.kind.as_str(), "training", "{:?}", a.phases.workload);
    let ops = &a.trace.ops;
    let mm = (0..ops.len()).filter(|&i| a.trace.name(ops.name[i]) == "aten::addmm").count();
    assert!(mm > 100, "{mm} aten::addmm ops");
    let linked_to_ops = (0..a.trace.gpu.len()).filter(|&i| a.trace.gpu.cpu_op[i] != NONE).count();
    assert!(linked_to_ops > 3000, "{linked_to_ops} kernels under an op");
}

#[test]
fn columns_are_read_by_name_across_schema_versions() {
    // A later schema: the short name column renamed, the version bumped. Still read (by the
    // demangled name), with the new version said.
    let renamed = edited(
        FIXTURES[0],
        "renamed",
        &[
            "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN shortName TO shortNameId",
            "UPDATE META_DATA_EXPORT SET value = '3.28.0' WHERE name = 'EXPORT_SCHEMA_VERSION'",
        ],
    );
    let a = analyse_file(&renamed).unwrap();
    let b = analyse_file(&common::fixture(FIXTURES[0])).unwrap();
    assert_eq!(a.trace.gpu.len(), b.trace.gpu.len());
    assert!(a.trace.stats.notes.iter().any(|n| n.contains("schema 3.28.0")), "{:?}", a.trace.stats.notes);
    let names = |x: &Analysis| (0..x.trace.gpu.len()).map(|i| x.trace.name(x.trace.gpu.name[i]).to_string()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b), "kernel names from demangledName either way");

    // A column the reader needs, renamed: an error naming it and the schema version.
    let broken = edited(
        FIXTURES[0],
        "broken",
        &[
            "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN correlationId TO corrId",
            "UPDATE META_DATA_EXPORT SET value = '3.28.0' WHERE name = 'EXPORT_SCHEMA_VERSION'",
        ],
    );
    let e = analyse_file(&broken).err().expect("an error").to_string();
    assert!(e.contains("schema 3.28.0") && e.contains("column correlationId in CUPTI_ACTIVITY_KIND_KERNEL"), "{e}");

    // An export with no kernel table at all (no CUDA trace): said.
    let no_kernels = edited(FIXTURES[0], "nokernels", &["DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL"]);
    let e = analyse_file(&no_kernels).err().expect("an error").to_string();
    assert!(e.contains("CUPTI_ACTIVITY_KIND_KERNEL"), "{e}");
    for p in [renamed, broken, no_kernels] {
        std::fs::remove_dir_all(p.parent().unwrap()).ok();
    }
}

#[test]
fn a_token_in_the_environment_is_flagged_by_name_and_never_shown() {
    // A made-up token, assembled at run time so no scanner mistakes the source for a leak.
    let token = ["hf", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"].join("_");
    let with_token = edited(
        FIXTURES[1],
        "token",
        &[&format!("INSERT INTO TARGET_INFO_SYSTEM_ENV (globalVid, devStateName, name, nameEnum, value) VALUES (0, 'env', 'HF_TOKEN', 999, '{token}')")],
    );
    let a = analyse_file(&with_token).unwrap();
    assert!(a.trace.meta.secret_keys.iter().any(|k| k.ends_with("HF_TOKEN")), "{:?}", a.trace.meta.secret_keys);
    // The page reads the same environment through its SQLite module's row bytes.
    let rows = traceprism::ingest::nsys::sqlite::row_bytes(&std::fs::read(&with_token).unwrap()).unwrap();
    assert_eq!(traceprism::read_trace(&rows[..]).unwrap().meta.secret_keys, a.trace.meta.secret_keys);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_traceprism"))
        .arg("summary")
        .arg(&with_token)
        .arg("--json")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("HF_TOKEN") && !text.contains(&token), "flagged by name, the value never shown");
    std::fs::remove_dir_all(with_token.parent().unwrap()).ok();
}

#[test]
fn split_refuses_an_export_with_a_clear_message() {
    let a = analyse_file(&common::fixture(FIXTURES[1])).unwrap();
    let Err(e) = traceprism::split::select(&a, &traceprism::split::Window::Pass(0)) else { panic!("split an export") };
    let e = e.to_string();
    assert!(e.contains("Nsight Systems SQLite") && e.contains("nsys export --times"), "{e}");
}

#[test]
fn an_export_reads_the_same_on_one_thread_and_on_several() {
    // A file of 1 MB or more is memory-mapped for the JSON reader; an export is read whole.
    for name in FIXTURES {
        let path = common::fixture(name);
        let one = traceprism::pipeline::read_path_on(&path, 1).unwrap_or_else(|e| panic!("{name} on one thread: {e}"));
        let many = traceprism::pipeline::read_path_on(&path, 4).unwrap_or_else(|e| panic!("{name} on four: {e}"));
        assert_eq!((one.gpu.len(), one.ops.len(), one.launches.len()), (many.gpu.len(), many.ops.len(), many.launches.len()));
    }
}

#[test]
fn one_export_of_two_processes_is_a_run_of_two_ranks() {
    // The 2-GPU torchrun capture: each process is a rank; its NCCL kernels, counted here by SQL per
    // process, are all matched across the two.
    let path = common::fixture(FIXTURES[1]);
    let db = Connection::open(&path).unwrap();
    let per_process: Vec<(i64, i64)> = db
        .prepare(
            "SELECT k.globalPid / 16777216 % 16777216, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName \
             WHERE s.value LIKE 'ncclDevKernel%' GROUP BY 1 ORDER BY 1",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(per_process.len(), 2, "{per_process:?}");
    let loaded = traceprism::pipeline::ranks::read_run(
        std::slice::from_ref(&path),
        &Options::default(),
        None,
        &[],
        traceprism::analysis::ranks::RunOptions::default(),
    )
    .unwrap();
    let run = &loaded.run;
    assert_eq!(run.ranks.len(), 2);
    for (rank, (pid, _)) in run.ranks.iter().zip(&per_process) {
        assert!(rank.trace.file.ends_with(&format!("(process {pid})")), "{}", rank.trace.file);
    }
    assert_eq!(per_process[0].1, per_process[1].1);
    assert_eq!(run.collectives.len() as i64, per_process[0].1, "every NCCL kernel matched: {:?}", run.warnings);
    assert_eq!(run.missing_collectives(), 0);
    assert!(run.finding().is_some_and(|f| f.starts_with("rank ")));
}

/// The page reads an export as the row bytes its SQLite module makes of it (`sqlite/`, its own
/// wasm): the same tables through another door must give the same analysis, byte for byte.
#[test]
fn the_pages_row_bytes_read_as_the_database_does() {
    for name in FIXTURES {
        let path = common::fixture(name);
        let sqlite = std::fs::read(&path).unwrap();
        let rows = traceprism::ingest::nsys::sqlite::row_bytes(&sqlite).unwrap();
        assert!(traceprism::ingest::looks_like_rows(&rows));
        let dir = std::env::temp_dir().join(format!("traceprism-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rows_path = dir.join(name.replace('/', "_") + ".rows");
        std::fs::write(&rows_path, &rows).unwrap();
        let direct = analyse_file(&path).unwrap();
        let through = analyse_file(&rows_path).unwrap();
        let json = |a: &Analysis| serde_json::to_string_pretty(&traceprism::report::summary::summary(a)).unwrap();
        assert_eq!(json(&through), json(&direct), "{name}");
        assert_eq!(through.trace.stats.bytes_in, sqlite.len() as u64, "{name}: the input's size is the database's");
        eprintln!(
            "{name}: {} bytes of SQLite, {} bytes of rows ({:.1} %)",
            sqlite.len(),
            rows.len(),
            100.0 * rows.len() as f64 / sqlite.len() as f64
        );
        // Every cut of the row bytes is an error, never a panic (the page hands them over whole,
        // but they cross from one wasm module to another).
        for cut in [8, 9, rows.len() / 3, rows.len() - 1] {
            assert!(traceprism::read_trace(&rows[..cut]).is_err(), "{name}: cut at {cut} read");
        }
    }
}

/// The health report of an export speaks Nsight Systems: no fix names a torch.profiler argument
/// (two say to record a torch.profiler trace for what nsys's backtraces would give, which
/// traceprism does not read), and the launches whose kernels the capture lost name its range.
#[test]
fn the_doctor_of_an_export_gives_nsys_fixes() {
    for name in FIXTURES {
        let a = analyse_file(&common::fixture(name)).unwrap();
        let health = traceprism::analysis::health::health(&a);
        for k in health.iter().filter(|k| !k.fix.is_empty()) {
            for kineto in ["torch.profiler.profile(", "prof.step()", "ProfilerActivity", "--profiler-config", "/start_profile"] {
                assert!(!k.fix.contains(kineto), "{name}: {}: {}", k.check, k.fix);
            }
        }
        let fix = |check: CheckId| health.iter().find(|k| k.check == check).map(|k| k.fix.clone()).unwrap_or_default();
        assert!(fix(CheckId::Shapes).contains("autograd-shapes-nvtx"), "{name}: {}", fix(CheckId::Shapes));
        let dropped = health.iter().find(|k| k.check == CheckId::DroppedKernels).unwrap();
        if dropped.count > 0 {
            assert!(dropped.fix.contains("--capture-range"), "{name}: {}", dropped.fix);
        }
        let graphs = health.iter().find(|k| k.check == CheckId::WholeGraphReplays).expect("an export's own check");
        assert_eq!((graphs.count, graphs.fix.as_str()), (0, ""), "{name}: no graph replayed whole in these captures");
    }
    // A Kineto trace keeps torch.profiler's fixes and has no such check.
    let kineto = traceprism::analysis::health::health(&common::analysis("hf_bert_small_forward_h100.json.gz"));
    assert!(kineto.iter().all(|k| k.check != CheckId::WholeGraphReplays));
}

/// `emit_nvtx(record_shapes=True)` writes each op's input sizes into its NVTX text (`aten::mm,
/// op_id = 7, sizes = [[4, 5], [5, 6]]`): they become the op's input shapes. Made in a copy
/// (these captures ran without shapes) by appending sizes to every `aten::mm` range.
#[test]
fn nvtx_sizes_are_the_ops_input_shapes() {
    let name = FIXTURES[0];
    let db = Connection::open(common::fixture(name)).unwrap();
    let ranges = count(&db, "SELECT count(*) FROM NVTX_EVENTS WHERE text LIKE 'aten::mm,%' AND eventType IN (59, 60)");
    assert!(ranges > 100, "{ranges} aten::mm ranges");
    let copy = edited(name, "sizes", &["UPDATE NVTX_EVENTS SET text = text || ', sizes = [[4, 5], [5, 6]], input_op_ids = [(3,0)]' WHERE text LIKE 'aten::mm,%'"]);
    let a = analyse_file(&copy).unwrap();
    let t = &a.trace;
    let mm: Vec<usize> = (0..t.ops.len()).filter(|&i| t.name(t.ops.name[i]) == "aten::mm").collect();
    assert_eq!(mm.len() as i64, ranges);
    assert!(mm.iter().all(|&i| t.name(t.ops.input_dims[i]) == "[[4, 5], [5, 6]]"));
    let shapes = traceprism::analysis::health::health(&a)
        .into_iter()
        .find(|k| k.check == traceprism::analysis::health::CheckId::Shapes)
        .unwrap();
    assert_eq!(shapes.count as i64, ranges, "{}", shapes.found);
    std::fs::remove_dir_all(copy.parent().unwrap()).ok();
}

/// Nsight Systems' default `--cuda-graph-trace=graph` records a replayed graph as one row of
/// `CUPTI_ACTIVITY_KIND_GRAPH_TRACE` and none of its kernels: each replay is read as one GPU event
/// named so, and the health report warns with the switch that records the kernels. Made in a copy
/// (these captures have no such table): three replays on device 0's stream.
#[test]
fn whole_graph_replays_are_read_and_warned_about() {
    let name = FIXTURES[0];
    let copy = edited(
        name,
        "graphs",
        &["CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, \
           contextId INTEGER, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, graphId INTEGER, graphExecId INTEGER);
           INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start, end, deviceId, streamId, correlationId, globalPid, graphId)
             SELECT s + 1000 * n, s + 1000 * n + 500, 0, 7, 9000000 + n, p, 12
             FROM (SELECT min(start) AS s, min(globalPid) AS p FROM CUPTI_ACTIVITY_KIND_KERNEL), (SELECT 1 AS n UNION SELECT 2 UNION SELECT 3);"],
    );
    let db = Connection::open(&copy).unwrap();
    assert_eq!(count(&db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"), 3);
    let a = analyse_file(&copy).unwrap();
    let t = &a.trace;
    let replays: Vec<usize> = (0..t.gpu.len()).filter(|&i| t.name(t.gpu.name[i]).starts_with("CUDA graph 12 ")).collect();
    assert_eq!(replays.len(), 3);
    assert!(replays.iter().all(|&i| t.gpu.dur[i] == 500));
    let check = traceprism::analysis::health::health(&a).into_iter().find(|k| k.check == CheckId::WholeGraphReplays).unwrap();
    assert_eq!((check.count, check.status.as_str()), (3, "warning"), "{}", check.found);
    assert!(check.fix.contains("--cuda-graph-trace=node"));
    assert!(check.found.contains("0.002 ms"), "{}", check.found);
    std::fs::remove_dir_all(copy.parent().unwrap()).ok();
}

/// Runs `sql` on `db`, handing each row to `f`.
fn each_row(db: &Connection, sql: &str, mut f: impl FnMut(&rusqlite::Row<'_>)) {
    let mut q = db.prepare(sql).unwrap();
    let mut rows = q.query([]).unwrap();
    while let Some(r) = rows.next().unwrap() {
        f(r);
    }
}

/// The same capture as a Kineto trace, written by this test from its own SQL (what an exporter
/// from Nsight Systems to PyTorch JSON would write): kernels with their launch dimensions, memcpy
/// and memset named as Kineto names them, runtime calls, and NVTX ranges (an op when emit_nvtx
/// wrote it, else an annotation). Times in µs with ns kept (three decimals).
fn kineto_form(path: &std::path::Path) -> Vec<u8> {
    let db = Connection::open(path).unwrap();
    let proc = |g: i64| g / 16_777_216 % 16_777_216;
    let corr = |p: i64, c: i64| (p << 32) | c;
    let us = |ns: i64| format!("{}.{:03}", ns / 1000, ns % 1000);
    let mut events: Vec<String> = Vec::new();
    each_row(&db, "SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, k.globalPid, s.value, gridX, gridY, gridZ, blockX, blockY, blockZ \
             FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName", |r| {
        let g = |i: usize| r.get::<_, i64>(i).unwrap();
        let name: String = r.get(6).unwrap();
        events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"device":{},"stream":{},"correlation":{},"grid":[{},{},{}],"block":[{},{},{}]}}}}"#,
            serde_json::to_string(&name).unwrap(), g(2), g(3), us(g(0)), us(g(1) - g(0)), g(2), g(3), corr(proc(g(5)), g(4)),
            g(7), g(8), g(9), g(10), g(11), g(12)
        ));
    });
    let kinds = ["Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"];
    let memory: HashMap<i64, String> = db
        .prepare("SELECT id, label FROM ENUM_CUDA_MEM_KIND")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (table, cat) in [("CUPTI_ACTIVITY_KIND_MEMCPY", "gpu_memcpy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "gpu_memset")] {
        let copy = cat == "gpu_memcpy";
        let extra = if copy { "copyKind, srcKind, dstKind" } else { "0, 0, 0" };
        each_row(
            &db,
            &format!("SELECT start, end, deviceId, streamId, correlationId, globalPid, bytes, {extra} FROM {table}"),
            |r| {
                let g = |i: usize| r.get::<_, i64>(i).unwrap();
                let name = if copy {
                    format!("Memcpy {} ({} -> {})", kinds[g(7) as usize], memory[&g(8)], memory[&g(9)])
                } else {
                    "Memset (Device)".to_string()
                };
                events.push(format!(
                r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"device":{},"stream":{},"correlation":{},"bytes":{}}}}}"#,
                g(2), g(3), us(g(0)), us(g(1) - g(0)), g(2), g(3), corr(proc(g(5)), g(4)), g(6)
            ));
            },
        );
    }
    each_row(&db, "SELECT r.start, r.end, r.globalTid, r.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId", |r| {
        let g = |i: usize| r.get::<_, i64>(i).unwrap();
        let name: String = r.get(4).unwrap();
        let name = name.split("_v").next().unwrap();
        events.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"{name}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"correlation":{}}}}}"#,
            proc(g(2)),
            g(2) % 16_777_216,
            us(g(0)),
            us(g(1) - g(0)),
            corr(proc(g(2)), g(3))
        ));
    });
    each_row(&db, "SELECT start, end, globalTid, text FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND text IS NOT NULL", |r| {
        let g = |i: usize| r.get::<_, i64>(i).unwrap();
        let text: String = r.get(3).unwrap();
        let head = text.split(", ").next().unwrap();
        let op = text.contains(", op_id = ") && !head.starts_with("nccl:") && !head.starts_with("ProfilerStep#");
        let cat = if op { "cpu_op" } else { "user_annotation" };
        events.push(format!(
            r#"{{"ph":"X","cat":"{cat}","name":{},"pid":{},"tid":{},"ts":{},"dur":{}}}"#,
            serde_json::to_string(if op { head } else { &text }).unwrap(),
            proc(g(2)),
            g(2) % 16_777_216,
            us(g(0)),
            us(g(1) - g(0))
        ));
    });
    format!("{{\"traceEvents\":[\n{}\n]}}", events.join(",\n")).into_bytes()
}

/// No public capture was recorded both ways (Kineto and Nsight Systems), so the export is
/// compared with its own Kineto form: `compare` must align the two as one workload, with every
/// kernel category equal in time and count, every kernel name as often on both sides, and the
/// same bytes copied.
#[test]
fn an_export_and_its_kineto_form_compare_as_one_workload() {
    use traceprism::analysis::compare::{compare, CompareOptions, Status};
    for name in FIXTURES {
        let path = common::fixture(name);
        let nsys = analyse_file(&path).unwrap();
        let kineto = common::analyse_bytes(&kineto_form(&path));
        assert_eq!(kineto.trace.stats.format, InputFormat::ChromeJson);
        let per_name = |a: &Analysis| {
            let t = &a.trace;
            let mut m: HashMap<String, usize> = HashMap::new();
            for i in t.kernel_rows() {
                *m.entry(t.name(t.gpu.name[i]).to_string()).or_default() += 1;
            }
            m
        };
        assert_eq!(per_name(&kineto), per_name(&nsys), "{name}: kernels per name");
        let c = compare(&kineto, &nsys, &CompareOptions::default()).unwrap();
        assert!(!c.categories.is_empty());
        for r in &c.categories {
            assert_eq!((r.a.count, r.a.time_ns), (r.b.count, r.b.time_ns), "{name}: {:?}", r.key);
            assert_eq!(r.verdict.status, Status::Similar, "{name}: {:?}", r.key);
        }
        let s = |a: &Analysis| traceprism::report::summary::summary(a).counts;
        assert_eq!((s(&kineto).memcpy_bytes, s(&kineto).memset_bytes), (s(&nsys).memcpy_bytes, s(&nsys).memset_bytes), "{name}");
        let copies = |a: &Analysis| {
            traceprism::report::summary::summary(a).copies.into_iter().map(|c| (c.name, c.count, c.bytes)).collect::<Vec<_>>()
        };
        assert_eq!(copies(&kineto), copies(&nsys), "{name}: copies by name");
        eprintln!("{name}: {} categories, {} kernel names alike in both forms", c.categories.len(), per_name(&nsys).len());
    }
}

/// A row the reader cannot place (an NVTX range still open when the capture stopped has no end)
/// is skipped and counted in a note, never dropped silently. Made in a copy: seven ranges lose
/// their end.
#[test]
fn rows_that_cannot_be_placed_are_counted_in_a_note() {
    let name = FIXTURES[0];
    let copy = edited(
        name,
        "open-ranges",
        &["UPDATE NVTX_EVENTS SET end = NULL WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE eventType IN (59, 60) LIMIT 7)"],
    );
    let whole = analyse_file(&common::fixture(name)).unwrap();
    let a = analyse_file(&copy).unwrap();
    assert_eq!(whole.trace.ops.len() - a.trace.ops.len(), 7);
    let note = a.trace.stats.notes.iter().find(|n| n.contains("skipped")).cloned().unwrap_or_default();
    assert!(note.starts_with("7 NVTX ranges") && note.contains("skipped"), "{:?}", a.trace.stats.notes);
    assert!(!whole.trace.stats.notes.iter().any(|n| n.contains("skipped")), "{:?}", whole.trace.stats.notes);
    std::fs::remove_dir_all(copy.parent().unwrap()).ok();
}
