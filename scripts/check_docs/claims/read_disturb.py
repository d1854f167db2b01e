"""docs/read-disturb/README.md's figures."""

from __future__ import annotations

from check_docs.model import Registry


def declare(r: Registry) -> None:
    """Its runs and checks (none yet)."""
