//! nandlab's engine: a physics-aware NAND flash SSD simulator.
//!
//! The layout follows the SSD, top to bottom: [`sim`] runs phases of a
//! workload from the [`host`] (synthetic streams, traces, the host link) on
//! one [`drive`] (command handling, write buffer, read-ahead), whose [`ftl`]
//! maps, allocates, collects garbage and recovers from power cuts over the
//! blocks of a [`geometry`], booking each flash operation with the
//! [`schedule`] (the timeline of dies, channels and link, which decides when
//! it runs), with the flash physics of [`media`] (bit modes, latencies, wear). [`config`] turns user
//! TOML/JSON into checked settings; [`stats`] holds what a run measures;
//! [`oracle`] and [`sanity`] check the state. No Python, no printing.

/// An error type that is its message, a newtype over `String` — `Display`,
/// `Error`, and conversions from text and back — for errors whose caller
/// adds where they happened (`units::BadValue`, `sanity::Broken`, the NBD
/// server's): `message_error! { /// doc
/// pub struct Name; }`.
#[macro_export]
macro_rules! message_error {
    ($(#[$meta:meta])* $vis:vis struct $name:ident;) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        $vis struct $name(pub String);

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter) -> ::std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl ::std::error::Error for $name {}

        impl ::std::convert::From<String> for $name {
            fn from(message: String) -> $name {
                $name(message)
            }
        }

        impl ::std::convert::From<&str> for $name {
            fn from(message: &str) -> $name {
                $name(message.to_string())
            }
        }

        impl ::std::convert::From<$name> for String {
            fn from(e: $name) -> String {
                e.0
            }
        }
    };
}

pub mod config;
pub mod drive;
pub mod ftl;
pub mod geometry;
pub mod host;
pub mod math;
pub mod media;
pub mod memory;
pub mod oracle;
pub mod power;
pub mod sanity;
pub mod schedule;
pub mod seed;
pub mod sim;
pub mod stats;
pub mod units;

pub use config::{Config, ConfigError};
pub use sim::{PhaseResult, Progress, Simulator};
pub use stats::Summary;

use std::fmt;

/// How a drive wore out, with the figures that say so: the end of its
/// life, which an `until = "dead"` phase runs to and reports as its
/// outcome (any other phase stops on it).
#[derive(Debug, Clone, PartialEq)]
pub enum WearOut {
    /// A plane ran out of erased blocks.
    NoFreeBlock { pool: u32 },
    /// GC found nothing to reclaim in a pool: its valid data fills it.
    NoReclaimableSpace { pool: u32 },
    /// Retired and downgraded blocks left a plane too little flash for the
    /// data on it and the GC reserve.
    TooLittleFlash { pool: u32, usable: u64, needed: u64 },
    /// The reads of a time-series interval of an `until = "dead"` phase
    /// had an expected uncorrectable bit error rate past the class target.
    Uncorrectable { uber: f64, target: f64 },
    /// A pool retired more blocks than `death = "dead-blocks"` allows.
    TooManyDeadBlocks { pool: u32, dead: u32, limit: u32 },
}

impl WearOut {
    /// Its cause, for programs (a summary's `death_cause`).
    pub fn cause(&self) -> DeathCause {
        match self {
            WearOut::NoFreeBlock { .. } => DeathCause::NoErasedBlock,
            WearOut::NoReclaimableSpace { .. } => DeathCause::NothingToReclaim,
            WearOut::TooLittleFlash { .. } => DeathCause::TooLittleFlash,
            WearOut::TooManyDeadBlocks { .. } => DeathCause::TooManyDeadBlocks,
            WearOut::Uncorrectable { .. } => DeathCause::BitErrors,
        }
    }
}

impl fmt::Display for WearOut {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            WearOut::NoFreeBlock { pool } => write!(
                f,
                "GC pool {pool} has no erased block left for writing (worn-out blocks are retired; \
                 the drive has run out of spare blocks)"
            ),
            WearOut::NoReclaimableSpace { pool } => write!(
                f,
                "garbage collection found nothing to reclaim in GC pool {pool}: its valid data fills it \
                 (more spare space or a smaller working set would help)"
            ),
            WearOut::TooLittleFlash { pool, usable, needed } => write!(
                f,
                "worn out: GC pool {pool} has {usable} usable mapping units left, fewer than the {needed} \
                 its share of the user capacity and the GC high watermark need"
            ),
            WearOut::Uncorrectable { uber, target } => write!(
                f,
                "worn out by bit errors: the reads of the last interval had an uncorrectable bit \
                 error rate of {uber:.2e}, past the class target {target:.0e} ([device.errors] uber_target)"
            ),
            WearOut::TooManyDeadBlocks { pool, dead, limit } => write!(
                f,
                "worn out: GC pool {pool} has {dead} retired blocks, more than the {limit} its reserve \
                 less the GC high watermark allows (death = \"dead-blocks\")"
            ),
        }
    }
}

