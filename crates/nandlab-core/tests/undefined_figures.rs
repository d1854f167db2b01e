//! A figure without meaning is null, never 0: WAF without host writes, a
//! rate over no simulated time; and the run's rates count only the phases
//! that took simulated time (a fill or an untimed ageing moves millions of
//! requests in none).

use nandlab_core::{Config, Simulator};

mod common;
use common::SMALL_DRIVE;

/// The small drive filled, aged untimed, then a timed open-loop mix, then
/// a timed read-only phase.
fn run_text() -> String {
    format!(
        r#"seed = 3
{SMALL_DRIVE}[[phase]]
name = "fill"
kind = "fill"
[[phase]]
name = "age"
block_size = "4KiB"
timed = false
volume = 1.0
[[phase]]
name = "mix"
read_fraction = 0.7
block_size = "4KiB"
rate = 3000
duration = "2s"
[[phase]]
name = "reads"
read_fraction = 1.0
block_size = "4KiB"
requests = 5000
"#
    )
}

#[test]
fn the_run_rates_count_the_phases_that_took_time_and_undefined_is_null() {
    let mut sim = Simulator::new(Config::from_toml(&run_text(), "test").unwrap());
    let phases = sim.run_all(&mut |_| true).unwrap();
    let s = |i: usize| &phases[i].summary;
    // No simulated time: no rate.
    for i in [0, 1] {
        assert_eq!(s(i).sim_seconds, 0.0, "{}", s(i).name);
        assert_eq!(s(i).rates.iops, None, "{}", s(i).name);
        assert_eq!(s(i).rates.mbps, None, "{}", s(i).name);
    }
    assert!(
        s(1).host_requests > 10_000,
        "the untimed ageing moves plenty"
    );
    // No host writes: no WAF (the fill lays data out; the reads write nothing).
    assert_eq!(s(0).waf, None);
    assert_eq!(s(3).waf, None);
    assert_eq!(s(3).data_waf, None);
    assert!(s(2).waf.unwrap() >= 1.0);
    // The run's rate: the timed phases' requests over the run's simulated time.
    let run = sim.run_summary();
    let timed = s(2).host_requests + s(3).host_requests;
    let secs = s(2).sim_seconds + s(3).sim_seconds;
    assert!((run.sim_seconds - secs).abs() < 1e-9);
    let iops = run.rates.iops.unwrap();
    assert!((iops - timed as f64 / secs).abs() < 1e-6, "{iops}");
    assert!(
        iops < 3000.0 * 3.0,
        "the untimed ageing is not in it: {iops}"
    );
    // Power and IOPS per watt: none over no simulated time; the run's
    // counts the timed requests against what the run drew (untimed phases
    // draw nothing).
    for i in [0, 1] {
        assert_eq!(s(i).energy.average_power_w, None, "{}", s(i).name);
        assert_eq!(s(i).energy.iops_per_watt, None, "{}", s(i).name);
    }
    let drawn = s(2).energy.energy_joules + s(3).energy.energy_joules;
    assert!((run.energy.energy_joules - drawn).abs() < 1e-9 * drawn);
    let per_watt = run.energy.iops_per_watt.unwrap();
    assert!(
        (per_watt - timed as f64 / drawn).abs() < 1e-6 * per_watt,
        "{per_watt} vs {}",
        timed as f64 / drawn
    );
    // The time series: a WAF is a number only where the interval wrote; an
    // untimed phase's rows have no rates or power; a phase of reads alone
    // has no write percentiles.
    let rows = &phases[3].rows;
    assert!(rows.iter().all(|r| r.waf.is_nan()));
    assert!(rows
        .iter()
        .all(|r| r.write_p99_us.is_nan() && r.write_max_us.is_nan()));
    assert!(rows.iter().all(|r| r.read_p99_us != 0.0));
    assert!(rows.iter().any(|r| r.read_p99_us > 0.0 && r.iops > 0.0));
    assert!(phases[2].rows.iter().any(|r| !r.waf.is_nan()));
    let untimed = &phases[1].rows;
    assert!(!untimed.is_empty());
    assert!(untimed
        .iter()
        .all(|r| r.iops.is_nan() && r.write_mbps.is_nan() && r.power_w.is_nan()));
}

#[test]
fn a_run_of_untimed_phases_alone_has_no_rate() {
    let text = run_text();
    let text = text.split("[[phase]]\nname = \"mix\"").next().unwrap();
    let mut sim = Simulator::new(Config::from_toml(text, "test").unwrap());
    sim.run_all(&mut |_| true).unwrap();
    let run = sim.run_summary();
    assert!(run.host_requests > 0);
    assert_eq!(run.rates.iops, None);
    assert_eq!(run.rates.write_mbps, None);
}
