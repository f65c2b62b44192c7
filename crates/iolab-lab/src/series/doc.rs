//! The first JSON object of a file of records read a value at a time: a document (`run --json`, a
//! survey's, a `run --repeat` one, on one line or many) is parsed value by value and each of its `runs`
//! apart, so that what is held is the values kept and never the document's whole text beside them (a
//! survey of 200 MB was held twice over).

use super::prune::{self, Budget, Pruned};
use serde_json::Value;
use std::io::BufRead;

/// Why the object could not be read.
pub(super) enum Failed {
    /// The reader's error (a byte no JSON text holds, a file that grew past its bound).
    Io(std::io::Error),
    /// The text ended inside the object.
    Cut,
    /// Not JSON, or not what iolab writes, at `line` (of the file).
    Bad { line: usize, why: String },
}

impl From<std::io::Error> for Failed {
    fn from(e: std::io::Error) -> Self {
        Failed::Io(e)
    }
}

/// A reader's bytes with the line they are on.
pub(super) struct Scan<R> {
    r: R,
    /// The line of the next byte, from 1.
    pub(super) line: usize,
    /// Bytes read.
    pub(super) at: usize,
}

/// Where a value's text is in its scan: inside a string (after a backslash), how deep in brackets, or
/// in a bare word (a number, `true`).
#[derive(Default)]
struct State {
    in_str: bool,
    escaped: bool,
    depth: usize,
    word: bool,
}

impl State {
    /// Takes byte `b`, the first of the value when `first`; whether the value ends with it (`Some(true)`:
    /// including it; `Some(false)`: before it, which is the next value's).
    fn take(&mut self, b: u8, first: bool) -> Option<bool> {
        if self.in_str {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => {
                    self.in_str = false;
                    return (self.depth == 0).then_some(true);
                }
                _ => {}
            }
            return None;
        }
        if self.word {
            return matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n').then_some(false);
        }
        match b {
            b'"' => self.in_str = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                return (self.depth == 0).then_some(true);
            }
            _ if first => self.word = true,
            _ => {}
        }
        None
    }
}

impl<R: BufRead> Scan<R> {
    pub(super) fn new(r: R) -> Self {
        Scan { r, line: 1, at: 0 }
    }

    pub(super) fn into_inner(self) -> R {
        self.r
    }

    /// The next byte that is not blank, left to be read (none at the end of the text).
    pub(super) fn peek(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                return Ok(None);
            }
            let at = buf.iter().position(|b| !b.is_ascii_whitespace());
            let blank = &buf[..at.unwrap_or(buf.len())];
            let (n, lines) = (blank.len(), blank.iter().filter(|b| **b == b'\n').count());
            let next = at.map(|i| buf[i]);
            self.r.consume(n);
            self.line += lines;
            self.at += n;
            if next.is_some() {
                return Ok(next);
            }
        }
    }

    /// Passes over the byte [`Self::peek`] gave.
    fn bump(&mut self) {
        self.r.consume(1);
        self.at += 1;
    }

    /// The text of the next value (blanks before it passed over) into `out`, or passed over where `out`
    /// is none. The value ends at its closing bracket or quote, or before the byte after a bare word;
    /// Err(Cut) where the text ends first.
    fn value(&mut self, mut out: Option<&mut Vec<u8>>) -> Result<(), Failed> {
        self.peek()?;
        let (mut st, mut len) = (State::default(), 0usize);
        loop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                return Err(Failed::Cut);
            }
            let mut end = None;
            for (i, &b) in buf.iter().enumerate() {
                if let Some(with) = st.take(b, len == 0 && i == 0) {
                    end = Some(i + usize::from(with));
                    break;
                }
            }
            let n = end.unwrap_or(buf.len());
            self.line += buf[..n].iter().filter(|b| **b == b'\n').count();
            if let Some(o) = out.as_deref_mut() {
                o.extend_from_slice(&buf[..n]);
            }
            self.r.consume(n);
            self.at += n;
            len += n;
            if end.is_some() {
                return Ok(());
            }
        }
    }

    /// Passes over `want` (after blanks), else says what was found.
    fn expect(&mut self, want: u8, what: &str) -> Result<(), Failed> {
        match self.peek()? {
            Some(b) if b == want => {
                self.bump();
                Ok(())
            }
            Some(b) => Err(self.bad(format!(
                "not JSON: {:?} where {what} was to be",
                char::from(b)
            ))),
            None => Err(Failed::Cut),
        }
    }

    fn bad(&self, why: String) -> Failed {
        Failed::Bad {
            line: self.line,
            why,
        }
    }
}

