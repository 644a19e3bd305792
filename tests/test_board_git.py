"""Board files in git: two real clones work offline, then merge.

Adding and finishing tasks on both sides merges with no conflict; a task claimed on both sides
shows as a double claim on `rooms board` after the merge instead of one claim silently winning.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "",
}


def git(cwd: Path, *args: str) -> str:
    import os

    env = {**os.environ, **GIT_ENV, "HOME": str(cwd)}
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stdout}{proc.stderr}"
    return proc.stdout


@pytest.fixture
def clones(tmp_path, cli):
    """A bare origin holding an initialized project with one shared task, and two clones of it."""
    origin = tmp_path / "origin.git"
    seed = tmp_path / "seed"
    seed.mkdir()
    from rooms_cli.project.init import initialize

    initialize(seed)
    shared = run(cli, seed, "task", "add", "Shared task", "--lane", "worker", "--done", "it works")["id"]
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(seed, "init", "-q", "-b", "main")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "seed")
    git(seed, "remote", "add", "origin", str(origin))
    git(seed, "push", "-q", "origin", "main")
    a, b = tmp_path / "a", tmp_path / "b"
    for clone in (a, b):
        git(tmp_path, "clone", "-q", str(origin), str(clone))
    return a, b, shared


def run(cli, where: Path, *args: str, code: int = 0):
    result = cli(*args, "--json", env={"ROOMS_DIR": str(where)})
    assert result.exit_code == code, result.stderr
    return result.json() if code == 0 else result.err_json()


def commit_and_sync(clone: Path, message: str) -> None:
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", message)
    git(clone, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    git(clone, "push", "-q", "origin", "main")


def finish(cli, where: Path, task_id: str, agent: str) -> None:
    lease = run(cli, where, "task", "claim", task_id, "--as", agent)["lease_id"]
    run(cli, where, "task", "done", task_id, "--lease-id", lease, "--summary", f"done on {where.name}")


def test_tasks_added_and_finished_on_two_clones_merge_without_conflict(clones, cli):
    a, b, shared = clones
    on_a = run(cli, a, "task", "add", "From A", "--lane", "worker", "--done", "a")["id"]
    finish(cli, a, on_a, "worker")
    run(cli, a, "task", "update", shared, "--detail", "detail written on A")
    on_b = run(cli, b, "task", "add", "From B", "--lane", "worker", "--done", "b")["id"]
    finish(cli, b, on_b, "worker")
    run(cli, b, "task", "update", shared, "--title", "Shared task, renamed on B")
    commit_and_sync(a, "work on A")
    commit_and_sync(b, "work on B")  # merges A's work: must not conflict
    assert git(b, "status", "--porcelain") == ""
    board = run(cli, b, "board")
    assert sorted(t["id"] for t in board["done"]) == sorted([on_a, on_b])
    assert board["conflicts"] == []
    merged = run(cli, b, "task", "show", shared)
    assert (merged["title"], merged["detail"]) == ("Shared task, renamed on B", "detail written on A")


def test_a_task_claimed_on_both_clones_shows_as_a_double_claim_after_merge(clones, cli):
    a, b, shared = clones
    lease_a = run(cli, a, "task", "claim", shared, "--as", "worker")["lease_id"]
    lease_b = run(cli, b, "task", "claim", shared, "--as", "worker")["lease_id"]
    run(cli, b, "task", "done", shared, "--lease-id", lease_b, "--summary", "finished on B")
    commit_and_sync(a, "claim on A")
    commit_and_sync(b, "claim and finish on B")
    board = run(cli, b, "board")
    (item,) = board["conflicts"]
    assert item["task_id"] == shared
    kinds = [c["kind"] for c in item["conflicts"]]
    assert "double_claim" in kinds
    message = next(c["message"] for c in item["conflicts"] if c["kind"] == "double_claim")
    assert lease_a in message and lease_b in message
    assert "CONFLICT" in cli("board", env={"ROOMS_DIR": str(b)}).stdout
    assert "conflicts" in cli("board", "--format", "md", env={"ROOMS_DIR": str(b)}).stdout
    # the holder that lost the merge is not the current lease: its writes are refused
    shown = run(cli, b, "task", "show", shared)
    current = shown["lease"]["lease_id"] if shown["lease"] else None
    loser = lease_b if current == lease_a else lease_a
    err = run(cli, b, "task", "renew", shared, "--lease-id", loser, code=3)
    assert err["error"]["code"] in ("lease_mismatch", "lease_fenced")
    # a person acknowledges it; the next claim gets a fence above both
    run(cli, b, "task", "resolve", shared)
    assert run(cli, b, "board")["conflicts"] == []


def test_board_files_are_committed_and_locks_are_not(clones, cli):
    a, _b, shared = clones
    run(cli, a, "task", "claim", shared, "--as", "worker")
    run(cli, a, "board")
    git(a, "add", "-A")
    staged = git(a, "diff", "--cached", "--name-only").split()
    assert any(name.endswith(".jsonl") and "/board/tasks/" in name for name in staged)
    assert not any(name.endswith(".lock") or "/run/" in name for name in staged)
