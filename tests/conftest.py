"""Shared fixtures: an isolated environment per test, a project, the CLI in-process and as a process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitclones import Result

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path):
    """No ROOMS_* variable or provider key leaks in from the developer's shell."""
    for key in list(os.environ):
        if key.startswith("ROOMS_") or key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "ANTHROPIC_API_KEY", "NO_COLOR"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("USER", "tester")
    monkeypatch.setenv("ROOMS_LOCK_TIMEOUT", "20")
    from rooms_cli.cli import output
    from rooms_cli.models.base import forget_servers

    output.reset()
    forget_servers()  # what one test's server taught the provider layer (a window, a refused field)
    yield             # must not reach the next test's server on the same reused port
    output.reset()


@pytest.fixture
def project_dir(tmp_path, monkeypatch) -> Path:
    """An initialized project with the `roundtable` and `dev` example agents; ROOMS_DIR points at it."""
    from rooms_cli.project.init import initialize

    root = tmp_path / "proj"
    root.mkdir()
    initialize(root, example="roundtable")
    initialize(root, example="dev")
    monkeypatch.chdir(root)
    monkeypatch.setenv("ROOMS_DIR", str(root))
    return root


@pytest.fixture
def project(project_dir):
    from rooms_cli.store.paths import open_project

    return open_project(project_dir)


Run = Result  # one rooms run: exit code, output, parsed JSON (the git harness's record, not a copy)


@pytest.fixture
def cli():
    """Invoke `rooms` in-process (typer's CliRunner): cli("board", "--json") -> Run."""
    from typer.testing import CliRunner

    from rooms_cli.cli import output
    from rooms_cli.cli.app import app

    def invoke(*args: str, input: str | None = None, env: dict | None = None) -> Run:
        output.reset()
        result = CliRunner().invoke(app, [str(a) for a in args], input=input, env=env, catch_exceptions=False)
        output.reset()
        return Run(result.exit_code, result.stdout, result.stderr)

    return invoke


def rooms_env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items()}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


def live_status(project_dir: Path, *args: str, expect: str, timeout: float = 30) -> int:
    """Run `rooms ARGS` in a real terminal (24×160), wait for output matching the regex `expect` (a live
    status line), then for its end; its exit status."""
    import pexpect

    env = rooms_env({"ROOMS_DIR": str(project_dir), "NO_COLOR": "1", "TERM": "xterm"})
    child = pexpect.spawn(sys.executable, ["-m", "rooms_cli", *args], env=env, encoding="utf-8", timeout=timeout,
                          dimensions=(24, 160))
    child.expect(expect)
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


@pytest.fixture
def rooms():
    """Run `rooms` as a real process: rooms("task", "claim", …, env={…}) -> Run."""

    def run(*args: str, input: str | None = None, env: dict | None = None, timeout: float = 60, cwd=None) -> Run:
        proc = subprocess.run(
            [sys.executable, "-m", "rooms_cli", *map(str, args)],
            input=input, capture_output=True, text=True, env=rooms_env(env), timeout=timeout, cwd=cwd,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    return run


def command_tree() -> dict[str, object]:
    """Every leaf command of the app by its path ("agent show" -> the click command)."""
    import typer

    from rooms_cli.cli.app import app

    found: dict[str, object] = {}

    def walk(cmd, prefix):
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*prefix, name))
        else:
            found[" ".join(prefix)] = cmd

    walk(typer.main.get_command(app), ())
    return found


def add_provider(project_dir, entry: str) -> None:
    """Add `entry` ("name: {…}") under the `providers:` of .rooms.yaml (a key may be given only once)."""
    path = project_dir / ".rooms.yaml"
    text = path.read_text() if path.exists() else ""
    if "\nproviders:\n" in f"\n{text}":
        text = f"\n{text}".replace("\nproviders:\n", f"\nproviders:\n  {entry}\n", 1)[1:]
    else:
        text += f"\nproviders:\n  {entry}\n"
    path.write_text(text)
