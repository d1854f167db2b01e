//! Config loader tests: presets, defaults and every kind of bad input giving
//! one line that names the key.

use super::*;

const BASE: &str = r#"
[device]
cell = "slc"
channels = 2
blocks_per_plane = 64
pages_per_block = 32
page_size = "4KiB"
over_provisioning = "25 %"
"#;

fn load(extra_device: &str, rest: &str) -> Result<Config, ConfigError> {
    Config::from_toml(&format!("{BASE}{extra_device}\n{rest}"), "test.toml")
}

fn error(extra_device: &str, rest: &str) -> String {
    load(extra_device, rest).unwrap_err().to_string()
}

const PHASE: &str = "[[phase]]\nvolume = 1.0\n";

#[test]
fn a_minimal_config_loads_with_defaults() {
    let c = load("", PHASE).unwrap();
    assert_eq!(c.geometry.units_per_page, 1);
    assert_eq!(c.geometry.blocks, 128);
    assert_eq!(
        c.geometry.user_units,
        (128.0 * 32.0 / 1.25f64).floor() as u64
    );
    assert_eq!(c.phases[0].name, "phase-1");
    assert_eq!(c.phases[0].arrival, Arrival::Closed { queue_depth: 1 });
    assert_eq!(c.ftl.gc, GcPolicy::Greedy);
}

