"""The README's commands as a newcomer pastes them from a clean clone: every ``nandlab`` line of its
shell blocks names a real command, parses (options, values, choices) and reads only files the
repository ships; the quick ones run."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import click
import pytest

from nandlab.cli import cli

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
# Options whose value is a file or directory the command writes (or a snapshot it makes).
OUTPUTS = {"--out", "--snapshot", "--socket", "--control", "--data"}
# Files a README line makes for a later one (`default-config > my.toml`, a snapshot).
MADE = {"life.snap", "my.toml", "results/rerun.toml"}


def commands() -> list[list[str]]:
    """Each ``nandlab ...`` line of the README's sh blocks, as its arguments (up to a pipe, a
    redirection or ``&``; comments dropped)."""
    lines = []
    for block in re.findall(r"```(?:sh|bash)\n(.*?)```", README, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip()
            if not line.startswith("nandlab "):
                continue
            words = shlex.split(line, comments=True)
            for i, word in enumerate(words):
                if word in ("|", ">", "&", "&&") or word.startswith(("|", ">")):
                    words = words[:i]
                    break
            lines.append(words[1:])
    return lines


def unparsed(ctx: click.Context) -> list[str]:
    """A group's arguments left for its subcommand (click keeps the first apart: ``protected_args`` before
    8.2, ``_protected_args`` since)."""
    kept = vars(ctx)
    return [*kept.get("_protected_args", kept.get("protected_args", [])), *ctx.args]


def test_the_readme_has_commands() -> None:
    assert len(commands()) >= 30


@pytest.mark.parametrize("args", commands(), ids=lambda a: " ".join(a)[:60])
def test_a_readme_command_parses_and_names_only_shipped_files(args: list[str]) -> None:
    ctx = cli.make_context("nandlab", list(args), resilient_parsing=False)
    command: click.Command = cli
    while isinstance(command, click.Group):
        name, command, rest = command.resolve_command(ctx, unparsed(ctx))
        ctx = command.make_context(name, rest, parent=ctx)
    previous = ""
    for word in args:
        looks_like_file = "/" in word or re.search(r"\.(toml|fio|csv|zst|trace|ascii|spc|txt)$", word)
        if looks_like_file and previous not in OUTPUTS and not word.startswith(("/tmp", "tcp:")) \
                and word not in MADE:
            assert (ROOT / word).exists(), f"the README's `nandlab {' '.join(args)}` names {word}, not in the repo"
        previous = word


QUICK = [
    ["presets"],
    ["presets", "mqsim-default"],
    ["default-config"],
    ["chip", "latency", "--chip", "MT29F8G08MAAWC"],
    ["trace", "stats", "examples/traces/hot-cold.csv"],
    ["lifetime", "examples/life.toml", "--compare-baseline"],
    ["fio", "examples/randwrite.fio", "--device", "swissbit-standard", "--capacity", "4GiB", "--json"],
    ["trace", "replay", "examples/traces/hot-cold.csv", "--device", "swissbit-standard", "--capacity", "4GiB",
     "--queue-depth", "8"],
]


@pytest.mark.parametrize("args", QUICK, ids=" ".join)
def test_the_quick_readme_commands_run_from_the_repository(nandlab_cli, args: list[str], monkeypatch) -> None:
    assert args in commands(), "keep this list in step with the README"
    monkeypatch.chdir(ROOT)
    result = nandlab_cli(*args)
    assert result.exit_code == 0, result.stderr


def test_the_compressed_trace_reads_as_the_plain_one(nandlab_cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    plain = nandlab_cli("trace", "stats", "examples/traces/hot-cold.csv", "--json")
    packed = nandlab_cli("trace", "stats", "examples/traces/hot-cold.csv.zst", "--format", "msr", "--skip-bad",
                         "--json", "--out", tmp_path / "stats")
    assert plain.exit_code == packed.exit_code == 0, packed.stderr
    assert '"records": 2000' in plain.stdout.replace("2,000", "2000") and os.listdir(tmp_path / "stats")
