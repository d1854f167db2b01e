//! The time series: one [`Row`] per interval of a phase. Each column is
//! declared once, in the `row!` list below, which gives the struct, the
//! column names in order, which columns hold whole numbers, and the row's
//! values in that order (what the bindings turn into a table).

use serde::{Deserialize, Serialize};

/// Time-series rows a phase takes by default.
pub const ROWS_PER_PHASE: u64 = 200;

/// Declares [`Row`] from its columns: `name: type`, u32/u64 columns being
/// whole numbers, f64 ones not.
macro_rules! row {
    ($($(#[doc = $doc:literal])* $name:ident: $ty:ident,)*) => {
        /// One row of the time series: the interval that ends at `sim_seconds`.
        /// A figure the interval gives no meaning — a rate over no simulated
        /// time (an untimed phase), a percentile, mean or maximum of no reads
        /// or writes, WAF without host writes — is NaN (null to the user).
        #[derive(Debug, Clone, Copy, Serialize, Deserialize)]
        pub struct Row {
            $($(#[doc = $doc])* pub $name: $ty,)*
        }

        /// Rows are equal when every value is the same bits: a figure
        /// without meaning (NaN) equals itself, so a run compares equal to
        /// its repetition.
        impl PartialEq for Row {
            fn eq(&self, o: &Row) -> bool {
                $(Bits::bits(self.$name) == Bits::bits(o.$name) &&)* true
            }
        }

        /// Column names of [`Row`], in order.
        pub const ROW_COLUMNS: &[&str] = &[$(stringify!($name),)*];

        /// Columns of [`Row`] that hold whole numbers.
        pub const ROW_INTEGER_COLUMNS: &[&str] = &{
            const ALL: [(&str, bool); [$(stringify!($name),)*].len()] =
                [$((stringify!($name), row!(@whole $ty)),)*];
            const N: usize = {
                let mut n = 0;
                let mut i = 0;
                while i < ALL.len() {
                    n += ALL[i].1 as usize;
                    i += 1;
                }
                n
            };
            let mut out = [""; N];
            let (mut i, mut k) = (0, 0);
            while i < ALL.len() {
                if ALL[i].1 {
                    out[k] = ALL[i].0;
                    k += 1;
                }
                i += 1;
            }
            out
        };

        impl Row {
            /// The row's values in [`ROW_COLUMNS`] order (integers exact up to 2^53).
            pub fn values(&self) -> [f64; ROW_COLUMNS.len()] {
                [$(self.$name as f64,)*]
            }
        }
    };
    (@whole u32) => { true };
    (@whole u64) => { true };
    (@whole f64) => { false };
}

/// A column's value as bits, for [`Row`]'s equality.
trait Bits {
    fn bits(self) -> u64;
}

impl Bits for u32 {
    fn bits(self) -> u64 {
        self.into()
    }
}

impl Bits for u64 {
    fn bits(self) -> u64 {
        self
    }
}

impl Bits for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

row! {
    phase: u32,
    sim_seconds: f64,
    host_write_bytes: u64,
    host_read_bytes: u64,
    write_mbps: f64,
    read_mbps: f64,
    iops: f64,
    read_p50_us: f64,
    read_p99_us: f64,
    write_p50_us: f64,
    write_p99_us: f64,
    /// The interval's WAF and the phase's so far (NaN, null to Python and
    /// in files, without host writes: undefined).
    waf: f64,
    waf_cumulative: f64,
    free_blocks: u64,
    erases: u64,
    bad_blocks: u64,
    program_us_mean: f64,
    erase_us_mean: f64,
    /// Mean latency of all requests in the interval, µs.
    latency_mean_us: f64,
    /// Usable blocks per bit mode.
    slc_blocks: u64,
    mlc_blocks: u64,
    tlc_blocks: u64,
    qlc_blocks: u64,
    /// Flash the usable blocks hold in their modes, bytes.
    usable_bytes: u64,
    /// Share of the native rated endurance used, averaged over blocks.
    wear_used: f64,
    /// Share of the spare flash lost to wear (the drive dies at 1).
    reserve_used: f64,
    /// Valid data in pSLC cache blocks at the row's end, bytes.
    pslc_bytes: u64,
    /// Data folded from pSLC into native blocks in the interval, bytes.
    folded_bytes: u64,
    /// Host data written straight to native blocks on a drive with a pSLC
    /// cache in the interval (direct-write, or a cache with no room), bytes.
    direct_bytes: u64,
    /// The interval's slowest read and write, µs (what p99 does not show).
    read_max_us: f64,
    write_max_us: f64,
    /// Host data in the write buffer waiting for its program at the row's
    /// end, bytes (the backlog the buffer holds; bounded by its size).
    buffer_dirty_bytes: u64,
    /// Flash work booked beyond the row's end on the busiest die, ms.
    die_backlog_ms: f64,
    /// The interval's average power, W (`[device.energy]`).
    power_w: f64,
    /// With `[device.errors]`: the interval's mean RBER of host page reads,
    /// and read-retry steps per page read (0 without the model).
    rber_mean: f64,
    retries_per_read: f64,
}

#[cfg(test)]
mod tests {
    use super::{ROW_COLUMNS, ROW_INTEGER_COLUMNS};

    #[test]
    fn the_columns_are_the_fields_with_whole_numbers_marked() {
        assert_eq!(ROW_COLUMNS.len(), 36);
        assert_eq!(
            ROW_COLUMNS[..3],
            ["phase", "sim_seconds", "host_write_bytes"]
        );
        assert_eq!(ROW_INTEGER_COLUMNS.len(), 15);
        assert!(
            ROW_INTEGER_COLUMNS.contains(&"direct_bytes") && !ROW_INTEGER_COLUMNS.contains(&"waf")
        );
    }
}
