//! What a result says in place of a figure it has no value for: the reason, beside the field the JSON
//! leaves out (docs/output.md lists them), never a 0 or a distribution of zeros.

use crate::result::RunResult;

impl RunResult {
    /// Says why `latency` and `gap` hold nothing, where they do: the JSON leaves them out and gives this
    /// reason in their place, never a distribution of zeros.
    pub fn say_why_absent(&mut self) {
        let why = |r: &RunResult| match (&r.sparse_clock, &r.offload) {
            _ if r.ops == 0 => "no op completed in the timed span".to_string(),
            (Some(s), _) => s.latency_unavailable.clone(),
            (None, Some(_)) => {
                "the offload client times its requests by the window, not one by one: there \
                               is no time between two ops of its own"
                    .to_string()
            }
            (None, None) => "no op was timed on its own in this run".to_string(),
        };
        if self.latency.is_empty() {
            self.latency_unavailable = Some(why(self));
        }
        if self.gap.is_empty() {
            self.gap_unavailable = Some(why(self));
        }
    }
}
