"""A small harness for merge tests with real git: one origin, N clones, rooms run inside each.

    from gitclones import GitClones

    def test_x(tmp_path):
        world = GitClones(tmp_path, example="dev")   # origin + a seed commit with `rooms init`
        a, b = world.clone("a"), world.clone("b")
        a.rooms("send", "hi", "--to", "reviewer", as_="carol")          # in-process CLI, --json parsed
        b.rooms("status", "set", "busy", as_="dave", now="2026-01-01T10:00:00Z")
        a.commit("a"); b.commit("b")
        b.pull(a)                      # `git pull <a> main`; asserts no conflict (both sides committed)
        a.sync(); b.sync()             # through origin: pull --no-rebase, then push
        world.assert_no_conflicts()    # no conflict markers in any clone's .rooms

Each clone is a real `git clone` in its own directory; `rooms` runs in-process (typer's CliRunner,
fast enough for hypothesis) with `ROOMS_DIR` pointing at the clone, `ROOMS_AGENT` from `as_=` and
`ROOMS_NOW` from `now=`. Pass `process=True` to run the real `python -m rooms_cli` instead.
A failed merge raises `MergeConflict` with the conflicted paths and git's output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path

HAVE_GIT = shutil.which("git") is not None
MARKER_RE = re.compile(rb"^(<{7}|={7}|>{7})( |$)", re.M)


class MergeConflict(AssertionError):
    """git could not merge: the conflicted paths and git's own words."""


def _git_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(home),
        "GIT_TERMINAL_PROMPT": "0",
    })
    return env


@dataclass
class Result:
    """One rooms run: exit code, output, and the parsed JSON document when there is one."""

    exit_code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)

    def err_json(self):
        return json.loads(self.stderr.strip().splitlines()[-1])


class Clone:
    def __init__(self, world: GitClones, path: Path):
        self.world = world
        self.path = path
        self.name = path.name

    def __repr__(self) -> str:
        return f"Clone({self.name})"

    # --- git -----------------------------------------------------------------------------------
    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.world.git(self.path, *args, check=check)

    def commit(self, message: str | None = None) -> bool:
        """Commit everything (locks and temp files stay out by the .gitignore); False: nothing to commit."""
        self.git("add", "-A")
        if not self.git("status", "--porcelain").stdout.strip():
            return False
        self.git("commit", "-q", "-m", message or f"work on {self.name}")
        return True

    def pull(self, other: Clone | None = None) -> None:
        """Commit (both sides), then merge `other`'s main (or origin's) into this clone; raise
        MergeConflict when git cannot."""
        self.commit()
        if other is not None:
            other.commit()
        source = str(other.path) if other is not None else "origin"
        proc = self.git("pull", "-q", "--no-rebase", "--no-edit", source, "main", check=False)
        if proc.returncode != 0:
            conflicted = self.git("diff", "--name-only", "--diff-filter=U", check=False).stdout.split()
            raise MergeConflict(f"{self.name}: git pull {source} failed; conflicted: {conflicted}\n{proc.stdout}{proc.stderr}")
        self.assert_no_conflicts()

    def push(self) -> None:
        self.git("push", "-q", "origin", "main")

    def sync(self) -> None:
        """Commit, merge origin's main, push: what a user does to share their work."""
        self.pull()
        self.push()

    def conflicted_files(self) -> list[str]:
        """Files under .rooms/ (and .rooms.yaml) holding git conflict markers."""
        found = []
        for path in sorted(self.path.rglob("*")):
            rel = path.relative_to(self.path)
            if rel.parts[0] not in (".rooms", ".rooms.yaml") or not path.is_file():
                continue
            if MARKER_RE.search(path.read_bytes()):
                found.append(str(rel))
        return found

    def assert_no_conflicts(self) -> None:
        bad = self.conflicted_files()
        if bad:
            raise MergeConflict(f"{self.name}: conflict markers in {bad}")

    # --- rooms ---------------------------------------------------------------------------------
    def env(self, as_: str | None = None, now: str | None = None, extra: dict | None = None) -> dict:
        env = {"ROOMS_DIR": str(self.path)}
        if as_ is not None:
            env["ROOMS_AGENT"] = as_
        if now is not None:
            env["ROOMS_NOW"] = now
        env.update(extra or {})
        return env

    def run(self, *args: str, as_: str | None = None, now: str | None = None, input: str | None = None,
            env: dict | None = None, process: bool = False) -> Result:
        """Run `rooms ARGS` in this clone; the raw result (no exit code check)."""
        full_env = self.env(as_, now, env)
        args = tuple(str(a) for a in args)
        if process:
            from conftest import rooms_env

            proc_env = {k: v for k, v in rooms_env().items() if not k.startswith("ROOMS_")}
            proc_env.update(full_env)
            proc = subprocess.run([sys.executable, "-m", "rooms_cli", *args], input=input, capture_output=True,
                                  text=True, env=proc_env, cwd=self.path, timeout=120)
            return Result(proc.returncode, proc.stdout, proc.stderr)
        from typer.testing import CliRunner

        from rooms_cli.cli import output
        from rooms_cli.cli.app import app

        # unset what the caller did not give, so one clone's identity never leaks into the next run
        for key in ("ROOMS_AGENT", "ROOMS_NOW"):
            full_env.setdefault(key, None)  # type: ignore[arg-type]
        output.reset()
        try:
            result = CliRunner().invoke(app, list(args), input=input, env=full_env, catch_exceptions=False)
        finally:
            output.reset()
        return Result(result.exit_code, result.stdout, result.stderr)

    def rooms(self, *args: str, as_: str | None = None, now: str | None = None, code: int = 0,
              json_output: bool = True, **kw):
        """Run `rooms ARGS [--json]`, assert the exit code, return the parsed JSON (or error JSON)."""
        if json_output:
            args = (*args, "--json")
        result = self.run(*args, as_=as_, now=now, **kw)
        assert result.exit_code == code, (
            f"{self.name}: rooms {' '.join(map(str, args))} exited {result.exit_code}, expected {code}\n"
            f"stdout: {result.stdout}\nstderr: {result.stderr}"
        )
        if not json_output:
            return result
        if code == 0:
            return result.json() if result.stdout.strip() else None
        return result.err_json()


