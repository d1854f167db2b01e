//! The scheduler layer, below the FTL as MQSim's transaction scheduling is
//! below its address mapping: the FTL decides *what* flash operations to do
//! (which page to program, which block to erase, which units to relocate)
//! and asks this layer to book each no earlier than it is ready; the
//! timeline decides *when* it runs — after the die, channel and host link
//! it needs are free, behind or ahead of other work by the die queues'
//! read priority and program/erase suspension — and answers when it ends.
//! The drive above books host commands and transfers here too.

mod backlog;
mod die_queue;
pub mod timeline;
