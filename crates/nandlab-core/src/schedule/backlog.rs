//! The operations waiting on one die, in booking order, in memory that grows
//! with how varied they are rather than with how many.
//!
//! A die can be booked far ahead of the host: a 256 MiB write buffer holds
//! seconds of programs, and GC churning nearly full blocks on a drive with no
//! spare flash books a whole life's erases in one episode (170 million
//! operations on one die). Every operation keeps its exact interval — a host
//! read arriving during any of them waits for that one, not for a span — but
//! past the first [`FRONT_OPS`] they are stored packed: each as its length and
//! the gap from the one before (32 bits each where they fit), [`PACK_OPS`] to
//! a chunk, each chunk LZ4-compressed. The die's work repeats (read, transfer, program; the
//! same few latencies), so chunks shrink 100-fold and more. Chunks are
//! unpacked in order as the front is used up.
//!
//! A snapshot holds the operations one by one (the same bytes as a plain
//! queue's), and a loaded backlog starts with all of them at the front.

use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::VecDeque;

/// Operations kept as they are at the front.
pub const FRONT_OPS: usize = 1 << 16;

/// Operations packed into one chunk.
pub const PACK_OPS: usize = 1 << 14;

/// The front is refilled from the packed chunks once shorter than this.
const REFILL_AT: usize = 64;

/// What a die operation is (reads never suspend; programs and erases may).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OpKind {
    Read,
    Program,
    Erase,
}

impl OpKind {
    const ALL: [OpKind; 3] = [OpKind::Read, OpKind::Program, OpKind::Erase];

    fn code(self) -> u64 {
        self as u64
    }
}

/// `issued` of an operation not yet in the die's command queue.
pub const NOT_ISSUED: u64 = u64::MAX;

/// A waiting operation: times minus the die's `delay` when booked, and the
/// die's `delay` when it was issued (how far reads had pushed by then).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    pub start: u64,
    pub end: u64,
    pub issued: u64,
    pub kind: OpKind,
}

/// [`PACK_OPS`] operations, none issued: the first one's start, then per
/// operation `(length << 2) | kind` and the gap from the previous end as
/// 32-bit little-endian words (or [`WIDE`]), LZ4-compressed.
#[derive(Debug, Clone)]
struct Packed {
    first_start: u64,
    bytes: Box<[u8]>,
}

/// The waiting operations: `front`, then `packed` (oldest first), then `back`.
/// The front holds at least `min(len, REFILL_AT)` of them, so the issued
/// ones and the next few are always at hand.
#[derive(Debug, Clone, Default)]
pub struct Backlog {
    front: VecDeque<Waiting>,
    packed: VecDeque<Packed>,
    back: Vec<Waiting>,
    len: usize,
}

impl Backlog {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn front(&self) -> Option<&Waiting> {
        self.front.front()
    }

    /// The `i`-th waiting operation (`i < len`).
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut Waiting {
        while self.front.len() <= i {
            self.refill();
        }
        &mut self.front[i]
    }

    #[inline]
    pub fn push_back(&mut self, w: Waiting) {
        self.len += 1;
        if self.packed.is_empty() && self.back.is_empty() && self.front.len() < FRONT_OPS {
            self.front.push_back(w);
            return;
        }
        self.back.push(w);
        if self.back.len() == PACK_OPS {
            self.packed.push_back(pack(&self.back));
            self.back.clear();
        }
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<Waiting> {
        let w = self.front.pop_front()?;
        self.len -= 1;
        if self.front.len() < REFILL_AT && self.front.len() < self.len {
            self.refill();
        }
        Some(w)
    }

    /// Moves the next packed chunk (or, with none, the unpacked back) to the front.
    fn refill(&mut self) {
        match self.packed.pop_front() {
            Some(p) => unpack(&p, &mut self.front),
            None => self.front.extend(self.back.drain(..)),
        }
    }

    /// Every waiting operation, in order.
    fn iter(&self) -> impl Iterator<Item = Waiting> + '_ {
        let packed = self.packed.iter().flat_map(|p| {
            let mut ops = VecDeque::with_capacity(PACK_OPS);
            unpack(p, &mut ops);
            ops
        });
        self.front
            .iter()
            .copied()
            .chain(packed)
            .chain(self.back.iter().copied())
    }

    /// Bytes the packed chunks take.
    #[cfg(test)]
    fn packed_bytes(&self) -> usize {
        self.packed.iter().map(|p| p.bytes.len()).sum()
    }
}

/// A record whose length or gap does not fit 32 bits: this marker and the
/// kind, then the length and the gap in 64 bits each.
const WIDE: u32 = u32::MAX;

