//! Helpers shared by integration tests.
// Each test crate uses some of these helpers, not all.
#![allow(dead_code)]

use nandlab_core::stats::{Row, Summary};
use nandlab_core::{PhaseResult, Simulator};
use std::path::{Path, PathBuf};

/// `shared/traces/` above the checkout: the real trace samples, which the
/// tests that read them need (they are `#[ignore]`d with the reason, and
/// scripts/test-all runs them where the samples are).
pub fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/traces"))
        .find(|d| d.join("SOURCES.md").is_file())
        .expect("shared/traces/ (the real trace samples) is not above the checkout")
}

/// A small MLC drive (MQSim's default, 2 channels, 1 chip each, 32 blocks
/// of 32 pages per plane, 25 % spare): the `[device]` table of tests that
/// need GC to work within a few thousand requests.
pub const SMALL_DRIVE: &str = r#"[device]
preset = "mqsim-default"
channels = 2
chips_per_channel = 1
blocks_per_plane = 32
pages_per_block = 32
over_provisioning = "25 %"
"#;

/// What a run gave, wall-clock figures left out: each phase's summary and
/// time-series rows, and the run's summary (for runs compared figure by figure).
pub type Outcome = (Vec<Summary>, Vec<Vec<Row>>, Summary);

/// The [`Outcome`] of `phases`, run on `sim`.
pub fn outcome(sim: &Simulator, phases: Vec<PhaseResult>) -> Outcome {
    let strip = |mut s: Summary| {
        s.wall_seconds = 0.0;
        s.requests_per_wall_second = 0.0;
        s
    };
    let rows = phases.iter().map(|p| p.rows.clone()).collect();
    (
        phases.into_iter().map(|p| strip(p.summary)).collect(),
        rows,
        strip(sim.run_summary()),
    )
}
