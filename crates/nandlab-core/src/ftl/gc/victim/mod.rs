//! GC victim selection per GC pool, in O(1) amortised or O(log n) per
//! operation (no scan of all blocks; ZombieNAND's usage table with the
//! rate-limited skip, whose draws follow a bucket's entry order, scans the
//! buckets it looks into). A policy is a [`VictimPolicy`] in a file of its own,
//! registered by one line in the `policies!` list below: its name (what
//! `[ftl] gc` takes, with `name:N` if it takes a parameter) and its type.
//! Shared structures: utilisation [`buckets`] (greedy, cost-benefit), the
//! usage table's order over them (`life_index`, greedy's wear-aware
//! choice), an indexable [`set`] (random, d-choices) and the [`seal_order`]
//! (FIFO, windowed greedy).
//!
//! A block's bucket is its valid units scaled to a native block
//! (`valid × units_per_block / capacity`): blocks run in a lower bit mode
//! hold fewer units, and a full small block must not look like a good victim.

pub mod buckets;
mod life_index;
pub mod seal_order;
pub mod set;

use crate::config::{rank_in, LifeAverage, LifeSkip, Registered, REGISTERED_POLICIES};
use crate::ftl::blocks::{BlockState, BlockTable};
use crate::geometry::Geometry;
use crate::sanity::{ensure, Checked};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// How ZombieNAND's usage-table GC judges a normal block too worn to clean
/// (Algorithm 3): its remaining life below `threshold` × the `average`;
/// such a block is skipped, always or at random (`skip`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct WornRule {
    pub threshold: f64,
    pub average: LifeAverage,
    pub skip: LifeSkip,
}

/// A GC victim policy: the sealed native blocks of every pool, organised
/// to choose a victim fast.
pub trait VictimPolicy: Sized {
    /// What `[ftl] gc` calls it.
    const NAME: &'static str;
    /// How it is written when it takes a parameter (`"d-choices:N"`, N ≥ 1).
    const FORM: Option<&'static str> = None;
    /// Whether it runs ZombieNAND's usage-table GC when wear levelling is
    /// on (see [`VictimPolicy::take_wear_aware`]).
    const WEAR_AWARE: bool = false;

    /// An empty index for geometry `g`; `parameter` is given exactly when
    /// the policy takes one (checked ≥ 1).
    fn new(g: &Geometry, parameter: Option<u32>) -> Self;

    /// The parameter it was built with (`None` for a policy without one):
    /// recovery after a power cut and snapshot checks rebuild the policy
    /// from its name and this.
    fn parameter(&self) -> Option<u32>;

    /// Block `block` of `capacity` units was sealed with `valid` valid
    /// units at logical time `now` (host units written so far); `blocks`
    /// gives its wear.
    fn insert(&mut self, block: u32, valid: u32, capacity: u32, now: u64, blocks: &BlockTable);

    /// A sealed block's valid count dropped from `valid + 1` to `valid`.
    fn invalidated(&mut self, _block: u32, _valid: u32, _capacity: u32, _now: u64) {}

    /// Takes member `block` out: the firmware relocates it for a reason of
    /// its own (read reclaim, refresh).
    fn remove(&mut self, block: u32, blocks: &BlockTable);

