//! ZombieNAND's bit-mode downgrade: a block dead at its mode drops one bit per
//! cell instead of retiring, with the stress it has, never before its rating;
//! no data is lost at a switch; the drive lives at least as long.

use nandlab_core::{Config, Simulator};

fn lifetime(zombie: bool) -> (Simulator, nandlab_core::Summary) {
    let text = format!(
        r#"
seed = 5
[device]
cell = "tlc"
channels = 2
planes_per_die = 2
blocks_per_plane = 48
pages_per_block = 48
page_size = "8KiB"
reserve = "30 %"
[device.wear]
# ZombieNAND's ratings divided by 50, so that a lifetime takes a moment.
rated = {{ slc = 1500, mlc = 120, tlc = 20 }}
spread = "lognormal:0.1"
[ftl]
zombie = {zombie}
gc_start = 2
gc_stop = 3
[[phase]]
kind = "fill"
working_set = 0.5
[[phase]]
working_set = 0.5
queue_depth = 8
until = "dead"
"#
    );
    let mut sim = Simulator::new(Config::from_toml(&text, "test").unwrap());
    sim.drive_mut().ftl.enable_oracle();
    let phases = sim.run_all(&mut |_| true).unwrap();
    let last = phases.last().unwrap().summary.clone();
    (sim, last)
}

#[test]
fn zombie_blocks_switch_down_and_the_drive_lives_longer() {
    let (base_sim, base) = lifetime(false);
    let (zombie_sim, zombie) = lifetime(true);
    assert!(
        base.death.is_some() && zombie.death.is_some(),
        "both drives run until they die"
    );
    let z = &zombie_sim.drive().ftl;
    assert!(z.blocks.mode_switches > 0);
    assert_eq!(base_sim.drive().ftl.blocks.mode_switches, 0);
    assert!(
        zombie.host_write_bytes >= base.host_write_bytes,
        "zombie {} < baseline {}",
        zombie.host_write_bytes,
        base.host_write_bytes
    );
    // No switch before the rating: every block below TLC has been erased at least ~20 times.
    for (i, m) in z.blocks.mode.iter().enumerate() {
        if *m != nandlab_core::media::CellMode::Tlc {
            assert!(
                z.blocks.erase_count[i] as f64 >= 20.0 * 0.6,
                "block {i} switched after {}",
                z.blocks.erase_count[i]
            );
        }
    }
    for sim in [&base_sim, &zombie_sim] {
        let ftl = &sim.drive().ftl;
        ftl.check_invariants().unwrap();
        for lpn in 0..ftl.g.user_units as u32 {
            ftl.check_read(lpn).unwrap();
        }
    }
    println!(
        "baseline {} B, zombie {} B, switches {}",
        base.host_write_bytes, zombie.host_write_bytes, z.blocks.mode_switches
    );
}

#[test]
fn a_dead_drive_refuses_more_phases() {
    let (mut sim, _) = lifetime(false);
    let err = sim.run_phase(1, &mut |_| true).unwrap_err();
    assert!(err.to_string().starts_with("the drive is dead: "), "{err}");
}
