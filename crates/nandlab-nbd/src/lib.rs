//! An NBD (Network Block Device) server in front of a simulated drive, so
//! that real programs — fio's `nbd` engine, `qemu-img`/`qemu-io`/`qemu-system`,
//! libnbd's `nbdcopy` and `nbdinfo`, the kernel's `nbd-client` — read and
//! write a nandlab drive. The wire format is in [`proto`], the bytes the
//! drive holds in [`store`], what each command does in `engine`, a client's
//! commands and the timing of its replies in `conn`, the sockets in
//! [`server`], a drive kept between sessions in [`saved`]; the simulation
//! itself is nandlab-core's served phase.

mod conn;
mod crash;
mod engine;
mod overhead;
pub mod proto;
pub mod saved;
pub mod server;
pub mod store;

pub use conn::ConnectionStats;
pub use overhead::ClientOverhead;
pub use saved::ServedData;
pub use server::{CutReport, Listen, ServeOptions, ServeOutcome, Server, Timing};
