//! The logical↔physical map: `l2p[lpn] = slot + 1` (0 = unmapped) and
//! `p2l[slot] = lpn`; a slot is valid exactly when `l2p[p2l[slot]] == slot + 1`.

use crate::geometry::Geometry;
use crate::memory;
use serde::{Deserialize, Serialize};

/// The map and its reverse.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Map {
    #[serde(with = "crate::memory::flat")]
    pub(super) l2p: Vec<u32>,
    #[serde(with = "crate::memory::flat")]
    pub(super) p2l: Vec<u32>,
}

impl Map {
    pub fn new(g: &Geometry) -> Map {
        Map {
            // Zeroed vectors come from the OS lazily: untouched parts cost no memory.
            l2p: memory::zeroed_u32(g.user_units as usize),
            p2l: memory::zeroed_u32(g.slots as usize),
        }
    }
}
