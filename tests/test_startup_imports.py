"""Light start-up: a command imports only the heavy modules it uses (docs/performance.md).

Each command runs as a real process (stdout a pipe, as scripts and coding agents run it) and reports
the modules it imported when it exits; a heavy module on a path that does not need it fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# the modules worth guarding: each costs 10–60 ms to import
HEAVY = ("pydantic", "rich", "yaml", "httpx", "anyio", "h11", "filelock", "asyncio", "frontmatter", "rapidfuzz",
         "watchfiles")

REPORT = """
import atexit, json, os, runpy, sys
atexit.register(lambda: open(os.environ["IMPORTS_REPORT"], "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["rooms", *sys.argv[1:]]
runpy.run_module("rooms_cli", run_name="__main__")
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    from rooms_cli.board import tasks
    from rooms_cli.project import initialize
    from rooms_cli.store.paths import open_project

    root = tmp_path_factory.mktemp("imports")
    initialize(root, "dev")
    project = open_project(root)
    ids = [tasks.add_task(project, "default", f"task {n}", lane="dev", done="done", by="alice").id for n in range(3)]
    return root, ids


def imported(root: Path, tmp_path: Path, *args: str, env: dict | None = None) -> set[str]:
    report = tmp_path / "imports.json"
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ROOMS_")}
    full_env.update(PYTHONPATH=str(REPO), ROOMS_DIR=str(root), IMPORTS_REPORT=str(report), **(env or {}))
    proc = subprocess.run([sys.executable, "-c", REPORT, *args], env=full_env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return {name.split(".")[0] for name in json.loads(report.read_text())}


def heavy(modules: set[str]) -> set[str]:
    return modules & set(HEAVY)


def test_help_imports_no_heavy_module(project, tmp_path):
    root, _ = project
    assert heavy(imported(root, tmp_path, "--help")) == set()


def test_task_claim_imports_no_heavy_module(project, tmp_path):
    root, ids = project
    assert heavy(imported(root, tmp_path, "task", "claim", ids[0], "--as", "dev", "--json")) == set()


def test_task_next_imports_no_heavy_module(project, tmp_path):
    root, _ = project
    assert heavy(imported(root, tmp_path, "task", "next", "--as", "dev", "--json")) == set()


def test_board_json_imports_no_heavy_module(project, tmp_path):
    root, _ = project
    assert heavy(imported(root, tmp_path, "board", "--json")) == set()


def test_board_table_piped_does_not_need_pydantic_or_yaml(project, tmp_path):
    """Piped, the table still renders through rich; nothing else heavy."""
    root, _ = project
    assert heavy(imported(root, tmp_path, "board")) <= {"rich"}


def test_send_imports_no_heavy_module(project, tmp_path):
    root, _ = project
    assert heavy(imported(root, tmp_path, "send", "--to", "dev", "hello", "--as", "alice", "--json")) == set()


def test_yaml_is_read_only_when_no_flag_or_variable_names_who_acts(project, tmp_path):
    root, ids = project
    assert "yaml" not in imported(root, tmp_path, "task", "show", ids[1], "--json", env={"ROOMS_AGENT": "dev"})


def test_chat_on_the_offline_model_imports_no_network_client(project, tmp_path):
    root, _ = project
    modules = imported(root, tmp_path, "chat", "@dev how is the deploy going?")
    assert heavy(modules) & {"httpx", "anyio", "h11", "pydantic"} == set()
