//! `cargo bench --bench nop`: io_uring NOP requests per second through iolab vs a raw loop.
fn main() {
    let clock = iolab_core::measure::clock::calibrate(20);
    let r = iolab_core::bench::nop(1_000_000, 5, &clock).expect("nop bench runs");
    print!("{}", iolab_core::bench::render_nop(&r));
}
