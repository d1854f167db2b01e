//! `[ftl]`: garbage collection (policy, watermarks, the spare space it needs,
//! pools), the allocation stripe, command handling, the DRAM-less map
//! cache. The pSLC cache keys are `pslc.rs`'s; wear levelling, ZombieNAND
//! and the death rule `zombie.rs`'s.

use super::keyword::{FormWord, Keywords, Meaning, Meaning::*};
use super::pslc::{self, PslcConfig};
use super::raw::{CountOrFraction, RawFtl};
use super::shape::Shape;
use super::values::err;
use super::zombie::{self, WearRules};
use super::{Capacity, ConfigError};
use crate::geometry::Geometry;
use crate::units::BadValue;
use serde::Serialize;

/// The GC victim policies the FTL registers (each with its line in
/// `ftl::gc::victim`'s list, where its name lives, once): config, a layer
/// below, learns them here. In link order: [`registered_policies`] puts
/// them in the list's.
#[linkme::distributed_slice]
pub static REGISTERED_POLICIES: [Registered];

/// A registered policy, as config sees it.
#[derive(Debug, Clone, Copy)]
pub struct Registered {
    pub name: &'static str,
    /// How it is written with its parameter (`"d-choices:N"`), if it takes one.
    pub form: Option<&'static str>,
    /// Whether it runs ZombieNAND's usage-table GC under wear levelling.
    pub wear_aware: bool,
    /// Its place in the registering list (messages list the policies in it).
    pub rank: u32,
}

impl Registered {
    /// How `[ftl] gc` names it, with `parameter` if it takes one
    /// (`"greedy"`, `"d-choices:3"`): what tests run every policy with.
    pub fn spelled(&self, parameter: u32) -> String {
        match self.form {
            Some(_) => format!("{}:{parameter}", self.name),
            None => self.name.to_string(),
        }
    }
}

/// The registered GC policies, in the registering list's order.
pub fn registered_policies() -> Vec<&'static Registered> {
    let mut all: Vec<_> = REGISTERED_POLICIES.iter().collect();
    all.sort_by_key(|p| p.rank);
    all
}

/// Where `name` is in `names` (their count if it is not): a registered
/// policy's rank, worked out where it registers.
pub const fn rank_in(names: &[&str], name: &str) -> u32 {
    let mut i = 0;
    while i < names.len() {
        let (a, b) = (names[i].as_bytes(), name.as_bytes());
        let mut same = a.len() == b.len();
        let mut j = 0;
        while same && j < a.len() {
            same = a[j] == b[j];
            j += 1;
        }
        if same {
            return i as u32;
        }
        i += 1;
    }
    names.len() as u32
}

/// `[ftl] gc`: a GC victim policy registered in `ftl::gc::victim` (its
/// names live there, once), and its parameter if it takes one (`d-choices:N`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GcPolicy {
    pub name: &'static str,
    pub parameter: Option<u32>,
}

impl GcPolicy {
    /// The default.
    pub const GREEDY: GcPolicy = GcPolicy {
        name: "greedy",
        parameter: None,
    };

    /// Whether it runs ZombieNAND's usage-table GC under wear levelling.
    pub(super) fn wear_aware(self) -> bool {
        REGISTERED_POLICIES
            .iter()
            .any(|p| p.name == self.name && p.wear_aware)
    }
}

/// Written as the config gives it: `"greedy"`, or `{"d-choices": 4}`.
impl Serialize for GcPolicy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.parameter {
            None => s.serialize_str(self.name),
            Some(n) => {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry(self.name, &n)?;
                m.end()
            }
        }
    }
}

/// A dimension of the allocation stripe: channel, way (chip), die, plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum StripeDim {
    Channel,
    Chip,
    Die,
    Plane,
}

