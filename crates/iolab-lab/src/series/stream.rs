//! Reading a file of records as a stream: one line at a time, each parsed and (for `report` and `compare`)
//! cut down to the parts of its result the reader shows, so that what is held is the records kept and
//! never the file's text beside them. A byte no JSON text holds (NUL, another control byte) ends the read
//! where it is found, naming its offset, without reading the rest of the file.

pub use super::prune::Keep;
use super::prune::{kept_checked, FORGED};
use iolab_engine::error::{Error, Result};
use serde_json::Value;
use std::io::{BufRead, Read};
use std::path::Path;

/// What a file of records holds.
#[derive(Default)]
pub struct RecordFile {
    /// Each `{"point", "result"}` or `{"point", "error"}`, a point that did not run left out where a later
    /// record of the same point follows it.
    pub records: Vec<Value>,
    /// Bytes of a cut-short last line left out (a sweep killed mid-write).
    pub cut: usize,
    /// The `summary` of the file's last suite summary line (`answers::record`): the latest findings.
    pub summaries: Vec<Value>,
    /// A whole-file document (`run --json`, a survey's) without its `runs`; none for JSON lines.
    pub document: Option<Value>,
}

/// The records of the regular file `path` given by `flag` (at most
/// [`iolab_engine::input::RECORDS_INPUT`] bytes), read as a stream.
pub fn read_file(path: &Path, flag: &str, keep: Keep) -> Result<RecordFile> {
    let f = iolab_engine::input::open_regular(
        path,
        flag,
        "file of records",
        iolab_engine::input::RECORDS_INPUT,
    )?;
    read_open(f, path, iolab_engine::input::RECORDS_INPUT, keep).map_err(|e| match e {
        Error::Usage { .. } => e,
        e => Error::usage(flag, e.to_string()),
    })
}

/// The records of `f`, the open file `path` of at most `limit` bytes (a file that grows past it while it
/// is read is refused), read as a stream.
pub fn read_open(f: impl Read, path: &Path, limit: u64, keep: Keep) -> Result<RecordFile> {
    let r = std::io::BufReader::with_capacity(1 << 16, Checked::new(f, limit));
    read_from(r, path, keep)
}

/// The records of a file's text already read (`sweep --resume` holds it to rewrite the file).
pub fn read_text(text: &str, path: &Path) -> Result<RecordFile> {
    read_from(
        std::io::BufReader::new(Checked::new(text.as_bytes(), u64::MAX)),
        path,
        Keep::All,
    )
}

/// A JSON text iolab wrote whole (a fleet host's outcome), parsed within the memory such a text takes
/// (see [`super::prune::WHOLE_PER_BYTE`]); refused as damaged or forged beyond it.
pub fn value_of(text: &str) -> serde_json::Result<Value> {
    let budget = super::prune::Budget::of(text.len(), super::prune::WHOLE_PER_BYTE);
    Parse::Whole.of(text.as_bytes(), &budget)
}

/// Whether the parser's error `e` is at the end of `text` (what follows it is blank): a document cut
/// inside a number ("1e", "-") is a syntax error there, not an end of input, and cut short all the same.
fn at_end(text: &[u8], e: &serde_json::Error) -> bool {
    let Some(start) = text
        .split_inclusive(|b| *b == b'\n')
        .take(e.line().saturating_sub(1))
        .map(<[u8]>::len)
        .try_fold(0usize, usize::checked_add)
    else {
        return false;
    };
    let at = start.saturating_add(e.column().saturating_sub(1));
    text.get(at..)
        .is_some_and(|rest| rest.iter().all(u8::is_ascii_whitespace))
}

