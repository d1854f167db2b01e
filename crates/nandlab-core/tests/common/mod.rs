//! Helpers shared by integration tests.

use std::path::{Path, PathBuf};

/// `shared/traces/` above the checkout: the real trace samples, which the
/// tests that read them need (they are `#[ignore]`d with the reason, and
/// scripts/test-all runs them where the samples are).
pub fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/traces"))
        .find(|d| d.join("SOURCES.md").is_file())
        .expect("shared/traces/ (the real trace samples) is not above the checkout")
}
