//! Helpers shared by integration tests.

use std::path::{Path, PathBuf};

/// `shared/traces/` above the checkout (the real trace samples); None where
/// they are not installed, and the tests that need them say so and pass.
pub fn samples() -> Option<PathBuf> {
    let found = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/traces"))
        .find(|d| d.join("SOURCES.md").is_file());
    if found.is_none() {
        eprintln!("shared/traces/ not found above the checkout: trace sample tests skipped");
    }
    found
}
