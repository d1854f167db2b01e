"""The claims: a module per document (or group of documents), each declaring its runs and checks."""

from __future__ import annotations

import importlib

from check_docs.model import Registry

MODULES = ("readme", "benchmarks", "matrix", "qualify", "zombienand", "power_loss", "retention_relaxation",
           "traces", "read_disturb", "poster_states", "examples")
"""Every claims module, in the order their findings print."""


def registry() -> Registry:
    r = Registry()
    for name in MODULES:
        importlib.import_module(f"check_docs.claims.{name}").declare(r)
    return r
