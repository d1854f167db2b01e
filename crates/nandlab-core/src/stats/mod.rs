//! What a run measures: event [`counters`], [`latency`] histograms, the bit
//! error model's tallies ([`errors`]), the
//! interval time series ([`row`]) and the [`summary`] figures built from them.

pub mod counters;
pub mod energy;
pub mod errors;
pub mod latency;
pub mod power_loss;
pub mod row;
pub mod summary;

pub use counters::Counters;
pub use energy::{Activity, EnergySummary};
pub use errors::{ErrorSummary, ErrorTally};
pub use latency::{Latency, LatencyBins, LatencySummary};
pub use row::{Row, ROWS_PER_PHASE, ROW_COLUMNS, ROW_INTEGER_COLUMNS};
pub use summary::{
    EraseStats, IntegrityCounts, JobSummary, Rates, Summary, SummaryParts, TraceSkipped, Traffic,
};