#[derive(Debug, Clone, Serialize)]
pub struct FtlConfig {
    pub gc: GcPolicy,
    /// Foreground GC starts when a pool has fewer free blocks than this
    /// (low watermark)...
    pub gc_start: u32,
    /// ...background GC (idle time) cleans until it has this many (high
    /// watermark)...
    pub gc_stop: u32,
    /// ...and foreground GC until it is back at the low watermark (firmware
    /// that cleans just in time) or at the high one (the ZombieNAND paper's
    /// GC, "from 2 % until 5 %").
    pub gc_until: GcUntil,
    /// Fastest-varying dimension first ("cwdp": channel, then chip, die, plane).
    pub stripe_order: Vec<StripeDim>,
    /// Host idle time after which background GC may run, ns.
    pub idle_threshold_ns: u64,
    /// Host reads go ahead of programs, erases and GC waiting on a die.
    pub read_priority: bool,
    /// Flash operations the firmware keeps issued to each die: with read
    /// priority, reads overtake the others freely (they are still in the
    /// write buffer), these only up to a per-operation limit.
    pub die_queue_depth: u32,
    /// Whether the controller overlaps host commands or takes them one at a time.
    pub command_order: CommandOrder,
    /// The blocks that share free queue, victims, watermarks and frontiers.
    pub gc_scope: GcScope,
    /// Wear levelling, ZombieNAND and the death rule (`zombie.rs`).
    #[serde(flatten)]
    pub wear: WearRules,
    /// DRAM-less drive: bytes of controller RAM caching translation pages
    /// (None: the whole mapping table is in DRAM).
    pub map_cache: Option<u64>,
    /// With `map_cache`: translation pages written in order are kept as
    /// extents in RAM (a hybrid map, no lookup misses on them); false, every
    /// entry goes through the cache (a page-level DFTL, as MQSim's CMT).
    #[serde(skip_serializing_if = "is_true")]
    pub map_extents: bool,
    /// Bytes read ahead of a detected sequential read stream (0: off).
    pub read_ahead: u64,
    pub pslc: PslcConfig,
    /// Without power-loss protection: lower pages of multi-bit wordlines are
    /// backed up in SLC until their wordline is complete (an SLC program each).
    pub paired_page_backup: bool,
    /// Hot/cold separation at the host frontier: the multi-hash
    /// identifier's counters (None: off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_cold: Option<u32>,
}

/// How the controller takes host commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommandOrder {
    /// Commands overlap freely (NCQ/NVMe queues, reordered by the firmware):
    /// each waits only for the resources it uses.
    Reordered,
    /// One command at a time, in arrival order, each once the previous one's
    /// flash operations have been issued (firmware without command
    /// reordering): a read waiting for a busy die holds up every command
    /// behind it, so reads and writes collide.
    InOrder,
}

/// `[ftl] gc_until`: where foreground GC stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GcUntil {
    /// Back at `gc_start`: just in time, the high watermark left to idle time.
    Start,
    /// Back at `gc_stop`.
    Stop,
}

const GC_UNTIL: Keywords<GcUntil> = Keywords::new(
    "GC stop point",
    &[("start", Is(GcUntil::Start)), ("stop", Is(GcUntil::Stop))],
);

/// What a GC pool is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GcScope {
    Plane,
    Die,
}

/// `[ftl] gc`: the registered policies, by name or, with a parameter, by form.
fn gc_policies() -> Vec<(&'static str, Meaning<GcPolicy>)> {
    registered_policies()
        .into_iter()
        .map(|p| match p.form {
            None => (
                p.name,
                Is(GcPolicy {
                    name: p.name,
                    parameter: None,
                }),
            ),
            Some(form) => (form, Form(with_parameter)),
        })
        .collect()
}

/// A policy written `name:N`, N ≥ 1.
fn with_parameter(w: &FormWord) -> Result<GcPolicy, BadValue> {
    let name = REGISTERED_POLICIES
        .iter()
        .find(|p| p.form == Some(w.form))
        .expect("a registered form")
        .name;
    match w.args.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(GcPolicy {
            name,
            parameter: Some(n),
        }),
        _ => {
            let letter = w.form.rsplit(':').next().unwrap_or("N");
            Err(format!(
                "expected {} with {letter} a whole number ≥ 1, found `{}`",
                w.form, w.word
            )
            .into())
        }
    }
}

