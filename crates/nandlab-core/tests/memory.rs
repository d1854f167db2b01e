//! The up-front memory check: everything a run keeps that scales with the
//! config (jobs and their histograms and queues, time-series rows, trace
//! tables) is counted, so that a config asking for more than the machine has
//! is refused before anything is allocated; and a phase takes at most
//! fio's number of jobs.

use nandlab_core::config::MAX_JOBS_PER_PHASE;
use nandlab_core::sim::footprint::state_bytes;
use nandlab_core::Config;
use std::time::Instant;

const DRIVE: &str = r#"
[device]
preset = "zombienand-synthetic-tlc"
capacity = "256MiB"
[[phase]]
kind = "fill"
volume = 0.5
"#;

fn config(phases: &str) -> Config {
    Config::from_toml(&format!("{DRIVE}{phases}"), "test").unwrap_or_else(|e| panic!("{e}"))
}

fn with_jobs(n: usize, queue_depth: u32) -> String {
    let job = format!("[[phase.job]]\nqueue_depth = {queue_depth}\n");
    format!("[[phase]]\nrequests = 20000\n{}", job.repeat(n))
}

#[test]
fn each_job_counts_its_histograms_and_queue() {
    let one = state_bytes(&config(&with_jobs(1, 1)), false);
    let many = state_bytes(&config(&with_jobs(4000, 1)), false);
    // Two latency histograms of three significant digits each, about 264 KiB apiece.
    let per_job = (many - one) / 3999;
    assert!(
        (512 << 10..1 << 20).contains(&per_job),
        "{per_job} bytes per job"
    );
    let deep = state_bytes(&config(&with_jobs(4000, 65_536)), false);
    assert!(
        deep - many >= 4000 * 65_535 * 16,
        "a queue slot per request in flight"
    );
}

#[test]
fn time_series_rows_count_where_the_stop_condition_gives_them() {
    let few = state_bytes(&config("[[phase]]\nrequests = 1000000000\n"), false);
    let rows = state_bytes(
        &config("[[phase]]\nrequests = 1000000000\ninterval = 1\n"),
        false,
    );
    assert!(rows - few >= 1_000_000_000 * 100, "{few} → {rows}");
    let by_bytes = state_bytes(
        &config("[[phase]]\nvolume = \"100GiB\"\ninterval = \"4KiB\"\n"),
        false,
    );
    assert!(by_bytes - few >= (100 << 30) / 4096 * 100, "{by_bytes}");
}

#[test]
fn a_phase_takes_at_most_fios_number_of_jobs() {
    assert_eq!(MAX_JOBS_PER_PHASE, 4096);
    config(&with_jobs(MAX_JOBS_PER_PHASE, 1));
    let text = format!("{DRIVE}{}", with_jobs(10_000, 1));
    let start = Instant::now();
    let e = Config::from_toml(&text, "test").unwrap_err().to_string();
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(
        e,
        "[[phase]] #2 job: at most 4096 [[phase.job]] tables per phase (fio's limit on the jobs of one run), found 10000"
    );
    assert!(seconds < 5.0, "validating 10,000 jobs took {seconds:.1} s");
}
