//! Synthetic host workloads: a stream of read/write/trim requests with a
//! sequential or random address pattern (uniform, hot/cold or Zipf) over a
//! working set, each random choice drawn from its own seeded stream.

use crate::math::Deterministic;
use crate::sanity::{ensure, same, Checked};
use crate::seed::derive_seed;
use crate::units::BadValue;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution as _, Uniform, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    Read,
    Write,
    Trim,
}

/// One host request: `len` bytes at byte `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    pub op: Op,
    pub offset: u64,
    pub len: u32,
}

/// Where a stream's requests go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Sequential,
    /// Uniformly random positions (they may repeat).
    Random,
    /// Every position of the working set exactly once per pass, in a seeded
    /// random order (Swissbit's "each address once").
    Shuffle,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    Uniform,
    /// Fraction `r` of accesses go to fraction `f` of the working set.
    HotCold {
        r: f64,
        f: f64,
    },
    Zipf {
        theta: f64,
    },
    /// fio's `pareto:h`: rank = (N − 1) · u^(ln h / ln(1 − h)), scattered.
    Pareto {
        h: f64,
    },
    /// fio's `normal:dev`: a Gaussian around the middle with a standard
    /// deviation of `dev` % of the positions, scattered.
    Normal {
        dev: f64,
    },
}

/// What a stream of requests is (a phase's or a `[[phase.job]]`'s
/// workload, checked): where its requests go, what they do and how big
/// they are.
#[derive(Debug, Clone, Copy)]
pub struct Stream<'a> {
    pub pattern: Pattern,
    pub distribution: Distribution,
    /// The seed of a shuffle's order, where it is not the workload's.
    pub order_seed: Option<u64>,
    pub read_fraction: f64,
    pub trim_fraction: f64,
    pub block_size: u32,
    /// Sizes and weights to draw from (empty: always `block_size`).
    pub block_sizes: &'a [(u32, u32)],
    pub align: u32,
    /// The working set and where it starts, as shares of the user capacity.
    pub working_set: f64,
    pub working_set_offset: f64,
}

/// A bijection on `0..n` that scatters neighbours (4-round Feistel network
/// with cycle walking), so that "hot" ranks land all over the address space.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scatter {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Scatter {
    pub fn new(n: u64, seed: u64) -> Scatter {
        let bits = 64 - n.max(2).saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let keys = [0, 1, 2, 3].map(|i| derive_seed(seed, "scatter", i));
        Scatter { n, half_bits, keys }
    }

    #[inline]
    fn round(&self, x: u64, k: u64) -> u64 {
        let mut h = (x ^ k).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
        h & ((1 << self.half_bits) - 1)
    }

    #[inline]
    pub fn map(&self, mut x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        loop {
            let (mut l, mut r) = (x >> self.half_bits, x & mask);
            for k in self.keys {
                let t = l ^ self.round(r, k);
                l = r;
                r = t;
            }
            x = (l << self.half_bits) | r;
            if x < self.n {
                return x;
            }
        }
    }
}

#[derive(Serialize, Deserialize)]
enum Addresses {
    Sequential {
        next: u64,
    },
    /// Positions drawn by a sampler set up once (no division per draw).
    Uniform(Uniform<u64>),
    /// Every position once per pass, in the order of a seeded bijection.
    Shuffle {
        scatter: Scatter,
        next: u64,
    },
    HotCold {
        hot_positions: u64,
        r: f64,
    },
    Zipf {
        zipf: ZipfRanks,
        scatter: Scatter,
    },
    /// Rank (N − 1) · u^power, scattered.
    Pareto {
        power: f64,
        scatter: Scatter,
    },
    /// Rank N/2 + z · σ (z standard normal, clamped), scattered.
    Normal {
        sigma: f64,
        scatter: Scatter,
    },
}

/// A Zipf sampler that is stored as its parameters (it holds no state of its own).
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "(f64, f64)", into = "(f64, f64)")]
struct ZipfRanks {
    n: f64,
    theta: f64,
    zipf: Zipf<f64>,
}

