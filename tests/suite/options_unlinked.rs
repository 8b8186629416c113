//! `Options.include_unlinked`: GPU rows whose launch is not in the trace are kept (default) or left
//! out of the op tables.
//!
//! Expected counts from python (gzip + json) on resnet_train_actckpt_mi300x.json.gz: 3,653 GPU rows
//! (`kernel` + `gpu_memcpy` + `gpu_memset`), of which 968 have an `args.correlation` that no
//! runtime event (`cuda_runtime` / `cuda_driver` / `hip_runtime`) carries (757 kernels, 211 copies/fills).

use traceprism::report::ops::ops_summary;
use traceprism::{analyze_path, Options};

fn kernel_count_sum(include_unlinked: bool) -> (i64, bool) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/resnet_train_actckpt_mi300x.json.gz");
    let a = analyze_path(&path, Options { include_unlinked, ..Options::default() }).unwrap();
    let t = ops_summary(&a);
    let k = t.column("kernel_count").unwrap();
    let sum = t.rows.iter().map(|r| r[k].as_f64().unwrap() as i64).sum();
    let has_unlinked = t.rows.iter().any(|r| r[0].text() == "(unlinked)");
    (sum, has_unlinked)
}

#[test]
fn unlinked_rows_can_be_left_out() {
    assert_eq!(kernel_count_sum(true), (3653, true));
    assert_eq!(kernel_count_sum(false), (3653 - 968, false));
}