/// The object at the scan's next byte (a `{`), cut down to `paths` as [`Pruned`] would cut it, what it
/// makes charged to `budget` (its text granted as it is read). Its `runs` are parsed one at a time, each
/// then held as its JSON text where `texts` ([`super::Keep::Texts`]).
pub(super) fn object<R: BufRead>(
    s: &mut Scan<R>,
    paths: &[&[&str]],
    budget: &Budget,
    texts: bool,
) -> Result<Value, Failed> {
    s.expect(b'{', "an object")?;
    let mut items = serde_json::Map::new();
    let mut text = Vec::new();
    loop {
        if s.peek()? == Some(b'}') {
            s.bump();
            return Ok(Value::Object(items));
        }
        text.clear();
        s.value(Some(&mut text))?;
        let key =
            key_of(&text).ok_or_else(|| s.bad("not JSON: an object's key is not a text".into()))?;
        budget.grant(text.len());
        s.expect(b':', "a `:` after a key")?;
        let line = s.line;
        let v = match key == "runs" && s.peek()? == Some(b'[') {
            true => runs(s, paths, budget, texts),
            false => one_value(s, paths, &key, budget, &mut text),
        };
        if let Some(v) = v? {
            budget
                .take(prune::cost::ENTRY + prune::cost::text(&key))
                .map_err(|e: serde_json::Error| Failed::Bad {
                    line,
                    why: e.to_string(),
                })?;
            items.insert(key, v);
        }
        match s.peek()? {
            Some(b',') => s.bump(),
            Some(b'}') => {}
            Some(b) => return Err(s.bad(format!("not JSON: {:?} after a value", char::from(b)))),
            None => return Err(Failed::Cut),
        }
    }
}

/// An object's key from its text (with its quotes).
fn key_of(text: &[u8]) -> Option<String> {
    let inner = text.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    match inner.contains(&b'\\') {
        false => std::str::from_utf8(inner).ok().map(str::to_string),
        true => match serde_json::from_slice::<Value>(text).ok()? {
            Value::String(k) => Some(k),
            _ => None,
        },
    }
}

/// The value of `key` parsed from its text (passed over unread where no path reaches it).
fn one_value<R: BufRead>(
    s: &mut Scan<R>,
    paths: &[&[&str]],
    key: &str,
    budget: &Budget,
    text: &mut Vec<u8>,
) -> Result<Option<Value>, Failed> {
    let line = s.line;
    if prune::under(paths, key).is_empty() {
        s.value(None)?;
        return Ok(None);
    }
    text.clear();
    s.value(Some(text))?;
    // A blank after the value: a bare word is parsed as ended ("1e," is an invalid number, not cut).
    text.push(b' ');
    budget.grant(text.len());
    prune::value_at(paths, key, None, budget, |seed| parse(seed, text))
        .map_err(|e| placed(line, &e))
}

