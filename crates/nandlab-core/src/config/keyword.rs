//! Keyword options (`gc = "greedy"`, `pattern = "shuffle"`): each option's
//! names are written once, in a table of (name, meaning). The table reads a
//! word, lists the names, and words the message for a word it does not know
//! ("did you mean" or "one of ..."), so the three cannot drift apart.
//!
//! ```text
//! const GC_SCOPE: Keywords<GcScope> = Keywords::new(
//!     "GC scope",
//!     &[("plane", Is(GcScope::Plane)), ("die", Is(GcScope::Die))],
//! );
//! let scope = GC_SCOPE.parse_or("[ftl] gc_scope", f.gc_scope.as_deref(), GcScope::Plane)?;
//! ```

use super::error::unknown;
use super::ConfigError;
use crate::units::BadValue;

/// What a name in a keyword table stands for.
#[derive(Clone, Copy)]
pub(super) enum Meaning<T> {
    /// This value.
    Is(T),
    /// This value, under another spelling of a listed name: accepted, not listed.
    Alias(T),
    /// A form with arguments, listed as written (`"d-choices:N"`): a word
    /// starting with the form's text up to and including its first `:` is
    /// read by the function, which gives the value or what is wrong.
    Form(fn(&FormWord) -> Result<T, BadValue>),
}

/// A word read by a [`Meaning::Form`].
pub(super) struct FormWord<'w> {
    /// The form as listed (`"d-choices:N"`), for messages.
    pub form: &'w str,
    /// The whole word (`"d-choices:4"`).
    pub word: &'w str,
    /// What follows the form's name and `:` (`"4"`).
    pub args: &'w str,
}

impl FormWord<'_> {
    /// The form's name: its text before the first `:` (`"d-choices"`).
    pub fn name(&self) -> &str {
        self.form.split(':').next().unwrap_or(self.form)
    }
}

/// How a word no entry knows is told.
#[derive(Clone, Copy)]
enum Otherwise {
    /// "unknown WHAT `w`, did you mean `x`?" or "..., expected one of: a, b".
    Unknown(&'static str),
    /// "expected a, b or c, found `w`" (each name in double quotes if `quoted`).
    Expected { quoted: bool },
}

/// One keyword option: its names, in the order messages list them.
pub(super) struct Keywords<'a, T> {
    otherwise: Otherwise,
    table: &'a [(&'a str, Meaning<T>)],
}

impl<'a, T: Copy> Keywords<'a, T> {
    /// An option called `what` in messages ("GC scope"); an unknown word gets
    /// a "did you mean" or the list of names.
    pub const fn new(what: &'static str, table: &'a [(&'a str, Meaning<T>)]) -> Self {
        Keywords {
            otherwise: Otherwise::Unknown(what),
            table,
        }
    }

    /// An option whose unknown words are told "expected a, b or c".
    pub const fn listed(quoted: bool, table: &'a [(&'a str, Meaning<T>)]) -> Self {
        Keywords {
            otherwise: Otherwise::Expected { quoted },
            table,
        }
    }

    /// The names messages list (aliases left out), in table order.
    pub fn names(&self) -> Vec<&'a str> {
        self.table
            .iter()
            .filter(|(_, m)| !matches!(m, Meaning::Alias(_)))
            .map(|(name, _)| *name)
            .collect()
    }

    /// The name listed for `value`, for a message that quotes a setting.
    pub fn name(&self, value: T) -> &'a str
    where
        T: PartialEq,
    {
        self.table
            .iter()
            .find_map(|(name, meaning)| match meaning {
                Meaning::Is(v) if *v == value => Some(*name),
                _ => None,
            })
            .expect("a value the table lists")
    }

    /// What `word` stands for, or the message saying why it stands for nothing.
    pub fn read(&self, word: &str) -> Result<T, BadValue> {
        for (name, meaning) in self.table {
            match meaning {
                Meaning::Is(v) | Meaning::Alias(v) if *name == word => return Ok(*v),
                Meaning::Form(read) => {
                    let prefix = name.find(':').map_or(*name, |i| &name[..=i]);
                    if let Some(args) = word.strip_prefix(prefix) {
                        return read(&FormWord {
                            form: name,
                            word,
                            args,
                        });
                    }
                }
                _ => {}
            }
        }
        Err(self.unknown(word).into())
    }

    /// The message for a word that names nothing.
    pub fn unknown(&self, word: &str) -> String {
        let names = self.names();
        match self.otherwise {
            Otherwise::Unknown(what) => unknown(what, word, &names),
            Otherwise::Expected { quoted } => {
                let names: Vec<String> = names
                    .iter()
                    .map(|n| {
                        if quoted {
                            format!("\"{n}\"")
                        } else {
                            n.to_string()
                        }
                    })
                    .collect();
                let list = match names.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} or {last}", rest.join(", "))
                    }
                    _ => names.concat(),
                };
                format!("expected {list}, found `{word}`")
            }
        }
    }

    /// What `word` stands for; an error at `key` if nothing.
    pub fn parse(&self, key: &str, word: &str) -> Result<T, ConfigError> {
        self.read(word).map_err(|msg| ConfigError::new(key, msg))
    }

    /// As [`Keywords::parse`], with `default` for a key not given.
    pub fn parse_or(&self, key: &str, word: Option<&str>, default: T) -> Result<T, ConfigError> {
        word.map_or(Ok(default), |w| self.parse(key, w))
    }
}

#[cfg(test)]
mod tests {
    use super::Meaning::*;
    use super::*;

    fn double(w: &FormWord) -> Result<u32, BadValue> {
        match w.args.parse::<u32>() {
            Ok(n) => Ok(2 * n),
            Err(_) => Err(format!("{} takes a number, found `{}`", w.form, w.word).into()),
        }
    }

    const NUMBERS: Keywords<u32> = Keywords::new(
        "number",
        &[
            ("one", Is(1)),
            ("uno", Alias(1)),
            ("two", Is(2)),
            ("twice:N", Form(double)),
        ],
    );

    #[test]
    fn names_aliases_and_forms_read_from_one_table() {
        assert_eq!(NUMBERS.names(), ["one", "two", "twice:N"]);
        assert_eq!(NUMBERS.name(1), "one");
        assert_eq!(NUMBERS.read("one"), Ok(1));
        assert_eq!(NUMBERS.read("uno"), Ok(1));
        assert_eq!(NUMBERS.read("twice:21"), Ok(42));
        assert_eq!(
            NUMBERS.read("twice:x"),
            Err("twice:N takes a number, found `twice:x`".into())
        );
        assert_eq!(
            NUMBERS.read("onr"),
            Err("unknown number `onr`, did you mean `one`?".into())
        );
        assert_eq!(
            NUMBERS.read("zzz"),
            Err("unknown number `zzz`, expected one of: one, two, twice:N".into())
        );
        assert_eq!(NUMBERS.parse_or("[n] k", None, 7), Ok(7));
        let e = NUMBERS.parse("[n] k", "zzz").unwrap_err();
        assert_eq!(e.key, "[n] k");
    }

    #[test]
    fn listed_options_say_what_was_expected() {
        let one = Keywords::listed(true, &[("dead", Is(()))]);
        assert_eq!(one.read("x"), Err("expected \"dead\", found `x`".into()));
        let three = Keywords::listed(false, &[("a", Is(1)), ("b", Is(2)), ("c:N", Is(3))]);
        assert_eq!(
            three.read("x"),
            Err("expected a, b or c:N, found `x`".into())
        );
    }
}