/// Whether `text` ends mid-value: the parser ran out of input, or met a bad number at the text's very end.
/// A parser over a slice places an error met at the end of its input on the last byte ("1." is refused
/// at its "."), so a syntax error is also a cut where the text with a digit added ends mid-value.
fn cut_short(text: &[u8], e: &serde_json::Error) -> bool {
    if e.is_eof() || at_end(text, e) {
        return true;
    }
    let end = text.trim_ascii_end();
    if !e.is_syntax() || !end.last().is_some_and(|b| b".eE+-".contains(b)) {
        return false;
    }
    let mut more = end.to_vec();
    more.push(b'0');
    serde_json::from_slice::<serde::de::IgnoredAny>(&more).is_err_and(|e| e.is_eof())
}

/// Why line `n` of a file of records was refused, placed in the line (the parser counts a line's own
/// lines: "at line 2 column 0" is the end of line `n`, past its newline).
fn line_err(n: usize, e: &serde_json::Error) -> String {
    let said = e.to_string();
    let what = said
        .strip_suffix(&format!(" at line {} column {}", e.line(), e.column()))
        .unwrap_or(&said);
    let at = match e.line() {
        1 => format!("at its byte {}", e.column()),
        _ => "at its end".to_string(),
    };
    match e.is_data() {
        // Refused for what it holds: the reason says it is not iolab's.
        true => format!("line {n}: {what} ({at})"),
        false => format!("line {n}: not whole JSON ({what}, {at}): {FORGED}"),
    }
}

/// Bytes a JSON text never holds outside its strings' escapes: control bytes but tab, LF and CR.
fn not_json(b: u8) -> bool {
    b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')
}

/// A reader that fails at the first byte no JSON text holds, naming its offset, and after `limit` bytes
/// (a file that grew while it was read).
struct Checked<R> {
    inner: R,
    at: u64,
    limit: u64,
}

impl<R: Read> Checked<R> {
    fn new(inner: R, limit: u64) -> Self {
        Checked {
            inner,
            at: 0,
            limit,
        }
    }
}

impl<R: Read> Read for Checked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(i) = buf[..n].iter().position(|&b| not_json(b)) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                bad_byte(self.at + i as u64, buf[i]),
            ));
        }
        self.at += n as u64;
        if self.at > self.limit {
            return Err(std::io::Error::other(format!(
                "more than {} (it grew while it was read); iolab reads at most that of a file of records",
                iolab_engine::units::fmt_size(self.limit)
            )));
        }
        Ok(n)
    }
}

fn bad_byte(at: u64, b: u8) -> String {
    format!("not JSON text: byte {at} is 0x{b:02x}, which no JSON text holds")
}

