use iolab_core::spec::{RawSpec, Val};
fn main() {
    let clock = iolab_core::measure::clock::calibrate(20);
    let args: Vec<String> = std::env::args().collect();
    let target = args.get(1).cloned().unwrap_or("/dev/null".into());
    for m in ["nop", "psync"] {
        let mut v = vec![];
        for _ in 0..9 {
            let spec = RawSpec {
                method: Some(m.into()),
                target: Some(target.as_str().into()),
                bs: Some(Val::Int(4)),
                ops: Some(Val::Int(300_000)),
                seed: Some(Val::Int(1)),
                file_size: if target != "/dev/null" {
                    Some(Val::Int(1 << 20))
                } else {
                    None
                },
                ..Default::default()
            }
            .resolve()
            .unwrap();
            let r = iolab_core::runner::run(&spec, &clock).unwrap();
            v.push(r.ns_per_op);
        }
        v.sort_by(|a, b| a.total_cmp(b));
        println!("{m} {target}: min {:.1} median {:.1}", v[0], v[4]);
    }
}
