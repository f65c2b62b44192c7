//! A run's intervals (and memory readings) as a reader that draws them holds them: the figures it reads
//! of each item, one text for the whole array. As objects, an interval of three figures took about 590 bytes (an entry of
//! 112 bytes per key, its table and key texts) where its text took 88: 14 records of 100,000 intervals,
//! a file of 101 MB, were reported in 810 MB. Packed, each figure takes its shortest exact text.
//! Only a read cut down to some of each interval's figures packs them (`report`); a read that keeps
//! them whole (a sweep's `--csv-intervals`, `--resume`, a fleet) holds the objects.

use serde_json::Value;
use std::fmt::Write;

/// The arrays a read that draws them packs, by key: a run's intervals, and its page cache read every
/// 100 ms under a memory limit (`memory.over_time`: 10,000 readings a record of a 200 MB file took 986
/// MB as objects).
pub(super) const PACKED_ARRAYS: [&str; 2] = ["intervals", "over_time"];
/// The key of a packed array's object holding its figures' names (joined by commas) ...
const FIELDS: &str = "packed_figures";
/// ... and the one holding its items: each item's figures in that order, by commas (empty where the
/// item has none), each item ended by a semicolon.
const ITEMS: &str = "packed_items";

/// The figures of each item the paths under a packed array keep, where each is one key of the item
/// (else None: the array is held as parsed). An empty path beside them asks only for the array's
/// presence (as in `prune::pruned`).
pub(super) fn fields(paths: &[&[&str]]) -> Option<Vec<String>> {
    let paths: Vec<&[&str]> = paths.iter().copied().filter(|p| !p.is_empty()).collect();
    if paths.is_empty() || paths.iter().any(|p| p.len() != 1) {
        return None;
    }
    let mut f: Vec<String> = Vec::new();
    for p in paths {
        if !f.iter().any(|x| x == p[0]) {
            f.push(p[0].to_string());
        }
    }
    Some(f)
}

/// An array being packed, an item at a time.
pub(super) struct Packer {
    fields: Vec<String>,
    items: String,
}

impl Packer {
    pub(super) fn new(fields: Vec<String>) -> Packer {
        Packer {
            fields,
            items: String::new(),
        }
    }

    /// Adds an item (an object cut down to the figures).
    pub(super) fn push(&mut self, item: &Value) {
        for (i, f) in self.fields.iter().enumerate() {
            if i > 0 {
                self.items.push(',');
            }
            // The shortest text that reads back as the same number, in exponent form: "4e-1", "1e300"
            // (never 301 digits).
            if let Some(x) = item.get(f).and_then(Value::as_f64) {
                let _ = write!(self.items, "{x:e}");
            }
        }
        self.items.push(';');
    }

    /// The bytes held so far.
    pub(super) fn len(&self) -> usize {
        self.items.len()
    }

    pub(super) fn finish(mut self) -> Value {
        self.items.shrink_to_fit();
        let mut m = serde_json::Map::new();
        m.insert(FIELDS.into(), Value::String(self.fields.join(",")));
        m.insert(ITEMS.into(), Value::String(self.items));
        Value::Object(m)
    }
}

/// Whether `v` is a packed array (a read's paths never keep these keys: no file can make one).
pub(super) fn is_packed(v: &Value) -> bool {
    v.get(FIELDS).is_some() && v.get(ITEMS).is_some()
}

/// (x, y) of each item of an array (a run's intervals, its memory readings) that has both figures, in
/// order, whether held as objects or packed.
pub fn item_pairs(intervals: &Value, x: &str, y: &str) -> Vec<(f64, f64)> {
    if let Some(a) = intervals.as_array() {
        return a
            .iter()
            .filter_map(|i| Some((i.get(x)?.as_f64()?, i.get(y)?.as_f64()?)))
            .collect();
    }
    let (Some(fields), Some(items)) = (
        intervals.get(FIELDS).and_then(Value::as_str),
        intervals.get(ITEMS).and_then(Value::as_str),
    ) else {
        return Vec::new();
    };
    let at = |name: &str| fields.split(',').position(|f| f == name);
    let (Some(xi), Some(yi)) = (at(x), at(y)) else {
        return Vec::new();
    };
    items
        .split_terminator(';')
        .filter_map(|item| {
            let figure = |i: usize| item.split(',').nth(i)?.parse::<f64>().ok();
            Some((figure(xi)?, figure(yi)?))
        })
        .collect()
}

/// Every packed array in `v` as the objects it was packed from (for tests that compare what a read
/// holds with what it was given).
#[cfg(test)]
pub(super) fn unpack_all(v: &mut Value) {
    if is_packed(v) {
        let names: Vec<String> = v[FIELDS]
            .as_str()
            .unwrap_or_default()
            .split(',')
            .map(String::from)
            .collect();
        let items: Vec<Value> = v[ITEMS]
            .as_str()
            .unwrap_or_default()
            .split_terminator(';')
            .map(|item| {
                let m: serde_json::Map<String, Value> = names
                    .iter()
                    .zip(item.split(','))
                    .filter_map(|(k, x)| Some((k.clone(), x.parse::<f64>().ok()?.into())))
                    .collect();
                Value::Object(m)
            })
            .collect();
        *v = Value::Array(items);
        return;
    }
    match v {
        Value::Array(a) => a.iter_mut().for_each(unpack_all),
        Value::Object(m) => m.values_mut().for_each(unpack_all),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_intervals_give_back_each_figure_exactly_and_skip_what_an_item_lacks() {
        let items = serde_json::json!([
            {"end_s": 0.4, "iops": 1.0000000000000002, "lat_p99_ns": 9000.0},
            {"end_s": 0.8, "iops": 1e300},
            {"end_s": 1.2, "iops": 3.0, "lat_p99_ns": 5e-324},
            {"end_s": 1.6, "iops": 12_345_678_901_u64},
        ]);
        let f = fields(&[&["end_s"], &["iops"], &["lat_p99_ns"], &["iops"]]).unwrap();
        assert_eq!(f, ["end_s", "iops", "lat_p99_ns"]);
        let mut p = Packer::new(f);
        for i in items.as_array().unwrap() {
            p.push(i);
        }
        let packed = p.finish();
        assert!(is_packed(&packed));
        for (x, y) in [
            ("end_s", "iops"),
            ("end_s", "lat_p99_ns"),
            ("iops", "end_s"),
        ] {
            assert_eq!(
                item_pairs(&packed, x, y),
                item_pairs(&items, x, y),
                "{x} {y}: {packed}"
            );
        }
        assert_eq!(item_pairs(&packed, "end_s", "lat_p99_ns").len(), 2);
        assert!(item_pairs(&packed, "end_s", "none").is_empty());
        // A path deeper than one key, or none, is not packed.
        assert!(fields(&[&["end_s"], &["a", "b"]]).is_none());
        assert!(fields(&[]).is_none());
        assert!(fields(&[&[]]).is_none());
        assert_eq!(fields(&[&[], &["iops"]]).unwrap(), ["iops"]);
    }
}
