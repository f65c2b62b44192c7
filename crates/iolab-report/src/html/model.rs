//! What a report page is made of: the runs it reads (each a record with its label), the charts and files
//! it writes, and the facts about the runs that decide which charts say something.

use super::axis;
use super::markup::Chart;
use super::repeats;
use crate::fields;
use serde_json::Value;
use std::borrow::Cow;

pub struct Report {
    pub html: String,
    /// Each chart; its `svg` empty unless the report was asked to keep them (they are in `html`).
    pub charts: Vec<Chart>,
    /// Charts left out because they would carry no information, each with the reason.
    pub left_out: Vec<String>,
}

/// One record that has a result: its label (unique in the report), the result, and its coordinates:
/// the record's point (without `quick`), the spec keys the point does not name, and the file it came
/// from when the report reads several.
pub(crate) struct Run<'a> {
    pub(crate) label: String,
    /// Its record as read (see [`Run::r`]).
    pub(crate) rec: &'a Value,
    /// Each key's name and value as numbers into `coords`.
    pub(crate) keys: Vec<(u32, u32)>,
    /// The page's key names and values.
    pub(crate) coords: &'a super::coords::Coords,
    /// Its key figures, looked up once.
    pub(crate) figures: Figures,
    /// Its values of [`fields::SHARED_SPEC`] as text, numbers into `coords.values`.
    pub(crate) spec: [u32; fields::SHARED_SPEC.len()],
    /// What it holds that a chart or section looks for, found once.
    pub(crate) has: Has,
    /// Its host ("kernel ..., model, N CPUs online"), a number into `coords.values` (0: none).
    pub(crate) host: u32,
}

/// What a run holds that a chart or a section of the page looks for in every run, found once from its
/// result: a record of JSON lines is parsed again each time it is read, and a look per chart was 29
/// parses a record (20 s for 157,000 runs).
#[derive(Default, Clone, Copy)]
pub(crate) struct Has {
    /// An I/O run with a latency summary (not a workload's such as decimal lines).
    pub(crate) io: bool,
    /// Latency quantiles to draw.
    pub(crate) quantiles: bool,
    /// A histogram of the time between ops.
    pub(crate) gap: bool,
    /// io_uring's figures.
    pub(crate) uring: bool,
    /// More than one interval's IOPS.
    pub(crate) intervals: bool,
    /// More than one reading of the page cache.
    pub(crate) page_cache: bool,
    /// A profile.
    pub(crate) profile: bool,
    /// Findings.
    pub(crate) findings: bool,
    /// An emulated CPU.
    pub(crate) emulated: bool,
    /// Decimal lines.
    pub(crate) lines: bool,
    /// An offloaded run's own cycles.
    pub(crate) offload: bool,
    /// Its record stands for repeats (`run --repeat`, `suite --repeat`).
    pub(crate) repeats: bool,
}

impl<'a> Run<'a> {
    /// Its result: in its record where the record is held as a value (a document's runs), else parsed
    /// from the record's JSON text each time it is read (records of JSON lines: held as values, a 200
    /// MB file of records of a spec, a host and a few figures took 6 times its text).
    pub(crate) fn r(&self) -> Cow<'a, Value> {
        static NONE: Value = Value::Null;
        match held(self.rec) {
            Cow::Borrowed(rec) => Cow::Borrowed(fields::RESULT.at(rec).unwrap_or(&NONE)),
            Cow::Owned(mut rec) => Cow::Owned(
                rec.get_mut(fields::RESULT.key())
                    .map(Value::take)
                    .unwrap_or_default(),
            ),
        }
    }
}

/// A record as read: held as a value, or as its JSON text (then parsed again here).
pub(crate) fn held(rec: &Value) -> Cow<'_, Value> {
    iolab_lab::series::held_value(rec)
}

/// The key figures charted against the keys the runs vary (`vary::FIGS`), and those keys (`vary::XKEYS`).
pub(crate) const FIGURES: usize = 6;
pub(crate) const X_KEYS: usize = 5;

/// A run's key figures and its values of the keys they are charted against (`vary::figures_of`), looked
/// up once: a lookup per chart was a pass over every record's JSON per figure and key, most of a large
/// report's time. NaN where a run has none (JSON holds no NaN): half the room of an `Option` each, 14 MB
/// of a report of 157,000 runs.
pub(crate) struct Figures {
    pub(crate) y: [f64; FIGURES],
    pub(crate) x: [f64; X_KEYS],
    pub(crate) named: [bool; X_KEYS],
}

/// What the report's chart functions make: the charts drawn, and a line for each left out.
#[derive(Default)]
pub(crate) struct Out {
    pub(crate) charts: Vec<Chart>,
    pub(crate) left_out: Vec<String>,
    /// Each series' colour, the same in every chart of the page.
    pub(crate) palette: super::charts::Palette,
    /// Charts drawn past [`MAX_CHARTS`], by their title's first words, in the order first met.
    past_cap: Vec<(String, usize)>,
}

