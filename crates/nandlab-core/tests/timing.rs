//! Timing against first principles: an idle read costs exactly its parts;
//! large sequential writes approach SNIA's theoretical bandwidth
//! min(host link, dies × page / tPROG); random and sequential writes cost the
//! same at chip level (Desnoyers: writes are log-structured across blocks).

use nandlab_core::drive::Drive;
use nandlab_core::host::workload::{Op, Request};
use nandlab_core::schedule::timeline::Timeline;
use nandlab_core::units::transfer_ns;
use nandlab_core::{Config, Simulator};

fn config(device: &str, phases: &str) -> Config {
    Config::from_toml(&format!("seed = 3\n[device]\n{device}\n{phases}"), "test").unwrap()
}

/// Writes units 0..n one 4 KiB request after another from `t`; returns when the last is acknowledged.
fn write_units(drive: &mut Drive, n: u64, mut t: u64) -> u64 {
    for lpn in 0..n {
        let write = Request {
            op: Op::Write,
            offset: lpn * 4096,
            len: 4096,
        };
        t = drive.submit(write, t).unwrap();
    }
    t
}

const ONE_PHASE: &str = "[[phase]]\nrequests = 1\n";

#[test]
fn an_idle_4k_read_costs_exactly_tr_plus_transfers_plus_command_overhead() {
    let cfg = config(
        r#"cell = "mlc"
channels = 2
chips_per_channel = 2
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 64
page_size = "16KiB"
over_provisioning = "25 %"
interface = "sata-600"
channel_rate = "333MB/s"
[device.timing.mlc]
read_us = [45, 70]
program_us = [300, 900]
erase_us = 3000"#,
        ONE_PHASE,
    );
    let mut drive = Drive::new(&cfg, 1);
    write_units(&mut drive, 64, 0);
    drive.flush();
    let iface = &cfg.device.interface;
    // A multi-plane page holds 2 × 4 units and the stripe visits 4 dies, so
    // LPN 0 sits in die 0's first page (LSB) and LPN 32 in its second (MSB).
    for (lpn, t_r) in [(0u64, 45_000u64), (32, 70_000)] {
        let t = 1_000_000_000 + lpn * 1_000_000_000;
        let done = drive
            .submit(
                Request {
                    op: Op::Read,
                    offset: lpn * 4096,
                    len: 4096,
                },
                t,
            )
            .unwrap();
        let expected = iface.command_overhead_ns
            + t_r
            + transfer_ns(4096, 333_000_000)
            + transfer_ns(4096, iface.link_rate);
        assert_eq!(done - t, expected, "read of lpn {lpn}");
    }
    // A never-written unit costs only the command and the link.
    let t = 100_000_000_000;
    let done = drive
        .submit(
            Request {
                op: Op::Read,
                offset: 1000 * 4096,
                len: 4096,
            },
            t,
        )
        .unwrap();
    assert_eq!(
        done - t,
        iface.command_overhead_ns + transfer_ns(4096, iface.link_rate)
    );
}

fn sequential_write_mbps(dies: u32, interface: &str, pattern: &str) -> f64 {
    let cfg = config(
        &format!(
            r#"cell = "slc"
channels = {dies}
planes_per_die = 1
blocks_per_plane = 128
pages_per_block = 64
page_size = "4KiB"
over_provisioning = "25 %"
interface = "{interface}"
channel_rate = "1000MB/s"
# A small buffer, so that the phase measures flash, not DRAM.
write_buffer = "512KiB"
[device.timing.slc]
read_us = [25]
program_us = [200]
erase_us = 1500"#
        ),
        &format!("[[phase]]\npattern = \"{pattern}\"\nblock_size = \"128KiB\"\nalign = \"128KiB\"\nqueue_depth = 16\nvolume = 0.5\n"),
    );
    let mut sim = Simulator::new(cfg);
    let r = sim.run_phase(0, &mut |_| true).unwrap();
    r.summary.rates.write_mbps.unwrap()
}

#[test]
fn sequential_writes_approach_the_theoretical_bandwidth() {
    // (The last buffer-full is acknowledged before it reaches flash: up to 1 % above.)
    // Flash-bound: 8 dies × 4 KiB / 200 µs = 163.84 MB/s, far below PCIe gen4 x4.
    let flash = 8.0 * 4096.0 / 200e-6 / 1e6;
    let mbps = sequential_write_mbps(8, "nvme-gen4-x4", "sequential");
    assert!(
        mbps > 0.95 * flash && mbps <= flash * 1.01,
        "{mbps} MB/s vs theoretical {flash}"
    );
    // Link-bound: 64 dies could program 1,342 MB/s; SATA-150 carries 150 MB/s.
    let mbps = sequential_write_mbps(64, "sata-150", "sequential");
    assert!(
        mbps > 0.95 * 150.0 && mbps <= 150.0 * 1.01,
        "{mbps} MB/s vs link 150"
    );
}