impl TryFrom<(f64, f64)> for ZipfRanks {
    type Error = BadValue;

    fn try_from((n, theta): (f64, f64)) -> Result<ZipfRanks, BadValue> {
        let zipf = Zipf::new(n, theta).map_err(|e| format!("zipf({n}, {theta}): {e}"))?;
        Ok(ZipfRanks { n, theta, zipf })
    }
}

impl From<ZipfRanks> for (f64, f64) {
    fn from(z: ZipfRanks) -> (f64, f64) {
        (z.n, z.theta)
    }
}

/// Generates a phase's requests.
#[derive(Serialize, Deserialize)]
pub struct Generator {
    ops: Xoshiro256PlusPlus,
    addrs: Xoshiro256PlusPlus,
    pattern: Addresses,
    /// First byte of the working set.
    start: u64,
    /// Aligned request start positions in the working set.
    positions: u64,
    align: u64,
    block_size: u32,
    /// Request sizes with cumulative weights (empty: always `block_size`).
    sizes: Vec<(u32, u32)>,
    ws_bytes: u64,
    read_fraction: f64,
    trim_fraction: f64,
}

impl Generator {
    /// `user_bytes` is the drive's user capacity; `seed` the phase's workload seed.
    pub fn new(p: &Stream, user_bytes: u64, unit: u64, seed: u64) -> Generator {
        let align = p.align as u64;
        // Working set boundaries on mapping-unit (and alignment) boundaries.
        let round = |x: f64| ((x * user_bytes as f64) as u64) / unit.max(align) * unit.max(align);
        let start = round(p.working_set_offset);
        let ws_bytes = round(p.working_set)
            .min(user_bytes - start)
            .max(p.block_size as u64);
        let positions = ((ws_bytes - p.block_size as u64) / align + 1).max(1);
        let pattern = match (p.pattern, p.distribution) {
            (Pattern::Sequential, _) => Addresses::Sequential { next: 0 },
            (Pattern::Shuffle, _) => Addresses::Shuffle {
                scatter: Scatter::new(
                    positions,
                    derive_seed(p.order_seed.unwrap_or(seed), "shuffle", 0),
                ),
                next: 0,
            },
            (Pattern::Random, Distribution::Uniform) => {
                Addresses::Uniform(Uniform::new(0, positions).expect("positions ≥ 1"))
            }
            (Pattern::Random, Distribution::HotCold { r, f }) => Addresses::HotCold {
                hot_positions: ((positions as f64 * f) as u64).clamp(1, positions),
                r,
            },
            (Pattern::Random, Distribution::Zipf { theta }) => Addresses::Zipf {
                zipf: ZipfRanks::try_from((positions as f64, theta))
                    .expect("validated zipf parameters"),
                scatter: Scatter::new(positions, derive_seed(seed, "zipf-scatter", 0)),
            },
            (Pattern::Random, Distribution::Pareto { h }) => Addresses::Pareto {
                power: h.ln_d() / (1.0 - h).ln_d(),
                scatter: Scatter::new(positions, derive_seed(seed, "pareto-scatter", 0)),
            },
            (Pattern::Random, Distribution::Normal { dev }) => Addresses::Normal {
                sigma: positions as f64 * dev / 100.0,
                scatter: Scatter::new(positions, derive_seed(seed, "normal-scatter", 0)),
            },
        };
        let mut total = 0;
        let sizes = p
            .block_sizes
            .iter()
            .map(|&(size, weight)| {
                total += weight;
                (size, total)
            })
            .collect();
        Generator {
            ops: Xoshiro256PlusPlus::seed_from_u64(derive_seed(seed, "ops", 0)),
            addrs: Xoshiro256PlusPlus::seed_from_u64(derive_seed(seed, "addresses", 0)),
            pattern,
            start,
            positions,
            align,
            block_size: p.block_size,
            sizes,
            ws_bytes,
            read_fraction: p.read_fraction,
            trim_fraction: p.trim_fraction,
        }
    }

