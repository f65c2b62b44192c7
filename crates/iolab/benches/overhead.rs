//! `cargo bench`: iolab's per-op accounting overhead against a bare write(2) loop (target: at most 1.15x).
fn main() {
    let clock = iolab_engine::measure::clock::calibrate(20);
    let r = iolab_lab::bench::overhead(300_000, 21, &clock).expect("overhead bench runs");
    print!("{}", iolab_report::bench_view::render(&r));
}