/// A run that cannot go on: the drive wore out ([`WearOut`]), or a fault —
/// the run was stopped, misused, or cannot be read or kept. Config problems
/// are caught before a run starts ([`ConfigError`]).
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The drive wore out.
    WoreOut(WearOut),
    NoSuchPhase {
        index: usize,
        phases: usize,
    },
    /// The drive died in an earlier phase.
    Dead {
        reason: String,
    },
    /// The progress callback asked to stop.
    Aborted,
    /// A trace phase's trace could not be read.
    Trace(host::trace::TraceError),
    /// The integrity oracle caught a read that does not get the latest
    /// acknowledged write (the report names the unit and its history).
    Integrity(String),
    /// The run asked for something this drive cannot do.
    Unsupported(String),
    /// A snapshot that cannot be written or read (names the file and why).
    Snapshot(String),
    /// Stopped on request at a sync point, after writing a snapshot there.
    Interrupted {
        snapshot: std::path::PathBuf,
    },
    /// A setting outside the config (an environment variable) that cannot be used.
    Config(config::ConfigError),
    /// The run (the drive's state, its phases' jobs, histograms and time
    /// series) would not fit in the memory left on this machine.
    OutOfMemory {
        needed: u64,
        available: u64,
    },
}

impl From<WearOut> for SimError {
    fn from(w: WearOut) -> SimError {
        SimError::WoreOut(w)
    }
}

impl From<config::ConfigError> for SimError {
    fn from(e: config::ConfigError) -> SimError {
        SimError::Config(e)
    }
}

impl From<host::trace::TraceError> for SimError {
    fn from(e: host::trace::TraceError) -> SimError {
        SimError::Trace(e)
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            SimError::Trace(e) => write!(f, "{e}"),
            SimError::Config(e) => write!(f, "{e}"),
            SimError::Integrity(report)
            | SimError::Unsupported(report)
            | SimError::Snapshot(report) => write!(f, "{report}"),
            SimError::Interrupted { snapshot } => write!(
                f,
                "run interrupted; its state is in the snapshot {0}: `nandlab resume {0}` goes on",
                snapshot.display()
            ),
            SimError::OutOfMemory { needed, available } => write!(
                f,
                "this run needs about {}, and only {} of RAM is available: simulate a smaller \
                 capacity (or a larger mapping unit), fewer [[phase.job]] tables or fewer \
                 time-series rows (a larger interval)",
                units::human_bytes(*needed),
                units::human_bytes(*available)
            ),
            SimError::WoreOut(w) => write!(f, "{w}"),
            SimError::NoSuchPhase { index, phases } => {
                write!(f, "no phase #{} (the config has {phases})", index + 1)
            }
            SimError::Aborted => write!(f, "run interrupted"),
            SimError::Dead { reason } => write!(f, "the drive is dead: {reason}"),
        }
    }
}

impl std::error::Error for SimError {}

/// Why a drive wore out, for programs (a summary's `death_cause`; its
/// `death` says it in words, with the figures).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeathCause {
    /// A GC pool had no erased block left to write to.
    NoErasedBlock,
    /// GC found nothing to reclaim: valid data filled a pool.
    NothingToReclaim,
    /// Usable flash fell below the user capacity plus the GC high
    /// watermark (`death = "capacity"`).
    TooLittleFlash,
    /// More retired blocks than `death = "dead-blocks"` allows.
    TooManyDeadBlocks,
    /// Reads past the uncorrectable bit error rate target.
    BitErrors,
}

impl DeathCause {
    pub const ALL: [DeathCause; 5] = [
        DeathCause::TooLittleFlash,
        DeathCause::TooManyDeadBlocks,
        DeathCause::BitErrors,
        DeathCause::NoErasedBlock,
        DeathCause::NothingToReclaim,
    ];

    /// Its name in a summary's `death_cause`.
    pub fn name(self) -> &'static str {
        match self {
            DeathCause::NoErasedBlock => "no-erased-block",
            DeathCause::NothingToReclaim => "nothing-to-reclaim",
            DeathCause::TooLittleFlash => "too-little-flash",
            DeathCause::TooManyDeadBlocks => "too-many-dead-blocks",
            DeathCause::BitErrors => "bit-errors",
        }
    }

    /// What a table says for it.
    pub fn describe(self) -> &'static str {
        match self {
            DeathCause::NoErasedBlock => "worn out: no erased block left",
            DeathCause::NothingToReclaim => "worn out: nothing left for GC to reclaim",
            DeathCause::TooLittleFlash => "worn out: too little usable flash",
            DeathCause::TooManyDeadBlocks => "worn out: too many retired blocks",
            DeathCause::BitErrors => "worn out: bit errors past the UBER target",
        }
    }
}

/// A drive's death: its cause, and the engine's words for it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Death {
    pub cause: DeathCause,
    pub reason: String,
}

impl SimError {
    /// Why the drive wore out (ran out of usable flash, or of correctable
    /// reads), if it did, as opposed to being stopped or misused.
    pub fn death_cause(&self) -> Option<DeathCause> {
        match self {
            SimError::WoreOut(w) => Some(w.cause()),
            _ => None,
        }
    }

    /// Whether the drive wore out (see [`SimError::death_cause`]).
    pub fn is_wear_out(&self) -> bool {
        self.death_cause().is_some()
    }
}

#[cfg(test)]
mod death_cause_tests {
    use super::DeathCause;

    #[test]
    fn each_cause_is_named_as_summaries_write_it() {
        for c in DeathCause::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.name());
        }
    }
}
