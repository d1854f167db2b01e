//! The Python exceptions of the bindings and how engine errors and Rust
//! panics become them: a panic is an `InternalError` with its message and
//! place (never a crash, nor Rust's report on stderr).

use nandlab_core::SimError;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    _core,
    ConfigError,
    PyValueError,
    "A config that cannot run: names the key and what was expected."
);
create_exception!(
    _core,
    TraceError,
    PyValueError,
    "A trace that cannot be read: names the file, the line and the format expected."
);
create_exception!(
    _core,
    SimulationError,
    PyRuntimeError,
    "A run that could not go on."
);

create_exception!(
    _core,
    SnapshotError,
    SimulationError,
    "A snapshot that cannot be written or read: damaged, foreign, from another version, or a file that is not one."
);
create_exception!(
    _core,
    Interrupted,
    SimulationError,
    "A run stopped (by a signal, or its progress callback raising) with its state in a snapshot: `.snapshot` is its path, `__cause__` the exception that stopped it; resume goes on."
);

create_exception!(
    _core,
    InternalError,
    SimulationError,
    "A bug in nandlab (a Rust panic): the message and where; the simulator that hit it is stopped."
);

/// A Rust panic caught before it crossed into Python: its message and place.
#[derive(Debug, Clone)]
pub struct Panicked(pub String);

impl From<Panicked> for PyErr {
    fn from(p: Panicked) -> PyErr {
        InternalError::new_err(p.0)
    }
}

/// Runs `f`, turning a Rust panic into the message of an [`InternalError`]
/// (never a crash, nor a panic crossing into Python).
pub fn guard<T>(f: impl FnOnce() -> T) -> Result<T, Panicked> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        let place = PANIC_PLACE.with(|p| p.take()).unwrap_or_default();
        Panicked(format!(
            "internal error (a bug in nandlab, please report it): {message}{place}"
        ))
    })
}

thread_local! {
    /// Where the last panic on this thread happened (set by the panic hook).
    static PANIC_PLACE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Replaces Rust's default panic report on stderr: the place goes into the
/// Python exception's message instead (one line for the CLI).
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let place = info
            .location()
            .map(|l| format!(" (at {}:{})", l.file(), l.line()));
        PANIC_PLACE.with(|p| *p.borrow_mut() = place);
    }));
}

/// The Python exception for an engine error.
pub fn sim_error(py: Python<'_>, e: SimError, cause: Option<PyErr>) -> PyErr {
    let message = e.to_string();
    match e {
        SimError::Trace(_) => TraceError::new_err(message),
        // Too large for this machine: the config asks too much, as a bounded key's value would.
        SimError::Config(_) | SimError::OutOfMemory { .. } => ConfigError::new_err(message),
        SimError::Snapshot(_) => SnapshotError::new_err(message),
        SimError::Interrupted { snapshot } => {
            let err = Interrupted::new_err(message);
            if let Err(e) = err
                .value(py)
                .setattr("snapshot", snapshot.display().to_string())
            {
                return e;
            }
            err.set_cause(py, cause);
            err
        }
        _ => SimulationError::new_err(message),
    }
}
