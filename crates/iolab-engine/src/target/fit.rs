//! Whether the method can take the target, from its registry entry.

use crate::error::{Error, Result};
use crate::spec::method_kind::Fit;
use crate::spec::MethodKind;
use crate::spec::Spec;
use crate::target_kind::TargetKind;

/// Refuses a target the method's registry entry says it cannot take (`{t}` in its reason is `shown`),
/// naming the methods that can.
pub(crate) fn check_fit(spec: &Spec, kind: TargetKind, shown: &str) -> Result<()> {
    let info = spec.method.info();
    let (why, flag) = match info.targets.fit(kind) {
        Fit::Yes => return Ok(()),
        Fit::No(w) | Fit::Never(w) => (w.replace("{t}", shown), "--method"),
        Fit::OtherTarget(w) => (w.replace("{t}", shown), "--target"),
    };
    let mut msg = format!("{} {why}", info.name);
    if kind.is_stream() && !why.contains("use ") {
        let fit: Vec<&str> = MethodKind::all()
            .map(MethodKind::info)
            .filter(|m| m.targets.stream.ok() && !m.no_data)
            .map(|m| m.name)
            .collect();
        msg.push_str(&format!(": use {}", fit.join(", ")));
    }
    Err(Error::usage(flag, msg))
}