fn pack(ops: &[Waiting]) -> Packed {
    let first_start = ops[0].start;
    let mut raw = Vec::with_capacity(ops.len() * 8);
    let mut prev_end = first_start;
    for w in ops {
        debug_assert_eq!(
            w.issued, NOT_ISSUED,
            "only the front holds issued operations"
        );
        let len = w.end.wrapping_sub(w.start);
        let gap = w.start.wrapping_sub(prev_end) as i64;
        match (u32::try_from(len << 2 | w.kind.code()), i32::try_from(gap)) {
            (Ok(len_kind), Ok(gap)) if len < 1 << 30 && len_kind != WIDE => {
                raw.extend_from_slice(&len_kind.to_le_bytes());
                raw.extend_from_slice(&gap.to_le_bytes());
            }
            _ => {
                raw.extend_from_slice(&WIDE.to_le_bytes());
                raw.extend_from_slice(&(w.kind.code() as u32).to_le_bytes());
                raw.extend_from_slice(&len.to_le_bytes());
                raw.extend_from_slice(&gap.to_le_bytes());
            }
        }
        prev_end = w.end;
    }
    Packed {
        first_start,
        bytes: lz4_flex::block::compress_prepend_size(&raw).into_boxed_slice(),
    }
}

fn unpack(p: &Packed, into: &mut VecDeque<Waiting>) {
    let raw = lz4_flex::block::decompress_size_prepended(&p.bytes)
        .expect("a chunk packed by this process unpacks");
    let word = |at: usize| u32::from_le_bytes(raw[at..at + 4].try_into().expect("4 bytes"));
    let wide = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().expect("8 bytes"));
    into.reserve(raw.len() / 8);
    let (mut at, mut prev_end) = (0, p.first_start);
    while at < raw.len() {
        let (len, gap, kind) = match word(at) {
            WIDE => {
                let r = (wide(at + 8), wide(at + 16), word(at + 4) as u64);
                at += 24;
                r
            }
            len_kind => {
                let gap = word(at + 4) as i32 as i64 as u64;
                at += 8;
                (u64::from(len_kind >> 2), gap, u64::from(len_kind & 3))
            }
        };
        let start = prev_end.wrapping_add(gap);
        prev_end = start.wrapping_add(len);
        into.push_back(Waiting {
            start,
            end: prev_end,
            issued: NOT_ISSUED,
            kind: OpKind::ALL[kind as usize],
        });
    }
}

impl Serialize for Backlog {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len))?;
        for w in self.iter() {
            seq.serialize_element(&w)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Backlog {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Backlog, D::Error> {
        let front = VecDeque::<Waiting>::deserialize(d)?;
        Ok(Backlog {
            len: front.len(),
            front,
            packed: VecDeque::new(),
            back: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(i: u64) -> Waiting {
        // Varied lengths and gaps, some wrapping below zero (times minus a delay).
        let start = (i * 1_000_003).wrapping_sub(5_000_000) + (i % 7) * 13;
        Waiting {
            start,
            end: start + [50_000, 500_000, 1_500_000, 0][(i % 4) as usize] + i % 3,
            issued: NOT_ISSUED,
            kind: OpKind::ALL[(i % 3) as usize],
        }
    }

    #[test]
    fn every_operation_comes_back_exactly_in_order() {
        let mut b = Backlog::default();
        let n = 3 * PACK_OPS as u64 + FRONT_OPS as u64 + 123;
        let mut next = 0;
        for i in 0..n {
            b.push_back(op(i));
            // Interleave: use some up as they are booked.
            if i % 5 == 0 {
                assert_eq!(b.pop_front(), Some(op(next)));
                next += 1;
            }
        }
        assert!(!b.packed.is_empty(), "the test reaches the packed chunks");
        assert_eq!(
            b.iter().collect::<Vec<_>>(),
            (next..n).map(op).collect::<Vec<_>>()
        );
        assert_eq!(b.len(), (n - next) as usize);
        *b.get_mut(1000) = op(0);
        assert_eq!(b.iter().nth(1000), Some(op(0)));
        while let Some(w) = b.pop_front() {
            if next != 1000 + n / 5 + 1 {
                assert_eq!(w, op(next));
            }
            next += 1;
        }
        assert_eq!(next, n);
        assert!(b.is_empty());
    }

    #[test]
    fn a_repetitive_backlog_packs_small() {
        let mut b = Backlog::default();
        for i in 0..1_000_000u64 {
            let start = i * 600_000;
            b.push_back(Waiting {
                start,
                end: start + if i % 2 == 0 { 50_000 } else { 500_000 },
                issued: NOT_ISSUED,
                kind: if i % 2 == 0 {
                    OpKind::Read
                } else {
                    OpKind::Program
                },
            });
        }
        // 32 bytes an operation as they are; well under one packed.
        assert!(b.packed_bytes() < 1_000_000 / 20, "{}", b.packed_bytes());
    }

    #[test]
    fn a_snapshot_holds_the_operations_one_by_one() {
        let mut b = Backlog::default();
        for i in 0..(FRONT_OPS + PACK_OPS + 10) as u64 {
            b.push_back(op(i));
        }
        let bytes = postcard::to_stdvec(&b).unwrap();
        let plain: VecDeque<Waiting> = b.iter().collect();
        assert_eq!(bytes, postcard::to_stdvec(&plain).unwrap());
        let back: Backlog = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(
            back.iter().collect::<Vec<_>>(),
            b.iter().collect::<Vec<_>>()
        );
    }
}
