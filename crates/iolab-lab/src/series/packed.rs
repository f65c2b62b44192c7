//! Long arrays of a record as a reader that shows them holds them: one text for the whole array. As
//! objects, an interval of three figures took about 590 bytes (an entry of 112 bytes per key, its table
//! and key texts) where its text took 88; a number alone takes a `Value` of 80 bytes: 14 records of
//! 100,000 intervals, a file of 101 MB, were reported in 810 MB. Packed, each value takes about its
//! text: a number its shortest exact text, a string its bytes and their count.
//! Only a read cut down to part of a record packs (`report`); a read that keeps a record whole (a
//! sweep's `--csv-intervals`, `--resume`, a fleet) holds the objects. A reader reads either through
//! [`items`].

use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write;

/// The arrays of objects a read packs where it keeps some keys of each item (see [`fields`]), by key: a
/// run's intervals; its page cache read every 100 ms under a memory limit (`memory.over_time`: 10,000
/// readings a record of a 200 MB file took 986 MB as objects); a survey's rounds of a run (1,024 a run:
/// 7 times a 200 MB survey's text); a profile's shares (2,000 functions each); a run's findings.
pub(super) const PACKED_ARRAYS: [&str; 7] = [
    "intervals",
    "over_time",
    "round_runs",
    "top_self",
    "top_inclusive",
    "groups",
    "findings",
];
/// The arrays a read packs where it keeps them whole: a survey's time per op of each round, a profile's
/// folded stacks, io_uring's requests per submission (`[[requests, count], ...]`, one per size), a
/// latency summary's quantiles and buckets (pairs of numbers: 64 and 256 pairs a run made a 200 MB file
/// of records take 881 MB).
pub(super) const PACKED_WHOLE: [&str; 5] = [
    "rounds_ns_per_op",
    "folded",
    "batch_histogram",
    "cdf",
    "buckets",
];
/// A packed array is one string: this mark, this process's own number ([`token`]) in hex and a bar;
/// its items' keys joined by commas (`*` where the items are held whole) and a bar; then its items: of
/// each, the value of each key in that order by commas (nothing where the item has none), or the whole
/// item; each item ended by a semicolon. A file may hold a string of this mark, but not this number, so
/// it is never read as packed (its text would make 40 times its bytes of values). One string, not an
/// object of three keys: the object took about 350 bytes beside its text, 100 MB of a report of
/// 157,000 runs whose latency quantiles and buckets were packed.
const MARK: &str = "\u{1}packed:";
/// Where the items are held whole.
const WHOLE: &str = "*";

/// The text a packed array of this process starts with.
fn head() -> &'static str {
    static HEAD: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HEAD.get_or_init(|| format!("{MARK}{:x}|", token()))
}

/// A number of this process's own, from the random keys std's hash maps are seeded with: no file can
/// know it.
fn token() -> u64 {
    use std::hash::BuildHasher;
    static TOKEN: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TOKEN.get_or_init(|| std::collections::hash_map::RandomState::new().hash_one(0x10_1ab))
}

/// The keys of each item the paths under a packed array keep, where each is one key of the item (else
/// None: the array is held as parsed). An empty path beside them asks only for the array's presence (as
/// in `prune::pruned`).
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
    /// The keys kept of each item; None: each item whole.
    fields: Option<Vec<String>>,
    items: String,
    count: usize,
}

impl Packer {
    /// Of each item the values of `fields`.
    pub(super) fn new(fields: Vec<String>) -> Packer {
        Packer {
            fields: Some(fields),
            items: String::new(),
            count: 0,
        }
    }

    /// Each item whole.
    pub(super) fn whole() -> Packer {
        Packer {
            fields: None,
            items: String::new(),
            count: 0,
        }
    }

    /// Adds an item (an object cut down to the fields, or a whole value).
    pub(super) fn push(&mut self, item: &Value) {
        match &self.fields {
            Some(fields) => {
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        self.items.push(',');
                    }
                    if let Some(x) = item.get(f) {
                        put(x, &mut self.items);
                    }
                }
            }
            None => put(item, &mut self.items),
        }
        self.items.push(';');
        self.count += 1;
    }

    /// The bytes held so far.
    pub(super) fn len(&self) -> usize {
        self.items.len()
    }

    /// The items held so far.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// The packed array (an empty one as it was: an array takes less than a packed one).
    pub(super) fn finish(self) -> Value {
        if self.count == 0 {
            return Value::Array(Vec::new());
        }
        let fields = self.fields.map(|f| f.join(","));
        let fields = fields.as_deref().unwrap_or(WHOLE);
        let mut s = String::with_capacity(head().len() + fields.len() + 1 + self.items.len());
        s.push_str(head());
        s.push_str(fields);
        s.push('|');
        s.push_str(&self.items);
        Value::String(s)
    }
}

