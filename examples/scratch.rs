fn main() {
    for p in std::env::args().skip(1) {
        let t0 = std::time::Instant::now();
        let f = std::fs::File::open(&p).unwrap();
        match traceprism::read_trace(f) {
            Ok(t) => {
                let k = t.kernel_rows().count();
                let linked = t.kernel_rows().filter(|&i| t.gpu.launch[i] != u32::MAX).count();
                let op = t.kernel_rows().filter(|&i| t.gpu.cpu_op[i] != u32::MAX).count();
                let kt: i64 = t.kernel_rows().map(|i| t.gpu.dur[i]).sum();
                println!("{p}: {:?} kernels={k} time={:.3}us launch-linked={linked} op-linked={op} ops={} launches={} warn={:?} {:?}", t0.elapsed(), kt as f64/1000.0, t.ops.len(), t.launches.len(), t.warnings.counts, t.stats);
            }
            Err(e) => println!("{p}: ERROR {e}"),
        }
    }
}