/// `[ftl] hot_cold`: off, or the multi-hash identifier (`ftl/hot_cold.rs`)
/// with 4,096 counters or `N`.
const HOT_COLD: Keywords<Option<u32>> = Keywords::new(
    "hot/cold separation",
    &[
        ("off", Is(None)),
        ("multi-hash", Is(Some(4096))),
        ("multi-hash:N", Form(hot_cold_counters)),
    ],
);

/// `multi-hash:N`: N counters, a power of two from 64 to 2^24, in plain
/// digits (no sign, no leading zero).
fn hot_cold_counters(w: &FormWord) -> Result<Option<u32>, BadValue> {
    let plain = w.args.bytes().all(|c| c.is_ascii_digit()) && !w.args.starts_with('0');
    match w.args.parse::<u32>() {
        Ok(n) if plain && n.is_power_of_two() && (64..=1 << 24).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "expected {} with N a power of two from 64 to 16777216 (counters), found `{}`",
            w.form, w.word
        )
        .into()),
    }
}

/// `[ftl] command_order`.
const COMMAND_ORDER: Keywords<CommandOrder> = Keywords::new(
    "command order",
    &[
        ("reordered", Is(CommandOrder::Reordered)),
        ("in-order", Is(CommandOrder::InOrder)),
    ],
);

/// `[ftl] gc_scope`.
pub(super) const GC_SCOPE: Keywords<GcScope> = Keywords::new(
    "GC scope",
    &[("plane", Is(GcScope::Plane)), ("die", Is(GcScope::Die))],
);

/// `[ftl] stripe_order`'s letters: (letter, dimension, what it stands for),
/// the default order first to last.
const STRIPE_DIMS: [(char, StripeDim, &str); 4] = [
    ('c', StripeDim::Channel, "channel"),
    ('w', StripeDim::Chip, "way/chip"),
    ('d', StripeDim::Die, "die"),
    ('p', StripeDim::Plane, "plane"),
];

/// A stripe order: each letter of [`STRIPE_DIMS`] once.
fn stripe_order(key: &str, order: &str) -> Result<Vec<StripeDim>, ConfigError> {
    let letters = STRIPE_DIMS.map(|(c, _, _)| c.to_string()).join(", ");
    let mut dims = Vec::new();
    for c in order.chars() {
        let Some(&(_, dim, _)) = STRIPE_DIMS.iter().find(|(letter, _, _)| *letter == c) else {
            let words = STRIPE_DIMS.map(|(_, _, word)| word).join(", ");
            return err(
                key,
                format!(
                    "expected a permutation of the letters {letters} ({words}), found `{order}`"
                ),
            );
        };
        if dims.contains(&dim) {
            return err(
                key,
                format!("each of {letters} must appear once, found `{order}`"),
            );
        }
        dims.push(dim);
    }
    if dims.len() != STRIPE_DIMS.len() {
        return err(
            key,
            format!("expected all four letters {letters}, found `{order}`"),
        );
    }
    Ok(dims)
}

/// Foreground GC's free-block watermark when `[ftl] gc_start` is not given.
const GC_START: f64 = 0.02;
/// GC's high watermark when `[ftl] gc_stop` is not given.
const GC_STOP: f64 = 0.05;