/// `v` as text read back by [`Cursor::value`]: null `n`, booleans `t` and `f`, an integer in decimal, any
/// other number in its shortest exact exponent form (`4e-1`, `1e300`: never 301 digits), a string as
/// `s`, its length in bytes, `:` and its bytes, arrays and objects in brackets and braces by commas (an
/// object's keys as strings, each followed by its value).
fn put(v: &Value, o: &mut String) {
    match v {
        Value::Null => o.push('n'),
        Value::Bool(b) => o.push(if *b { 't' } else { 'f' }),
        Value::Number(n) => {
            let _ = match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => write!(o, "{u}"),
                (None, Some(i), _) => write!(o, "{i}"),
                (None, None, x) => write!(o, "{:e}", x.unwrap_or(f64::NAN)),
            };
        }
        Value::String(s) => put_str(s, o),
        Value::Array(a) => {
            o.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    o.push(',');
                }
                put(x, o);
            }
            o.push(']');
        }
        Value::Object(m) => {
            o.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    o.push(',');
                }
                put_str(k, o);
                put(x, o);
            }
            o.push('}');
        }
    }
}

fn put_str(s: &str, o: &mut String) {
    let _ = write!(o, "s{}:", s.len());
    o.push_str(s);
}

/// Reads back what [`put`] wrote; None at text it did not write.
struct Cursor<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    /// Whether the next byte is `b` (then it is passed).
    fn eat(&mut self, b: u8) -> bool {
        let is = self.peek() == Some(b);
        self.i += usize::from(is);
        is
    }

    fn value(&mut self) -> Option<Value> {
        let v = match self.peek()? {
            b'n' | b't' | b'f' => {
                self.i += 1;
                match self.s.as_bytes()[self.i - 1] {
                    b'n' => Value::Null,
                    b => Value::Bool(b == b't'),
                }
            }
            b's' => Value::String(self.string()?.to_string()),
            b'[' => {
                self.i += 1;
                let mut a = Vec::new();
                while !self.eat(b']') {
                    if !a.is_empty() && !self.eat(b',') {
                        return None;
                    }
                    a.push(self.value()?);
                }
                Value::Array(a)
            }
            b'{' => {
                self.i += 1;
                let mut m = serde_json::Map::new();
                while !self.eat(b'}') {
                    if !m.is_empty() && !self.eat(b',') {
                        return None;
                    }
                    let k = self.string()?.to_string();
                    m.insert(k, self.value()?);
                }
                Value::Object(m)
            }
            _ => self.number()?,
        };
        Some(v)
    }

    fn number(&mut self) -> Option<Value> {
        let rest = &self.s[self.i..];
        let end = rest.find([',', ';', ']', '}']).unwrap_or(rest.len());
        let t = &rest[..end];
        self.i += end;
        if t.contains('e') {
            return serde_json::Number::from_f64(t.parse().ok()?).map(Value::Number);
        }
        match t.parse::<u64>() {
            Ok(u) => Some(u.into()),
            Err(_) => t.parse::<i64>().ok().map(Value::from),
        }
    }

    fn string(&mut self) -> Option<&'a str> {
        let rest = self.s.get(self.i..)?.strip_prefix('s')?;
        let colon = rest.find(':')?;
        let len: usize = rest[..colon].parse().ok()?;
        let start = self.i + 1 + colon + 1;
        let t = self.s.get(start..start.checked_add(len)?)?;
        self.i = start + len;
        Some(t)
    }

    /// An item packed by its keys' values: an object of those it has.
    fn object(&mut self, names: &[&str]) -> Option<Value> {
        let mut m = serde_json::Map::new();
        for (i, k) in names.iter().enumerate() {
            if i > 0 && !self.eat(b',') {
                return None;
            }
            if !matches!(self.peek(), Some(b',' | b';')) {
                m.insert(k.to_string(), self.value()?);
            }
        }
        Some(Value::Object(m))
    }
}

/// Whether `v` is an array this process packed (an object of the same keys in a file is not).
pub(super) fn is_packed(v: &Value) -> bool {
    parts(v).is_some()
}

/// A packed array's keys of each item (None: items whole) and its items' text.
fn parts(v: &Value) -> Option<(Option<&str>, &str)> {
    let rest = v.as_str()?.strip_prefix(head())?;
    let (fields, items) = rest.split_once('|')?;
    Some(((fields != WHOLE).then_some(fields), items))
}

/// The items of an array, whether held as parsed or packed (then made again, each as it was parsed with
/// the keys a read kept); nothing where `v` is neither.
pub fn items(v: &Value) -> Cow<'_, [Value]> {
    if let Some(a) = v.as_array() {
        return Cow::Borrowed(a);
    }
    let Some((fields, text)) = parts(v) else {
        return Cow::Borrowed(&[]);
    };
    let names: Option<Vec<&str>> = fields.map(|f| f.split(',').collect());
    let mut c = Cursor { s: text, i: 0 };
    let mut out = Vec::new();
    while c.i < text.len() {
        let item = match &names {
            Some(n) => c.object(n),
            None => c.value(),
        };
        match item {
            Some(item) if c.eat(b';') => out.push(item),
            _ => break,
        }
    }
    Cow::Owned(out)
}

