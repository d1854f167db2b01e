//! The host side of the drive: the link it talks over ([`interface`]), the
//! synthetic request streams it issues ([`workload`]) and the block I/O
//! traces it replays ([`trace`]).

pub mod interface;
pub mod trace;
pub mod workload;
