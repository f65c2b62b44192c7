//! `cargo bench --bench offload`: NOP round trips and throughput through the offload paths, as ratios to
//! the native path measured in the same rounds.
fn main() {
    let clock = iolab_engine::measure::clock::calibrate(20);
    let r = iolab_lab::bench::offload(300_000, 7, &clock).expect("offload bench runs");
    print!("{}", iolab_report::bench_view::render_offload(&r));
}