/// The most charts a page keeps: past it a chart is counted, not kept (a sweep of 100,000 points drew
/// 17,500 latency panels, a page of 363 MB no browser opens).
pub(crate) const MAX_CHARTS: usize = 240;

impl Out {
    /// Draws `fig` in the page's colours and keeps it (or says why it could not be drawn), as `add`.
    pub(crate) fn figure(
        &mut self,
        name: &str,
        title: &str,
        caption: String,
        fig: &super::charts::Figure,
    ) {
        if self.charts.len() >= MAX_CHARTS {
            // Counted, not drawn: past the cap a chart is not kept.
            return self.add(name, title, caption, Ok(String::new()));
        }
        let svg = super::charts::draw(fig, &mut self.palette);
        self.add(name, title, caption, svg)
    }

    /// Keeps a chart of the charts section that could be drawn.
    pub(crate) fn add(
        &mut self,
        name: &str,
        title: &str,
        caption: String,
        svg: Result<String, String>,
    ) {
        self.add_to(None, name, title, caption, svg)
    }

    /// Keeps a chart, in the section of run `run` (None: the charts section), or says why it could not
    /// be drawn.
    pub(crate) fn add_to(
        &mut self,
        run: Option<usize>,
        name: &str,
        title: &str,
        caption: String,
        svg: Result<String, String>,
    ) {
        match svg {
            Ok(_) if self.charts.len() >= MAX_CHARTS => {
                // "Latency CDF (seed: 0, 1, ...)": counted by the words before the parts' values.
                let kind = title.split(" (").next().unwrap_or(title);
                match self.past_cap.iter_mut().find(|(k, _)| k == kind) {
                    Some((_, n)) => *n += 1,
                    None => self.past_cap.push((kind.to_string(), 1)),
                }
            }
            Ok(svg) => self.charts.push(Chart {
                name: name.into(),
                title: title.into(),
                caption,
                svg,
                run,
            }),
            // A chart that could not be drawn is named with why (a board's flame graph), never dropped.
            Err(why) => self.leave_out(title, why),
        }
    }

    /// Says why chart `title` is left out.
    pub(crate) fn leave_out(&mut self, title: &str, why: String) {
        self.left_out.push(format!("{title}: {why}"));
    }

    /// The charts past [`MAX_CHARTS`] said as one line of those left out (once: they are counted no more).
    pub(crate) fn close_cap(&mut self) {
        let past = std::mem::take(&mut self.past_cap);
        if past.is_empty() {
            return;
        }
        let n: usize = past.iter().map(|p| p.1).sum();
        let kinds: Vec<String> = past
            .iter()
            .take(6)
            .map(|(k, c)| format!("{k} x{}", iolab_engine::units::thousands_u64(*c as u64)))
            .collect();
        self.left_out.push(format!(
            "{} more charts ({}{}): a page keeps at most {MAX_CHARTS}; a report of fewer records draws them",
            iolab_engine::units::thousands_u64(n as u64),
            kinds.join(", "),
            if past.len() > 6 { ", ..." } else { "" }
        ));
    }
}

/// Values this close (relative to the largest) draw as one line: a chart of them shows nothing.
pub(crate) const SAME_WITHIN: f64 = 0.005;

/// None when `ys` hold values that differ; else why a chart of them would carry no information (`show`
/// writes a value with its unit): one value, all equal, or all within SAME_WITHIN of each other.
pub(crate) fn uninformative(ys: &[f64], show: &dyn Fn(f64) -> String) -> Option<String> {
    let ys: Vec<f64> = ys.iter().copied().filter(|v| v.is_finite()).collect();
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match ys.len() {
        0 => Some("no values".into()),
        1 => Some(format!(
            "one value ({}), nothing to compare it with",
            show(ys[0])
        )),
        n if hi - lo <= 1e-9 * hi.abs().max(1e-12) => {
            Some(format!("all {n} values are equal ({})", show(lo)))
        }
        n if hi - lo <= SAME_WITHIN * hi.abs() => Some(format!(
            "all {n} values are within {}% of each other (about {})",
            SAME_WITHIN * 100.0,
            show((lo + hi) / 2.0)
        )),
        _ => None,
    }
}

/// A `[[x, count], ...]` array as (x, share of all counts); None when it holds no counts.
pub(crate) fn shares(a: &Value) -> Option<Vec<(f64, f64)>> {
    let a = iolab_lab::series::items(a);
    let total: f64 = a.iter().filter_map(|p| p.get(1)?.as_f64()).sum();
    (total > 0.0).then(|| {
        a.iter()
            .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()? / total)))
            .collect()
    })
}