class GitClones:
    """A bare origin seeded with an initialized project, and a factory of clones of it."""

    def __init__(self, tmp_path: Path, *, example: str | None = "dev", setup=None):
        self.base = Path(tmp_path)
        self.home = self.base / "home"
        self.home.mkdir(exist_ok=True)
        self.origin = self.base / "origin.git"
        self.clones: list[Clone] = []
        seed = self.base / "seed"
        seed.mkdir()
        from rooms_cli.project.init import initialize

        initialize(seed, example=example)
        if setup is not None:
            setup(Clone(self, seed))
        self.git(self.base, "init", "-q", "--bare", "-b", "main", str(self.origin))
        self.git(seed, "init", "-q", "-b", "main")
        self.git(seed, "add", "-A")
        self.git(seed, "commit", "-q", "-m", "seed")
        self.git(seed, "remote", "add", "origin", str(self.origin))
        self.git(seed, "push", "-q", "origin", "main")

    def git(self, cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        # no background gc/maintenance: it would outlive the test and race the temporary directory's removal
        quiet = ["-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "core.fsync=none"]
        proc = subprocess.run(["git", *quiet, *args], cwd=cwd, capture_output=True, text=True, env=_git_env(self.home), timeout=180)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} in {cwd}: {proc.stdout}{proc.stderr}")
        return proc

    def clone(self, name: str) -> Clone:
        path = self.base / name
        self.git(self.base, "clone", "-q", str(self.origin), str(path))
        clone = Clone(self, path)
        self.clones.append(clone)
        return clone

    def assert_no_conflicts(self) -> None:
        for clone in self.clones:
            clone.assert_no_conflicts()


def merge_in_direction(direction: str, a: Clone, b: Clone) -> None:
    """The random tests' merge step: "a<b" (a pulls b), "b<a" (b pulls a), else both ways."""
    if direction == "a<b":
        a.pull(b)
    elif direction == "b<a":
        b.pull(a)
    else:
        merge_both_ways(a, b)


def merge_both_ways(a: Clone, b: Clone) -> None:
    """Commit both, then merge each into the other (a pulls b, b pulls the pre-merge a): the two
    merges put the lines of the union in different orders, which readers must not notice."""
    a.commit()
    b.commit()
    a_head = a.git("rev-parse", "HEAD").stdout.strip()
    a.pull(b)
    # b merges a's pre-merge commit, so each side merges the other's work in its own direction
    b.git("fetch", "-q", str(a.path), a_head)
    proc = b.git("merge", "-q", "--no-edit", "FETCH_HEAD", check=False)
    if proc.returncode != 0:
        conflicted = b.git("diff", "--name-only", "--diff-filter=U", check=False).stdout.split()
        raise MergeConflict(f"{b.name}: merge of {a.name} failed; conflicted: {conflicted}\n{proc.stdout}{proc.stderr}")
    b.assert_no_conflicts()


def run_random_scenario(ops: Sequence, *, example: str | None, model, apply: Callable, check: Callable,
                        figures: MutableMapping[str, int], setup: Callable | None = None) -> None:
    """One hypothesis example of the random merge tests: an origin and two clones, `apply` each
    operation (which commits and merges at random), `check` the model after the last merge, and
    no conflict anywhere; counts go into `figures` (written to $GIT_PROPS_FIGURES when set).
    `setup(seed)` runs in the seed project before the first commit (GitClones)."""
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        world = GitClones(Path(tmp), example=example, setup=setup)
        clones = (world.clone("a"), world.clone("b"))
        for op in ops:
            apply(op, clones, model)
        check(clones, model)
        world.assert_no_conflicts()
        figures["examples"] += 1
        figures["operations"] += model.operations
        figures["merges"] += model.merges + 2
    if os.environ.get("GIT_PROPS_FIGURES"):
        Path(os.environ["GIT_PROPS_FIGURES"]).write_text(repr(figures))