/// The items of a `runs` array, each parsed from its own text as an item of the array would be (and held
/// as its JSON text where `texts`: as values, a survey of 100 MB whose runs held many short fields took
/// 1 GB).
fn runs<R: BufRead>(
    s: &mut Scan<R>,
    paths: &[&[&str]],
    budget: &Budget,
    texts: bool,
) -> Result<Option<Value>, Failed> {
    s.bump();
    let under = prune::under(paths, "runs");
    let whole = under.iter().all(|p| p.is_empty());
    let mut items = Vec::new();
    let mut text = Vec::new();
    loop {
        if s.peek()? == Some(b']') {
            s.bump();
            break;
        }
        let line = s.line;
        text.clear();
        let out = (!under.is_empty()).then_some(&mut text);
        s.value(out)?;
        if !under.is_empty() {
            text.push(b' ');
            budget.grant(text.len());
            let mut v = parse(Pruned(&under, None, None, budget, false), &text)
                .map_err(|e| placed(line, &e))?;
            if !whole {
                slim(&mut v);
            }
            if whole || !prune::is_empty(&v) {
                if items.len() >= prune::MAX_RECORDS {
                    return Err(Failed::Bad {
                        line,
                        why: format!(
                            "`runs` holds more than {} items, more than iolab writes: not a record iolab \
                             wrote (damaged or forged)",
                            prune::MAX_RECORDS
                        ),
                    });
                }
                items.push(match texts {
                    true => prune::text_of(&v),
                    false => v,
                });
            }
        }
        match s.peek()? {
            Some(b',') => s.bump(),
            Some(b']') => {}
            Some(b) => return Err(s.bad(format!("not JSON: {:?} after a run", char::from(b)))),
            None => return Err(Failed::Cut),
        }
    }
    Ok((!under.is_empty()).then_some(Value::Array(items)))
}

/// A survey's run (not a run's result: it has no `spec`) without its null and empty values, for a reader
/// that keeps what it shows (one that keeps all, keeps them): what its readers take for absent (a row that did not run is most of them, and each value held costs an
/// object's entry of about 110 bytes: a survey of 228,000 such rows took 880 MB).
fn slim(v: &mut Value) {
    if let Value::Object(m) = v {
        if !m.contains_key("spec") {
            let empty = |x: &Value| x.is_null() || x.as_array().is_some_and(Vec::is_empty);
            // Made at the size it holds (grown as it is filled, it took 150 MB of 207,000 rows).
            let mut kept = serde_json::Map::with_capacity(m.values().filter(|x| !empty(x)).count());
            kept.extend(std::mem::take(m).into_iter().filter(|(_, x)| !empty(x)));
            *m = kept;
        }
    }
}

/// `text` parsed by `seed`, whole.
fn parse(seed: Pruned, text: &[u8]) -> serde_json::Result<Value> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_slice(text);
    let v = seed.deserialize(&mut de)?;
    de.end().map(|_| v)
}

