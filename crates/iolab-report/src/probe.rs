//! `iolab probe`'s output: the table of every try, and the JSON document.

use iolab_lab::probe::ProbeResult;

/// The table: a header naming the kernel, CPU and the directories tried in, then one line per try.
pub fn render(p: &ProbeResult) -> String {
    let mut out = format!(
        "iolab probe: kernel {}{} | {} | tried in {}\n\n",
        p.host.kernel_release,
        p.host
            .kernel_preempt
            .as_deref()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default(),
        p.host.cpu_model,
        p.dirs
            .iter()
            .map(|(d, f)| format!("{d} ({f})"))
            .collect::<Vec<_>>()
            .join(" and ")
    );
    if let Some(e) = p.host.emulated_line() {
        out.insert_str(out.len() - 1, &format!("emulated: {e}\n"));
    }
    let w = p.rows.iter().map(|r| r.name.len()).max().unwrap_or(10);
    for r in &p.rows {
        out.push_str(&format!(
            "{:<w$}  {:<11}  {}\n",
            r.name,
            if r.available {
                "available"
            } else {
                "UNAVAILABLE"
            },
            r.detail
        ));
    }
    out
}

/// The probe result as pretty JSON with a final newline.
pub fn json(p: &ProbeResult) -> serde_json::Result<Vec<u8>> {
    let mut v = serde_json::to_vec_pretty(p)?;
    v.push(b'\n');
    Ok(v)
}
