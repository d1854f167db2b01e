//! Config loader tests: presets, errors, defaults.
