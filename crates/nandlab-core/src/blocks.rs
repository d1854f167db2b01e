//! Per-block state as flat arrays (valid count, write and program pointers,
//! erase count, bit mode, life-cycle state) plus each plane's free-block queue.

use crate::geometry::Geometry;
use crate::media::CellMode;
use std::collections::VecDeque;

/// Where a block is in its life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum BlockState {
    /// Erased, in its plane's free queue.
    Free,
    /// Being written (a host or GC frontier).
    Open,
    /// Fully programmed; a GC candidate.
    Sealed,
    /// Chosen by GC: its valid data is being copied out before the erase.
    Victim,
}

/// All blocks of the drive, struct-of-arrays.
#[derive(Debug, Clone)]
pub struct BlockTable {
    /// Valid mapping units in the block.
    pub valid: Vec<u32>,
    /// Units allocated (handed to the write path).
    pub written: Vec<u32>,
    /// Units programmed on flash (≤ written; the rest wait in controller RAM).
    pub programmed: Vec<u32>,
    pub erase_count: Vec<u32>,
    pub state: Vec<BlockState>,
    pub mode: Vec<CellMode>,
    /// Erased blocks per plane, oldest first.
    pub free: Vec<VecDeque<u32>>,
}

impl BlockTable {
    pub fn new(g: &Geometry) -> BlockTable {
        let n = g.blocks as usize;
        let free = (0..g.planes)
            .map(|p| {
                (0..g.blocks_per_plane)
                    .map(|i| g.block_in_plane(p, i))
                    .collect()
            })
            .collect();
        BlockTable {
            valid: vec![0; n],
            written: vec![0; n],
            programmed: vec![0; n],
            erase_count: vec![0; n],
            state: vec![BlockState::Free; n],
            mode: vec![g.cell; n],
            free,
        }
    }

    /// Takes the oldest free block of a plane and opens it.
    pub fn open(&mut self, plane: u32) -> Option<u32> {
        let b = self.free[plane as usize].pop_front()?;
        self.state[b as usize] = BlockState::Open;
        Some(b)
    }

    /// Erases a block and returns it to its plane's free queue.
    pub fn erase(&mut self, block: u32, plane: u32) {
        let i = block as usize;
        debug_assert_eq!(
            self.valid[i], 0,
            "erasing a block that still holds valid data"
        );
        self.written[i] = 0;
        self.programmed[i] = 0;
        self.erase_count[i] += 1;
        self.state[i] = BlockState::Free;
        self.free[plane as usize].push_back(block);
    }

    pub fn free_count(&self, plane: u32) -> u32 {
        self.free[plane as usize].len() as u32
    }

    pub fn total_free(&self) -> u64 {
        self.free.iter().map(|f| f.len() as u64).sum()
    }
}
