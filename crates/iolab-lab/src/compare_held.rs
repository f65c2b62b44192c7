//! What `iolab compare` holds of each run: its workload and label (numbers into its side's table of
//! texts, each text held once), and the figures it compares. A run's result as parsed values took about
//! 10 KB (its spec's 60 fields, each an entry of an object), a file of 155,000 records cut down to a spec,
//! a host and findings 1.6 GB; read as the records' texts ([`crate::series::Keep::Texts`]) and made into
//! these one at a time, what is held is about the texts' bytes, then these.

use crate::compare_workload::{survey_run_as_record, without, workload_key, workload_label};
use crate::series::{figure, FIGURES};
use serde_json::Value;
use std::collections::HashMap;
use std::hash::BuildHasher;

/// A run's figures as `compare` sets them side by side: each of [`FIGURES`] (none where the run has no
/// such figure, or it is withheld), whether it ran on an emulated CPU, and its clock's resolution.
#[derive(Debug, Clone, PartialEq)]
pub struct Figs {
    pub figs: [Option<f64>; FIGURES.len()],
    /// Inside `iolab vm` under QEMU TCG.
    pub emulated: bool,
    /// Two reads of its clock and a tick, in ns (0 where it does not say).
    pub clock_ns: f64,
}

impl Figs {
    /// The figures of a run's result.
    pub fn of(result: &Value) -> Figs {
        let of = |p: &str| result.pointer(p).and_then(Value::as_f64).unwrap_or(0.0);
        Figs {
            figs: std::array::from_fn(|i| figure(result, &FIGURES[i])),
            emulated: result.pointer("/host/emulated").and_then(Value::as_bool) == Some(true),
            clock_ns: 2.0 * of("/clock/overhead_ns") + of("/clock/ns_per_tick"),
        }
    }
}

/// One run as `compare` holds it: texts as numbers into its [`Side`]'s table.
#[derive(Debug, Clone)]
pub struct Held {
    /// Its workload ([`workload_key`], and the kernel of a guest's run).
    pub key: u32,
    /// [`workload_label`].
    pub label: u32,
    /// Under `--across KEY`: its workload without KEY, and its value of KEY (none where it has no KEY).
    pub across: Option<(u32, u32)>,
    pub figs: Figs,
}

/// One side of a comparison: its runs, in the order read, and the texts they name, each once.
#[derive(Default)]
pub struct Side {
    pub runs: Vec<Held>,
    texts: Vec<Box<str>>,
    /// Each text's number by its hash (texts whose hashes meet are told apart by their text).
    by_hash: HashMap<u64, Vec<u32>>,
    hasher: std::collections::hash_map::RandomState,
}

impl Side {
    /// The runs of `recs`: records as read (a [`crate::series::Keep::Texts`] read's are their JSON
    /// texts), a survey's runs as records of their own; under `--across KEY` (`across`), each run's
    /// workload without KEY and its value of it ([`crate::compare_across`]).
    pub fn of(recs: Vec<Value>, across: Option<&str>) -> Side {
        let mut side = Side::default();
        for rec in recs {
            let rec = match rec {
                Value::String(t) => serde_json::from_str(&t).unwrap_or_default(),
                rec => rec,
            };
            if let Some(rec) = survey_run_as_record(rec) {
                side.add(&rec, across);
            }
        }
        side.runs.shrink_to_fit();
        side
    }

    fn add(&mut self, rec: &Value, across: Option<&str>) {
        let Some(r) = rec.get("result") else {
            return;
        };
        // A guest's run says so in its label too: "only in A" and "only in B" of one workload, native
        // in one and emulated in the other, read the same (across kernels, each row names them).
        let guest = guest_kernel(r);
        let key = self.intern(workload_key(r) + &guest);
        let label = match across {
            Some("kernel") => workload_label(r),
            _ => workload_label(r) + &guest,
        };
        let label = self.intern(label);
        let across = across
            .and_then(|k| without(r, k))
            .map(|(w, v)| (self.intern(w), self.intern(v)));
        self.runs.push(Held {
            key,
            label,
            across,
            figs: Figs::of(r),
        });
    }

    /// The number of text `t`, held once.
    fn intern(&mut self, t: String) -> u32 {
        let h = self.hasher.hash_one(&t);
        let ids = self.by_hash.entry(h).or_default();
        if let Some(&id) = ids.iter().find(|&&i| *self.texts[i as usize] == *t) {
            return id;
        }
        let id = self.texts.len() as u32;
        self.texts.push(t.into_boxed_str());
        ids.push(id);
        id
    }

    /// Text number `id`.
    pub fn text(&self, id: u32) -> &str {
        &self.texts[id as usize]
    }
}

/// Of a guest's run (iolab vm, an emulated CPU): its kernel, so that compare never takes it for a repeat
/// of a native run or of another kernel's (`compare --across kernel` sets them side by side; a fleet's
/// merge keeps its hosts together and marks the emulated ones).
fn guest_kernel(result: &Value) -> String {
    match result.pointer("/host/emulated").and_then(Value::as_bool) {
        Some(true) => {
            let release = result
                .pointer("/host/kernel_release")
                .and_then(Value::as_str);
            format!(" on an emulated {}", release.unwrap_or("kernel"))
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(method: &str, iops: f64) -> Value {
        serde_json::json!({"point": {}, "result": {
            "spec": {"method": method, "op": "write", "bs": 4096, "pattern": "seq", "threads": 1,
                     "qd": 1, "batch": 1, "seed": 7, "target": "/tmp/x"},
            "target": {"kind": "file"}, "iops": iops}})
    }

    /// A record held as its text reads as the record; each workload's texts are held once.
    #[test]
    fn runs_of_one_workload_share_their_texts_and_a_text_reads_as_its_record() {
        let recs = vec![
            rec("psync", 100.0),
            Value::String(rec("psync", 110.0).to_string()),
            rec("sync", 90.0),
        ];
        let s = Side::of(recs, Some("method"));
        assert_eq!(s.runs.len(), 3);
        assert_eq!(s.runs[0].key, s.runs[1].key);
        assert_ne!(s.runs[0].key, s.runs[2].key);
        assert_eq!(s.runs[1].figs.figs[0], Some(110.0));
        // Across the method, all three share their workload; the values are the methods.
        let w: Vec<_> = s.runs.iter().map(|r| r.across.unwrap()).collect();
        assert!(w[0].0 == w[1].0 && w[1].0 == w[2].0);
        assert_eq!(s.text(w[2].1), "sync");
        assert!(s.text(s.runs[2].label).starts_with("sync write"));
        // Two keys, two labels and the across texts (a workload and two methods).
        assert_eq!(s.texts.len(), 7);
    }

    /// A guest's run of a workload is another workload than a native one, and its label says why.
    #[test]
    fn an_emulated_run_is_its_own_workload_and_its_label_says_so() {
        let mut guest = rec("psync", 100.0);
        guest["result"]["host"] =
            serde_json::json!({"emulated": true, "kernel_release": "6.1.0-9"});
        let s = Side::of(vec![rec("psync", 100.0), guest], None);
        assert_ne!(s.runs[0].key, s.runs[1].key);
        let (native, emulated) = (s.text(s.runs[0].label), s.text(s.runs[1].label));
        assert!(!native.contains("emulated"), "{native}");
        assert_eq!(emulated, format!("{native} on an emulated 6.1.0-9"));
    }
}