    /// Chooses and removes a victim from `pool` (`blocks` gives valid
    /// counts, capacities and wear); None if the pool has no sealed block.
    fn take(
        &mut self,
        pool: u32,
        blocks: &BlockTable,
        now: u64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Option<u32>;

    /// ZombieNAND's usage-table GC (Algorithms 2 and 3), where the policy
    /// supports it (config allows it with greedy only), among victims with
    /// at most `room` valid units; else [`take`](Self::take).
    fn take_wear_aware(
        &mut self,
        pool: u32,
        blocks: &BlockTable,
        _rule: &WornRule,
        _room: u32,
        now: u64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Option<u32> {
        self.take(pool, blocks, now, rng)
    }

    /// For a loaded snapshot: calls `member(block, pool)` for every block
    /// held, checking the structure's own bookkeeping (links, positions,
    /// buckets) against `blocks` and the logical clock `clock`.
    fn check_members(
        &self,
        g: &Geometry,
        blocks: &BlockTable,
        clock: u64,
        member: &mut dyn FnMut(u32, usize) -> Checked,
    ) -> Checked;
}

/// Declares the registered policies: a module and a type each.
macro_rules! policies {
    ($($module:ident :: $policy:ident),* $(,)?) => {
        $(mod $module;)*

        /// The policy a drive runs: one variant per registered policy.
        #[derive(Debug, Clone, Serialize, Deserialize)]
        pub enum VictimIndex {
            $($policy($module::$policy),)*
        }

        /// The registered policies' names, in the order messages list them.
        const ORDER: &[&str] = &[$($module::$policy::NAME,)*];

        // Each policy tells config (a layer below) its name, form and rank.
        $(const _: () = {
            #[linkme::distributed_slice(REGISTERED_POLICIES)]
            static REGISTERED: Registered = Registered {
                name: $module::$policy::NAME,
                form: <$module::$policy as VictimPolicy>::FORM,
                wear_aware: <$module::$policy as VictimPolicy>::WEAR_AWARE,
                rank: rank_in(ORDER, $module::$policy::NAME),
            };
        };)*

        impl VictimIndex {
            /// The index of policy `name` (a registered one) for `g`.
            pub fn new(name: &str, parameter: Option<u32>, g: &Geometry) -> VictimIndex {
                $(if name == $module::$policy::NAME {
                    return VictimIndex::$policy(VictimPolicy::new(g, parameter));
                })*
                unreachable!("validated: {name} is a registered GC policy")
            }

            /// The policy's name and parameter.
            pub fn name(&self) -> &'static str {
                match self { $(VictimIndex::$policy(_) => $module::$policy::NAME,)* }
            }

            #[inline]
            pub fn insert(&mut self, block: u32, valid: u32, capacity: u32, now: u64, blocks: &BlockTable) {
                match self { $(VictimIndex::$policy(p) => p.insert(block, valid, capacity, now, blocks),)* }
            }

            #[inline]
            pub fn invalidated(&mut self, block: u32, valid: u32, capacity: u32, now: u64) {
                match self { $(VictimIndex::$policy(p) => p.invalidated(block, valid, capacity, now),)* }
            }

            pub fn remove(&mut self, block: u32, blocks: &BlockTable) {
                match self { $(VictimIndex::$policy(p) => p.remove(block, blocks),)* }
            }

            pub fn take(
                &mut self,
                pool: u32,
                blocks: &BlockTable,
                now: u64,
                rng: &mut Xoshiro256PlusPlus,
            ) -> Option<u32> {
                match self { $(VictimIndex::$policy(p) => p.take(pool, blocks, now, rng),)* }
            }

            pub fn take_wear_aware(
                &mut self,
                pool: u32,
                blocks: &BlockTable,
                rule: &WornRule,
                room: u32,
                now: u64,
                rng: &mut Xoshiro256PlusPlus,
            ) -> Option<u32> {
                match self {
                    $(VictimIndex::$policy(p) => p.take_wear_aware(pool, blocks, rule, room, now, rng),)*
                }
            }

            /// The parameter it was built with, if it takes one.
            pub fn parameter(&self) -> Option<u32> {
                match self { $(VictimIndex::$policy(p) => p.parameter(),)* }
            }

            fn check_members(
                &self,
                g: &Geometry,
                blocks: &BlockTable,
                clock: u64,
                member: &mut dyn FnMut(u32, usize) -> Checked,
            ) -> Checked {
                match self { $(VictimIndex::$policy(p) => p.check_members(g, blocks, clock, member),)* }
            }
        }
    };
}

policies! {
    greedy::Greedy,
    cost_benefit::CostBenefit,
    fifo::Fifo,
    random::Random,
    d_choices::DChoices,
    windowed_greedy::WindowedGreedy,
}

impl VictimIndex {
    /// An empty index of the same policy (after a power cut, recovery
    /// files the sealed blocks again).
    pub fn emptied(&self, g: &Geometry) -> VictimIndex {
        VictimIndex::new(self.name(), self.parameter(), g)
    }

    /// Checks this (loaded) index against `fresh`, one its config builds:
    /// the same policy, holding exactly the sealed native blocks, each once,
    /// in its own pool, its structure consistent.
    pub fn check_loaded(
        &self,
        fresh: &VictimIndex,
        g: &Geometry,
        blocks: &BlockTable,
        clock: u64,
    ) -> Checked {
        let policy = |v: &VictimIndex| (v.name(), v.parameter());
        crate::sanity::same("the GC victim policy", &policy(self), &policy(fresh))?;
        let n = g.blocks as usize;
        let mut seen = vec![false; n];
        let mut member = |b: u32, pool: usize| -> Checked {
            ensure((b as usize) < n, || {
                format!("the GC victim index holds block {b}, past the drive")
            })?;
            ensure(!std::mem::replace(&mut seen[b as usize], true), || {
                format!("block {b} is in the GC victim index twice")
            })?;
            ensure(g.pool_of_block(b) as usize == pool, || {
                format!("block {b} is in another GC pool's victim index")
            })
        };
        self.check_members(g, blocks, clock, &mut member)?;
        let wrong = (0..n).find(|&b| {
            let sealed = blocks.state()[b] == BlockState::Sealed && !blocks.in_cache()[b];
            seen[b] != sealed
        });
        ensure(wrong.is_none(), || {
            let b = wrong.unwrap_or(0);
            let how = if seen[b] {
                "not sealed but in"
            } else {
                "sealed but not in"
            };
            format!("block {b} is {how} the GC victim index")
        })
    }
}
