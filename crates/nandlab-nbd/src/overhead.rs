//! The client's own share of the latency it measures, which realtime timing
//! can take off each reply: a client such as fio waits for a reply asleep in
//! poll(2), and its wake-up, completion handling and next submission add tens
//! of µs (about 50 µs on a 2-core VM) to every latency it measures — as they
//! would on a real drive, but a simulated drive with 100 µs reads then looks
//! 50 % slower than it is. Given (`--client-overhead 40us`) or learned
//! (`auto`: the median turnaround of the clients at queue depth 1 — from when
//! the reply to a command that was alone in flight was due to the
//! connection's next command, under 1 ms: the reply's write, which wakes the
//! client, its wake-up and its next command), replies
//! go out that much before their simulated completion (never before their
//! command arrived).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// How much of a reply's wait is the client's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientOverhead {
    /// This much (zero: none taken off).
    Fixed(Duration),
    /// Learned from the clients' turnarounds.
    Auto,
}

/// Turnarounds kept for the median.
const SAMPLES: usize = 255;
/// A longer gap is the client thinking, not its overhead.
const LONGEST: Duration = Duration::from_millis(1);

pub(crate) struct Turnaround {
    auto: bool,
    samples: Mutex<VecDeque<u64>>,
    /// The overhead taken off replies now (ns).
    current: AtomicU64,
}

impl Turnaround {
    pub(crate) fn new(o: ClientOverhead) -> Turnaround {
        let (auto, ns) = match o {
            ClientOverhead::Fixed(d) => (false, d.as_nanos() as u64),
            ClientOverhead::Auto => (true, 0),
        };
        Turnaround {
            auto,
            samples: Mutex::new(VecDeque::with_capacity(SAMPLES)),
            current: AtomicU64::new(ns),
        }
    }

    /// A client sent a command `gap` after its last reply, nothing else in flight.
    pub(crate) fn observe(&self, gap: Duration) {
        if !self.auto || gap >= LONGEST {
            return;
        }
        let mut s = self.samples.lock().unwrap();
        if s.len() == SAMPLES {
            s.pop_front();
        }
        s.push_back(gap.as_nanos() as u64);
        let mut sorted: Vec<u64> = s.iter().copied().collect();
        sorted.sort_unstable();
        self.current
            .store(sorted[sorted.len() / 2], Ordering::Relaxed);
    }

    /// The overhead taken off replies now.
    pub(crate) fn get(&self) -> Duration {
        Duration::from_nanos(self.current.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_takes_the_median_of_short_turnarounds() {
        let t = Turnaround::new(ClientOverhead::Auto);
        assert_eq!(t.get(), Duration::ZERO);
        for us in [40, 50, 45, 5000, 60, 55] {
            t.observe(Duration::from_micros(us));
        }
        // 5 ms is thinking time, not overhead: the median of the other five.
        assert_eq!(t.get(), Duration::from_micros(50));
        let fixed = Turnaround::new(ClientOverhead::Fixed(Duration::from_micros(30)));
        fixed.observe(Duration::from_micros(80));
        assert_eq!(fixed.get(), Duration::from_micros(30));
    }
}
