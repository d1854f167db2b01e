//! `[[phase.job]]`: workloads that run together on one drive, as fio's jobs
//! without `stonewall`. Each keeps its own queue full and stops by itself;
//! their requests add up to the phase's; they share (and contend for) the
//! drive; a job alone is exactly the same workload written as a plain phase.

use nandlab_core::{Config, PhaseResult, Simulator};

const DRIVE: &str = r#"seed = 7
[device]
preset = "snia-slc"
capacity = "1GiB"
[ftl]
command_order = "reordered"
read_priority = true
[[phase]]
kind = "fill"
"#;

fn run(phases: &str) -> Vec<PhaseResult> {
    let cfg = Config::from_toml(&format!("{DRIVE}{phases}"), "test").unwrap();
    Simulator::new(cfg).run_all(&mut |_| true).unwrap()
}

fn error(phases: &str) -> String {
    Config::from_toml(&format!("{DRIVE}{phases}"), "test")
        .unwrap_err()
        .to_string()
}

const READER_AND_WRITER: &str = r#"
[[phase]]
pattern = "random"
block_size = "4KiB"
duration = "500ms"
[[phase.job]]
name = "reader"
read_fraction = 1.0
queue_depth = 16
[[phase.job]]
name = "writer"
queue_depth = 4
volume = "8MiB"
"#;

#[test]
fn jobs_add_up_to_their_phase_and_stop_by_themselves() {
    let results = run(READER_AND_WRITER);
    let phase = &results[1];
    let (s, jobs) = (&phase.summary, &phase.jobs);
    assert_eq!(jobs.len(), 2);
    assert_eq!(
        (jobs[0].name.as_str(), jobs[1].name.as_str()),
        ("reader", "writer")
    );
    // Every request is one job's.
    assert_eq!(
        jobs.iter().map(|j| j.host_requests).sum::<u64>(),
        s.host_requests
    );
    assert_eq!(jobs[0].host_read_bytes, s.host_read_bytes);
    assert_eq!(jobs[1].host_write_bytes, s.host_write_bytes);
    assert_eq!((jobs[0].host_write_bytes, jobs[1].host_read_bytes), (0, 0));
    // The writer stops at its own volume, well before the phase's 500 ms;
    // the reader runs to the end of the phase.
    assert_eq!(jobs[1].host_write_bytes, 8 << 20);
    assert!(jobs[1].sim_seconds < 0.4, "{}", jobs[1].sim_seconds);
    assert!(jobs[0].sim_seconds >= 0.5, "{}", jobs[0].sim_seconds);
    // Inherited from the phase: 4 KiB requests.
    assert_eq!(jobs[1].host_write_requests, 2048);
}

#[test]
fn jobs_are_deterministic() {
    assert_eq!(
        run(READER_AND_WRITER)[1].jobs,
        run(READER_AND_WRITER)[1].jobs
    );
}

#[test]
fn a_job_alone_runs_as_the_plain_phase() {
    let plain = run(
        "[[phase]]\npattern = \"random\"\nread_fraction = 0.7\nblock_size = \"8KiB\"\nqueue_depth = 8\nrequests = 40000\n",
    );
    let job = run(
        "[[phase]]\npattern = \"random\"\nblock_size = \"8KiB\"\n[[phase.job]]\nread_fraction = 0.7\nqueue_depth = 8\nrequests = 40000\n",
    );
    let (a, b) = (&plain[1].summary, &job[1].jobs[0]);
    // The first job draws the phase's own requests: the same run, request for request.
    assert_eq!(a.host_requests, b.host_requests);
    assert_eq!(
        (a.rates.iops, a.rates.read_mbps, a.rates.write_mbps),
        (b.rates.iops, b.rates.read_mbps, b.rates.write_mbps)
    );
    assert_eq!(a.read_latency_us, b.read_latency_us);
    assert_eq!(job[1].summary.waf, a.waf);
}

#[test]
fn jobs_together_share_the_drive() {
    // 4 KiB random reads alone, then with a writer beside them: on the same
    // dies the reads get fewer of the drive's operations.
    let alone = run(
        "[[phase]]\npattern = \"random\"\nread_fraction = 1.0\nblock_size = \"4KiB\"\nqueue_depth = 16\nduration = \"500ms\"\n",
    );
    let together = run(READER_AND_WRITER);
    let (alone, shared) = (
        alone[1].summary.rates.iops.unwrap(),
        together[1].jobs[0].rates.iops.unwrap(),
    );
    assert!(
        shared < 0.97 * alone,
        "alone {alone:.0} IOPS, beside a writer {shared:.0}"
    );
    // Together the drive does more than either job's own share.
    assert!(together[1].summary.rates.iops.unwrap() > shared);
}

#[test]
fn job_errors_name_the_job_and_the_key() {
    let e = error("[[phase]]\nduration = \"1s\"\n[[phase.job]]\nqueue_depth = 4\n[[phase.job]]\nrate = 100.0\n");
    assert!(e.contains("[[phase]] #2 job #2 rate"), "{e}");
    let e = error("[[phase]]\n[[phase.job]]\nqueue_depth = 4\nrequests = 10\n[[phase.job]]\nqueue_depth = 4\n");
    assert!(
        e.contains("[[phase]] #2 volume") && e.contains("stop condition"),
        "{e}"
    );
    let e = error("[[phase]]\nduration = \"1s\"\n[[phase.job]]\npatern = \"random\"\n");
    assert!(
        e.contains("[[phase]] #2 job #1") && e.contains("pattern"),
        "{e}"
    );
    let e = error("[[phase]]\nkind = \"trim\"\n[[phase.job]]\nrequests = 10\n");
    assert!(e.contains("job") && e.contains("kind = \"io\""), "{e}");
}