/// `[ftl]` on a drive of this shape.
pub(super) fn validate(f: &RawFtl, shape: &Shape) -> Result<FtlConfig, ConfigError> {
    let g = &shape.geometry;
    let command_order = COMMAND_ORDER.parse_or(
        "[ftl] command_order",
        f.command_order.as_deref(),
        CommandOrder::Reordered,
    )?;
    let policies = gc_policies();
    let gc = Keywords::new("GC policy", &policies).parse_or(
        "[ftl] gc",
        f.gc.as_deref(),
        GcPolicy::GREEDY,
    )?;
    let gc_start = watermark("[ftl] gc_start", f.gc_start, GC_START, g)?;
    let gc_stop = watermark("[ftl] gc_stop", f.gc_stop, GC_STOP, g)?.max(gc_start);
    if let Some(CountOrFraction::Count(n)) = f.gc_stop {
        if (n as u32) < gc_start {
            return err(
                "[ftl] gc_stop",
                format!("must be at least gc_start ({gc_start} blocks), found {n}"),
            );
        }
    }
    check_spare(f, shape, gc_start)?;
    let pslc = pslc::validate(f, g, gc_start)?;
    let stripe_order = match f.stripe_order.as_deref() {
        None => STRIPE_DIMS.iter().map(|&(_, dim, _)| dim).collect(),
        Some(order) => stripe_order("[ftl] stripe_order", order)?,
    };
    let wear = zombie::validate(f, gc, g, gc_start, gc_stop)?;
    let hot_cold = HOT_COLD.parse_or("[ftl] hot_cold", f.hot_cold.as_deref(), None)?;
    if hot_cold.is_some() && pslc.kind != pslc::PslcKind::Off {
        return err(
            "[ftl] hot_cold",
            "hot/cold separation places native host writes; with a pSLC cache every host \
             write goes to the cache (set [ftl] pslc = \"off\" or hot_cold = \"off\")",
        );
    }
    let map_cache = match f.map_cache {
        None => None,
        Some(s) if s.0 >= g.page_size as u64 => Some(s.0),
        Some(s) => {
            return err(
                "[ftl] map_cache",
                format!(
                    "must hold at least one translation page ({} bytes), found {}",
                    g.page_size, s.0
                ),
            )
        }
    };
    Ok(FtlConfig {
        gc,
        gc_start,
        gc_stop,
        gc_until: GC_UNTIL.parse_or("[ftl] gc_until", f.gc_until.as_deref(), GcUntil::Start)?,
        stripe_order,
        idle_threshold_ns: f.idle_threshold.map(|d| d.0).unwrap_or(1_000_000),
        read_priority: f.read_priority.unwrap_or(true),
        die_queue_depth: die_queue_depth(f)?,
        command_order,
        gc_scope: shape.gc_scope,
        wear,
        map_cache,
        map_extents: map_extents(f)?,
        read_ahead: read_ahead(f, g)?,
        pslc,
        paired_page_backup: f.paired_page_backup.unwrap_or(true),
        hot_cold,
    })
}

/// The most `[ftl] read_ahead` may be: controllers read ahead a few MiB; the
/// window's RAM (8 bytes per mapping unit) stays small beside the map.
const MAX_READ_AHEAD: u64 = 1 << 30;

/// `[ftl] read_ahead`: at most [`MAX_READ_AHEAD`] and the user capacity.
fn read_ahead(f: &RawFtl, g: &Geometry) -> Result<u64, ConfigError> {
    let bytes = f.read_ahead.map_or(0, |s| s.0);
    let user = g.user_units.saturating_mul(g.unit_size as u64);
    if bytes > MAX_READ_AHEAD.min(user) {
        return err(
            "[ftl] read_ahead",
            format!(
                "expected at most 1 GiB and the drive's user capacity ({user} bytes), found {bytes} bytes"
            ),
        );
    }
    Ok(bytes)
}

/// `[ftl] map_extents`: only a drive with a map cache keeps extents.
fn map_extents(f: &RawFtl) -> Result<bool, ConfigError> {
    match (f.map_extents, f.map_cache) {
        (Some(_), None) => err(
            "[ftl] map_extents",
            "only a DRAM-less drive ([ftl] map_cache) keeps extents; \
             without map_cache the whole map is in DRAM"
                .to_string(),
        ),
        (extents, _) => Ok(extents.unwrap_or(true)),
    }
}

fn is_true(b: &bool) -> bool {
    *b
}

/// `[ftl] die_queue_depth`: operations issued to a die at once.
fn die_queue_depth(f: &RawFtl) -> Result<u32, ConfigError> {
    match f.die_queue_depth {
        None => Ok(DIE_QUEUE_DEPTH),
        Some(n @ 1..=1024) => Ok(n),
        Some(n) => err(
            "[ftl] die_queue_depth",
            format!("expected 1 to 1024 operations per die, found {n}"),
        ),
    }
}

/// Operations issued to a die when `[ftl] die_queue_depth` is not given.
pub const DIE_QUEUE_DEPTH: u32 = 4;

