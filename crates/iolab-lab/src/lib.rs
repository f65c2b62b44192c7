//! iolab's lab: what turns results into knowledge. Running a spec with its findings (`run.rs`), the
//! findings and the answers to the seeds' questions, suites, sweeps and series, the survey (the main
//! job), compare, probe and bench; and the kernel lab: the sink driver's build and load, the in-kernel
//! writer, guests under QEMU (`vm/`) and the offload client in a guest partition (`partition/`).

pub mod answers;
pub mod bench;
pub mod bench_tiou;
pub mod cite;
pub mod compare;
pub mod compare_across;
pub mod compare_held;
pub mod compare_surveys;
pub mod compare_workload;
pub mod findings;
pub mod findings_compare;
pub mod fio_job;
pub mod fleet;
pub mod kernels;
pub mod kwrite;
pub mod lines;
pub mod pairs;
pub mod probe;
pub mod probe_dirs;
pub mod ranking;
pub mod rounds;
pub mod run;
pub mod series;
pub mod series_flow;
pub mod suite;
pub mod suite_rows;
pub mod survey;
pub mod survey_run;
pub mod survey_timing;
pub mod survey_workload;
pub mod verdict;
