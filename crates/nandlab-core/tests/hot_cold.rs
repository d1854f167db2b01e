//! Hot/cold separation at the host frontier (`[ftl] hot_cold`, Hsieh et
//! al.'s multi-hash identifier, `ftl/hot_cold.rs`): on writes whose hot set
//! the identifier can see, hot data fills blocks of its own and an
//! age-aware GC (cost-benefit) copies less; on uniform writes, where
//! nothing is hot, it changes next to nothing. The drive stays consistent
//! (every unit maps to one slot that maps back).

use nandlab_core::{Config, Simulator};

fn config(hot_cold: &str, distribution: &str) -> Config {
    let text = format!(
        r#"
seed = 3
[device]
cell = "slc"
channels = 1
blocks_per_plane = 512
pages_per_block = 64
page_size = "4KiB"
over_provisioning = 0.15
[ftl]
gc = "cost-benefit"
gc_start = 2
gc_stop = 2
hot_cold = "{hot_cold}"
[[phase]]
kind = "fill"
[[phase]]
name = "warm-up"
distribution = "{distribution}"
volume = 4.0
[[phase]]
name = "measure"
distribution = "{distribution}"
volume = 4.0
"#
    );
    Config::from_toml(&text, "test").unwrap()
}

/// The measured phase's WAF, and the share of its host writes found hot.
fn waf(hot_cold: &str, distribution: &str) -> (f64, f64) {
    let mut sim = Simulator::new(config(hot_cold, distribution));
    let phases = sim.run_all(&mut |_| true).unwrap();
    sim.drive().check_invariants().unwrap();
    let s = &phases[2].summary;
    (
        s.waf.unwrap(),
        s.hot_bytes as f64 / s.host_write_bytes as f64,
    )
}

#[test]
fn separating_hot_data_lowers_write_amplification() {
    // Half the writes go to 0.2 % of the drive: the identifier finds those
    // writes hot, and few others.
    let (off, none) = waf("off", "hotcold:0.5:0.002");
    let (on, hot) = waf("multi-hash", "hotcold:0.5:0.002");
    println!(
        "hotcold:0.5:0.002: WAF {off:.3} without separation, {on:.3} with ({hot:.3} found hot)"
    );
    assert_eq!(none, 0.0);
    assert!((0.45..0.55).contains(&hot), "{hot}");
    assert!(on < 0.9 * off, "{on} vs {off}");
}

#[test]
fn uniform_writes_are_left_as_they_were() {
    let (off, _) = waf("off", "uniform");
    let (on, hot) = waf("multi-hash", "uniform");
    println!("uniform: WAF {off:.3} without separation, {on:.3} with ({hot:.4} found hot)");
    assert!(hot < 0.02, "{hot}");
    assert!((on - off).abs() < 0.02 * off, "{on} vs {off}");
}