    /// The largest request size this workload draws that is at most `left`
    /// bytes (None: none is).
    pub fn fitting(&self, left: u64) -> Option<u32> {
        if self.sizes.is_empty() {
            return (self.block_size as u64 <= left).then_some(self.block_size);
        }
        self.sizes
            .iter()
            .map(|&(size, _)| size)
            .filter(|&size| size as u64 <= left)
            .max()
    }

    /// Checks this (loaded) generator against `fresh`, the one its phase
    /// and seed build: the same settings, and where it is in its pass
    /// within the working set.
    pub fn check_loaded(&self, fresh: &Generator) -> Checked {
        let settings = |g: &Generator| {
            let shape = (g.start, g.positions, g.align, g.block_size, g.ws_bytes);
            (shape, g.sizes.clone(), g.read_fraction, g.trim_fraction)
        };
        same(
            "the request generator's settings",
            &settings(self),
            &settings(fresh),
        )?;
        match (&self.pattern, &fresh.pattern) {
            (Addresses::Sequential { next }, Addresses::Sequential { .. }) => {
                ensure(*next <= self.ws_bytes, || {
                    "the sequential stream is past its working set".into()
                })
            }
            (Addresses::Shuffle { scatter, next }, Addresses::Shuffle { scatter: s0, .. }) => {
                same("the shuffle order", scatter, s0)?;
                ensure(*next < self.positions, || {
                    "the shuffle is past its working set".into()
                })
            }
            (pattern, fresh) => same("the address distribution", pattern, fresh),
        }
    }

