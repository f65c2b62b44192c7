//! `iolab bench`: the harness's own costs against bare loops (`iolab_lab::bench`).

use crate::output::out;
use clap::Args;
use iolab_engine::error::Error;
use iolab_engine::measure::clock;

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// overhead: iolab psync vs a bare write() loop | counters: write() with and without kernel counters |
    /// nop: io_uring NOPs per second through iolab vs a raw loop | offload: NOP round trips (batch 1) and
    /// throughput (batch 32) through the offload paths, as ratios to native | profile: the timed pass with
    /// --profile separate and inline against none | counting: whole `--duration 5` runs with the sampled
    /// counting pass (and with a full one) against none (--rounds of them; 3 runs of 5 s per round and
    /// workload) | survey: how many rounds a default survey needs here, and how many orders it decides
    /// (--ops and --rounds do not apply).
    #[arg(default_value = "overhead")]
    pub(crate) which: String,
    /// Ops per round.
    #[arg(long, default_value = "300000")]
    pub(crate) ops: String,
    /// Rounds (each: one bare loop, then one iolab run).
    #[arg(long, default_value = "21")]
    pub(crate) rounds: String,
}

/// The most rounds a bench takes (`survey --rounds` takes 100, `suite --repeat` 1,000).
const MAX_ROUNDS: u64 = 1000;
/// The most ops a round takes: a billion NOPs at 20 ns are 20 s, a billion writes to /dev/null two minutes.
const MAX_OPS: u64 = 1_000_000_000;

pub(crate) fn cmd_bench(a: &BenchArgs) -> Result<i32, Error> {
    let ops = iolab_engine::units::parse_count(&a.ops).map_err(|m| Error::usage("--ops", m))?;
    let rounds =
        iolab_engine::units::parse_count(&a.rounds).map_err(|m| Error::usage("--rounds", m))?;
    if ops == 0 || rounds == 0 {
        return Err(Error::usage(
            if ops == 0 { "--ops" } else { "--rounds" },
            "0 is not accepted",
        ));
    }
    if rounds > MAX_ROUNDS {
        return Err(Error::usage(
            "--rounds",
            format!(
                "{rounds}: at most {MAX_ROUNDS} rounds are accepted (each a bare loop and a run)"
            ),
        ));
    }
    if ops > MAX_OPS {
        return Err(Error::usage(
            "--ops",
            format!(
                "{ops}: at most {} ops a round are accepted (a billion writes to /dev/null take about two minutes)",
                iolab_engine::units::thousands_u64(MAX_OPS)
            ),
        ));
    }
    match a.which.as_str() {
        "overhead" => {
            let clk = clock::calibrate(20);
            let r = iolab_lab::bench::overhead(ops, rounds as u32, &clk)?;
            out(&iolab_report::bench_view::render(&r))?;
        }
        "counters" => {
            let r = iolab_lab::bench::counter_overhead(ops, rounds as u32)?;
            out(&iolab_report::bench_view::render_counters(&r))?;
        }
        "nop" => {
            let clk = clock::calibrate(20);
            let r = iolab_lab::bench::nop(ops, rounds as u32, &clk)?;
            out(&iolab_report::bench_view::render_nop(&r))?;
        }
        "offload" => {
            let clk = clock::calibrate(20);
            let r = iolab_lab::bench::offload(ops, rounds as u32, &clk)?;
            out(&iolab_report::bench_view::render_offload(&r))?;
        }
        "counting" => {
            let r = iolab_lab::bench::counting(rounds as u32, 5.0)?;
            out(&iolab_report::bench_view::render_counting(&r))?;
        }
        "survey" => {
            let opts = iolab_lab::survey::SurveyOptions::default();
            let s = iolab_lab::survey::survey(&opts, &clock::calibrate(20))?;
            out(&iolab_report::bench_view::render_survey(&s))?;
        }
        "profile" => {
            let r = iolab_lab::bench::profile(ops, rounds as u32, &clock::calibrate(20))?;
            out(&iolab_report::bench_view::render_profile(&r))?;
        }
        other => {
            return Err(Error::usage(
                "bench",
                format!(
                "unknown benchmark '{other}'; accepted: overhead, counters, nop, offload, profile, counting, survey"
            ),
            ))
        }
    }
    Ok(0)
}
