//! Checks that a state read back from a file (a snapshot) holds together
//! before anything uses it: arrays as long as the geometry says, every
//! stored index in range, and the settings the config fixes as the config
//! fixes them. A checksum catches damage on the way; these catch a state
//! altered whole (or written by a bug), which would otherwise index out of
//! bounds or run on nonsense. Each state type checks its own fields with
//! these helpers; the messages name the field and what was wrong.

use serde::Serialize;

crate::message_error! {
    /// What does not hold together in a state (read back, or checked after a
    /// step): the message names the field and what is wrong with it.
    pub struct Broken;
}

/// Ok, or what does not hold together.
pub type Checked = Result<(), Broken>;

/// `ok`, or the message `what` builds.
pub fn ensure(ok: bool, what: impl FnOnce() -> String) -> Checked {
    if ok {
        Ok(())
    } else {
        Err(Broken(what()))
    }
}

/// `field` has `expected` entries.
pub fn len(field: &str, actual: usize, expected: u64) -> Checked {
    ensure(actual as u64 == expected, || {
        format!("{field} has {actual} entries where the drive has {expected}")
    })
}

/// Every index in `values` is below `bound` (or NIL, u32::MAX, where `nil_ok`).
pub fn indices<'a>(
    field: &str,
    values: impl IntoIterator<Item = &'a u32>,
    bound: u64,
    nil_ok: bool,
) -> Checked {
    match values
        .into_iter()
        .position(|&v| (v as u64) >= bound && !(nil_ok && v == u32::MAX))
    {
        None => Ok(()),
        Some(i) => Err(Broken(format!(
            "{field}[{i}] is out of range (the drive has {bound})"
        ))),
    }
}

/// `loaded` is as the config makes it (`fresh`): compared as serialized.
pub fn same<T: Serialize>(field: &str, loaded: &T, fresh: &T) -> Checked {
    let bytes = |v: &T| postcard::to_allocvec(v).expect("a state serializes");
    ensure(bytes(loaded) == bytes(fresh), || {
        format!("{field} differs from what its config gives")
    })
}