#[test]
fn random_and_sequential_writes_cost_the_same_at_chip_level() {
    let seq = sequential_write_mbps(4, "nvme-gen4-x4", "sequential");
    let rnd = sequential_write_mbps(4, "nvme-gen4-x4", "random");
    assert!(
        (seq - rnd).abs() / seq < 0.01,
        "sequential {seq} MB/s vs random {rnd} MB/s"
    );
}

/// One SLC die (25 µs reads, 200 µs programs, 1.5 ms erases) on a fast
/// link, with `device` and `ftl` keys added, running `phases`.
fn slc_die(device: &str, ftl: &str, phases: &str) -> Config {
    config(
        &format!(
            r#"cell = "slc"
channels = 1
blocks_per_plane = 256
pages_per_block = 64
page_size = "4KiB"
over_provisioning = "25 %"
interface = "nvme-gen4-x4"
write_buffer = "4MiB"
{device}
[device.timing.slc]
read_us = [25]
program_us = [200]
erase_us = 1500
[ftl]
{ftl}"#
        ),
        phases,
    )
}

/// One SLC die, `ftl` its `[ftl]` keys.
fn one_die(ftl: &str) -> Config {
    slc_die("", ftl, ONE_PHASE)
}

/// Latency of a read issued right after a burst of writes filled the write buffer.
/// Returns the read's latency and how far it pushed back the die's last operation.
fn read_behind_a_write_backlog(read_priority: bool) -> (u64, u64) {
    let cfg = one_die(&format!("read_priority = {read_priority}"));
    let mut drive = Drive::new(&cfg, 1);
    // 1,024 units buffered: about 200 ms of programs queue on the single die.
    let t = write_units(&mut drive, 1024, 0);
    let idle_before = drive.tl.all_idle_at();
    let read = Request {
        op: Op::Read,
        offset: 0,
        len: 4096,
    };
    let done = drive.submit(read, t).unwrap();
    (done - t, drive.tl.all_idle_at() - idle_before)
}

#[test]
fn host_reads_go_ahead_of_queued_programs() {
    let (fcfs, fcfs_push) = read_behind_a_write_backlog(false);
    let (prio, prio_push) = read_behind_a_write_backlog(true);
    // First come, first served: the read waits for the whole backlog.
    assert!(fcfs > 100_000_000, "{fcfs} ns");
    // With priority: at most the program in progress, then its own sense and transfers.
    assert!(prio <= 200_000 + 25_000 + 20_000, "{prio} ns");
    // The queued programs moved back instead, by the read's sense and transfer.
    assert!(
        (25_000..50_000).contains(&prio_push),
        "pushed back by {prio_push} ns"
    );
    assert!(fcfs_push < 50_000, "{fcfs_push}");
}

/// An erase (1.5 ms) starts at 0 on die 0 and a program waits behind it;
/// a host read arrives at 100 µs. Returns when the read starts sensing and
/// when its data is in the controller.
fn read_during_an_erase(device: &str) -> (u64, u64) {
    let cfg = slc_die(device, "", ONE_PHASE);
    let mut tl = Timeline::new(&cfg);
    assert_eq!(tl.erase(0, 0, 1_500_000), 1_500_000);
    assert_eq!(tl.flash_program(0, 0, 200_000, 1), 1_700_000);
    tl.host_read(100_000, 0, 25_000, 1)
}

/// A 4 KiB page's transfer on the default 400 MB/s channel.
const XFER_NS: u64 = 10_240;

#[test]
fn without_suspend_a_read_waits_out_the_erase_but_not_the_program_queued_behind_it() {
    let (start, in_ram) = read_during_an_erase("");
    // ≈ tBERS: the erase runs to its end; the queued program waits for the read.
    assert_eq!(start, 1_500_000);
    assert_eq!(in_ram, 1_500_000 + 25_000 + XFER_NS);
}

#[test]
fn with_suspend_a_read_waits_the_suspend_latency_then_tr_and_transfer() {
    for ops in ["erase", "program+erase"] {
        let (start, in_ram) = read_during_an_erase(&format!(
            "suspend = \"{ops}\"\nsuspend_latency = \"30us\"\nresume_overhead = \"15us\""
        ));
        assert_eq!(start, 100_000 + 30_000, "{ops}");
        assert_eq!(in_ram, 100_000 + 30_000 + 25_000 + XFER_NS, "{ops}");
    }
}