/// The records of `r` (the text of `path`, for messages); see [`RecordFile`].
pub fn read_from(r: impl BufRead, path: &Path, keep: Keep) -> Result<RecordFile> {
    use super::doc::Failed;
    let bad = |what: String| Error::Runtime(format!("{}: {what}", path.display()));
    let io = |e: std::io::Error| bad(e.to_string());
    let mut out = RecordFile::default();
    let mut s = super::doc::Scan::new(r);
    // The first byte that is not blank: of a record, or the start of a document.
    match s.peek().map_err(io)? {
        None => return Ok(out),
        Some(b'{') => {}
        Some(0xef) => {
            return Err(bad(
                "line 1: it starts with a byte-order mark (EF BB BF), which no file iolab writes \
                 holds: save it as UTF-8 without one"
                    .into(),
            ))
        }
        Some(b) => {
            return Err(bad(format!(
            "line {}: not a file of records: it starts with {:?}, and each record is a JSON object",
            s.line,
            char::from(b)
        )))
        }
    }
    let (first_line, start) = (s.line, s.at);
    // The first object may be a whole document (on one line or many), read a value at a time: a
    // document's text is never held whole. Parsed keeping what a document or a record keeps.
    let doc_paths = owned_paths(keep, super::prune::document_paths);
    let doc_paths = slices(&doc_paths);
    const WHOLE: [&[&str]; 1] = [&[]];
    let doc_parse = Parse::new(doc_paths.as_deref());
    // What the read may make, as it goes: what it holds stays a small multiple of what it read.
    let budget = doc_parse.budget();
    let texts = matches!(keep, Keep::Texts(_));
    let v = match super::doc::object(
        &mut s,
        doc_paths.as_deref().unwrap_or(&WHOLE),
        &budget,
        texts,
    ) {
        Ok(v) => v,
        Err(Failed::Io(e)) => return Err(io(e)),
        // Cut short on its one line (a write interrupted by a kill): the last line, left out.
        Err(Failed::Cut) if s.line == first_line => {
            out.cut = s.at - start;
            return Ok(out);
        }
        Err(Failed::Cut) => {
            return Err(bad(format!(
                "not whole JSON: it ends mid-value, on line {} (its value began on line \
                 {first_line}): cut short (a run killed while it wrote it, or a partial copy)",
                s.line
            )))
        }
        Err(Failed::Bad { line, why }) => return Err(bad(format!("line {line}: {why}"))),
    };
    let record = v.get("point").is_some() || v.get("summary").is_some();
    if !record || s.line != first_line {
        // A document (or one record over several lines), and nothing after it.
        let end = s.line;
        if s.peek().map_err(io)?.is_some() {
            let what = match record {
                // As `jq .` prints records: a file of records holds one on each line.
                true => format!(
                    "more after a first record spread over lines {first_line} to {end} (a record \
                     takes one line: `jq -c` prints them so)"
                ),
                false => format!("text after the document, which ends on line {end}"),
            };
            return Err(bad(format!("line {}: {what}", s.line)));
        }
        return document(v, out, texts).map_err(bad);
    }
    // JSON lines: the first record's line ends after it.
    let mut r = s.into_inner();
    let mut lines = Lines {
        number: first_line - 1,
        ..Default::default()
    };
    if lines.next(&mut r).map_err(io)? && !lines.blank() {
        return Err(bad(format!(
            "line {first_line}: not JSON after its record: {FORGED}"
        )));
    }
    let mut jl = JsonLines {
        pack: matches!(keep, Keep::Paths(_)),
        texts: matches!(keep, Keep::Texts(_)),
        ..Default::default()
    };
    jl.add(v, first_line, keep, &mut out).map_err(&bad)?;
    // The records after the first are cut down as they are parsed (kept as parsed after).
    let paths = owned_paths(keep, super::prune::record_paths);
    let paths = slices(&paths);
    // Cut down again once checked: what only the check reads is let go (see `kept_checked`).
    let parse = match paths.as_deref() {
        None => Parse::Whole,
        p => Parse::new(p),
    };
    while lines.next(&mut r).map_err(io)? {
        if lines.blank() {
            continue;
        }
        // Parsed where it was read: the line's room is reused for the next (not left among the records).
        let l = &lines.buf;
        budget.grant(l.len());
        match parse.of(l, &budget) {
            Ok(v) if v.get("summary").is_some() || v.get("point").is_some() => {
                jl.add(v, lines.number, keep, &mut out).map_err(&bad)?
            }
            Ok(_) => return Err(bad(format!("line {} is not a sweep record", lines.number))),
            // Only the last line may be cut short (a write interrupted by a kill).
            Err(e) if cut_short(l, &e) && !l.ends_with(b"\n") => out.cut = l.len(),
            Err(e) => return Err(bad(line_err(lines.number, &e))),
        }
    }
    out.records = jl.recs.into_iter().flatten().collect();
    Ok(out)
}

/// The paths `of` gives for what `keep` keeps of a result (none: all is kept).
fn owned_paths<'a>(
    keep: Keep<'a>,
    of: fn(&[&'a [&'a str]]) -> Vec<Vec<&'a str>>,
) -> Option<Vec<Vec<&'a str>>> {
    keep.paths().map(of)
}

/// Owned paths as the slices a parse takes.
fn slices<'p, 'a>(paths: &'p Option<Vec<Vec<&'a str>>>) -> Option<Vec<&'p [&'a str]>> {
    paths
        .as_ref()
        .map(|p| p.iter().map(Vec::as_slice).collect())
}

