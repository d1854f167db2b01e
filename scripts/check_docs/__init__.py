"""check-docs: every figure README.md, BENCHMARKS.md and docs/*/README.md state, re-run and compared
(``scripts/check-docs --help``)."""