#[test]
fn a_suspended_erase_resumes_late_by_the_suspension_and_is_capped() {
    let suspend = "suspend = \"erase\"\nsuspend_latency = \"20us\"\nresume_overhead = \"10us\"\nmax_suspends = 3";
    let cfg = slc_die(suspend, "", ONE_PHASE);
    let mut tl = Timeline::new(&cfg);
    tl.erase(0, 0, 1_500_000);
    let mut starts = Vec::new();
    for i in 0..4 {
        starts.push(tl.host_read(100_000 + i * 200_000, 0, 25_000, 1).0);
    }
    // Three reads suspend the erase; the fourth waits for its (delayed) end.
    assert_eq!(&starts[..3], &[120_000, 320_000, 520_000]);
    let suspension = 20_000 + 25_000 + XFER_NS + 10_000;
    assert_eq!(starts[3], 1_500_000 + 3 * suspension);
    assert_eq!(
        tl.all_idle_at(),
        1_500_000 + 3 * suspension + 25_000 + XFER_NS
    );
}

#[test]
fn reads_behind_a_long_backlog_wait_only_for_operations_issued_to_the_die() {
    // 1,024 buffered units: about 200 ms of programs queue on the die; then a
    // read every 50 µs for 20 ms. Each waits at most for the program running
    // and the die's 4 issued ones once reads have delayed them by 2 ms.
    let cfg = one_die("read_priority = true\ndie_queue_depth = 4");
    let mut drive = Drive::new(&cfg, 1);
    write_units(&mut drive, 1, 0);
    drive.flush();
    let t0 = write_units(&mut drive, 1024, 1_000_000_000);
    let backlog_end = drive.tl.all_idle_at();
    assert!(backlog_end > t0 + 150_000_000);
    let read = Request {
        op: Op::Read,
        offset: 0,
        len: 4096,
    };
    let mut worst = 0;
    let mut read_time = 0;
    for i in 0..400 {
        let t = t0 + i * 50_000;
        let done = drive.submit(read, t).unwrap();
        worst = worst.max(done - t);
        // Sense and transfer, and at most a transfer's wait for the channel.
        read_time += 25_000 + 2 * XFER_NS;
    }
    assert!(worst <= 5 * 200_000 + 100_000, "worst read {worst} ns");
    // The programs were not starved: the backlog ends late by the reads' die time at most.
    let late = drive.tl.all_idle_at() - backlog_end;
    assert!(late <= read_time, "{late} ns > {read_time} ns");
}

/// A read behind a backlog of programs on its die (first come, first served),
/// and a write arriving with it. Returns both latencies.
fn write_behind_a_colliding_read(command_order: &str) -> (u64, u64) {
    let cfg = one_die(&format!(
        "read_priority = false\ncommand_order = \"{command_order}\""
    ));
    let mut drive = Drive::new(&cfg, 1);
    // LPN 0 on flash, then 256 programs (about 51 ms) queued on the one die.
    write_units(&mut drive, 1, 0);
    drive.flush();
    let t = write_units(&mut drive, 256, 1_000_000_000);
    let read = Request {
        op: Op::Read,
        offset: 0,
        len: 4096,
    };
    let write = Request {
        op: Op::Write,
        offset: 1000 * 4096,
        len: 4096,
    };
    let read_latency = drive.submit(read, t).unwrap() - t;
    let write_latency = drive.submit(write, t).unwrap() - t;
    (read_latency, write_latency)
}

#[test]
fn in_order_commands_make_reads_collide_with_writes() {
    let (read, reordered) = write_behind_a_colliding_read("reordered");
    let (read_in_order, in_order) = write_behind_a_colliding_read("in-order");
    // The read waits for the die's backlog either way.
    assert!(read > 40_000_000 && read == read_in_order, "{read} ns");
    // Reordered, the write lands in the DRAM buffer at once; in order, the
    // controller takes it only once the read has reached the die.
    assert!(reordered < 100_000, "{reordered} ns");
    assert!(in_order > read - 100_000, "{in_order} ns vs {read} ns");
}

/// MB/s of a QD-1 write phase of `block_size` requests into a large DRAM buffer
/// (so that only the host interface counts).
fn buffered_write_mbps(interface: &str, block_size: &str) -> f64 {
    buffered_write_mbps_with(interface, block_size, "")
}

