//! The config tree between the text and the typed config. A config is read
//! into a `serde_json::Value` (presets and `[[phase.job]]` keys are merged
//! there), which cannot hold `nan` or `±inf`: left alone, such a number would
//! become `null`, which every key takes for "not given". So TOML's `nan`,
//! `inf`, `-inf` and JSON's `NaN`, `Infinity`, `-Infinity` (as Python's json
//! module writes them) are kept in the tree as marker strings, and [`Tree`]
//! deserialises the tree giving each marker back as the number it stands
//! for: a key that takes numbers refuses it ("must be a finite number, found
//! nan"), any other key by its type ("found the float nan, expected a whole
//! number").

use serde::de::value::{Error, MapDeserializer, SeqDeserializer};
use serde::de::{Error as _, IntoDeserializer, Visitor};
use serde::Deserializer;
use serde_json::Value;
use std::borrow::Cow;

/// The marker strings (starting with a NUL, which no config value can hold)
/// and the numbers they stand for.
const MARKERS: [(&str, f64, &str); 3] = [
    ("\0nandlab:nan", f64::NAN, "nan"),
    ("\0nandlab:inf", f64::INFINITY, "inf"),
    ("\0nandlab:-inf", f64::NEG_INFINITY, "-inf"),
];

/// The marker standing for `x`, a number that is not finite.
fn marker(x: f64) -> &'static str {
    match x {
        x if x.is_nan() => MARKERS[0].0,
        x if x > 0.0 => MARKERS[1].0,
        _ => MARKERS[2].0,
    }
}

/// If `v` stands for a number that is not finite: that number and its TOML spelling.
pub fn non_finite(v: &Value) -> Option<(f64, &'static str)> {
    let s = v.as_str()?;
    MARKERS
        .iter()
        .find(|(m, ..)| *m == s)
        .map(|&(_, x, name)| (x, name))
}

/// A TOML document as a tree, numbers that are not finite kept as markers.
pub fn from_toml(text: &str) -> Result<Value, toml::de::Error> {
    let mut table: toml::Table = toml::from_str(text)?;
    for (_, v) in table.iter_mut() {
        mark_toml(v);
    }
    Ok(serde_json::to_value(table).expect("a TOML table is a JSON tree"))
}

fn mark_toml(v: &mut toml::Value) {
    match v {
        toml::Value::Float(x) if !x.is_finite() => *v = toml::Value::String(marker(*x).into()),
        toml::Value::Array(items) => items.iter_mut().for_each(mark_toml),
        toml::Value::Table(t) => t.iter_mut().for_each(|(_, v)| mark_toml(v)),
        _ => {}
    }
}

/// A JSON document as a tree; `NaN`, `Infinity` and `-Infinity` outside
/// strings (not JSON, but what Python's json module writes for such floats)
/// are kept as markers.
pub fn from_json(text: &str) -> serde_json::Result<Value> {
    serde_json::from_str(&mark_json(text))
}

/// `text` with each bare `NaN`, `Infinity`, `-Infinity` replaced by its
/// marker in quotes (NUL escaped, as JSON wants it).
fn mark_json(text: &str) -> Cow<'_, str> {
    const TOKENS: [(&str, f64); 3] = [
        ("NaN", f64::NAN),
        ("-Infinity", f64::NEG_INFINITY),
        ("Infinity", f64::INFINITY),
    ];
    if !text.contains("NaN") && !text.contains("Infinity") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 64);
    let (mut in_string, mut escaped, mut copied) = (false, false, 0);
    let mut i = 0;
    while i < text.len() {
        let b = text.as_bytes()[i];
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if let Some(&(token, x)) = TOKENS
            .iter()
            .find(|(t, _)| text.as_bytes()[i..].starts_with(t.as_bytes()))
        {
            out.push_str(&text[copied..i]);
            out.push_str(&format!("\"{}\"", marker(x).replace('\0', "\\u0000")));
            i += token.len();
            copied = i;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Deserialises a config tree, markers as the numbers they stand for.
#[derive(Clone, Copy)]
pub struct Tree<'a>(pub &'a Value);

impl<'de> IntoDeserializer<'de, Error> for Tree<'de> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> Tree<'de> {
    /// For a type that takes no floats: a marker is the float it stands for
    /// (which the visitor refuses, saying what it expected).
    fn typed<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match non_finite(self.0) {
            Some((x, _)) => visitor.visit_f64(x),
            None => self.deserialize_any(visitor),
        }
    }
}

/// `deserialize_*` methods that go through [`Tree::typed`].
macro_rules! typed {
    ($($method:ident)*) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.typed(visitor)
        })*
    };
}

impl<'de> Deserializer<'de> for Tree<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => visitor.visit_u64(u),
                (None, Some(i)) => visitor.visit_i64(i),
                _ => visitor.visit_f64(n.as_f64().expect("a JSON number is an f64")),
            },
            Value::String(s) => match non_finite(self.0) {
                Some((_, name)) => Err(Error::custom(format!(
                    "must be a finite number, found {name}"
                ))),
                None => visitor.visit_borrowed_str(s),
            },
            Value::Array(items) => {
                let mut seq = SeqDeserializer::new(items.iter().map(Tree));
                let v = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(v)
            }
            Value::Object(map) => {
                let mut map = MapDeserializer::new(map.iter().map(|(k, v)| (k.as_str(), Tree(v))));
                let v = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(v)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    typed! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_char
        deserialize_str deserialize_string
    }

    serde::forward_to_deserialize_any! {
        i128 u128 f32 f64 bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_tokens_outside_strings_become_markers() {
        let v =
            from_json(r#"{"a": NaN, "b": [-Infinity, Infinity], "c": "NaN \" Infinity"}"#).unwrap();
        assert_eq!(non_finite(&v["a"]).map(|m| m.1), Some("nan"));
        assert_eq!(non_finite(&v["b"][0]).map(|m| m.1), Some("-inf"));
        assert_eq!(non_finite(&v["b"][1]).map(|m| m.1), Some("inf"));
        assert_eq!(v["c"], "NaN \" Infinity");
        // Text that is not JSON is a syntax error, wherever its bytes fall.
        assert!(from_json("{\"a\": éNaN}").is_err());
        assert!(from_json("{\"a\": NaNé}").is_err());
    }

    #[test]
    fn toml_floats_that_are_not_finite_become_markers() {
        let v = from_toml("a = nan\n[t]\nb = [-inf, 1.5]\nc = +inf\n").unwrap();
        assert_eq!(non_finite(&v["a"]).map(|m| m.1), Some("nan"));
        assert_eq!(non_finite(&v["t"]["b"][0]).map(|m| m.1), Some("-inf"));
        assert_eq!(v["t"]["b"][1], 1.5);
        assert_eq!(non_finite(&v["t"]["c"]).map(|m| m.1), Some("inf"));
    }
}