/// The parser's error `e` in a value whose text starts on `line` of the file, placed in the file.
fn placed(line: usize, e: &serde_json::Error) -> Failed {
    let said = e.to_string();
    let what = said
        .strip_suffix(&format!(" at line {} column {}", e.line(), e.column()))
        .unwrap_or(&said);
    let line = line + e.line().saturating_sub(1);
    Failed::Bad {
        line,
        why: match e.is_data() {
            true => what.to_string(),
            false => format!("not whole JSON ({what}): {}", prune::FORGED),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::stream::read_from;
    use super::super::Keep;
    use std::path::Path;

    fn read(text: &str) -> Result<super::super::RecordFile, String> {
        read_from(text.as_bytes(), Path::new("d"), Keep::All).map_err(|e| e.to_string())
    }

    /// Brackets, quotes and backslashes inside strings, and keys with escapes, do not end a value: a
    /// document read a value at a time is the document parsed whole, on one line or pretty over many.
    #[test]
    fn a_document_read_a_value_at_a_time_is_the_document_parsed_whole() {
        let run = serde_json::json!({"spec": {"target": "a]}\"{[\\", "bs": 4},
            "iops": 1.5e3, "notes": ["x\\\"]", "]"], "skew": -1.25e-3, "ok": true, "n": null});
        let doc = serde_json::json!({"repeat": {"runs": 2, "figures": []}, "runs": [run, run]});
        for text in [doc.to_string(), serde_json::to_string_pretty(&doc).unwrap()] {
            let f = read(&text).unwrap();
            assert_eq!(f.records.len(), 2, "{text}");
            assert_eq!(f.records[1]["result"], run, "{text}");
            assert_eq!(f.document.unwrap()["repeat"]["runs"], 2);
        }
        // A key written with an escape is the key.
        let text = doc
            .to_string()
            .replacen("\"runs\":[", "\"ru\\u006es\":[", 1);
        assert_eq!(read(&text).unwrap().records.len(), 2, "{text}");
    }

    /// A `run --repeat` document of more runs than `--repeat` takes is refused as forged (32,558 of
    /// them were read, and two such files took 1 GB to compare); as many as it takes are read.
    #[test]
    fn a_repeat_document_of_more_runs_than_repeat_takes_is_refused() {
        let run = serde_json::json!({"spec": {"bs": 4}, "iops": 1.0});
        let doc = |n: u64| {
            let runs = vec![run.clone(); n as usize];
            serde_json::json!({"repeat": {"runs": n, "figures": []}, "runs": runs}).to_string()
        };
        let most = super::super::repeat::MAX_REPEAT;
        assert_eq!(read(&doc(most)).unwrap().records.len(), most as usize);
        let Err(e) = read(&doc(most + 1)) else {
            panic!("a repeat document of 10,001 runs was read")
        };
        assert!(
            e.contains("holds 10,001 runs, more than `run --repeat` makes (10,000)"),
            "{e}"
        );
    }

    /// What is not a document iolab wrote is refused on the line it is on; a document cut anywhere over
    /// many lines ends mid-value, and a record cut on its one line is left out as cut short.
    #[test]
    fn a_broken_document_is_refused_on_its_line_and_a_cut_one_said_so() {
        let doc = "{\n \"spec\": {},\n \"runs\": [1]\n}\n";
        let e = read(&format!("{doc}{{}}\n")).err().unwrap_or_default();
        assert!(
            e.contains("d: line 5: text after the document, which ends on line 4"),
            "{e}"
        );
        let e = read("{\"runs\": 5}").err().unwrap_or_default();
        assert!(e.contains("its `runs` is not a list of runs"), "{e}");
        let e = read("\u{feff}{}").err().unwrap_or_default();
        assert!(e.contains("byte-order mark"), "{e}");
        let e = read("{\n \"spec\": {} \"x\": 1\n}\n")
            .err()
            .unwrap_or_default();
        assert!(e.contains("d: line 2: not JSON: '\"' after a value"), "{e}");
        let e = read("{\n \"spec\": {},\n \"iops\": [1,]\n}\n")
            .err()
            .unwrap_or_default();
        assert!(e.starts_with("d: line 3: not whole JSON"), "{e}");
        for at in [5, 12, 14, 20, doc.len() - 3] {
            let e = read(&doc[..at]).err().unwrap_or_default();
            let line = doc[..at].lines().count();
            let says = format!(
                "not whole JSON: it ends mid-value, on line {line} (its value began on line 1)"
            );
            assert!(e.contains(&says), "{at}: {e}");
        }
        // Records over several lines each, as `jq .` prints them: one alone is read, more are named.
        let one = serde_json::json!({"point": {"bs": "4"}, "result": {"spec": {}, "iops": 1.0}});
        let pretty = serde_json::to_string_pretty(&one).unwrap();
        assert_eq!(read(&pretty).unwrap().records, vec![one.clone()]);
        let e = read(&format!("{pretty}\n{one}\n"))
            .err()
            .unwrap_or_default();
        let end = pretty.lines().count();
        assert!(
            e.contains(&format!(
                "line {}: more after a first record spread over lines 1 to {end}",
                end + 1
            )),
            "{e}"
        );
        let rec = r#"{"point":{"bs":"4"},"result":{"spec":{},"notes":["a\"]"]}}"#;
        for at in [10, 40, 48, rec.len() - 1] {
            let f = read(&rec[..at]).unwrap();
            assert_eq!((f.records.len(), f.cut), (0, at), "{at}");
        }
    }
}
