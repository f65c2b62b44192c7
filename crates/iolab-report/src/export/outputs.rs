//! The outputs of one command, chosen once from its flags: the text tables to the terminal (to stderr when
//! `--json -` takes stdout), and each file format asked for into a new file.

use super::dest::{self, check_apart, check_new_path, json_to_stdout};
use super::document::Document;
use super::formats::{Csv, Exporter, IntervalCsv, Json, Markdown};
use iolab_engine::error::Error;
use std::path::{Path, PathBuf};

/// A command's outputs: its file formats with their paths, and where the tables go.
#[derive(Default)]
pub struct Outputs {
    files: Vec<(Box<dyn Exporter>, PathBuf)>,
    json_to_stdout: bool,
}

impl Outputs {
    /// The outputs the common flags ask for (each `None` when not given), every path checked before any
    /// work is done: a new file in an existing directory (`-` for stdout where the format allows it),
    /// and no two of them (nor any of `others`, such as the target) one file.
    pub fn from_flags(
        json: Option<&Path>,
        md: Option<&Path>,
        csv: Option<&Path>,
        csv_intervals: Option<&Path>,
        others: &[(&str, Option<&Path>)],
    ) -> Result<Outputs, Error> {
        let mut o = Outputs::default();
        o.add(Box::new(Json), json)?;
        o.add(Box::new(Markdown), md)?;
        o.add(Box::new(Csv), csv)?;
        o.add(Box::new(IntervalCsv), csv_intervals)?;
        o.json_to_stdout = json_to_stdout(json);
        let mut all: Vec<(&str, Option<&Path>)> = others.to_vec();
        all.extend(o.files.iter().map(|(e, p)| (e.flag(), Some(p.as_path()))));
        check_apart(&all)?;
        Ok(o)
    }

    fn add(&mut self, e: Box<dyn Exporter>, p: Option<&Path>) -> Result<(), Error> {
        if let Some(p) = p {
            check_new_path(e.flag(), p)?;
            self.files.push((e, p.to_path_buf()));
        }
        Ok(())
    }

    /// Whether stdout carries a machine-readable document (`--json -`), so text goes to stderr.
    pub fn text_to_stderr(&self) -> bool {
        self.json_to_stdout
    }

    /// A result document goes somewhere besides the terminal's text (a file, or JSON to stdout).
    pub fn writes_files(&self) -> bool {
        self.json_to_stdout || !self.files.is_empty()
    }

    /// The tables to the terminal, then every file; all are tried, and the first failure is the error (a
    /// table that cannot be shown does not cost the files).
    pub fn write(&self, d: &Document) -> Result<(), Error> {
        let json = self.json_to_stdout.then(|| Path::new("-"));
        let shown = dest::doc(json, &d.tables());
        self.write_files(d)?;
        shown
    }

    /// Every file format asked for, without the tables.
    pub fn write_files(&self, d: &Document) -> Result<(), Error> {
        for (e, p) in &self.files {
            let Some(bytes) = e.export(d) else {
                continue;
            };
            let header_only = e.flag() == "--csv-intervals"
                && bytes
                    .split(|b| *b == b'\n')
                    .nth(1)
                    .is_none_or(|l| l.is_empty());
            dest::write_new(e.flag(), p, &bytes)?;
            if header_only {
                dest::errln(&format!(
                    "iolab: --csv-intervals: {} holds the header only: no run recorded intervals (by default \
                     they are kept for timed passes of 2 s or more; --log-interval MS asks for them)",
                    p.display()
                ));
            }
        }
        Ok(())
    }
}