/// A GC watermark (`key`): free blocks per pool, given as a count or a
/// share of the pool (`default` when not given).
fn watermark(
    key: &str,
    v: Option<CountOrFraction>,
    default: f64,
    g: &Geometry,
) -> Result<u32, ConfigError> {
    let n = match v.unwrap_or(CountOrFraction::Fraction(default)) {
        CountOrFraction::Count(n) => n,
        CountOrFraction::Fraction(x) => (x * g.blocks_per_pool as f64).round().max(2.0) as u64,
    };
    if n < 2 {
        return err(
            key,
            format!("GC needs at least 2 free blocks per pool, found {n}"),
        );
    }
    Ok(n.min(u32::MAX as u64) as u32)
}

/// Free blocks foreground GC keeps and the two open frontiers (host, GC)
/// hold no data; the rest of the spare space is what GC reclaims from. The
/// high watermark (gc_stop) is a target background GC may not reach on a
/// drive full of data; it is also what the drive must keep when blocks die.
fn check_spare(f: &RawFtl, shape: &Shape, gc_start: u32) -> Result<(), ConfigError> {
    let g = &shape.geometry;
    let spare = g.spare_blocks_per_pool();
    let needed = gc_start as f64 + 2.0;
    if spare > needed {
        return Ok(());
    }
    if shape.nominal {
        // The nominal capacity sized the planes: say which capacity would do.
        let remedy = match enough_gib(f, shape) {
            Some(gib) => format!("give at least {gib} GiB, more spare space, or fewer planes"),
            None => "no capacity up to 1,024 times this one would at this spare space: give more \
                     spare space ([device] over_provisioning or reserve), or fewer planes"
                .to_string(),
        };
        return err(
            "[device] capacity",
            format!(
                "too small for this geometry: {} blocks per plane leave {spare:.1} spare blocks per GC pool, \
                 and GC needs more than {needed:.0} (gc_start plus 2 open blocks); {remedy}",
                g.blocks_per_plane,
            ),
        );
    }
    let capacity_key = match shape.capacity {
        Capacity::OverProvisioning(_) => "[device] over_provisioning",
        Capacity::Reserve(_) => "[device] reserve",
    };
    err(
        capacity_key,
        format!(
            "spare space too small for GC: {spare:.1} spare blocks per {scope}, but gc_start ({gc_start} blocks) \
             plus 2 open blocks leave nothing to reclaim: it needs more than {needed:.0}; raise the spare space or lower [ftl] gc_start",
            scope = if g.planes_per_pool == 1 { "plane" } else { "die" },
        ),
    )
}

/// The least nominal capacity in whole GiB, from the present one up, from
/// which every larger one sizes the planes (as the shape does) with enough
/// spare blocks for GC (None: not within 1024 times the present one).
///
/// Whole blocks per plane round the raw capacity up, so some capacities
/// get a spare block or two more than others: the least one that works
/// may be followed by ones that do not (29 GiB of MQSim's geometry works,
/// 32 does not). Counted without that rounding, the spare blocks and GC's
/// start (rounding at its most) both grow in proportion to the capacity,
/// so once the spare passes what GC needs it stays past it.
fn enough_gib(f: &RawFtl, shape: &Shape) -> Option<u64> {
    let g = &shape.geometry;
    let raw_per_user = match shape.capacity {
        Capacity::OverProvisioning(op) => 1.0 + op,
        Capacity::Reserve(r) => 1.0 / (1.0 - r),
    };
    let units_per_block = g.units_per_block as f64;
    let gib_units = (1u64 << 30) / g.unit_size as u64;
    let now_gib = g.user_units.div_ceil(gib_units);
    (now_gib.max(1)..now_gib.max(1).saturating_mul(1024)).find(|&gib| {
        // Blocks of user data per pool, and a pool's blocks at most.
        let user = (gib * gib_units) as f64 / units_per_block / g.pools as f64;
        let pool_blocks = user * raw_per_user + g.planes_per_pool as f64;
        let gc_start = match f.gc_start.unwrap_or(CountOrFraction::Fraction(GC_START)) {
            CountOrFraction::Count(n) => n as f64,
            CountOrFraction::Fraction(x) => (x * pool_blocks + 0.5).max(2.0),
        };
        user * (raw_per_user - 1.0) > gc_start + 2.0
    })
}
