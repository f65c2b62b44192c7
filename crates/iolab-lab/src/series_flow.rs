//! The flow `iolab sweep` and `iolab suite` share: open the record file, run the points it does not hold
//! yet one by one (each recorded and synced as it finishes, see `series::run_jobs`), then read back the
//! records in the points' order and as CSV. The commands print around it.

use crate::series::{self, Event, Job, Recorder};
use iolab_engine::error::Result;
use iolab_engine::measure::clock::ClockInfo;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The points of one sweep or suite and their record file.
pub struct Flow {
    pub rec: Recorder,
    /// Every point, in the order they run.
    pub points: Vec<Vec<(String, String)>>,
    /// The jobs not run yet (emptied by [`Flow::run`]).
    jobs: Vec<Job>,
}

impl Flow {
    /// Opens and locks the record file for `jobs` (see [`Recorder::open`]: `out`, `resume` and the
    /// default name's `stem`). Every record carries the settings `fixed` (what every point shares) and
    /// the points' keys and values (see [`series::settings`]); `--resume` refuses a file recorded with
    /// other ones.
    /// Of each record only the result's `held` paths are held (none: all of it).
    pub fn open(
        jobs: Vec<Job>,
        (out, resume): (Option<&Path>, bool),
        stem: &str,
        fixed: &BTreeMap<String, String>,
        held: Option<series::HeldPaths>,
    ) -> Result<Flow> {
        let points: Vec<_> = jobs.iter().map(|j| j.point.clone()).collect();
        let settings = series::settings(fixed, &points);
        let rec = Recorder::open(out, resume, stem, settings, &points, held)?;
        Ok(Flow { rec, points, jobs })
    }

    /// What [`Flow::open`] would refuse as bad input for these `points`, asked before anything is made
    /// (see [`series::check_record_file`]).
    pub fn check(
        points: &[Vec<(String, String)>],
        out: Option<&Path>,
        resume: bool,
        fixed: &BTreeMap<String, String>,
    ) -> Result<()> {
        series::check_record_file(out, resume, &series::settings(fixed, points))
    }

    /// Points the record file already holds (`--resume`): they are not run again (but see
    /// `series::retried`).
    pub fn skipped(&self) -> usize {
        self.points.iter().filter(|p| self.rec.has(p)).count()
    }

    /// Points still to run.
    pub fn pending(&self) -> usize {
        self.points.len() - self.skipped()
    }

    /// Runs every point not recorded yet, telling `on` as each starts and ends, and `board` (a progress
    /// display's) what each run does; returns how many did not run (see `series::run_jobs`).
    pub fn run(
        &mut self,
        clk: &ClockInfo,
        board: Option<&iolab_engine::progress::Board>,
        on: &mut dyn FnMut(Event),
    ) -> Result<usize> {
        series::run_jobs(
            std::mem::take(&mut self.jobs),
            &mut self.rec,
            clk,
            board,
            on,
        )
    }

    /// The records of this flow's points, in the points' order (a point without a record is left out; a
    /// point run again at `--resume` gives its latest record).
    pub fn records(&self) -> Vec<&Value> {
        self.points
            .iter()
            .filter_map(|p| self.rec.latest(p))
            .collect()
    }

    /// The points' keys, each once, in the order first seen.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for (k, _) in self.points.iter().flatten() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
        keys
    }
}
