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
    assert_eq!(c.ftl.gc, GcPolicy::GREEDY);
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
fn a_policy_with_a_bad_parameter_names_its_own_letter() {
    for word in ["windowed-greedy:0", "windowed-greedy:x"] {
        let e = error("", &format!("[ftl]\ngc = \"{word}\"\n{PHASE}"));
        assert_eq!(
            e,
            format!(
                "[ftl] gc: expected windowed-greedy:W with W a whole number ≥ 1, found `{word}`"
            )
        );
    }
}

#[test]
fn a_fill_or_trim_covers_its_working_set_wherever_it_starts() {
    // Half the drive from its middle: a fill of 0.5 covers it, 0.6 is more than it holds (it
    // was taken for the offset plus the working set, 1.0, and clamped when laid out).
    let phase = |kind: &str, volume: &str| {
        format!("[[phase]]\nkind = \"{kind}\"\nworking_set = 0.5\nworking_set_offset = 0.5\nvolume = {volume}\n")
    };
    for kind in ["fill", "trim"] {
        assert!(load("", &phase(kind, "0.5")).is_ok());
        let e = error("", &phase(kind, "0.6"));
        assert!(
            e.starts_with("[[phase]] #1 volume: a fill or trim covers at most the working set, each address once"),
            "{e}"
        );
    }
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
        e.starts_with("[[phase]] #1 read_fraction: a bare number is a share of 1"),
        "{e}"
    );
    let e = error("", "[[phase]]\nvolume = 1.0\nread_fraction = \"150 %\"\n");
    assert!(
        e.starts_with("[[phase]] #1 read_fraction: expected a fraction between 0 and 1"),
        "{e}"
    );
}

/// Slips newcomers make: a percentage without its sign, a decimal size.
#[test]
fn a_percentage_without_its_sign_and_a_decimal_size_are_named() {
    let e = Config::from_toml(
        &format!("{}\n{PHASE}", BASE.replace("\"25 %\"", "7")),
        "test.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e == "[device] over_provisioning: a bare number is a share of 1: 7 would be 700 %; \
              write \"7 %\" or 0.07",
        "{e}"
    );
    let e = error("", "[[phase]]\nvolume = 1.0\nblock_size = \"4KB\"\n");
    assert!(
        e.contains("found 4000 (4 KB is decimal: did you mean \"4KiB\"?)"),
        "{e}"
    );
}

/// A preset's spare space is one setting under two names: the user's key
/// replaces the preset's, whichever name either uses.
#[test]
fn the_users_reserve_replaces_the_presets_over_provisioning() {
    let text = |key: &str| {
        format!("[device]\npreset = \"snia-mlc\"\ncapacity = \"1GiB\"\n{key}\n[[phase]]\nrequests = 1\n")
    };
    let reserve = Config::from_toml(&text("reserve = \"10 %\""), "t").unwrap();
    let op = Config::from_toml(&text("over_provisioning = \"11.111111111 %\""), "t").unwrap();
    let g = (reserve.geometry.user_units, op.geometry.user_units);
    assert!(g.0.abs_diff(g.1) <= g.0 / 1000, "{g:?}");
    let both = Config::from_toml(&text("reserve = 0.1\nover_provisioning = 0.1"), "t");
    assert!(both.unwrap_err().to_string().contains("not both"));
}