/// How a line is parsed: whole, or cut down to the paths of a record it reaches.
enum Parse<'p, 'a> {
    Whole,
    Pruned(&'p [&'a [&'a str]]),
}

impl<'p, 'a> Parse<'p, 'a> {
    fn new(paths: Option<&'p [&'a [&'a str]]>) -> Self {
        match paths {
            None => Parse::Whole,
            Some(p) => Parse::Pruned(p),
        }
    }

    /// The memory a read parsed so may make per byte of its text.
    fn per_byte(&self) -> usize {
        match self {
            Parse::Whole => super::prune::WHOLE_PER_BYTE,
            Parse::Pruned(_) => super::prune::SHOWN_PER_BYTE,
        }
    }

    /// A budget for a read parsed so, with nothing read yet.
    fn budget(&self) -> super::prune::Budget {
        super::prune::Budget::new(self.per_byte())
    }

    /// `l` parsed, what it makes charged to `budget`.
    fn of(&self, l: &[u8], budget: &super::prune::Budget) -> serde_json::Result<Value> {
        use serde::de::DeserializeSeed;
        // Kept whole: the one path that ends at the top.
        const WHOLE: [&[&str]; 1] = [&[]];
        let p = match self {
            Parse::Whole => &WHOLE[..],
            Parse::Pruned(p) => p,
        };
        let mut de = serde_json::Deserializer::from_slice(l);
        let v = super::prune::Pruned(p, None, None, budget, false).deserialize(&mut de)?;
        de.end().map(|_| v)
    }
}

/// The lines of a reader, one held at a time.
#[derive(Default)]
struct Lines {
    buf: Vec<u8>,
    /// The 1-based number of the line in `buf`.
    number: usize,
}

impl Lines {
    /// Reads the next line into `buf` (false at the end).
    fn next(&mut self, r: &mut impl BufRead) -> std::io::Result<bool> {
        self.buf.clear();
        if r.read_until(b'\n', &mut self.buf)? == 0 {
            return Ok(false);
        }
        self.number += 1;
        Ok(true)
    }

    fn blank(&self) -> bool {
        self.buf.iter().all(|b| b.is_ascii_whitespace())
    }
}

/// The records of JSON lines as they are read.
#[derive(Default)]
struct JsonLines {
    recs: Vec<Option<Value>>,
    /// The records of points that did not run, by their point's hash: where each is in `recs` (a lookup
    /// per record, so reading stays linear in the records; a copy of each point as the key took 1.2 KB a
    /// record of a sweep whose 62,000 points were all refused for a 570-byte target, 73 MB). Points
    /// whose hashes meet are told apart by their records' points.
    not_run: std::collections::HashMap<u64, usize>,
    /// Hashes points with keys of its own, chosen at random: no file can be made for them to meet.
    hasher: std::collections::hash_map::RandomState,
    /// The keys the points name (iolab's flags and a suite's own: a few dozen).
    keys: std::collections::HashSet<String>,
    /// Whether each record's point is held packed (read for what a reader shows).
    pack: bool,
    /// Whether each record is held as its JSON text ([`Keep::Texts`]).
    texts: bool,
}

/// A record held as its JSON text ([`Keep::Texts`]) parsed again, or as it is (a record is an object:
/// a string among the records is one held as its text).
pub fn held_value(r: &Value) -> std::borrow::Cow<'_, Value> {
    match r {
        Value::String(t) => std::borrow::Cow::Owned(serde_json::from_str(t).unwrap_or_default()),
        r => std::borrow::Cow::Borrowed(r),
    }
}

/// The most different keys the points of a file name, as a point holds: a point's keys are run flags a
/// sweep or suite varies (iolab's suites vary 11 in all) and iolab's own. A report is drawn by them, over
/// every pair (a key of its own in each of 250 records took 24 s), and each is held per record (64 keys
/// of short values took a 200 MB file's report to 969 MB).
use super::shape::MAX_POINT_KEYS;

/// The most of one text of a suite's summary kept: an answer iolab writes is a few KiB (the longest, 4
/// KiB); a forged one of 4 MB was a 900 MB page.
const SUMMARY_TEXT_MAX: usize = 16 << 10;

/// Every text in `v` cut to [`SUMMARY_TEXT_MAX`] bytes (at a character's end), the cut marked.
fn cut_texts(v: &mut Value) {
    match v {
        Value::String(t) if t.len() > SUMMARY_TEXT_MAX => {
            let mut end = SUMMARY_TEXT_MAX;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            t.truncate(end);
            t.push_str("… (cut: longer than any text iolab writes)");
        }
        Value::Array(a) => a.iter_mut().for_each(cut_texts),
        Value::Object(o) => o.values_mut().for_each(cut_texts),
        _ => {}
    }
}

impl JsonLines {
    /// Adds the record or summary `v` read from line `line`; refused when it cannot be one iolab wrote.
    fn add(
        &mut self,
        v: Value,
        line: usize,
        keep: Keep,
        out: &mut RecordFile,
    ) -> std::result::Result<(), String> {
        let mut v = v;
        if let Some(s) = v.get_mut("summary") {
            // A suite's findings and answers (`answers::record`): not a point. Only the latest is read
            // (a resumed suite appends a new one), so only it is held.
            let mut s = s.take();
            cut_texts(&mut s);
            out.summaries = vec![s];
            return Ok(());
        }
        if let Some(why) = super::shape::impossible(&v) {
            return Err(format!("line {line}: {why}; {FORGED}"));
        }
        if self.recs.len() >= MAX_RECORDS {
            return Err(too_many(line));
        }
        // A point run again at --resume: its later record replaces the one that did not run.
        let mut point = super::shape::record_point(&v);
        for (k, _) in &point {
            if !self.keys.contains(k) {
                if self.keys.len() == MAX_POINT_KEYS {
                    return Err(format!(
                        "line {line}: its points name more than {MAX_POINT_KEYS} different keys, more than \
                         iolab's flags; {FORGED}"
                    ));
                }
                self.keys.insert(k.clone());
            }
        }
        point.sort();
        let key = std::hash::BuildHasher::hash_one(&self.hasher, &point);
        let same = |r: &Option<Value>| {
            let mut p = r
                .as_ref()
                .map(|r| super::shape::record_point(&held_value(r)))
                .unwrap_or_default();
            p.sort();
            p == point
        };
        if let Some(&j) = self.not_run.get(&key).filter(|&&j| same(&self.recs[j])) {
            self.not_run.remove(&key);
            self.recs[j] = None;
        }
        // A point whose hash meets an earlier one's that did not run keeps the first in the lookup.
        if v.get("error").is_some() && !self.not_run.contains_key(&key) {
            self.not_run.insert(key, self.recs.len());
        }
        let mut v = kept_checked(v, keep);
        if self.texts {
            v = super::prune::text_of(&v);
        } else if self.pack {
            super::shape::pack_point(&mut v);
        }
        self.recs.push(Some(v));
        Ok(())
    }
}

pub use super::prune::MAX_RECORDS;

fn too_many(line: usize) -> String {
    format!(
        "line {line}: more than {} records, more than iolab writes in one file; {FORGED}",
        iolab_engine::units::thousands_u64(MAX_RECORDS as u64)
    )
}

/// A whole-file document as records: a `run --repeat` document's runs (each marked as one of the
/// repeats of one configuration: `iolab report` shows them as one run with its spread), a survey's runs,
/// a record, or a run's result.
fn document(
    mut doc: Value,
    mut out: RecordFile,
    texts: bool,
) -> std::result::Result<RecordFile, String> {
    if doc.get("runs").is_some_and(|r| !r.is_array()) {
        return Err(format!("its `runs` is not a list of runs: {FORGED}"));
    }
    if let Some(Value::Array(runs)) = doc.get_mut("runs").map(Value::take) {
        // A `run --repeat` document ({"repeat", "runs"}; a survey's has no "repeat").
        let of = runs.len();
        let repeated = doc.get("repeat").is_some();
        // How many runs its repeat says it holds (where it says: `{"runs": N, ...}`, or N).
        let said = doc
            .pointer("/repeat/runs")
            .or_else(|| doc.get("repeat"))
            .and_then(Value::as_u64);
        if repeated && of as u64 > super::repeat::MAX_REPEAT {
            return Err(format!(
                "its repeat holds {} runs, more than `run --repeat` makes ({}): {FORGED}",
                iolab_engine::units::thousands_u64(of as u64),
                iolab_engine::units::thousands_u64(super::repeat::MAX_REPEAT)
            ));
        }
        if let Some(n) = said.filter(|n| *n != of as u64) {
            return Err(format!(
                "its repeat says {n} runs, but it holds {of}: not a document iolab wrote (damaged or forged)"
            ));
        }
        // A run at a time: read as its JSON text, each is made a value, checked and held as text again.
        let mut once = SurveyOnce::default();
        let mut recs = Vec::with_capacity(of);
        for (i, r) in runs.into_iter().enumerate() {
            let r = match (texts, r) {
                (true, Value::String(t)) => serde_json::from_str(&t).unwrap_or_default(),
                (_, r) => r,
            };
            if !repeated {
                once.add(i, &r, &recs)?;
            }
            let repeat = serde_json::json!({"run": i + 1, "of": of});
            let rec = record_of(r, repeated.then_some(repeat));
            if let Some(why) = super::shape::impossible(&rec) {
                return Err(format!("record {}: {why}; {FORGED}", i + 1));
            }
            recs.push(match texts {
                true => super::prune::text_of(&rec),
                false => rec,
            });
        }
        out.records = recs;
    } else if doc.get("point").is_some() {
        out.records = checked(vec![doc])?;
        return Ok(out);
    } else if doc.get("spec").is_some() {
        out.records = checked(vec![record_of(doc, None)])?;
        return Ok(out);
    } else {
        return Err("not an iolab result (no spec, runs or point)".into());
    }
    out.document = Some(doc);
    Ok(out)
}

/// A record of a document's run `result` (marked as one of its `repeat`s): the result moved into it
/// (`json!` would copy it).
fn record_of(result: Value, repeat: Option<Value>) -> Value {
    let mut m = serde_json::Map::with_capacity(2 + usize::from(repeat.is_some()));
    m.insert("point".into(), Value::Object(Default::default()));
    m.insert("result".into(), result);
    if let Some(r) = repeat {
        m.insert("repeat".into(), r);
    }
    Value::Object(m)
}

/// A run's value as a key: its own string, or its JSON text marked apart from a string.
fn key_of(v: &Value) -> std::borrow::Cow<'_, str> {
    match v {
        Value::String(s) => s.as_str().into(),
        v => format!("\0{v}").into(),
    }
}

/// A survey's runs, each of a (target, method, block size) once, as a survey runs them (its rounds are
/// inside a run): else a forged document, whose ranking would compare every run with every other. Each
/// run's cell is held by its hash (a copy of each target took 331 MB of a 199 MB survey's report), and
/// one whose hash meets an earlier's is compared with that run as held.
#[derive(Default)]
struct SurveyOnce {
    seen: std::collections::HashMap<u64, Vec<usize>>,
    hasher: std::collections::hash_map::RandomState,
}

impl SurveyOnce {
    /// Run `i`, `r`, after the records of the runs before it (`recs`).
    fn add(&mut self, i: usize, r: &Value, recs: &[Value]) -> std::result::Result<(), String> {
        let Some(cell) = survey_cell(r) else {
            return Ok(());
        };
        let h = std::hash::BuildHasher::hash_one(&self.hasher, &cell);
        let same = |j: &&usize| {
            let rec = held_value(&recs[**j]);
            rec.get("result").and_then(survey_cell).as_ref() == Some(&cell)
        };
        if let Some(j) = self.seen.get(&h).and_then(|js| js.iter().find(same)) {
            return Err(format!(
                "runs {} and {} are of one target, method and block size; a survey runs each once: \
                 {FORGED}",
                j + 1,
                i + 1
            ));
        }
        self.seen.entry(h).or_default().push(i);
        Ok(())
    }
}

/// A survey's run's target, method and block size, where it has all three.
fn survey_cell(r: &Value) -> Option<[std::borrow::Cow<'_, str>; 3]> {
    Some([
        key_of(r.get("target")?),
        key_of(r.get("method")?),
        key_of(r.get("bs")?),
    ])
}

/// Each record of a document, refused when it cannot be one iolab wrote. Its values were cut down to
/// what the reader keeps as they were parsed (the document's paths hold a record's): kept as they are,
/// not made again.
fn checked(recs: Vec<Value>) -> std::result::Result<Vec<Value>, String> {
    for (i, r) in recs.iter().enumerate() {
        if let Some(why) = super::shape::impossible(r) {
            return Err(format!("record {}: {why}; {FORGED}", i + 1));
        }
    }
    Ok(recs)
}

/// What [`scan_records`] found besides the records it handed over.
#[derive(Debug, Default, PartialEq)]
pub struct Scanned {
    /// Lines read, the cut-short last line apart.
    pub lines: usize,
    /// Bytes of the whole lines read (where a cut-short last line starts).
    pub whole: u64,
    /// Bytes of a cut-short last line (a point killed while being written).
    pub cut: usize,
    /// Whether that line was a suite's summary (it is written again at the end), not a point's record.
    pub cut_summary: bool,
    /// Whether the last whole line ends with a newline (an empty file does).
    pub ends_line: bool,
}

/// A record's own keys as iolab writes them, each whole (another key is not read).
const WRITTEN: [&[&str]; 7] = [
    &["point"],
    &["settings"],
    &["result"],
    &["error"],
    &["exit_code"],
    &["repeat"],
    &["repeats"],
];

/// The records of a sweep's or suite's JSON lines (what `--resume` continues), read one line at a time:
/// each record's own keys, settings and the figures it is checked by (refused when it cannot be one
/// iolab wrote) go to `each` with its 1-based line, which answers whether it wants the record whole; only then is the line parsed whole (its own keys as iolab writes them,
/// each array no longer than iolab writes it) and handed to `whole`. Nothing of the file is held here
/// but the line being read. A suite's summary lines are passed over; a document (`run --json`, a
/// survey's) is refused with the reason, as is a record that cannot be one iolab wrote.
pub fn scan_records(
    f: impl Read,
    limit: u64,
    each: &mut dyn FnMut(&Value, usize) -> std::result::Result<bool, String>,
    whole: &mut dyn FnMut(Value, usize),
) -> std::result::Result<Scanned, String> {
    let mut r = std::io::BufReader::with_capacity(1 << 16, Checked::new(f, limit));
    let (mut lines, mut out) = (Lines::default(), Scanned::default());
    out.ends_line = true;
    let mut first = true;
    // Of every record what it is checked by, and its settings (only --resume reads them).
    let mut scanned = super::prune::record_paths(&[]);
    scanned.push(vec!["settings"]);
    let scanned: Vec<&[&str]> = scanned.iter().map(Vec::as_slice).collect();
    let small = Parse::Pruned(&scanned);
    // What the records handed over whole may make, as the file is read (what is checked is let go).
    let held = super::prune::Budget::new(super::prune::WHOLE_PER_BYTE);
    while lines.next(&mut r).map_err(|e| e.to_string())? {
        let l = &lines.buf;
        out.ends_line = l.ends_with(b"\n");
        if !lines.blank() {
            if out.ends_line && std::str::from_utf8(l).is_err() {
                return Err(format!("line {}: not UTF-8 text", lines.number));
            }
            held.grant(l.len());
            let checked = super::prune::Budget::of(l.len(), super::prune::WHOLE_PER_BYTE);
            match small.of(l, &checked) {
                Ok(v) if v.get("point").is_some() => {
                    if let Some(why) = super::shape::impossible(&v) {
                        return Err(format!("line {}: {why}; {FORGED}", lines.number));
                    }
                    if each(&v, lines.number)? {
                        let v = Parse::Pruned(&WRITTEN)
                            .of(l, &held)
                            .map_err(|e| e.to_string())?;
                        whole(v, lines.number);
                    }
                }
                // A suite's summary line (of which only the fields a summary has were made).
                Ok(v) if v.get("summary").is_some() => {}
                Ok(_) if first => {
                    return Err("a result document (run --json), not JSON lines".into())
                }
                Ok(_) => return Err(format!("line {} is not a sweep record", lines.number)),
                Err(e) if first && e.is_eof() && out.ends_line => {
                    return Err("a result document (run --json), not JSON lines".into())
                }
                // Only the last line may be cut short (a write interrupted by a kill).
                Err(e) if !e.is_data() && !out.ends_line => {
                    out.cut = l.len();
                    out.cut_summary = l.starts_with(b"{\"summary\"");
                    out.ends_line = true;
                    return Ok(out);
                }
                Err(e) => return Err(line_err(lines.number, &e)),
            }
            first = false;
        }
        out.lines = lines.number;
        out.whole += l.len() as u64;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document cut short inside a number ("-", "1e": a syntax error at its end, not an end of input) is
    /// called cut short, as one cut anywhere else; a bad number with text after it is not.
    #[test]
    fn a_document_cut_inside_a_number_is_cut_short() {
        for cut in [
            "{\n  \"spec\": {},\n  \"iops\": -",
            "{\n  \"spec\": {},\n  \"iops\": 1e",
        ] {
            let e = read_from(cut.as_bytes(), std::path::Path::new("d"), Keep::All)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                e.contains("not whole JSON: it ends mid-value"),
                "{cut:?}: {e}"
            );
        }
        // A record's last line cut inside a number is left out as cut, as one cut anywhere else.
        // Read whole or cut down to some paths (as `report` reads, over a slice of the line).
        let rec = r#"{"point":{"bs":"4096"},"result":{"iops":1.0}}"#;
        let paths: &[&[&str]] = &[&["iops"]];
        for (cut, keep) in ["-", "1e", "1.", "12e+"]
            .into_iter()
            .flat_map(|c| [(c, Keep::All), (c, Keep::Paths(paths))])
        {
            let text = format!("{rec}\n{}{cut}", &rec[..rec.len() - 5]);
            let f = read_from(text.as_bytes(), std::path::Path::new("r"), keep)
                .unwrap_or_else(|e| panic!("{cut:?}: {e}"));
            assert_eq!(
                (f.records.len(), f.cut),
                (1, rec.len() - 5 + cut.len()),
                "{cut:?}"
            );
        }
        // A bad number at a line's end that no digit would mend ("1.e") is refused, not taken for a cut.
        let text = format!("{rec}\n{}1.e", &rec[..rec.len() - 5]);
        let e = read_from(
            text.as_bytes(),
            std::path::Path::new("r"),
            Keep::Paths(paths),
        );
        assert!(
            e.as_ref()
                .is_err_and(|e| e.to_string().contains("invalid number")),
            "{:?}",
            e.map(|f| f.cut)
        );
        let bad = "{\n  \"spec\": {},\n  \"iops\": 1e,\n  \"ops\": 1\n}\n";
        let e = read_from(bad.as_bytes(), std::path::Path::new("d"), Keep::All)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            !e.contains("ends mid-value") && e.contains("invalid number"),
            "{e}"
        );
    }
}