    #[inline]
    pub fn next_request(&mut self) -> Request {
        let op = if self.read_fraction == 0.0 && self.trim_fraction == 0.0 {
            Op::Write
        } else {
            let u: f64 = self.ops.random();
            if u < self.read_fraction {
                Op::Read
            } else if u < self.read_fraction + self.trim_fraction {
                Op::Trim
            } else {
                Op::Write
            }
        };
        let len = match self.sizes.last() {
            None => self.block_size,
            Some(&(_, total)) => {
                let x = self.ops.random_range(0..total);
                self.sizes[self.sizes.partition_point(|&(_, c)| c <= x)].0
            }
        };
        let pos = match &mut self.pattern {
            Addresses::Sequential { next } => {
                if *next + len as u64 > self.ws_bytes {
                    *next = 0;
                }
                let off = *next;
                *next += len as u64;
                return Request {
                    op,
                    offset: self.start + off,
                    len,
                };
            }
            Addresses::Uniform(u) => u.sample(&mut self.addrs),
            Addresses::Shuffle { scatter, next } => {
                let pos = scatter.map(*next);
                *next = if *next + 1 == self.positions {
                    0
                } else {
                    *next + 1
                };
                pos
            }
            Addresses::HotCold { hot_positions, r } => {
                if self.addrs.random::<f64>() < *r || *hot_positions == self.positions {
                    self.addrs.random_range(0..*hot_positions)
                } else {
                    self.addrs.random_range(*hot_positions..self.positions)
                }
            }
            Addresses::Zipf { zipf, scatter } => {
                let rank = zipf.zipf.sample(&mut self.addrs) as u64;
                scatter.map(rank.clamp(1, self.positions) - 1)
            }
            Addresses::Pareto { power, scatter } => {
                let u: f64 = self.addrs.random();
                let rank = ((self.positions - 1) as f64 * u.pow_d(*power)) as u64;
                scatter.map(rank.min(self.positions - 1))
            }
            Addresses::Normal { sigma, scatter } => {
                let z: f64 = self.addrs.sample(rand_distr::StandardNormal);
                let rank = (self.positions as f64 / 2.0 + z * *sigma).floor();
                scatter.map((rank.max(0.0) as u64).min(self.positions - 1))
            }
        };
        Request {
            op,
            offset: self.start + pos * self.align,
            len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_is_a_bijection() {
        for n in [1u64, 2, 7, 100, 1000, 4097] {
            let s = Scatter::new(n, 7);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let j = s.map(i) as usize;
                assert!(!seen[j], "n={n}: {j} twice");
                seen[j] = true;
            }
        }
    }

    #[test]
    fn shuffle_visits_every_position_once_per_pass() {
        let offsets = |order_seed: &str, seed: u64| -> Vec<u64> {
            let cfg = crate::config::Config::from_toml(
                &format!(
                    "[device]\ncell = \"slc\"\nchannels = 1\nblocks_per_plane = 64\npages_per_block = 16\npage_size = \"4KiB\"\n\
                     [[phase]]\npattern = \"shuffle\"\nblock_size = \"4KiB\"\nrequests = 1\n{order_seed}\n"
                ),
                "test",
            )
            .unwrap();
            let user = cfg.geometry.user_capacity_bytes;
            let mut gen = Generator::new(&cfg.phases[0].stream(), user, 4096, seed);
            (0..2 * user / 4096)
                .map(|_| gen.next_request().offset / 4096)
                .collect()
        };
        let a = offsets("", 1);
        let n = a.len() / 2;
        let mut pass: Vec<u64> = a[..n].to_vec();
        pass.sort_unstable();
        assert_eq!(
            pass,
            (0..n as u64).collect::<Vec<_>>(),
            "each position once"
        );
        assert_eq!(a[..n], a[n..], "the second pass repeats the order");
        assert_ne!(a[..n], offsets("", 2)[..n], "another phase, another order");
        assert_eq!(
            offsets("order_seed = 7", 1)[..n],
            offsets("order_seed = 7", 2)[..n],
            "the same order seed, the same order"
        );
    }

    /// `n` requests of a phase with `keys` on a 256 MiB SLC drive.
    fn requests(keys: &str, n: usize) -> Vec<Request> {
        let cfg = crate::config::Config::from_toml(
            &format!(
                "[device]\ncell = \"slc\"\nchannels = 1\nblocks_per_plane = 1024\npages_per_block = 64\npage_size = \"4KiB\"\n\
                 [[phase]]\nrequests = 1\n{keys}\n"
            ),
            "test",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut gen = Generator::new(
            &cfg.phases[0].stream(),
            cfg.geometry.user_capacity_bytes,
            4096,
            3,
        );
        (0..n).map(|_| gen.next_request()).collect()
    }

    #[test]
    fn block_size_mixes_follow_their_weights() {
        let r = requests("block_sizes = [\"4KiB/75\", \"64KiB/25\"]", 20_000);
        let small = r.iter().filter(|q| q.len == 4096).count() as f64 / r.len() as f64;
        assert!((small - 0.75).abs() < 0.02, "{small}");
        assert!(r.iter().all(|q| q.len == 4096 || q.len == 65536));
        // Sequential requests follow each other whatever their sizes.
        let s = requests(
            "pattern = \"sequential\"\nblock_sizes = [\"4KiB/1\", \"8KiB/1\"]",
            100,
        );
        assert!(s
            .windows(2)
            .all(|w| w[1].offset == w[0].offset + w[0].len as u64));
    }

    #[test]
    fn pareto_and_normal_concentrate_accesses_as_fio_does() {
        // Share of the accesses on the most used 20 % of positions.
        let top = |keys: &str| {
            let r = requests(keys, 500_000);
            let mut counts = std::collections::HashMap::new();
            for q in &r {
                *counts.entry(q.offset).or_insert(0u32) += 1;
            }
            let mut c: Vec<u32> = counts.into_values().collect();
            c.sort_unstable_by(|a, b| b.cmp(a));
            let positions = 256 * 1024 * 1024 / 4096 / 5;
            c.iter().take(positions).sum::<u32>() as f64 / r.len() as f64
        };
        // fio's pareto:0.9 is its "80/20"-style skew: most accesses on a few positions.
        assert!(top("distribution = \"pareto:0.9\"") > 0.8);
        // normal:5 puts ±2σ = 20 % of the positions around the middle: about 95 % of the accesses.
        let normal = top("distribution = \"normal:5\"");
        assert!((0.9..0.99).contains(&normal), "{normal}");
        let uniform = top("distribution = \"uniform\"");
        assert!(uniform < 0.45, "{uniform}");
    }
}