#[test]
fn impossible_geometry_is_refused() {
    for v in ["0", "-1"] {
        let e = error(&format!("dies_per_chip = {v}"), PHASE);
        let want = format!(
            "[device] dies_per_chip: found the number `{v}`, expected a whole number from 1 to 4,294,967,295"
        );
        assert_eq!(e, want);
    }
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
        e.starts_with("[device.wear] rated.mlc: expected program/erase cycles from 1 to 1e12"),
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

/// Names head tables and label figures: a 5 MB one took minutes to draw.
/// A word far longer than any key gets no "did you mean" (a 60 MB one took
/// 15 s to compare) and is quoted cut.
#[test]
fn names_and_unknown_words_are_bounded() {
    let long = "x".repeat(257);
    let e = error("", &format!("[[phase]]\nname = \"{long}\"\nvolume = 1.0\n"));
    assert!(
        e.starts_with("[[phase]] #1 name: at most 256 characters"),
        "{e}"
    );
    let e = error(
        "",
        &format!("[[phase]]\nvolume = 1.0\n[[phase.job]]\nname = \"{long}\"\n"),
    );
    assert!(e.contains("job #1 name: at most 256 characters"), "{e}");
    let word = "y".repeat(100_000);
    let e = error(&format!("{word} = 1"), PHASE);
    assert!(e.contains("… (100000 characters)`, expected one of"), "{e}");
    assert!(e.len() < 2_000, "{}", e.len());
}

#[test]
fn map_extents_need_a_map_cache() {
    let e = error("", "[ftl]\nmap_extents = false\n[[phase]]\nvolume = 1.0\n");
    assert!(
        e.starts_with("[ftl] map_extents: only a DRAM-less drive ([ftl] map_cache) keeps extents"),
        "{e}"
    );
    let off = load(
        "",
        "[ftl]\nmap_cache = \"64KiB\"\nmap_extents = false\n[[phase]]\nvolume = 1.0\n",
    );
    assert!(!off.unwrap().ftl.map_extents);
    let on = load(
        "",
        "[ftl]\nmap_cache = \"64KiB\"\n[[phase]]\nvolume = 1.0\n",
    )
    .unwrap();
    assert!(on.ftl.map_extents);
}

/// `read_us`/`program_us`: one number for every page type, as the README
/// says, or one per page type; out of range, the message gives the range.
#[test]
fn latencies_are_one_for_all_or_one_per_page_type() {
    let one = load("[device.timing.mlc]\nread_us = 50", PHASE).unwrap();
    let each = load("[device.timing.mlc]\nread_us = [50, 50.0]", PHASE).unwrap();
    assert_eq!(one.device.timing, each.device.timing);
    let e = error("[device.timing.mlc]\nread_us = [0, 10]", PHASE);
    assert!(
        e.starts_with("[device.timing.mlc] read_us: expected latencies in microseconds above 0 and below 10,000,000"),
        "{e}"
    );
    let e = error("[device.timing.mlc]\nprogram_us = \"fast\"", PHASE);
    assert!(
        e.contains("a latency in microseconds or a list of them"),
        "{e}"
    );
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
    let least = e
        .split("at least ")
        .nth(1)
        .and_then(|rest| rest.split(" GiB").next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{e}"));
    assert!(e.contains("[device] capacity"), "{e}");
    // From there on every capacity works (29 GiB did, but 32 did not: the
    // blocks per plane round the raw capacity up by more at some sizes).
    for gib in least..least + 100 {
        with("mqsim-default", &format!("{gib}GiB")).unwrap();
    }
    // It is no more than a few GiB past the first that works.
    assert!(
        with("mqsim-default", &format!("{}GiB", least - 8)).is_err(),
        "{least}"
    );
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

/// Every key that takes a number, given nan, inf or -inf in TOML or (as
/// Python's json module writes them) in JSON: refused naming the key, never
/// read as "not given".
#[test]
fn numbers_that_are_not_finite_are_refused_naming_the_key() {
    // (table, key, where the error says it is)
    let float_keys = [
        ("device", "over_provisioning", "[device] over_provisioning"),
        ("device", "reserve", "[device] reserve"),
        ("device", "capacity", "[device] capacity"),
        ("device", "page_size", "[device] page_size"),
        ("device", "link_rate", "[device] link_rate"),
        ("device", "channel_rate", "[device] channel_rate"),
        ("device", "command_overhead", "[device] command_overhead"),
        ("device", "write_buffer", "[device] write_buffer"),
        (
            "device.wear",
            "temperature_c",
            "[device.wear] temperature_c",
        ),
        ("device.wear", "initial", "[device.wear] initial"),
        ("device.wear.rated", "tlc", "[device.wear.rated] tlc"),
        (
            "device.timing.mlc",
            "erase_us",
            "[device.timing.mlc] erase_us",
        ),
        ("ftl", "gc_start", "[ftl] gc_start"),
        ("ftl", "gc_stop", "[ftl] gc_stop"),
        ("ftl", "idle_threshold", "[ftl] idle_threshold"),
        ("ftl", "life_threshold", "[ftl] life_threshold"),
        ("ftl", "unleveling_bet", "[ftl] unleveling_bet"),
        ("ftl", "map_cache", "[ftl] map_cache"),
        ("ftl", "read_ahead", "[ftl] read_ahead"),
        ("ftl", "pslc_size", "[ftl] pslc_size"),
        ("ftl", "pslc_dynamic_share", "[ftl] pslc_dynamic_share"),
        ("ftl", "pslc_static_after", "[ftl] pslc_static_after"),
        ("ftl", "direct_write_after", "[ftl] direct_write_after"),
        ("stats", "interval", "[stats] interval"),
        ("phase", "read_fraction", "[[phase]] #2 read_fraction"),
        ("phase", "trim_fraction", "[[phase]] #2 trim_fraction"),
        ("phase", "block_size", "[[phase]] #2 block_size"),
        ("phase", "align", "[[phase]] #2 align"),
        ("phase", "working_set", "[[phase]] #2 working_set"),
        (
            "phase",
            "working_set_offset",
            "[[phase]] #2 working_set_offset",
        ),
        ("phase", "rate", "[[phase]] #2 rate"),
        ("phase", "idle_every", "[[phase]] #2 idle_every"),
        ("phase", "idle_duration", "[[phase]] #2 idle_duration"),
        ("phase", "volume", "[[phase]] #2 volume"),
        ("phase", "duration", "[[phase]] #2 duration"),
        ("phase", "interval", "[[phase]] #2 interval"),
        ("phase", "time_scale", "[[phase]] #2 time_scale"),
        ("phase", "power_loss_every", "[[phase]] #2 power_loss_every"),
        ("phase", "unique_bytes", "[[phase]] #2 unique_bytes"),
        (
            "phase.job",
            "read_fraction",
            "[[phase]] #2 job #1 read_fraction",
        ),
    ];
    let list_keys = [
        (
            "device.timing.mlc",
            "read_us",
            "[device.timing.mlc] read_us[1]",
        ),
        ("phase", "power_loss", "[[phase]] #2 power_loss[1]"),
    ];
    // Keys that take no float at all say what they expected instead.
    let other_keys = [
        ("", "seed", "seed", "expected a whole number"),
        (
            "device",
            "channels",
            "[device] channels",
            "expected a whole number",
        ),
        (
            "device",
            "multiplane",
            "[device] multiplane",
            "expected true or false",
        ),
        ("device", "cell", "[device] cell", "expected a text value"),
        (
            "ftl",
            "early_switch_blocks",
            "[ftl] early_switch_blocks",
            "expected a whole number",
        ),
        (
            "phase",
            "queue_depth",
            "[[phase]] #2 queue_depth",
            "expected a whole number",
        ),
        (
            "phase",
            "requests",
            "[[phase]] #2 requests",
            "expected a whole number",
        ),
        (
            "phase",
            "name",
            "[[phase]] #2 name",
            "expected a text value",
        ),
        (
            "phase.job",
            "queue_depth",
            "[[phase]] #2 job #1 queue_depth",
            "expected a whole number",
        ),
    ];
    // A config with `line` in `table` (a job inherits its phase's keys: one only where asked for).
    let config = |table: &str, line: &str| {
        let at = |t: &str| {
            if t == table {
                format!("{line}\n")
            } else {
                String::new()
            }
        };
        let job = if table == "phase.job" {
            "[[phase.job]]\n"
        } else {
            ""
        };
        let stop = if line.starts_with("requests") {
            "volume = 1.0"
        } else {
            "requests = 10"
        };
        format!(
            "{}[device]\npreset = \"zombienand-synthetic-tlc\"\n{}[device.wear]\n{}[device.wear.rated]\n{}\
             [device.timing.mlc]\n{}[ftl]\n{}[stats]\n{}[[phase]]\nkind = \"fill\"\n[[phase]]\n{stop}\n{}\
             {job}{}",
            at(""), at("device"), at("device.wear"), at("device.wear.rated"), at("device.timing.mlc"),
            at("ftl"), at("stats"), at("phase"), at("phase.job")
        )
    };
    let from_json = |text: &str, toml_word: &str| {
        // As a Python dict reaches the engine: json.dumps writes NaN, Infinity, -Infinity.
        let json_word = match toml_word {
            "nan" => "NaN",
            "inf" => "Infinity",
            _ => "-Infinity",
        };
        let stand_in = "123456789.125";
        let json = toml_to_json(
            &text
                .replace(&format!("= {toml_word}"), &format!("= {stand_in}"))
                .replace(&format!(", {toml_word}]"), &format!(", {stand_in}]")),
        );
        assert!(json.contains(stand_in), "{json}");
        Config::from_json(&json.replace(stand_in, json_word))
    };
    for (toml_word, word) in [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf")] {
        let cases = float_keys
            .iter()
            .map(|&(t, k, at)| {
                (
                    t,
                    format!("{k} = {toml_word}"),
                    at,
                    format!("must be a finite number, found {word}"),
                )
            })
            .chain(list_keys.iter().map(|&(t, k, at)| {
                (
                    t,
                    format!("{k} = [1, {toml_word}]"),
                    at,
                    format!("must be a finite number, found {word}"),
                )
            }))
            .chain(other_keys.iter().map(|&(t, k, at, expected)| {
                (
                    t,
                    format!("{k} = {toml_word}"),
                    at,
                    format!("found the float {word}, {expected}"),
                )
            }));
        for (table, line, at, message) in cases {
            let text = config(table, &line);
            for (how, result) in [
                ("TOML", Config::from_toml(&text, "t.toml")),
                ("JSON", from_json(&text, toml_word)),
            ] {
                let e = result.map(|_| ()).unwrap_err().to_string();
                assert!(
                    e.starts_with(&format!("{at}: {message}")),
                    "{how} `{line}` in {table}: {e}"
                );
            }
        }
    }
    let e = error("preset = nan", PHASE);
    assert_eq!(e, "[device] preset: expected a preset name in quotes");
}

/// Times and sizes that the 64-bit clock and byte counters cannot hold (or
/// whose sums they cannot) are refused naming the key, never saturated or
/// wrapped into another value.
#[test]
fn times_and_sizes_past_64_bits_name_the_key() {
    let cases = [
        (
            "",
            "[[phase]]\nduration = \"1e20s\"\n",
            "[[phase]] #1 duration: expected a duration of at most 146 years",
        ),
        (
            "",
            "[[phase]]\nrequests = 9\nrate = 1e-12\n",
            "[[phase]] #1 rate: expected requests per second above 0, at least one per 146 years",
        ),
        (
            "",
            "[[phase]]\nvolume = 1e300\n",
            "[[phase]] #1 volume: expected at most 4 EiB (2^62 bytes), found 1e300 times",
        ),
        (
            "",
            "[[phase]]\nvolume = 9223372036854775807\n",
            "[[phase]] #1 volume: expected a size of at most 4 EiB",
        ),
        (
            "",
            "[[phase]]\nvolume = \"1e19\"\n",
            "[[phase]] #1 volume: expected a size of at most 4 EiB",
        ),
        (
            "",
            "[[phase]]\nrequests = 9\nidle_every = 1e300\nidle_duration = \"1ms\"\n",
            "[[phase]] #1 idle_every: expected at most 4 EiB",
        ),
        (
            "command_overhead = \"2s\"",
            PHASE,
            "[device] command_overhead: expected at most 1 s",
        ),
        (
            "link_rate = \"1B/s\"",
            PHASE,
            "[device] link_rate: expected a rate from 1MB/s to 1PB/s",
        ),
        (
            "write_buffer = 9223372036854775807",
            PHASE,
            "[device] write_buffer: expected a size of at most 4 EiB",
        ),
    ];
    for (device, rest, expected) in cases {
        let e = error(device, rest);
        assert!(e.starts_with(expected), "{device} {rest}: {e}");
    }
}

#[test]
fn configs_that_may_lose_acknowledged_writes_say_why() {
    assert!(load("", PHASE).unwrap().power_loss_unsafe().is_empty());
    let mlc = BASE.replace("cell = \"slc\"", "cell = \"mlc\"");
    let text =
        format!("{mlc}write_cache = \"volatile\"\n[ftl]\npaired_page_backup = false\n{PHASE}");
    let why = Config::from_toml(&text, "test.toml")
        .unwrap()
        .power_loss_unsafe();
    assert_eq!(
        why,
        [
            "a volatile write cache without flush ([device] write_cache = \"volatile\"): \
             acknowledged writes still in the DRAM buffer are lost",
            "no paired-page backup ([ftl] paired_page_backup = false) without power-loss \
             protection: host data and GC copies go to 2-bit wordlines, where an interrupted \
             upper-page program corrupts the acknowledged data of the lower pages",
        ]
    );
}

#[test]
fn suspend_and_die_queue_keys_load_and_bad_ones_name_the_key() {
    let c = load(
        "suspend = \"program+erase\"\nsuspend_latency = \"25us\"\nmax_suspends = 4\ndram_rate = \"800MB/s\"",
        &format!("[ftl]\ndie_queue_depth = 8\n{PHASE}drain = true\n"),
    )
    .unwrap();
    assert_eq!(c.device.suspend.ops, SuspendOps::ProgramErase);
    assert_eq!(
        (
            c.device.suspend.latency_ns,
            c.device.suspend.resume_ns,
            c.device.suspend.max_per_op
        ),
        (25_000, 10_000, 4)
    );
    assert_eq!(c.device.dram_rate, Some(800_000_000));
    assert_eq!(c.ftl.die_queue_depth, 8);
    assert!(c.phases[0].drain);
    let defaults = load("", PHASE).unwrap();
    assert_eq!(defaults.device.suspend, Suspend::NONE);
    assert_eq!(defaults.ftl.die_queue_depth, 4);
    assert!(!defaults.phases[0].drain);
    for (device, rest, key) in [
        ("suspend = \"read\"", PHASE.to_string(), "[device] suspend"),
        (
            "suspend_latency = \"20us\"",
            PHASE.to_string(),
            "[device] suspend",
        ),
        (
            "suspend = \"erase\"\nmax_suspends = 0",
            PHASE.to_string(),
            "[device] max_suspends",
        ),
        (
            "suspend = \"erase\"\nsuspend_latency = \"1s\"",
            PHASE.to_string(),
            "[device] suspend_latency",
        ),
        (
            "suspend = \"erase\"",
            format!("[ftl]\nread_priority = false\n{PHASE}"),
            "[device] suspend",
        ),
        (
            "",
            format!("[ftl]\ndie_queue_depth = 0\n{PHASE}"),
            "[ftl] die_queue_depth",
        ),
    ] {
        let e = error(device, &rest);
        assert!(e.contains(key), "{device}: {e}");
    }
}

#[test]
fn zombienand_keywords_name_their_key_and_choices() {
    for (key, word, wanted) in [
        ("early_switch", "eq2", "[ftl] early_switch: "),
        ("life_average", "drive", "[ftl] life_average: "),
        ("life_skip", "sometimes", "[ftl] life_skip: "),
        ("death", "dead", "[ftl] death: "),
    ] {
        let e = error(
            "",
            &format!("[ftl]\nzombie = true\nwear_leveling = true\n{key} = \"{word}\"\n[[phase]]\nvolume = 1.0\n"),
        );
        assert!(e.starts_with(wanted) && e.contains(word), "{e}");
    }
    let e = error(
        "",
        "[ftl]\nzombie = true\ndeath = \"dead\"\n[[phase]]\nvolume = 1.0\n",
    );
    assert!(e.contains("did you mean `dead-blocks`"), "{e}");
}

#[test]
fn each_death_rule_has_its_reading_of_the_paper() {
    use crate::config::{DeathRule, EarlySwitch, LifeAverage, LifeSkip};
    let wear = |ftl: &str| {
        let text = format!(
            "[device]\npreset = \"zombienand-synthetic-tlc\"\n[ftl]\n{ftl}\n[[phase]]\nrequests = 1\n"
        );
        Config::from_toml(&text, "test").unwrap().ftl.wear
    };
    let w = wear("");
    assert_eq!(
        (w.death, w.early_switch, w.life_skip, w.life_average),
        (
            DeathRule::Capacity,
            EarlySwitch::Capacity,
            LifeSkip::Strict,
            LifeAverage::Element
        )
    );
    let w = wear("death = \"dead-blocks\"");
    assert_eq!(
        (w.early_switch, w.life_skip, w.dead_block_limit),
        (EarlySwitch::Eq1, LifeSkip::RateLimited, 32)
    );
    // Each can be set apart from the rule.
    let w = wear("death = \"dead-blocks\"\nearly_switch = \"rolling\"\nlife_skip = \"strict\"");
    assert_eq!(
        (w.early_switch, w.life_skip),
        (EarlySwitch::Rolling, LifeSkip::Strict)
    );
}

#[test]
fn a_trace_budget_of_no_distinct_address_is_refused() {
    let trace = std::env::temp_dir().join(format!("nandlab-budget-{}.csv", std::process::id()));
    std::fs::write(&trace, "0,hm,0,Write,0,4096,10\n").unwrap();
    let e = error(
        "",
        &format!(
            "[[phase]]\nkind = \"trace\"\ntrace = {:?}\nunique_bytes = \"0B\"\n",
            trace.display().to_string()
        ),
    );
    std::fs::remove_file(&trace).unwrap();
    assert!(
        e.starts_with("[[phase]] #1 unique_bytes: must be above 0"),
        "{e}"
    );
}