/// The same, with more `[device]` keys.
fn buffered_write_mbps_with(interface: &str, block_size: &str, device: &str) -> f64 {
    let cfg = config(
        &format!(
            r#"cell = "slc"
channels = 8
blocks_per_plane = 128
pages_per_block = 64
page_size = "4KiB"
over_provisioning = "25 %"
interface = "{interface}"
write_buffer = "256MiB"
{device}"#
        ),
        &format!("[[phase]]\npattern = \"sequential\"\nblock_size = \"{block_size}\"\nqueue_depth = 1\nvolume = \"32MiB\"\n"),
    );
    let mut sim = Simulator::new(cfg);
    sim.run_phase(0, &mut |_| true)
        .unwrap()
        .summary
        .rates
        .write_mbps
        .unwrap()
}

#[test]
fn a_slow_controller_dram_caps_buffered_writes() {
    // NVMe gen3 x4 moves 128 KiB writes at about 3.2 GB/s into the buffer;
    // a 400 MB/s DRAM (MQSim's default controller) caps them there.
    let fast = buffered_write_mbps("nvme-gen3-x4", "128KiB");
    let capped = buffered_write_mbps_with("nvme-gen3-x4", "128KiB", "dram_rate = \"400MB/s\"");
    assert!(fast > 2000.0, "{fast} MB/s");
    assert!((capped - 400.0).abs() / 400.0 < 0.02, "{capped} MB/s");
}

#[test]
fn small_commands_pay_the_per_command_overhead() {
    // SATA: 4 µs per command; 4 KiB moves in 6.8 µs at 600 MB/s, 128 KiB in 218 µs.
    let small = buffered_write_mbps("sata-600", "4KiB");
    let large = buffered_write_mbps("sata-600", "128KiB");
    let expect = |bytes: f64| bytes / (4e-6 + bytes / 600e6) / 1e6;
    assert!(
        (small / expect(4096.0) - 1.0).abs() < 0.02,
        "4 KiB: {small:.1} MB/s"
    );
    assert!(
        (large / expect(131072.0) - 1.0).abs() < 0.02,
        "128 KiB: {large:.1} MB/s"
    );
    assert!(small < 0.65 * large);
}

/// Mean read latency (µs) of 4 KiB QD-1 reads of a filled drive, `pattern`
/// order, with `read_ahead` bytes of read-ahead.
fn read_latency_us(pattern: &str, read_ahead: &str) -> f64 {
    let cfg = config(
        r#"cell = "mlc"
channels = 4
blocks_per_plane = 128
pages_per_block = 64
page_size = "8KiB"
over_provisioning = "25 %""#,
        &format!(
            "[ftl]\nread_ahead = \"{read_ahead}\"\n[[phase]]\nkind = \"fill\"\nvolume = 1.0\n\
             [[phase]]\npattern = \"{pattern}\"\nread_fraction = 1.0\nblock_size = \"4KiB\"\nqueue_depth = 1\nrequests = 20000\n"
        ),
    );
    let mut sim = Simulator::new(cfg);
    let phases = sim.run_all(&mut |_| true).unwrap();
    phases[1].summary.read_latency_us.mean
}

#[test]
fn read_ahead_serves_sequential_reads_from_ram() {
    let (plain, ahead) = (
        read_latency_us("sequential", "0B"),
        read_latency_us("sequential", "128KiB"),
    );
    // Without read-ahead every 4 KiB read senses a page; with it, most are link transfers.
    assert!(
        ahead < 0.3 * plain,
        "{plain:.1} µs plain, {ahead:.1} µs with read-ahead"
    );
    // Random reads never trigger it.
    assert_eq!(
        read_latency_us("random", "0B"),
        read_latency_us("random", "128KiB")
    );
}

/// 4 KiB random reads per second of a filled SNIA MLC drive (16 dies) over `interface`.
fn random_read_iops(interface: &str, queue_depth: u32) -> f64 {
    let cfg = config(
        &format!("preset = \"snia-mlc\"\nblocks_per_plane = 256\ninterface = \"{interface}\""),
        &format!(
            "[ftl]\ncommand_order = \"reordered\"\nread_priority = true\n[[phase]]\nkind = \"fill\"\nvolume = 1.0\n[[phase]]\npattern = \"random\"\nread_fraction = 1.0\nblock_size = \"4KiB\"\nqueue_depth = {queue_depth}\nrequests = 20000\n"
        ),
    );
    let mut sim = Simulator::new(cfg);
    sim.run_all(&mut |_| true).unwrap()[1]
        .summary
        .rates
        .iops
        .unwrap()
}

