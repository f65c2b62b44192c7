//! `cargo bench --bench nop`: io_uring NOP requests per second through iolab vs a raw loop.
fn main() {
    let clock = iolab_engine::measure::clock::calibrate(20);
    let r = iolab_lab::bench::nop(1_000_000, 5, &clock).expect("nop bench runs");
    print!("{}", iolab_report::bench_view::render_nop(&r));
}