#[test]
fn presets_apply_and_user_keys_override_them() {
    let c = Config::from_toml(
        "[device]\npreset = \"mqsim-default\"\nblocks_per_plane = 256\n[[phase]]\nrequests = 5\n",
        "t",
    )
    .unwrap();
    assert_eq!(c.geometry.channels, 8);
    assert_eq!(c.geometry.blocks_per_plane, 256);
    assert_eq!(c.geometry.page_size, 8192);
    assert_eq!(c.device.timing[1].erase_ns, 3_800_000);
    for name in presets::preset_names() {
        let text = format!("[device]\npreset = \"{name}\"\n[[phase]]\nrequests = 1\n");
        Config::from_toml(&text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn reserve_and_over_provisioning_set_the_user_capacity() {
    let c = Config::from_toml(
        &BASE.replace("over_provisioning = \"25 %\"", "reserve = 0.2"),
        "t",
    );
    let c = Config::from_toml(
        &format!(
            "{}{PHASE}",
            BASE.replace("over_provisioning = \"25 %\"", "reserve = 0.2")
        ),
        "t",
    )
    .or(c)
    .unwrap();
    assert_eq!(
        c.geometry.user_units,
        (128.0 * 32.0 * 0.8f64).floor() as u64
    );
    let both = error("reserve = 0.1", PHASE);
    assert!(
        both.contains("either over_provisioning or reserve"),
        "{both}"
    );
}

#[test]
fn unknown_keys_suggest_the_right_one() {
    let e = error("chanels = 2", PHASE);
    assert_eq!(
        e,
        "[device]: unknown key `chanels`, did you mean `channels`?"
    );
    let e = error("", "[[phase]]\nvolume = 1.0\nqueue_dpeth = 4\n");
    assert_eq!(
        e,
        "[[phase]] #1: unknown key `queue_dpeth`, did you mean `queue_depth`?"
    );
    let e = error("preset = \"mqsim-defualt\"", PHASE);
    assert_eq!(
        e,
        "[device] preset: unknown preset `mqsim-defualt`, did you mean `mqsim-default`?"
    );
    let e = error("", "[ftl]\ngc = \"greedyy\"\n[[phase]]\nvolume = 1.0\n");
    assert!(
        e.starts_with("[ftl] gc: unknown GC policy `greedyy`, did you mean `greedy`?"),
        "{e}"
    );
}

#[test]
fn wrong_types_say_what_was_expected() {
    let e = error("planes_per_die = \"two\"", PHASE);
    assert!(
        e.starts_with("[device] planes_per_die: ") && e.contains("expected a whole number"),
        "{e}"
    );
    let e = error("write_buffer = \"lots\"", PHASE);
    assert!(
        e.starts_with("[device] write_buffer: expected a size"),
        "{e}"
    );
    let e = error("", "[[phase]]\nvolume = 1.0\nread_fraction = \"most\"\n");
    assert!(
        e.starts_with("[[phase]] #1 read_fraction: expected a fraction"),
        "{e}"
    );
    let e = error("", "[[phase]]\nvolume = 1.0\nread_fraction = 1.5\n");
    assert!(
        e.starts_with("[[phase]] #1 read_fraction: expected a fraction between 0 and 1"),
        "{e}"
    );
}

#[test]
fn impossible_geometry_is_refused() {
    let e = error("dies_per_chip = 0", PHASE);
    assert_eq!(e, "[device] dies_per_chip: must be at least 1");
    let e = error(
        "",
        "[ftl]\nmapping_unit = \"3KiB\"\n[[phase]]\nvolume = 1.0\n",
    );
    assert!(
        e.starts_with("[ftl] mapping_unit: expected a multiple of 512 bytes that divides"),
        "{e}"
    );
    let big = "chips_per_channel = 64\ndies_per_chip = 64\nplanes_per_die = 4096";
    let e = error(big, PHASE);
    assert!(e.starts_with("[device]: impossible geometry"), "{e}");
}

#[test]
fn spare_space_must_leave_room_for_gc() {
    let e = Config::from_toml(&format!("{}{PHASE}", BASE.replace("25 %", "2 %")), "t")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("[device] over_provisioning: spare space too small for GC"),
        "{e}"
    );
}

#[test]
fn a_phase_needs_a_stop_condition() {
    let e = error("", "[[phase]]\nqueue_depth = 4\n");
    assert_eq!(
        e,
        "[[phase]] #1 volume: the phase needs a stop condition: one of volume, requests, duration, until"
    );
    let e = error("", "");
    assert!(e.contains("at least one [[phase]]"), "{e}");
    let e = error("", "[[phase]]\nvolume = 3\n");
    assert!(e.contains("write 3.0 for 3× the user capacity"), "{e}");
}

#[test]
fn toml_syntax_errors_give_the_line() {
    let e = Config::from_toml("[device]\nchannels = = 2\n", "my.toml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("my.toml:2: TOML syntax error"), "{e}");
}

#[test]
fn json_configs_load_the_same() {
    let toml = load("", PHASE).unwrap();
    let json = Config::from_json(&toml_to_json(&format!("{BASE}\n{PHASE}"))).unwrap();
    assert_eq!(toml.to_json(), json.to_json());
}

fn toml_to_json(text: &str) -> String {
    let v: serde_json::Value = toml::from_str(text).unwrap();
    v.to_string()
}

#[test]
fn bad_media_settings_name_the_key() {
    let e = error("[device.wear]\nspread = \"lognormal\"", PHASE);
    assert!(
        e.starts_with("[device.wear] spread: unknown spread `lognormal`"),
        "{e}"
    );
    let e = error("[device.wear]\nrated = { mlc = 0 }", PHASE);
    assert!(
        e.starts_with("[device.wear] rated.mlc: expected program/erase cycles of at least 1"),
        "{e}"
    );
    let e = error("[device.wear]\nrated = { plc = 5 }", PHASE);
    assert!(
        e.starts_with("[device.wear] rated: unknown key `plc`"),
        "{e}"
    );
    let e = error("[device.wear]\ntemperature_c = 300", PHASE);
    assert!(
        e.starts_with("[device.wear] temperature_c: expected -40 to 125"),
        "{e}"
    );
    let e = error("", "[[phase]]\nvolume = 1.0\ndata = \"states:11,22\"\n");
    assert!(
        e.starts_with("[[phase]] #1 data: states:S1,S2,... takes MLC states"),
        "{e}"
    );
    let e = error("", "[[phase]]\nvolume = 1.0\ndata = \"onse\"\n");
    assert!(e.contains("did you mean `ones`"), "{e}");
}

#[test]
fn order_seed_and_distribution_name_the_pattern_they_need() {
    let e = error(
        "",
        "[[phase]]\npattern = \"random\"\norder_seed = 3\nrequests = 1\n",
    );
    assert!(
        e.starts_with("[[phase]] #1 order_seed: applies to pattern = \"shuffle\""),
        "{e}"
    );
    let e = error(
        "",
        "[[phase]]\npattern = \"shuffle\"\ndistribution = \"zipf:0.9\"\nrequests = 1\n",
    );
    assert!(
        e.starts_with("[[phase]] #1 distribution: applies to pattern = \"random\""),
        "{e}"
    );
}

#[test]
fn a_nominal_capacity_sizes_the_planes_or_says_which_would_do() {
    let with = |preset: &str, capacity: &str| {
        Config::from_toml(
            &format!("[device]\npreset = \"{preset}\"\ncapacity = \"{capacity}\"\n[[phase]]\nrequests = 1\n"),
            "test",
        )
    };
    let g = with("swissbit-standard", "8GiB").unwrap().geometry;
    assert_eq!(g.user_capacity_bytes, 8 << 30);
    // 7 % over-provisioning, in whole blocks per plane.
    let raw = g.raw_capacity_bytes as f64 / (8u64 << 30) as f64;
    assert!((1.07..1.08).contains(&raw), "raw / user = {raw}");
    // MQSim's 128 planes of 2 MiB blocks leave GC nothing at 4 GiB: the error says what would do.
    let e = with("mqsim-default", "4GiB").unwrap_err().to_string();
    assert!(
        e.contains("[device] capacity") && e.contains("at least 29 GiB"),
        "{e}"
    );
    with("mqsim-default", "29GiB").unwrap();
    let e = with("swissbit-standard", "1000B").unwrap_err().to_string();
    assert!(e.contains("[device] capacity") && e.contains("4096"), "{e}");
}

#[test]
fn a_working_set_is_a_share_or_a_size() {
    let with = |keys: &str| {
        Config::from_toml(
            &format!("[device]\npreset = \"snia-slc\"\ncapacity = \"1GiB\"\n[[phase]]\nrequests = 1\n{keys}\n"),
            "test",
        )
    };
    let p = &with("working_set = \"256MiB\"\nworking_set_offset = \"25 %\"")
        .unwrap()
        .phases[0];
    assert_eq!((p.working_set, p.working_set_offset), (0.25, 0.25));
    assert_eq!(
        with("working_set = 0.5").unwrap().phases[0].working_set,
        0.5
    );
    let e = with("working_set = \"2GiB\"").unwrap_err().to_string();
    assert!(
        e.starts_with(
            "[[phase]] #1 working_set: 2147483648 bytes is more than the drive's user capacity"
        ),
        "{e}"
    );
    let e = with("working_set = \"lots\"").unwrap_err().to_string();
    assert!(e.contains("a size like \"256MiB\""), "{e}");
}