pub(crate) fn label_of(rec: &Value, r: &Value) -> String {
    let mut p = iolab_lab::series::record_point(rec);
    // Suites mark --quick points; the report's title of each run need not repeat it.
    p.retain(|(k, _)| k != "quick");
    // The step first (records of older versions hold their keys sorted).
    p.sort_by_key(|(k, _)| k != "step");
    let reps = repeats::count(rec)
        .map(|k| format!(" ({k} repeats)"))
        .unwrap_or_default();
    if p.is_empty() {
        iolab_lab::compare::workload_label(r) + &reps
    } else {
        p.iter()
            .map(|(k, v)| kv(k, v))
            .collect::<Vec<_>>()
            .join(" ")
            + &reps
    }
}

/// "key=value" for the spec keys every run of a chart shares.
pub(crate) fn shared_spec(runs: &[&Run]) -> String {
    let mut out = Vec::new();
    if let Some(first) = runs.first() {
        for (i, f) in fields::SHARED_SPEC.iter().enumerate() {
            // Each run's values as numbers into one table, looked up once: a page asks this of every
            // chart, and the first run that differs ends the look.
            let v = first.spec[i];
            let text = first.coords.values.text(v);
            if !text.is_empty() && runs.iter().all(|x| x.spec[i] == v) {
                out.push(format!("{}={text}", f.key()));
            }
        }
    }
    if out.is_empty() {
        "no spec key is shared by all runs; the legend names each".into()
    } else {
        out.join(" ")
    }
}

/// A survey's run (`{"target", "method", "bs", "result" | "unavailable"}`, read as a record's result) as a
/// record of its own: the point names the target, method and block size. Other records as they are. The
/// run's result is moved, not copied; a record held as its JSON text is held so again.
pub(crate) fn unwrap_survey_run(rec: Value) -> Value {
    match rec {
        Value::String(_) => match unwrapped(held(&rec).into_owned()) {
            Ok(v) => iolab_lab::series::text_of(&v),
            Err(_) => rec,
        },
        rec => unwrapped(rec).unwrap_or_else(|r| r),
    }
}

/// [`unwrap_survey_run`] of a record as a value: the record it makes, or `rec` back when it is not a
/// survey's run.
fn unwrapped(mut rec: Value) -> Result<Value, Value> {
    let Some(s) = fields::RESULT.at(&rec) else {
        return Err(rec);
    };
    let (Some(target), Some(method), Some(bs)) = (
        fields::SURVEY_TARGET.at(s).and_then(Value::as_str),
        fields::SURVEY_METHOD.at(s).and_then(Value::as_str),
        fields::SURVEY_BS.num(s),
    ) else {
        return Err(rec);
    };
    let point = serde_json::json!({"target": target, "method": method, "bs": axis::bytes(bs)});
    let unavailable = fields::SURVEY_UNAVAILABLE.text(s);
    let mut run = rec
        .as_object_mut()
        .and_then(|o| o.remove(fields::RESULT.key()))
        .unwrap_or_default();
    match run
        .as_object_mut()
        .and_then(|o| o.remove(fields::SURVEY_RESULT.key()))
        .filter(|r| !r.is_null())
    {
        // Moved into the record (`json!` would copy it).
        Some(r) => {
            let mut m = serde_json::Map::new();
            m.insert("point".into(), point);
            m.insert(fields::RESULT.key().into(), r);
            Ok(Value::Object(m))
        }
        None => Ok(serde_json::json!({"point": point, "error": unavailable})),
    }
}

/// "key=value", or a suite step's label alone; a key a run does not have says so (records of a sweep
/// beside a suite's have no step).
pub(crate) fn kv(k: &str, v: &str) -> String {
    match (k, v) {
        ("step", "") => "no step".into(),
        ("step", _) => v.to_string(),
        (_, "") => format!("{k}=(none)"),
        ("target", _) => format!("target={}", iolab_lab::series::shown(v)),
        _ => format!("{k}={v}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_keeps_at_most_its_charts_and_says_how_many_more_there_were() {
        let mut out = Out::default();
        for i in 0..MAX_CHARTS + 10 {
            let title = match i % 2 {
                0 => format!("Latency CDF (seed: {i})"),
                _ => format!("Latency percentiles per run (seed: {i})"),
            };
            out.add("c", &title, String::new(), Ok("<svg/>".into()));
        }
        assert_eq!(out.charts.len(), MAX_CHARTS);
        assert!(out.left_out.is_empty());
        out.close_cap();
        out.close_cap();
        assert_eq!(
            out.left_out,
            [format!(
                "10 more charts (Latency CDF x5, Latency percentiles per run x5): a page keeps at most \
                 {MAX_CHARTS}; a report of fewer records draws them"
            )]
        );
    }
}
