"""The `--sync` claim race of issue 41, with real git and real `rooms` processes (no pytest needed).

One remote (a bare repository on disk, or `git daemon` on 127.0.0.1), `clones` clones of it, and
`workers` workers in each, every one a loop of real processes:

    rooms task next --as w --sync --json                     until it prints null
    rooms task done ID --lease-id L --summary … --sync --json

on a board of `tasks` tasks imported with `rooms task import` in the first clone and synced to all.
Then one more round of `rooms sync` in every clone. Optionally a plain `rooms sync` loop runs in every
clone meanwhile, and some `task next --sync` are SIGKILLed mid-way (issue 46: a claim waiting for
its check pushed by another sync of its clone). `race(...)` returns what happened: claims printed
with exit 0, tasks handed to two workers, `done` exiting 0 twice for one task, error codes seen
(`sync_rejected`…), whether every clone reads the same board, and whether the user's branches moved.

Used by tests/test_sync_race.py (a small race) and `python bench/sync.py race` (the issue's shapes).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GIT_ENV = {"GIT_AUTHOR_NAME": "race", "GIT_AUTHOR_EMAIL": "race@example.com", "GIT_COMMITTER_NAME": "race",
           "GIT_COMMITTER_EMAIL": "race@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}


@dataclass
class RaceResult:
    """What one race did (counts over every worker of every clone)."""

    clones: int
    workers: int
    tasks: int
    seconds: float = 0.0
    claims: list[tuple[str, str, str]] = field(default_factory=list)  # (worker, task, lease) printed with exit 0
    done_ok: list[str] = field(default_factory=list)  # tasks whose `done` exited 0
    done_refused: int = 0
    errors: Counter[str] = field(default_factory=Counter)  # error code -> how many commands ended with it
    boards_alike: bool = False
    board_done: int = 0  # tasks done on the (first clone's) final board
    held_by_killed: int = 0  # tasks still held at the end (by a killed worker's claim, which nobody finishes)
    syncs: int = 0  # plain `rooms sync` runs meanwhile (syncers=True)
    conflicts: int = 0  # board conflicts (double claims, stale writes) on the final board
    user_refs_kept: bool = False

    @property
    def doubles(self) -> int:
        """Tasks handed to more than one worker with exit 0."""
        return sum(1 for n in Counter(task for _, task, _ in self.claims).values() if n > 1)

    @property
    def double_completions(self) -> int:
        return sum(1 for n in Counter(self.done_ok).values() if n > 1)

    @property
    def claims_per_second(self) -> float:
        return len(self.claims) / self.seconds if self.seconds else 0.0


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", "-c", "gc.auto=0", "-c", "maintenance.auto=false", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, **GIT_ENV}, timeout=300)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {cwd}: {proc.stdout}{proc.stderr}")
    return proc


def process_env(path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOMS_")}
    env.update(GIT_ENV, PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""), ROOMS_DIR=str(path))
    env.update(extra or {})
    return env


def rooms(path: Path, *args: str, extra: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rooms_cli", *args], cwd=path, env=process_env(path, extra),
                          capture_output=True, text=True, timeout=timeout)


def error_code(proc: subprocess.CompletedProcess[str]) -> str:
    for line in reversed(proc.stderr.strip().splitlines()):
        try:
            return str(json.loads(line)["error"]["code"])
        except (ValueError, KeyError, TypeError):
            continue
    return f"exit {proc.returncode}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Daemon:
    """`git daemon` serving `base` on 127.0.0.1 (push enabled): a networked remote."""

    def __init__(self, base: Path):
        self.port = free_port()
        self.proc = subprocess.Popen(["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
                                      f"--base-path={base}", "--listen=127.0.0.1", f"--port={self.port}", str(base)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"git://127.0.0.1:{self.port}/origin.git"
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if git(base, "ls-remote", self.url, check=False).returncode == 0:
                return
            time.sleep(0.1)
        self.close()
        raise RuntimeError("git daemon did not answer on 127.0.0.1")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def make_world(base: Path, clones: int, url: str | None = None) -> list[Path]:
    """A bare origin seeded with `rooms init --example dev`, and `clones` clones of it (remote `url` if given)."""
    from rooms_cli.project.init import initialize

    seed = base / "seed"
    seed.mkdir(parents=True)
    initialize(seed, example="dev")
    git(base, "init", "-q", "--bare", "-b", "main", "origin.git")
    git(seed, "init", "-q", "-b", "main")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "seed")
    git(seed, "remote", "add", "origin", str(base / "origin.git"))
    git(seed, "push", "-q", "origin", "main")
    paths = []
    for n in range(clones):
        path = base / "abcdefghij"[n]
        git(base, "clone", "-q", str(base / "origin.git"), str(path))
        if url is not None:
            git(path, "remote", "set-url", "origin", url)
        paths.append(path)
    return paths


class _Stopped(Exception):
    """The process of a `--sync` claim, stopped while it waits for its check."""


def claim_left_waiting(path: Path, task: str, agent: str = "dev") -> Any:
    """A `--sync` claim made in the clone at `path` by a process that stopped before its check (killed,
    or still waiting): marked for the arbiter, not pushed. Its Claim (for board.claims.confirm_claim)."""
    from rooms_cli.across.sync import hooks
    from rooms_cli.board import claims
    from rooms_cli.board.model import Lease
    from rooms_cli.board.store import read_events
    from rooms_cli.board.tasks import load_task
    from rooms_cli.store.paths import open_project
    from rooms_cli.store.sync.engine import Syncing

    class Stopped(Syncing):
        def sync(self, project: Any) -> Any:
            raise _Stopped

    project = open_project(path)
    try:
        claims.claim_task(project, "default", task, agent=agent, syncing=Stopped("origin", hooks()))
    except _Stopped:
        pass
    made = [e for e in read_events(project, "default", task) if e.get("ev") == "claim" and e.get("sync") is True][-1]
    lease = Lease(lease_id=made["lease_id"], fence=made["fence"], holder=made["holder"], plate=made["plate"],
                  claimed_at=made["at"], expires_at=made["expires_at"])
    return claims.Claim(task=load_task(project, "default", task), lease=lease, stamp=made["hlc"])


def user_refs(path: Path) -> str:
    """Branches, HEAD and every path outside .rooms/: what sync must never move."""
    refs = git(path, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/remotes").stdout
    status = [line for line in git(path, "status", "--porcelain").stdout.splitlines() if ".rooms" not in line]
    return refs + git(path, "rev-parse", "HEAD").stdout + "\n".join(status)


def board(path: Path) -> list[tuple[str, str, str | None, int]]:
    listed = json.loads(rooms(path, "task", "list", "--json").stdout)
    return sorted((t["id"], t["status"], (t["lease"] or {}).get("lease_id"), len(t["conflicts"])) for t in listed)


def killed_next(path: Path, extra: dict[str, str]) -> None:
    """`task next --sync` as a process SIGKILLed at a random moment (its claim may be made, pushed or neither)."""
    proc = subprocess.Popen([sys.executable, "-m", "rooms_cli", "task", "next", "--as", "w", "--sync", "--json"], cwd=path,
                            env=process_env(path, extra), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.2 + int.from_bytes(os.urandom(1), "big") / 255)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)


def worker(path: Path, name: str, result: RaceResult, lock: threading.Lock, give_up: float, kills: list[int]) -> None:
    """One worker: next, done, until `next` prints null (an error is counted and the loop goes on).
    While `kills` holds a count above 0, a `next` is killed instead (and counted off)."""
    extra = {"ROOMS_INSTANCE": name}
    while time.monotonic() < give_up:
        with lock:
            kill = kills[0] > 0
            kills[0] -= kill
        if kill:
            killed_next(path, extra)
            with lock:
                result.errors["killed"] += 1
            continue
        got = rooms(path, "task", "next", "--as", "w", "--sync", "--json", extra=extra)
        if got.returncode != 0:
            with lock:
                result.errors[error_code(got)] += 1
            continue
        claim = json.loads(got.stdout)
        if claim is None:
            return
        task, lease = claim["task"]["id"], claim["lease_id"]
        with lock:
            result.claims.append((name, task, lease))
        done = rooms(path, "task", "done", task, "--lease-id", lease, "--summary", f"done by {name}", "--sync", "--json",
                     extra=extra)
        with lock:
            if done.returncode == 0:
                result.done_ok.append(task)
            else:
                code = error_code(done)
                result.errors[code] += 1
                if code in ("lease_mismatch", "lease_fenced", "lease_expired"):
                    result.done_refused += 1


def syncer(path: Path, result: RaceResult, lock: threading.Lock, stop: threading.Event) -> None:
    """A plain `rooms sync` again and again in one clone (what cron's tick does), while the workers race."""
    while not stop.is_set():
        got = rooms(path, "sync", "--json")
        with lock:
            result.syncs += 1
            if got.returncode != 0:
                result.errors[f"plain sync: {error_code(got)}"] += 1
        stop.wait(0.2)


def race(clones: int, workers: int, tasks: int, *, network: bool = False, base: Path | None = None,
         keep: bool = False, syncers: bool = False, kills: int = 0) -> RaceResult:
    """Run one race in a fresh temporary world; see the module docstring. `syncers`: a plain `rooms
    sync` loop runs in every clone meanwhile; `kills`: that many `task next --sync` are SIGKILLed at a
    random moment (then the final round of syncs runs twice: a killed claim left here goes out with it)."""
    own = base is None
    root = Path(tempfile.mkdtemp(prefix="rooms-race-")) if base is None else base
    daemon = None
    try:
        paths = make_world(root, clones)
        if network:
            daemon = Daemon(root)
            for path in paths:
                git(path, "remote", "set-url", "origin", daemon.url)
        first = paths[0]
        listing = root / "tasks.jsonl"
        listing.write_text("".join(json.dumps({"title": f"task {n}", "lane": "w", "done": "d"}) + "\n"
                                   for n in range(tasks)))
        imported = rooms(first, "task", "import", str(listing), "--json")
        if imported.returncode != 0:
            raise RuntimeError(imported.stderr)
        for path in paths:
            rooms(path, "sync", "--json").check_returncode()
        before = {path: user_refs(path) for path in paths}
        result = RaceResult(clones, workers, tasks)
        lock = threading.Lock()
        give_up = time.monotonic() + 60 + tasks * 10
        left_to_kill = [kills]
        threads = [threading.Thread(target=worker, args=(path, f"{path.name}{k}", result, lock, give_up, left_to_kill))
                   for path in paths for k in range(workers)]
        stop = threading.Event()
        background = [threading.Thread(target=syncer, args=(path, result, lock, stop)) for path in paths] if syncers else []
        started = time.monotonic()
        for thread in threads + background:
            thread.start()
        for thread in threads:
            thread.join()
        result.seconds = time.monotonic() - started
        stop.set()
        for thread in background:
            thread.join()
        for _ in range(2 if kills else 1):
            for path in paths:
                synced = rooms(path, "sync", "--json")
                if synced.returncode != 0:
                    result.errors[f"final sync: {error_code(synced)}"] += 1
        boards = [board(path) for path in paths]
        result.boards_alike = all(b == boards[0] for b in boards)
        result.board_done = sum(1 for t in boards[0] if t[1] == "done")
        result.held_by_killed = sum(1 for t in boards[0] if t[1] == "doing")
        result.conflicts = sum(t[3] for t in boards[0])
        result.user_refs_kept = all(user_refs(path) == before[path] for path in paths)
        return result
    finally:
        if daemon is not None:
            daemon.close()
        if own and not keep:
            shutil.rmtree(root, ignore_errors=True)
