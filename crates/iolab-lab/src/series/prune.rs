//! Records cut down to what their reader shows: as parsed values ([`kept`]), or as they are parsed
//! ([`Pruned`]), so that what is let go is never made.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// What a record that cannot be one iolab wrote is called.
pub(super) const FORGED: &str = "not a record iolab wrote (damaged or forged)";

/// Which parts of each record's run result a reader keeps.
#[derive(Clone, Copy)]
pub enum Keep<'a> {
    /// All of it (`sweep --resume`, a fleet's results).
    All,
    /// The value at each of these paths of object keys (the whole value at a path), and nothing else of
    /// a run's result (one with a `spec`, or figures alone); a workload's result is kept whole by
    /// [`kept`] (a record held to be run again), cut down like a run's by a read.
    Paths(&'a [&'a [&'a str]]),
    /// As [`Keep::Paths`], each record of JSON lines then held as its JSON text (`compare`, which reads
    /// each once into figures of its own: as values, a record of a spec and a host took about 8 times
    /// its text).
    Texts(&'a [&'a [&'a str]]),
}

impl<'a> Keep<'a> {
    /// The paths kept (none: all is).
    pub fn paths(self) -> Option<&'a [&'a [&'a str]]> {
        match self {
            Keep::All => None,
            Keep::Paths(p) | Keep::Texts(p) => Some(p),
        }
    }
}

/// The record's own keys a reader keeps (`settings`, which only `--resume` reads, is not).
pub(super) const RECORD_KEYS: [&str; 6] =
    ["point", "result", "error", "exit_code", "repeat", "repeats"];

/// A record held as its JSON text ([`Keep::Texts`]), in the room it takes (made as it is written, a text
/// has up to twice its bytes of room: 130 MB of a survey's 100 MB).
pub fn text_of(v: &Value) -> Value {
    let mut t = v.to_string();
    t.shrink_to_fit();
    Value::String(t)
}

/// `rec` cut down to what `keep` keeps: for [`Keep::Paths`], its own keys above and of a run's result
/// (not a workload's) the paths listed, and what [`super::shape::impossible`] checks.
pub fn kept(rec: Value, keep: Keep) -> Value {
    cut(rec, keep, false)
}

/// `rec`, already checked by [`super::shape::impossible`], cut down to what `keep` keeps: its own keys
/// above and of any result (a workload's too) the paths listed and the figures; what only the check
/// read (a run's disturbance, its bytes, the schema) is let go. A decimal-lines record held its
/// disturbance (four numbers, one object) for no reader: about a sixth of its memory.
pub(super) fn kept_checked(rec: Value, keep: Keep) -> Value {
    cut(rec, keep, true)
}

fn cut(mut rec: Value, keep: Keep, checked: bool) -> Value {
    let Some(paths) = keep.paths() else {
        return rec;
    };
    if let Some(o) = rec.as_object_mut() {
        o.retain(|k, _| RECORD_KEYS.contains(&k.as_str()));
    }
    // A result of figures without a spec is cut down too: kept whole, 249,000 of them (a few counts
    // each) took 2 GB.
    if let Some(r) = rec
        .get_mut("result")
        .filter(|r| checked || r.get("workload").is_none())
    {
        let whole = r.take();
        let mut all: Vec<&[&str]> = paths.to_vec();
        all.extend(super::figures::FIGURES.iter().map(|f| f.path));
        all.extend(super::figures::SPAN);
        // What the records are checked by stays until they are (as where they are cut as parsed).
        if !checked {
            all.extend(CHECKED);
        }
        *r = pruned(whole, &all);
    }
    compact(rec)
}

/// `v` with every array and object holding no room beyond its items: as parsed, a pair of numbers has
/// room for four, and the room of the many small arrays of a record is most of its memory.
fn compact(v: Value) -> Value {
    match v {
        Value::Array(a) => {
            // Collected in place (the same room): shrunk after.
            let mut a: Vec<Value> = a.into_iter().map(compact).collect();
            a.shrink_to_fit();
            Value::Array(a)
        }
        Value::Object(m) => {
            let items: Vec<(String, Value)> = m.into_iter().map(|(k, x)| (k, compact(x))).collect();
            Value::Object(items.into_iter().collect())
        }
        v => v,
    }
}

/// The parts of `v` at `paths`, the objects on the way kept with only the keys that lead to them. A path
/// keeps the whole value at it unless a longer path goes on from it: then only what the longer ones
/// reach (a reader asks for the shorter one for its presence: `latency` for whether a run has one). An
/// array is no step of a path: the paths go on into each of its items.
fn pruned(v: Value, paths: &[&[&str]]) -> Value {
    let deeper: Vec<&[&str]> = paths.iter().copied().filter(|p| !p.is_empty()).collect();
    if deeper.is_empty() {
        return v;
    }
    // An array is passed through: the paths go on into each of its items (an interval's figures); one
    // packed as it was parsed is kept as it is.
    let m = match v {
        v if super::packed::is_packed(&v) => return v,
        Value::Object(m) => m,
        Value::Array(a) => {
            let items = a.into_iter().map(|x| pruned(x, paths));
            return Value::Array(items.filter(|x| !is_empty(x)).collect());
        }
        v => return v,
    };
    let out: serde_json::Map<String, Value> = m
        .into_iter()
        .filter_map(|(k, x)| {
            let under: Vec<&[&str]> = deeper
                .iter()
                .filter(|p| p[0] == k)
                .map(|p| &p[1..])
                .collect();
            (!under.is_empty()).then(|| (k, pruned(x, &under)))
        })
        .collect();
    Value::Object(out)
}

/// Whether a value cut down to paths going on into it holds nothing of them: an empty object or array,
/// or a scalar where an object was to be.
pub(super) fn is_empty(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => true,
    }
}

/// Parses a value keeping only what `paths` reach (as [`pruned`] would cut it, without making the rest),
/// and refusing an array longer than any iolab writes under its key (the second field: see [`BOUNDED`]).
/// The last field: the value is an array a reader's path ends at, to be held packed
/// ([`super::packed::PACKED_WHOLE`]); a read that keeps its records whole packs nothing, since its
/// readers read them as iolab's types.
pub(super) struct Pruned<'p, 'a>(
    pub(super) &'p [&'a [&'a str]],
    pub(super) Option<Bound>,
    pub(super) Option<&'p Holds<'p>>,
    pub(super) &'p Budget,
    pub(super) bool,
);

/// How many more bytes of memory the values a read makes may take, as it goes: each line read adds its
/// length times the read's multiple, and what a parse makes is charged as it is made (see [`cost`]).
/// A file iolab writes, parsed whole, takes at most 12 times its text (a key and a number in an object,
/// as parsed, about 10 times; a sweep's settings of 20,000 seeds 12), and cut down to what a reader shows
/// at most 4 (a survey of one round, small, 6.5): measured over 270 files of every kind iolab writes. A
/// forged one of many small objects (`{"":{}}`) would take up to 40 times. So what a reader holds stays
/// a small multiple of what it read, whatever the text is made of.
pub(super) struct Budget {
    left: std::cell::Cell<usize>,
    per_byte: usize,
}

/// The most memory a read that keeps what it parses whole makes per byte of its text (`--resume`, a
/// fleet's files).
pub(super) const WHOLE_PER_BYTE: usize = 16;
/// The most memory a read that keeps only what a reader shows makes per byte (`report`, `compare`).
pub(super) const SHOWN_PER_BYTE: usize = 10;

/// What one value made takes (an estimate of its heap, the allocator's headers included): its place in
/// its array or object (an object's entry also holds its key, hash and index), and for a string its text.
pub(super) mod cost {
    use serde_json::Value;
    /// An item of an array.
    pub const ITEM: usize = std::mem::size_of::<Value>();
    /// An entry of an object: key and value, the key's text (allocated apart) and the table's index.
    pub const ENTRY: usize = std::mem::size_of::<(String, Value)>() + 8 + 10;
    /// An object's or array's own allocations beyond its items (their headers, a table's control bytes).
    pub const CONTAINER: usize = 64;
    /// A string's text: its bytes, allocated apart (with the allocator's header) unless empty.
    pub fn text(s: &str) -> usize {
        match s.len() {
            0 => 0,
            n => n + 16,
        }
    }
}

impl Budget {
    /// The budget of a read allowed `per_byte` bytes of memory for each byte of its text (and a MiB).
    pub(super) fn new(per_byte: usize) -> Budget {
        Budget {
            left: std::cell::Cell::new(1 << 20),
            per_byte,
        }
    }

    /// The budget of one parse of `bytes` bytes of text whose values are let go after.
    pub(super) fn of(bytes: usize, per_byte: usize) -> Budget {
        let b = Budget::new(per_byte);
        b.grant(bytes);
        b
    }

    /// `bytes` more bytes of text read.
    pub(super) fn grant(&self, bytes: usize) {
        let more = bytes.saturating_mul(self.per_byte);
        self.left.set(self.left.get().saturating_add(more));
    }

    /// `bytes` more made: an error once the budget is spent.
    pub(super) fn take<E: serde::de::Error>(&self, bytes: usize) -> Result<(), E> {
        match self.left.get().checked_sub(bytes) {
            None => Err(E::custom(format!(
                "as parsed it would take more than {} times the memory of its text, more than \
                 records iolab writes: not a file iolab wrote (damaged or forged)",
                self.per_byte
            ))),
            Some(n) => {
                self.left.set(n);
                Ok(())
            }
        }
    }
}

/// A value whose items iolab bounds in all (see [`HOLDS`], [`WHOLE_HOLDS`]): its key and bound, and how
/// many more items it may hold as it is parsed.
pub(super) struct Holds<'k>((&'k str, usize), std::cell::Cell<usize>);

/// The most values a value kept whole holds (at every depth) where no bound above is its own: what iolab
/// writes there is a number, a text or a short list (a profile's notes), and a file that holds a long
/// list there (100,000 numbers as a CPU's model) would be held at about 9 times its text.
const WHOLE_HOLDS: usize = 4096;

/// The most records a file holds: a suite runs at most 200,000 points, a sweep 100,000, and a resumed run
/// adds a line for each point it runs again.
pub const MAX_RECORDS: usize = 250_000;

/// Values whose items (at every depth) iolab bounds in all: a run's spec holds about 60, a record's
/// point at most [`super::shape::MAX_POINT_KEYS`] texts.
/// A sweep's or suite's settings hold each varied key's values (at most as many as its points) and the
/// fixed settings; a suite's summary a few thousand (its answers and findings, with what they cite). A
/// survey's ranking holds a table per target and block size, each a row per method (about 25 values with
/// its ties and pairs): 3,600 for the default survey of 6 tables, 262,144 for over 400.
/// A survey's findings hold about 23 values each (757 for 33 in a real one), at most 256 of them; a
/// record's repeat is `{run, of}`, a `run --repeat` document's its runs and 8 figures' statistics (80).
const HOLDS: [Bound; 7] = [
    ("spec", 128),
    ("point", super::shape::MAX_POINT_KEYS),
    ("settings", MAX_RECORDS + 1024),
    ("summary", 65_536),
    ("ranking", 262_144),
    ("findings", 16_384),
    ("repeat", 1024),
];

impl Holds<'_> {
    /// One more item made: an error past the bound.
    fn one_more<E: serde::de::Error>(&self) -> Result<(), E> {
        match self.1.get() {
            0 => Err(E::custom(format!(
                "`{}` holds more than {} values, more than iolab writes: not a record iolab wrote \
                 (damaged or forged)",
                self.0 .0, self.0 .1
            ))),
            n => {
                self.1.set(n - 1);
                Ok(())
            }
        }
    }
}

