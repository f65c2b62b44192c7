//! `--csv-intervals FILE`: the time series of runs (a result's `intervals`, see `--log-interval`) as
//! CSV, one row per interval: the columns that say which run it is (`point.KEY` of a sweep's point, or
//! `run` of `run --repeat`), then [`COLUMNS`]. A separate file from `--csv` (one row per run), so that
//! each is one table.

use crate::csv::{csv_field, point_cells};
use iolab_lab::series;
use serde_json::Value;

/// The columns after those naming the run: the interval's number in the run (from 1) and its figures
/// as the result's `intervals` give them.
pub const COLUMNS: &[&str] = &[
    "interval",
    "start_s",
    "end_s",
    "ops",
    "bytes",
    "iops",
    "mib_s",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_max_ns",
];

fn line(cells: impl Iterator<Item = String>) -> String {
    cells.map(|c| csv_field(&c)).collect::<Vec<_>>().join(",") + "\n"
}

/// The header: `lead` (the columns naming the run), then [`COLUMNS`].
pub fn header(lead: &[String]) -> String {
    line(
        lead.iter()
            .cloned()
            .chain(COLUMNS.iter().map(|c| c.to_string())),
    )
}

/// A row per interval of `result` (none when it has none), each starting with `lead`.
pub fn rows(lead: &[String], result: &Value) -> String {
    let Some(intervals) = result.get("intervals").and_then(Value::as_array) else {
        return String::new();
    };
    intervals
        .iter()
        .enumerate()
        .map(|(i, iv)| {
            let figures = COLUMNS[1..]
                .iter()
                .map(|c| series::text(iv.get(*c)))
                .collect::<Vec<_>>();
            line(
                lead.iter()
                    .cloned()
                    .chain(std::iter::once((i + 1).to_string()))
                    .chain(figures),
            )
        })
        .collect()
}

/// The rows of the records of a sweep or suite: `point.KEY` columns for `keys`, then each record's
/// intervals (records that did not run, or have no intervals, give no rows).
pub fn of_records(records: &[&Value], keys: &[String]) -> String {
    let lead: Vec<String> = keys.iter().map(|k| format!("point.{k}")).collect();
    let mut text = header(&lead);
    for rec in records {
        let cells = point_cells(rec, keys);
        if let Some(r) = rec.get("result") {
            text += &rows(&cells, r);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_per_interval_after_the_columns_naming_the_run() {
        let r = serde_json::json!({"intervals": [
            {"start_s": 0.0, "end_s": 1.0, "ops": 10, "bytes": 40, "iops": 10.0, "mib_s": 0.5,
             "lat_p50_ns": 100.0, "lat_p90_ns": 150.0, "lat_p99_ns": 200.0, "lat_max_ns": 900.0},
            {"start_s": 1.0, "end_s": 2.5, "ops": 5, "bytes": 20, "iops": 3.3, "mib_s": 0.1,
             "lat_p50_ns": 110.0, "lat_p90_ns": 160.0, "lat_p99_ns": 210.0, "lat_max_ns": 990.0}
        ]});
        let lead = vec!["3".to_string()];
        assert_eq!(
            header(&["run".into()]),
            "run,interval,start_s,end_s,ops,bytes,iops,mib_s,lat_p50_ns,lat_p90_ns,lat_p99_ns,lat_max_ns\n"
        );
        let text = rows(&lead, &r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1], "3,2,1.0,2.5,5,20,3.3,0.1,110.0,160.0,210.0,990.0");
        assert_eq!(rows(&lead, &serde_json::json!({})), "");
        let rec = series::record(&[("bs".into(), "4k,x".into())], Ok(r));
        let all = of_records(&[&rec], &["bs".into()]);
        assert!(all.starts_with("point.bs,interval,"), "{all}");
        assert!(all.contains("\n\"4k,x\",1,0.0,1.0,10,"), "{all}");
    }
}
