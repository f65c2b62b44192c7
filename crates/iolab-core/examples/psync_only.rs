use iolab_core::spec::{RawSpec, Val};
fn main() {
    let clock = iolab_core::measure::clock::calibrate(20);
    for _ in 0..5 {
        let spec = RawSpec {
            method: Some("psync".into()),
            target: Some("/dev/null".into()),
            bs: Some(Val::Int(4)),
            ops: Some(Val::Int(2_000_000)),
            seed: Some(Val::Int(1)),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        let r = iolab_core::runner::run(&spec, &clock).unwrap();
        println!("psync {:.1}", r.ns_per_op);
    }
}