/// (x, y) of each item of an array (a run's intervals, its memory readings) that has both figures, in
/// order, whether held as objects or packed.
pub fn item_pairs(intervals: &Value, x: &str, y: &str) -> Vec<(f64, f64)> {
    if let Some((Some(fields), text)) = parts(intervals) {
        return packed_pairs(fields, text, x, y);
    }
    items(intervals)
        .iter()
        .filter_map(|i| Some((i.get(x)?.as_f64()?, i.get(y)?.as_f64()?)))
        .collect()
}

/// [`item_pairs`] of an array packed by its items' keys, read from its text an item at a time: made
/// again as objects first, 10 million intervals of two figures (200 MB of records) took 4.6 GB.
fn packed_pairs(fields: &str, text: &str, x: &str, y: &str) -> Vec<(f64, f64)> {
    let names: Vec<&str> = fields.split(',').collect();
    let (Some(xi), Some(yi)) = (
        names.iter().position(|n| *n == x),
        names.iter().position(|n| *n == y),
    ) else {
        return Vec::new();
    };
    let mut c = Cursor { s: text, i: 0 };
    let mut out = Vec::new();
    while c.i < text.len() {
        let mut pair = (None, None);
        for i in 0..names.len() {
            if i > 0 && !c.eat(b',') {
                return out;
            }
            if matches!(c.peek(), Some(b',' | b';')) {
                continue;
            }
            let Some(v) = c.value() else {
                return out;
            };
            if i == xi {
                pair.0 = v.as_f64();
            }
            if i == yi {
                pair.1 = v.as_f64();
            }
        }
        if !c.eat(b';') {
            return out;
        }
        if let (Some(a), Some(b)) = pair {
            out.push((a, b));
        }
    }
    out
}

/// Every packed array in `v` made the array of items it was packed from (for a reader that reads `v` as
/// a type of its own, and tests that compare what a read holds with what it was given).
pub fn unpack_all(v: &mut Value) {
    if is_packed(v) {
        *v = Value::Array(items(v).into_owned());
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
    use serde_json::json;

    #[test]
    fn packed_intervals_give_back_each_figure_exactly_and_skip_what_an_item_lacks() {
        let given = json!([
            {"end_s": 0.4, "iops": 1.0000000000000002, "lat_p99_ns": 9000.0},
            {"end_s": 0.8, "iops": 1e300},
            {"end_s": 1.2, "iops": 3.0, "lat_p99_ns": 5e-324},
            {"end_s": 1.6, "iops": 12_345_678_901_u64},
        ]);
        let f = fields(&[&["end_s"], &["iops"], &["lat_p99_ns"], &["iops"]]).unwrap();
        assert_eq!(f, ["end_s", "iops", "lat_p99_ns"]);
        let mut p = Packer::new(f);
        for i in given.as_array().unwrap() {
            p.push(i);
        }
        assert_eq!(p.count(), 4);
        let packed = p.finish();
        assert!(is_packed(&packed));
        assert_eq!(
            items(&packed).into_owned(),
            given.as_array().unwrap().clone()
        );
        for (x, y) in [
            ("end_s", "iops"),
            ("end_s", "lat_p99_ns"),
            ("iops", "end_s"),
        ] {
            assert_eq!(
                item_pairs(&packed, x, y),
                item_pairs(&given, x, y),
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

    #[test]
    fn any_value_packed_whole_or_by_keys_is_given_back_as_it_was() {
        // Strings with the packing's own marks in them, booleans, null, integers past 2^53, negative and
        // nested values: each item as it was, in order.
        let whole = json!([
            "iolab;vfs_write,ksys_write s3:x 7",
            [[1, 18_446_744_073_709_551_615_u64], [-5, 0.25]],
            {"a;": null, "": [true, false], "ü": {"x": -1e-300}},
            [],
            {},
            "",
            -0.0,
        ]);
        let mut p = Packer::whole();
        whole.as_array().unwrap().iter().for_each(|i| p.push(i));
        let packed = p.finish();
        assert!(is_packed(&packed));
        assert_eq!(
            items(&packed).into_owned(),
            whole.as_array().unwrap().clone()
        );
        let shares = json!([
            {"name": "copy_to_user,x;y", "kernel": true, "share": 0.5},
            {"name": "s2:ab", "kernel": false},
            {"share": 1e-9},
        ]);
        let mut p = Packer::new(vec!["name".into(), "kernel".into(), "share".into()]);
        shares.as_array().unwrap().iter().for_each(|i| p.push(i));
        let packed = p.finish();
        assert_eq!(
            items(&packed).into_owned(),
            shares.as_array().unwrap().clone()
        );
        // Text it did not write gives what it read before it, never a panic.
        for bad in ["s99:ab;", "s2:ab", "[1,2;", "{s1:a};", "1e;", "s-1:;", "x;"] {
            let v = Value::String(format!("{}{WHOLE}|{bad}", head()));
            assert!(items(&v).len() <= 1, "{bad}");
        }
        // A string of the same mark without this process's number (as a file may hold) is no array.
        let text = packed.as_str().unwrap();
        let other = format!("{MARK}{:x}|", token() ^ 1);
        for forged in [
            text.replacen(head(), &other, 1),
            text.replacen(head(), MARK, 1),
        ] {
            let forged = Value::String(forged);
            assert!(!is_packed(&forged) && items(&forged).is_empty());
        }
    }
}
