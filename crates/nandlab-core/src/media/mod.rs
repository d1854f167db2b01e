//! The flash itself: cells and their bit modes, page types and latencies
//! ([`cell`]), trapped-charge wear and endurance ([`wear`]), bit errors and
//! ECC ([`errors`]) with the threshold-voltage model ([`vt`]), how block
//! endurance spreads around the rating ([`spread`]), and the chip presets with
//! the bench that cycles a chip's blocks to failure ([`chip`]).

pub mod cell;
pub mod chip;
pub mod errors;
pub mod spread;
pub mod vt;
pub mod wear;

pub use cell::{CellMode, ModeTiming};