/// An array's key and the most items iolab writes in it.
pub(super) type Bound = (&'static str, usize);

/// Arrays whose length iolab bounds, by key wherever they are in a record: a latency summary's CDF (21
/// quantiles; room is left for others) and its plot's buckets (half an octave each, about 90 from 1 ns
/// to the histogram's top), a run's threads (at most 1024). A longer one is a forged record, refused as
/// it is parsed: it is never held.
const BOUNDED: [Bound; 11] = [
    ("cdf", 64),
    ("buckets", 256),
    ("per_thread", 1024),
    // The rule table's findings of a run, and a survey's rounds (at most 100 first rounds, then more
    // up to 64 in all where the order is not decided).
    ("findings", 256),
    ("rounds_ns_per_op", 1024),
    ("round_runs", 1024),
    // A suite's summary: its answers (one per question of the suite file), the seed's figures checked,
    // and the figures one answer or finding cites (a few hundred in the longest, the offload answer).
    ("answers", 256),
    ("published", 1024),
    ("cites", 4096),
    // A `run --repeat` document's statistics, a figure each (8), and a kernels document's figure names.
    ("figures", 64),
    // A survey's runs, a `run --repeat` document's (at most 10,000 repeats): as many as a file's records.
    ("runs", MAX_RECORDS),
];

/// The paths going on under key `k` of an object parsed with `paths` (none: its value is passed over),
/// a spec kept whole read as its own keys.
pub(super) fn under<'p, 'a>(paths: &'p [&'a [&'a str]], k: &str) -> Vec<&'p [&'a str]> {
    // Kept whole: every key with it.
    let under: Vec<&[&str]> = match paths.iter().all(|p| p.is_empty()) {
        true => vec![&[]],
        false => paths
            .iter()
            .filter(|p| p.first() == Some(&k))
            .map(|p| &p[1..])
            .collect(),
    };
    // A spec kept whole: its own keys, each whole.
    match k == "spec" && !under.is_empty() && under.iter().all(|p| p.is_empty()) {
        true => SPEC_KEYS.iter().map(|p| &p[..]).collect(),
        false => under,
    }
}

/// The value of key `k` of an object parsed with `paths` (inside a value bounded in all by `holds`),
/// parsed by `parse` with the seed for it: its paths and bounds. None where no path reaches it (then it
/// is not parsed).
pub(super) fn value_at<E>(
    paths: &[&[&str]],
    k: &str,
    holds: Option<&Holds<'_>>,
    budget: &Budget,
    parse: impl FnOnce(Pruned) -> Result<Value, E>,
) -> Result<Option<Value>, E> {
    let under = under(paths, k);
    if under.is_empty() {
        return Ok(None);
    }
    // A packed array is known by its key (no bound on its length: a long run has many intervals).
    let most = bound_of(k).or(super::packed::PACKED_ARRAYS
        .iter()
        .find(|a| **a == k)
        .map(|a| (*a, usize::MAX)));
    // A value a path ends at (in a value cut down, not one kept whole) is bounded in all: by its own
    // bound, the one of the value it is in, or the default (an object forged where iolab writes a list
    // of bounded length is bounded too; a packed list's items are not counted: see `packed`).
    let ends = under.iter().all(|p| p.is_empty()) && !paths.iter().all(|p| p.is_empty());
    let own = HOLDS
        .iter()
        .find(|b| holds.is_none() && b.0 == k)
        .copied()
        // A run's result kept whole (`--resume`'s reader) holds as many intervals and readings as its
        // run lasted: its read budget bounds it (400 intervals were refused, so a sweep of points of 4 s
        // logged every 10 ms could not be resumed).
        .or((holds.is_none() && ends && k != "result").then_some((k, WHOLE_HOLDS)))
        .map(|b| Holds(b, std::cell::Cell::new(b.1)));
    let pack = ends && super::packed::PACKED_WHOLE.contains(&k);
    parse(Pruned(&under, most, own.as_ref().or(holds), budget, pack)).map(Some)
}

impl Pruned<'_, '_> {
    /// Whether the value is kept whole (no path goes on into it).
    fn whole(&self) -> bool {
        self.0.iter().all(|p| p.is_empty())
    }

    /// An array packed as it is parsed (see [`super::packed`]): each item is made, packed and let go. Its
    /// items' values are not counted against a bound in all: packed, they take about their text, which
    /// the budget charges (a deep queue's batch sizes may be thousands of pairs).
    fn packed<'de, S: SeqAccess<'de>>(
        self,
        mut s: S,
        mut p: super::packed::Packer,
        whole: bool,
    ) -> Result<Value, S::Error> {
        while let Some(v) = s.next_element_seed(Pruned(self.0, None, None, self.3, false))? {
            // As where not packed: an item holding none of the figures is not held.
            if !whole && is_empty(&v) {
                continue;
            }
            if let Some(b) = self.1.filter(|b| p.count() >= b.1) {
                return Err(too_many(b));
            }
            let before = p.len();
            p.push(&v);
            self.3.take(p.len() - before)?;
        }
        Ok(p.finish())
    }

    /// How the array is packed as it is parsed, if it is: by the keys the paths keep of each item, or
    /// each item whole; and which.
    fn packing(&self) -> Option<(super::packed::Packer, bool)> {
        use super::packed::{fields, Packer, PACKED_ARRAYS};
        if self.4 && self.whole() {
            return Some((Packer::whole(), true));
        }
        let key = self.1?.0;
        let f = fields(self.0).filter(|_| PACKED_ARRAYS.contains(&key))?;
        Some((Packer::new(f), false))
    }
}

/// The error of an array longer than iolab writes under its key.
fn too_many<E: serde::de::Error>((key, most): Bound) -> E {
    E::custom(format!(
        "`{key}` holds more than {most} items, more than iolab writes: not a record iolab wrote \
         (damaged or forged)"
    ))
}

impl<'de> DeserializeSeed<'de> for Pruned<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Pruned<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Value, M::Error> {
        self.3.take(cost::CONTAINER)?;
        let mut items: Vec<(String, Value)> = Vec::new();
        // A key is borrowed from the line while it is looked at: only a kept one is allocated.
        while let Some(Key(k)) = m.next_key::<Key>()? {
            match value_at(self.0, &k, self.2, self.3, |seed| m.next_value_seed(seed))? {
                None => m.next_value_seed(Skip(self.2, bound_of(&k)))?,
                Some(v) => {
                    if let Some(h) = self.2 {
                        h.one_more()?;
                    }
                    self.3.take(cost::ENTRY + cost::text(&k))?;
                    items.push((k.into_owned(), v));
                }
            }
        }
        Ok(Value::Object(items.into_iter().collect()))
    }

    // An array passes the paths on to each item, as `pruned` does (of an interval only the figures a
    // chart draws). Made with room for two items (most arrays of a record are pairs), the room shrunk to
    // the items after.
    fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<Value, S::Error> {
        self.3.take(cost::CONTAINER)?;
        if let Some((p, whole)) = self.packing() {
            return self.packed(s, p, whole);
        }
        let mut a = Vec::with_capacity(2);
        let whole = self.whole();
        while let Some(v) = s.next_element_seed(Pruned(self.0, None, self.2, self.3, false))? {
            // Where paths go on into the items, an item they reach nothing in is not held: a reader
            // finds nothing there (an interval without its figures).
            if !whole && is_empty(&v) {
                continue;
            }
            if let Some(b) = self.1.filter(|b| a.len() >= b.1) {
                return Err(too_many(b));
            }
            if let Some(h) = self.2 {
                h.one_more()?;
            }
            self.3.take(cost::ITEM)?;
            a.push(v);
        }
        a.shrink_to_fit();
        Ok(Value::Array(a))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.3.take(cost::text(v))?;
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.3.take(cost::text(&v))?;
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// A value no path reaches, passed over as it is parsed but held to what a kept one is: its texts whole
/// JSON (no lone surrogate), its numbers within a float's range, its items counted against the bound in
/// all of the value it is in, an array under a key of [`BOUNDED`] no longer than its bound. So whether a
/// forged record is refused does not depend on which parts of it a reader keeps: `report`, `compare` and
/// `sweep --resume` refuse the same files.
struct Skip<'h, 'k>(Option<&'h Holds<'k>>, Option<Bound>);

/// The bound of an array under key `k` ([`BOUNDED`]), if it has one.
fn bound_of(k: &str) -> Option<Bound> {
    BOUNDED.iter().find(|b| b.0 == k).copied()
}

impl<'de> DeserializeSeed<'de> for Skip<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<(), M::Error> {
        while let Some(Key(k)) = m.next_key::<Key>()? {
            m.next_value_seed(Skip(self.0, bound_of(&k)))?;
            self.0.map_or(Ok(()), |h| h.one_more())?;
        }
        Ok(())
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> Result<(), S::Error> {
        let mut n = 0;
        while s.next_element_seed(Skip(self.0, None))?.is_some() {
            if let Some(b) = self.1.filter(|b| n >= b.1) {
                return Err(too_many(b));
            }
            n += 1;
            self.0.map_or(Ok(()), |h| h.one_more())?;
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// An object's key, borrowed from the text where it has no escapes.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// The paths of a record (its own keys whole, a summary line's too) that reach what `keep` keeps of its
/// result, and what [`super::shape::impossible`] checks.
pub(super) fn record_paths<'a>(result: &[&'a [&'a str]]) -> Vec<Vec<&'a str>> {
    let mut out: Vec<Vec<&str>> = RECORD_KEYS
        .iter()
        .filter(|k| **k != "result")
        .map(|k| vec![*k])
        .collect();
    // A suite's summary line: the fields of `answers::Summary`, each whole (of a summary that is not an
    // object, nothing is made).
    out.extend(SUMMARY_KEYS.iter().map(|k| vec!["summary", *k]));
    let checked = super::figures::FIGURES
        .iter()
        .map(|f| f.path)
        .chain(super::figures::SPAN)
        .chain(CHECKED.iter().copied());
    for p in result.iter().copied().chain(checked) {
        out.push(std::iter::once("result").chain(p.iter().copied()).collect());
    }
    out
}

/// A spec's own keys (the fields of [`iolab_engine::spec::Spec`], and `seed_text`, written and never read
/// back): what a spec kept whole is read as, so that a key iolab never writes there is passed over as it
/// is parsed, never made. Checked against serde's names of the fields by a test.
const SPEC_KEYS: [[&str; 1]; 52] = [
    ["target"],
    ["method"],
    ["op"],
    ["pattern"],
    ["distribution"],
    ["read_pct"],
    ["rate_iops"],
    ["bs"],
    ["bs_split"],
    ["bytes"],
    ["ops"],
    ["duration_s"],
    ["warmup"],
    ["threads"],
    ["inflight"],
    ["direct"],
    ["fsync"],
    ["cold_cache"],
    ["memory_limit"],
    ["msync"],
    ["iovecs"],
    ["qd"],
    ["batch"],
    ["stdio_buffer"],
    ["file_size"],
    ["share_region"],
    ["preallocate"],
    ["walk_per_direction"],
    ["offset"],
    ["zones"],
    ["skip"],
    ["seed"],
    ["verify"],
    ["overwrite"],
    ["keep"],
    ["allow_device_writes"],
    ["count"],
    ["layers"],
    ["ring"],
    ["breakdown"],
    ["offload"],
    ["rw_flags"],
    ["profile"],
    ["profile_hz"],
    ["log_interval_ms"],
    ["op_log_ms"],
    ["sink"],
    ["sink_log"],
    ["clock_every"],
    ["latency_sample"],
    ["method_opts"],
    ["seed_text"],
];

/// The field names of a struct as its derived `Deserialize` names them to the reader it is read by
/// (asked of a reader that only takes the names): for tests, which check the lists readers keep
/// against them (a board's binary would carry every field type's deserializer again for this reader).
#[cfg(test)]
pub fn field_names<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::value::Error;
    struct Names<'n>(&'n mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Names<'_> {
        type Error = Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
            Err(serde::de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Error> {
            *self.0 = fields;
            Err(serde::de::Error::custom("names taken"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut names: &'static [&'static str] = &[];
    // The error is the point: the names are taken before any value is read.
    let _ = T::deserialize(Names(&mut names));
    names
}

/// The fields of a suite's summary (`answers::Summary`).
const SUMMARY_KEYS: [&str; 5] = ["suite", "memory", "findings", "published", "answers"];

/// What [`super::shape::impossible`] reads of a result besides the figures.
/// The host's texts are here whether a reader shows them or not: a forged one is refused by every reader.
const CHECKED: [&[&str]; 26] = [
    &["spec"],
    &["schema_version"],
    &["host", "emulated"],
    &["target", "kind"],
    &["target", "fs"],
    &["host", "cpus_online"],
    &["host", "iolab_version"],
    &["host", "kernel_release"],
    &["host", "kernel_preempt"],
    &["host", "cpu_model"],
    &["host", "accelerator"],
    &["disturbance", "steal_share"],
    &["disturbance", "psi_some"],
    &["disturbance", "runqueue_share"],
    &["disturbance", "others_cpus"],
    &["workload"],
    &["wall_s"],
    &["ops"],
    &["bytes"],
    &["latency", "p999_ns"],
    &["latency", "max_ns"],
    &["gap", "p50_ns"],
    &["gap", "p90_ns"],
    &["gap", "p99_ns"],
    &["gap", "p999_ns"],
    &["gap", "max_ns"],
];

/// The keys of a survey's run besides its result (`SurveyRun`), kept whole; its rounds
/// (`rounds_ns_per_op`, `round_runs`: up to 1,024 each) only where a reader's paths ask for them.
const SURVEY_RUN_KEYS: [&str; 7] = [
    "target",
    "method",
    "bs",
    "unavailable",
    "rounds_disturbed",
    "steal_s",
    "verdict",
];

/// The paths of a whole-file document that reach what `keep` keeps, whichever document it is: a run's
/// result, a record, a `run --repeat` document's runs (results), a survey's runs (their results as a
/// record's, their own keys whole), and of a
/// survey the ranking and findings; also a record's own (a document on one line is parsed before it is
/// known to be one).
pub(super) fn document_paths<'a>(result: &[&'a [&'a str]]) -> Vec<Vec<&'a str>> {
    let mut out = record_paths(result);
    let figures = super::figures::FIGURES
        .iter()
        .map(|f| f.path)
        .chain(super::figures::SPAN);
    // A run's result is kept as a record's is: a repeat document's runs are results, a survey's runs
    // hold one (read as a record's result, the ranking from its time per op and rounds).
    for p in result.iter().copied().chain(figures).chain(CHECKED) {
        // A document's own keys kept whole are not cut down to a result's paths under the same key (a
        // survey's findings are not a run's, of which a reader may keep only the text).
        if p.len() == 1 || !DOCUMENT_KEYS.contains(&p[0]) {
            out.push(p.to_vec());
        }
        out.push([&["runs"][..], p].concat());
        out.push([&["runs", "result"][..], p].concat());
    }
    out.extend(SURVEY_RUN_KEYS.iter().map(|k| vec!["runs", *k]));
    out.extend(DOCUMENT_KEYS.iter().map(|k| vec![*k]));
    out
}

/// A document's own keys besides its runs, kept whole: a `run --repeat` document's repeat, a survey's
/// ranking and findings.
const DOCUMENT_KEYS: [&str; 3] = ["repeat", "ranking", "findings"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_keys_kept_are_serdes_names_of_the_fields() {
        let mut spec: Vec<&str> = field_names::<iolab_engine::spec::Spec>().to_vec();
        spec.push("seed_text");
        assert_eq!(SPEC_KEYS.iter().map(|k| k[0]).collect::<Vec<_>>(), spec);
        let mut survey_run = SURVEY_RUN_KEYS.to_vec();
        survey_run.insert(3, "result");
        survey_run.splice(5..5, ["rounds_ns_per_op", "round_runs"]);
        assert_eq!(field_names::<crate::survey::SurveyRun>(), &survey_run[..]);
    }
}
