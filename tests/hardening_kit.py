"""Shared pieces of the hardening tests: a populated project template, snapshots, a checked runner.

The template is built once per test session by `rooms demo` (every part leaves files: a chat
transcript, board tasks, group logs, inboxes, memories, a finished spawn) plus a saved transcript
and a queued roundtable; each test works on its own copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import rooms_env

BAD_IDS = ("../x", "a/b", "A", "")
INVOCATIONS = [0]  # commands run in-process by the hardening tests of this session (reported by the matrix)


def rooms_proc(*args: str, env: dict | None = None, cwd=None, timeout: float = 120, input: str | None = None):
    proc = subprocess.run(
        [sys.executable, "-m", "rooms_cli", *map(str, args)],
        input=input, capture_output=True, text=True, env=rooms_env(env), timeout=timeout, cwd=cwd,
    )
    return proc


def build_template(root: Path) -> Path:
    env = {"ROOMS_SEED": "7", "ROOMS_AGENT": "you"}
    for key in ("ROOMS_DIR", "ROOMS_NOW", "ROOMS_ROOM"):
        os.environ.pop(key, None)
    demo = rooms_proc("demo", "--dir", root, env=env)
    assert demo.returncode == 0, demo.stderr
    env["ROOMS_DIR"] = str(root)
    for args in (("room", "save", "--room", "demo-chat"), ("roundtable", "queue", "standup", "--topic", "what next"),
                 ("status", "set", "reviewing"), ("task", "add", "Spare task", "--lane", "judge", "--done", "a verdict"),
                 ("group", "spawn-mixed", "jury", "--profiles", "analyst,judge"),
                 ("group", "spawn", "bench", "--profile", "scribe"),
                 ("agent", "new", "counsel", "--owner", "alice", "--tags", "legal"),
                 *[("group", "broadcast", g, "--objective", "ship on Friday?", "--output-format", "yes or no",
                    "--tool-guidance", "none", "--boundaries", "no new features") for g in ("race", "vote")]):
        proc = rooms_proc(*args, env=env)
        assert proc.returncode == 0, (args, proc.stderr)
    return root


_built: list[Path] = []


@pytest.fixture(scope="session")
def template(tmp_path_factory) -> Path:
    """The populated project, built once per test process (every module importing it shares it)."""
    if not _built:
        _built.append(build_template(tmp_path_factory.mktemp("template") / "proj"))
    return _built[0]


@pytest.fixture
def populated(template, tmp_path, monkeypatch) -> Path:
    """A private copy of the template; ROOMS_DIR points at it, the acting identity is `you`."""
    root = tmp_path / "proj"
    shutil.copytree(template, root, symlinks=True, ignore=shutil.ignore_patterns("*.lock"))
    monkeypatch.setenv("ROOMS_DIR", str(root))
    monkeypatch.setenv("ROOMS_AGENT", "you")
    monkeypatch.chdir(root)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root`, but locks (created on use, out of git), `run/seen/` (when each
    identity last ran a command: local presence, out of git, touched before a command parses its flags),
    the group replay caches in `run/groups/` (local, out of git, refreshed by any read of a group), the
    board's snapshot and open index in `run/board/` and the unread cursors in `run/inbox/` (the same) and
    `run/parsed.json` (parsed YAML kept on any read, store/parsed.py)."""
    out = {}
    for p in sorted(Path(root).rglob("*")):
        if (p.is_file() and not p.is_symlink() and not p.name.endswith(".lock") and p.parent.name != "seen"
                and not (p.parent.name in ("groups", "board", "inbox") and p.parent.parent.name == "run")
                and p.relative_to(root).as_posix() != ".rooms/run/parsed.json"):
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def changed_files(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str


def invoke(args, input: str | None = None) -> Outcome:
    """Run the app in-process; an exception escaping the app's own handler is re-raised."""
    from typer.testing import CliRunner

    from rooms_cli.cli import output
    from rooms_cli.cli.app import app
    from rooms_cli.store import jsonl

    INVOCATIONS[0] += 1
    output.reset()
    jsonl._warned.clear()  # a real process warns once per bad line; so does each invocation here
    result = CliRunner().invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)
    output.reset()
    return Outcome(result.exit_code, result.stdout, result.stderr)


def problems_with_error(out: Outcome, codes=(1,)) -> list[str]:
    """What is wrong with an error outcome: exit code, traceback, internal error, not one clear line."""
    found = []
    if out.exit_code not in codes:
        found.append(f"exit code {out.exit_code}, expected one of {codes}")
    err = out.stderr
    if "Traceback" in err or "Traceback" in out.stdout:
        found.append("a traceback")
    if "internal error" in err:
        found.append("an internal error (a bug, not a clear sentence)")
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("warning:")]
    if out.exit_code == 2 and not err.startswith("error: "):
        # click's usage error: usage lines, then exactly one `Error: …` line
        errs = [ln for ln in lines if ln.startswith("Error:")]
        if len(errs) != 1:
            found.append(f"usage error without one 'Error:' line: {err!r}")
    elif out.exit_code != 0 and lines and lines[-1].startswith('{"error"'):
        try:
            error = json.loads(lines[-1])["error"]
            if not error["message"] or not error["code"]:
                found.append(f"a JSON error without code or message: {lines[-1]}")
        except (ValueError, KeyError, TypeError):
            found.append(f"a broken JSON error: {lines[-1]!r}")
    elif out.exit_code != 0:
        if len(lines) != 1 or not lines[0].startswith("error: ") or len(lines[0]) < 20:
            found.append(f"not one clear error line on stderr: {err!r}")
    return found
