"""Runs more than one document quotes: declare them here, once, and call ``declare_runs`` from each
claims module that uses them."""

from __future__ import annotations

from check_docs.model import Registry, Run


def declare_runs(r: Registry) -> None:
    r.run(
        Run("default", ["run", "--json", "-q"], cost=11),
        Run("default-gc-until-stop", python="recipes:default_gc_until_stop", cost=12),
        Run("suspend", ["run", "examples/suspend.toml", "--json", "-q"], cost=2),
    )
