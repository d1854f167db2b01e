//! Config errors: one line naming the key and what was expected, with a
//! "did you mean" for misspelt keys and names.

use std::fmt;

/// A config that cannot run. `key` names where ("[device] channels",
/// "[[phase]] #2 volume"), `message` says what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// The closest of `candidates` to `word`, if close enough to be a likely typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    // A typo is a few characters off: a word far longer than any name is
    // none (a 60 MB one took 15 s to compare).
    if word.len() > MAX_SUGGESTED_LEN {
        return None;
    }
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// The longest word a "did you mean" looks at.
const MAX_SUGGESTED_LEN: usize = 256;

/// A word from the config as a message quotes it: at most 64 characters,
/// then how long it was.
fn quoted(word: &str) -> String {
    let count = word.chars().count();
    if count <= 64 {
        return word.to_string();
    }
    let head: String = word.chars().take(64).collect();
    format!("{head}… ({count} characters)")
}

/// "unknown X `w`, did you mean `y`?" or "..., expected one of: a, b, c".
pub fn unknown(what: &str, word: &str, candidates: &[&str]) -> String {
    let suggestion = did_you_mean(word, candidates.iter().copied());
    let word = quoted(word);
    match suggestion {
        Some(c) => format!("unknown {what} `{word}`, did you mean `{c}`?"),
        None => format!(
            "unknown {what} `{word}`, expected one of: {}",
            candidates.join(", ")
        ),
    }
}

/// Renders a serde path such as `phase[1].volume` or `device.timing.mlc.read_us`
/// as the TOML location a user sees: `[[phase]] #2 volume`, `[device.timing.mlc] read_us`.
pub fn toml_location(path: &str) -> String {
    let mut tables: Vec<String> = Vec::new();
    let mut phase: Option<usize> = None;
    for seg in path.split('.') {
        if let Some(rest) = seg.strip_prefix("phase[") {
            phase = rest.trim_end_matches(']').parse::<usize>().ok();
            continue;
        }
        if let Some(rest) = seg.strip_prefix("job[") {
            if let Ok(j) = rest.trim_end_matches(']').parse::<usize>() {
                tables.push(format!("job #{}", j + 1));
                continue;
            }
        }
        tables.push(seg.to_string());
    }
    if let Some(i) = phase {
        let key = tables.join(" ");
        return format!("[[phase]] #{} {}", i + 1, key)
            .trim_end()
            .to_string();
    }
    match tables.len() {
        0 => String::new(),
        1 if matches!(tables[0].as_str(), "device" | "ftl" | "stats" | "checks") => {
            format!("[{}]", tables[0])
        }
        1 => tables[0].clone(),
        n => format!("[{}] {}", tables[..n - 1].join("."), tables[n - 1]),
    }
}

/// Turns serde's wording into the user's: field lists into "did you mean",
/// Rust type names into plain words.
pub fn polish_serde_message(msg: &str) -> String {
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some((word, tail)) = rest.split_once('`') {
            let expected: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
            return unknown("key", word, &expected);
        }
    }
    let mut m = msg.to_string();
    for (rust, plain) in [
        (
            "expected a nonzero u32",
            "expected a whole number from 1 to 4,294,967,295",
        ),
        (
            "expected u32",
            "expected a whole number from 0 to 4,294,967,295",
        ),
        (
            "expected u64",
            "expected a whole number from 0 to 18,446,744,073,709,551,615",
        ),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
        ("expected a string", "expected a text value in quotes"),
        ("expected a sequence", "expected a list"),
        ("invalid type: floating point `NaN`", "found the float nan"),
        ("invalid type: floating point `inf`", "found the float inf"),
        (
            "invalid type: floating point `-inf`",
            "found the float -inf",
        ),
        ("invalid type: floating point", "found the number"),
        ("invalid type: integer", "found the number"),
        ("invalid type: string", "found the text"),
        ("invalid type: map", "found a table"),
        ("invalid type: sequence", "found a list"),
        ("invalid type: boolean", "found the boolean"),
        ("invalid value: integer", "found the number"),
    ] {
        m = m.replace(rust, plain);
    }
    // serde names the table a key takes by its Rust type ("expected struct RawPhase").
    while let Some(at) = m.find("expected struct ") {
        let name = &m[at + "expected struct ".len()..];
        let end = name
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(name.len());
        m.replace_range(at..at + "expected struct ".len() + end, "expected a table");
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_type_names_become_what_a_config_holds() {
        assert_eq!(
            polish_serde_message("invalid type: integer `1`, expected struct RawPhase"),
            "found the number `1`, expected a table"
        );
    }

    #[test]
    fn locations() {
        assert_eq!(toml_location("device.channels"), "[device] channels");
        assert_eq!(toml_location("phase[1].volume"), "[[phase]] #2 volume");
        assert_eq!(
            toml_location("device.timing.mlc.read_us"),
            "[device.timing.mlc] read_us"
        );
        assert_eq!(toml_location("seed"), "seed");
    }

    #[test]
    fn suggestions() {
        let m = polish_serde_message("unknown field `chanels`, expected one of `channels`, `cell`");
        assert_eq!(m, "unknown key `chanels`, did you mean `channels`?");
    }
}