#[test]
fn queued_reads_overlap_on_a_half_duplex_link() {
    // A read's data crosses the link after its 60 µs sense; the commands of
    // the reads queued behind it use the link meanwhile (SATA is half duplex,
    // but nothing waits for a transfer that has not started).
    let (qd1, qd32) = (
        random_read_iops("sata-300", 1),
        random_read_iops("sata-300", 32),
    );
    assert!(
        qd32 > 4.0 * qd1,
        "QD 1: {qd1:.0} IOPS, QD 32: {qd32:.0} IOPS"
    );
    // Bounded by the link: 4 µs per command plus 4 KiB at 300 MB/s.
    let link_bound = 1e9 / (4_000.0 + transfer_ns(4096, 300_000_000) as f64);
    assert!(
        qd32 <= link_bound * 1.001,
        "{qd32:.0} IOPS above the link's {link_bound:.0}"
    );
}

#[test]
fn a_read_smaller_than_a_mapping_unit_sends_only_its_bytes() {
    // Link-bound random reads (SATA 300, 16 dies, QD 32): 512 B requests
    // move an eighth of 4 KiB's bytes over the link, so more of them fit.
    let iops = |size: &str| {
        let cfg = config(
            "preset = \"snia-mlc\"\nblocks_per_plane = 256\ninterface = \"sata-300\"",
            &format!(
                "[[phase]]\nkind = \"fill\"\nvolume = 1.0\n[[phase]]\npattern = \"random\"\nread_fraction = 1.0\nblock_size = \"{size}\"\nqueue_depth = 32\nrequests = 20000\n"
            ),
        );
        let mut sim = Simulator::new(cfg);
        let p = sim.run_all(&mut |_| true).unwrap();
        (
            p[1].summary.rates.iops.unwrap(),
            p[1].summary.host_read_bytes,
        )
    };
    let (small, small_bytes) = iops("512B");
    let (unit, _) = iops("4KiB");
    assert_eq!(small_bytes, 20000 * 512);
    assert!(
        small > 1.3 * unit,
        "512 B: {small:.0} IOPS, 4 KiB: {unit:.0} IOPS"
    );
}

/// The simulated clock counts nanoseconds in 64 bits: a request past
/// `CLOCK_LIMIT_NS` (292 years) is refused, never issued on a wrapped or
/// saturated clock (here: one request every 31.7 years, 20 of them).
#[test]
fn a_run_past_the_clocks_horizon_is_refused() {
    let drive = "preset = \"snia-slc\"\ncapacity = \"1GiB\"";
    let slow = "[[phase]]\nrate = 1e-9\narrival = \"fixed\"\nrequests = 20\n";
    let e = Simulator::new(config(drive, slow))
        .run_all(&mut |_| true)
        .expect_err("the run passes the clock's horizon")
        .to_string();
    assert!(
        e.contains("past the 292 years the simulated clock takes"),
        "{e}"
    );
    let fits = "[[phase]]\nrate = 1e-9\narrival = \"fixed\"\nrequests = 5\n";
    let r = Simulator::new(config(drive, fits))
        .run_all(&mut |_| true)
        .unwrap();
    let years = r[0].summary.sim_seconds / 3.156e7;
    assert!((years - 4.0 * 31.69).abs() < 1.0, "{years} years");
}

/// The read max (µs) of a phase of QD-32 reads right after a burst of
/// writes that leaves about 200 ms of programs queued on the one die
/// (first come, first served), with `drain` on the read phase.
fn read_max_after_a_write_burst(drain: bool) -> f64 {
    let phases = format!(
        "[[phase]]\nkind = \"fill\"\nvolume = 0.5\n[[phase]]\npattern = \"sequential\"\nblock_size = \"4KiB\"\nqueue_depth = 32\nvolume = \"4MiB\"\n\
         [[phase]]\nread_fraction = 1.0\nvolume = \"64KiB\"\ndrain = {drain}\n"
    );
    let mut sim = Simulator::new(slc_die("", "read_priority = false", &phases));
    let r = sim.run_all(&mut |_| true).unwrap();
    r[2].summary.read_latency_us.max
}

#[test]
fn a_drained_phase_starts_once_the_drive_is_idle() {
    let queued = read_max_after_a_write_burst(false);
    let drained = read_max_after_a_write_burst(true);
    // Without priority, the first reads wait for the queued programs.
    assert!(queued > 100_000.0, "{queued} µs");
    // Drained: every read is an idle die's (25 µs sense + transfers).
    assert!(drained < 100.0, "{drained} µs");
}
