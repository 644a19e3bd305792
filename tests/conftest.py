"""Shared fixtures: an isolated environment per test, a project, the CLI in-process and as a process.

The suite runs in parallel (pytest-xdist, `-n auto` in pyproject's addopts): every fixture here is
per test or per worker process, and nothing is shared between workers but read-only files (the
model cache, behind a lock). `-n 0` runs it in one process (for a debugger, or `--pdb`, which does so
by itself).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitclones import Result
from hypothesis import settings as hypothesis_settings

REPO = Path(__file__).resolve().parent.parent


def _package_root() -> Path:
    spec = importlib.util.find_spec("rooms_cli")
    assert spec is not None and spec.origin is not None, "rooms_cli is not installed: pip install -e '.[test]'"
    return Path(spec.origin).resolve().parent.parent


# The checkout when this run tests it: a child process is then pointed at it through PYTHONPATH, so a
# worktree's processes run that worktree's code whatever is installed. None when the run tests an
# installed rooms-cli (CI's smoke run of the wheel and the sdist, ROOMS_TEST_INSTALLED=1, from a folder
# without the package): a child then imports what the user installed, and nothing goes on its path.
CHECKOUT = REPO if _package_root() == REPO else None


def checkout_path(*first: str | Path) -> str:
    """PYTHONPATH for a child process: the folders `first`, then the checkout when this run tests it."""
    return os.pathsep.join(str(p) for p in (*first, *([CHECKOUT] if CHECKOUT else [])))
# Workers for `-n auto`: the cores plus one, since many tests wait on a child process, a lock, a
# socket or a sleep rather than compute (measured on 2 cores: see the README's Development section).
EXTRA_WORKERS = 1


# Hypothesis' default deadline (200 ms an example) measures the machine, not the rule a property states:
# with the suite's workers side by side, or on a CI machine half as fast, it fails examples that are right.
hypothesis_settings.register_profile("rooms", deadline=None)
hypothesis_settings.load_profile("rooms")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: PYTEST_XDIST_AUTO_NUM_WORKERS if set, else the usable cores plus EXTRA_WORKERS."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    return len(os.sched_getaffinity(0)) + EXTRA_WORKERS


def pytest_configure(config: pytest.Config) -> None:
    # The suite starts a few thousand Python processes (rooms, MCP servers, workers). Under
    # PYTHONDONTWRITEBYTECODE (some sandboxes and CI images set it) each one compiles the package
    # from source again, and each xdist worker rewrites the asserts of every test module again
    # (about 10 s a worker): write the caches (__pycache__/, ignored by git and by the sdist) anyway.
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if os.environ.get("ROOMS_TEST_INSTALLED") and (CHECKOUT or os.environ.get("PYTHONPATH")):
        raise pytest.UsageError(f"ROOMS_TEST_INSTALLED is set but rooms_cli comes from {_package_root()} "
                                f"(PYTHONPATH={os.environ.get('PYTHONPATH', '')!r}): run from outside the source folder")


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
    from rooms_cli.store import clock

    output.reset()
    forget_servers()  # what one test's server taught the provider layer (a window, a refused field)
    clock.forget()  # a stamp one test's ROOMS_NOW issued must not drag the next test's clock
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


@pytest.fixture
def closed_port():
    """A loopback port that refuses connections for the whole test: bound but never listening, so no
    other test or worker can take it meanwhile (a port probed free and closed again could be)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture(scope="module")
def mcp_reader(tmp_path_factory):
    """One real `rooms mcp --as alice` session shared by a module's tests whose calls change nothing
    (tests/test_mcp.py's Reader: mcp_reader.call(mcp_reader.tools.ok("board"))), on a project of
    the `dev` and `roundtable` examples (mcp_reader.project_dir) that they leave as it is."""
    from rooms_cli.project.init import initialize
    from tests.test_mcp import Reader

    root = tmp_path_factory.mktemp("mcp-reader") / "proj"
    root.mkdir()
    initialize(root, example="roundtable")
    initialize(root, example="dev")
    shared = Reader(root)
    yield shared
    shared.close()


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


# prepended to a `python -c` probe that looks at the process after `main()` returns: the console script
# ends a command that started no thread with os._exit (cli/fast.py `leave`), which here raises SystemExit
RETURN_FROM_MAIN = "import os\ndef _leave(code):\n    raise SystemExit(code)\nos._exit = _leave\n"


def rooms_env(extra: dict | None = None) -> dict:
    """This process's environment for a child `rooms` (or Python) process, with `extra` on top; the
    checkout first on its PYTHONPATH when this run tests the checkout."""
    env = dict(os.environ)
    path = os.pathsep.join(p for p in (checkout_path(), env.get("PYTHONPATH", "")) if p)
    if path:
        env["PYTHONPATH"] = path
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
