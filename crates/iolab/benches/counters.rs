//! `cargo bench --bench counters`: cost of iolab's kernel counters on 1M write(2) calls to /dev/null.
fn main() {
    let r = iolab_lab::bench::counter_overhead(1_000_000, 5).expect("counter bench runs");
    print!("{}", iolab_report::bench_view::render_counters(&r));
}
