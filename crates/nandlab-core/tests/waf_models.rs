//! Write amplification under uniform random single-unit writes against the
//! analytic models of Desnoyers ("Analytic models of SSD write performance",
//! SYSTOR 2012 / ACM TOS 2014), REFERENCE.md §6 — numbers this code did not make.
//!
//! α counts the flash that can hold data in steady state: all blocks of the
//! plane except the free blocks GC keeps in reserve (`gc_start`) and, on
//! average, one block's worth of unwritten space in the two open frontiers.

// The analytic models are worked out apart from the engine, with std's math.
#![allow(clippy::disallowed_methods)]

use nandlab_core::{Config, Simulator};

/// Principal branch of Lambert's W for x in [-1/e, 0), by Halley's method.
fn lambert_w0(x: f64) -> f64 {
    let mut w = if x < -0.3 { -0.5 } else { x };
    for _ in 0..100 {
        let ew = w.exp();
        let f = w * ew - x;
        w -= f / (ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0));
    }
    w
}

fn wa_fifo(alpha: f64) -> f64 {
    alpha / (alpha + lambert_w0(-alpha * (-alpha).exp()))
}

fn wa_greedy(alpha: f64, np: f64) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * np);
    wa_fifo(k * alpha) / k
}

fn wa_random(alpha: f64) -> f64 {
    alpha / (alpha - 1.0)
}

const BLOCKS: u32 = 2048;
const PAGES: u32 = 64;
const GC_START: u32 = 2;

/// Steady-state WAF measured by the simulator, and the α the models get.
fn simulate(gc: &str, op: f64) -> (f64, f64) {
    let text = format!(
        r#"
seed = 7
[device]
cell = "slc"
channels = 1
blocks_per_plane = {BLOCKS}
pages_per_block = {PAGES}
page_size = "4KiB"
over_provisioning = {op}
[ftl]
gc = "{gc}"
gc_start = {GC_START}
gc_stop = {GC_START}
[[phase]]
kind = "fill"
[[phase]]
name = "warm-up"
pattern = "random"
volume = 4.0
[[phase]]
name = "measure"
pattern = "random"
volume = 4.0
"#
    );
    let cfg = Config::from_toml(&text, "test").unwrap();
    let user_units = cfg.geometry.user_units as f64;
    let mut sim = Simulator::new(cfg);
    let phases = sim.run_all(&mut |_| true).unwrap();
    sim.drive().check_invariants().unwrap();
    let alpha = (BLOCKS - GC_START - 1) as f64 * PAGES as f64 / user_units;
    (phases[2].summary.waf.unwrap(), alpha)
}

fn check(gc: &str, model: impl Fn(f64) -> f64, tolerance: f64) {
    for op in [0.07, 0.15, 0.28, 0.5] {
        let (waf, alpha) = simulate(gc, op);
        let expected = model(alpha);
        let err = (waf - expected).abs() / expected;
        println!(
            "{gc} op {op}: simulated {waf:.4}, model {expected:.4} (α {alpha:.4}), error {:.2} %",
            err * 100.0
        );
        assert!(
            err < tolerance,
            "{gc} at {op} OP: simulated WAF {waf:.4} vs model {expected:.4} ({:.2} % off)",
            err * 100.0
        );
    }
}

#[test]
fn fifo_matches_the_lrw_model() {
    check("fifo", wa_fifo, 0.01);
}

#[test]
fn greedy_matches_the_greedy_model() {
    check("greedy", |a| wa_greedy(a, PAGES as f64), 0.01);
}

#[test]
fn random_victims_match_alpha_over_alpha_minus_one() {
    check("random", wa_random, 0.01);
}

/// Windowed greedy (`ftl/gc/victim/windowed_greedy.rs`, the GC-policy
/// recipe's example): a window of one block is FIFO, a window of the whole
/// plane is greedy — each within 1 % of its model — and a window of 16
/// lies between them.
#[test]
fn windowed_greedy_spans_fifo_to_greedy() {
    for op in [0.07, 0.28] {
        let (one, alpha) = simulate("windowed-greedy:1", op);
        let (all, _) = simulate(&format!("windowed-greedy:{BLOCKS}"), op);
        let (sixteen, _) = simulate("windowed-greedy:16", op);
        let (fifo, greedy) = (wa_fifo(alpha), wa_greedy(alpha, PAGES as f64));
        println!("op {op}: window 1 {one:.4} (FIFO {fifo:.4}), all {all:.4} (greedy {greedy:.4}), 16 {sixteen:.4}");
        assert!(
            (one - fifo).abs() / fifo < 0.01,
            "window 1: {one} vs FIFO {fifo}"
        );
        assert!(
            (all - greedy).abs() / greedy < 0.01,
            "whole plane: {all} vs greedy {greedy}"
        );
        assert!(
            all < sixteen && sixteen < one,
            "16: {sixteen} not between {all} and {one}"
        );
    }
}

#[test]
fn lambert_w_is_right() {
    // W(-1/e) = -1, W(-0.2) = -0.2591711018...
    assert!((lambert_w0(-(-1.0f64).exp()) + 1.0).abs() < 1e-6);
    assert!((lambert_w0(-0.2) + 0.259_171_101_8).abs() < 1e-9);
}
