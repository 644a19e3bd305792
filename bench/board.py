"""Board benchmarks: claim latency (process and library), claims/s under contention, board reads.

    python bench/board.py            # prints a table; takes about a minute on 2 cores

Ratios are measured inside one run (a board of 10 000 tasks vs 10) so the machine's speed cancels out.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rooms_cli.board import claims, tasks  # noqa: E402
from rooms_cli.project.init import initialize  # noqa: E402
from rooms_cli.store.paths import open_project  # noqa: E402

ROOM = "default"


ADD_SECONDS: list[float] = []


def make_board(size: int, lanes: int = 10):
    root = Path(tempfile.mkdtemp(prefix=f"rooms-bench-{size}-"))
    initialize(root)
    project = open_project(root)
    ids = []
    for n in range(size):
        start = time.perf_counter()
        ids.append(tasks.add_task(project, ROOM, f"task {n}", lane=f"agent{n % lanes}", done="it is done", by="bench",
                                  order=n).id)
        ADD_SECONDS.append(time.perf_counter() - start)
    return project, ids


def ready_work(project, lane: str, runs: int = 5) -> float:
    """The claimable tasks of one lane, in order (what `task next` reads before claiming)."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        ready = [t for t in tasks.lane_order(tasks.load_board(project, ROOM, lane=lane, claimable=True)) if t.claimable]
        samples.append(time.perf_counter() - start)
        assert ready
    return median_ms(samples)


def env_for(project) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["ROOMS_DIR"] = str(project.root)
    return env


def run_process(args: list[str], env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr}")
    return elapsed


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def library_claims(project, ids: list[str], count: int) -> float:
    picked = ids[:: max(1, len(ids) // count)][:count]
    samples = []
    for task_id in picked:
        start = time.perf_counter()
        claims.claim_task(project, ROOM, task_id, agent="bench")
        samples.append(time.perf_counter() - start)
    return median_ms(samples)


def process_claims(project, ids: list[str], count: int) -> float:
    env = env_for(project)
    picked = ids[-count:]
    return median_ms([run_process(["-m", "rooms_cli", "task", "claim", t, "--as", "bench", "--json"], env) for t in picked])


WORKER = r"""
import sys
from rooms_cli.board import claims
from rooms_cli.store.paths import open_project
project = open_project()
n = 0
while claims.next_task(project, "default", agent="agent0", plate=sys.argv[1]) is not None:
    n += 1
print(n)
"""


def contended_claims_per_second(tasks_in_lane: int, procs: int = 8) -> tuple[float, int]:
    project, _ids = make_board(tasks_in_lane, lanes=1)
    env = env_for(project)
    start = time.perf_counter()
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, f"w{i}"], env=env, stdout=subprocess.PIPE, text=True)
               for i in range(procs)]
    counts = [int(w.communicate()[0].strip() or 0) for w in workers]
    elapsed = time.perf_counter() - start
    assert sum(counts) == tasks_in_lane, counts
    return sum(counts) / elapsed, sum(1 for c in counts if c)


def contended_cli_claims_per_second(tasks_in_lane: int, procs: int = 8) -> float:
    """8 shell loops of the real `rooms task next` command sharing one lane."""
    project, _ids = make_board(tasks_in_lane, lanes=1)
    env = {**env_for(project), "PY": sys.executable}
    loop = 'while [ "$("$PY" -m rooms_cli task next --as agent0 --json)" != "null" ]; do :; done'
    start = time.perf_counter()
    shells = [subprocess.Popen(["sh", "-c", loop], env=env) for _ in range(procs)]
    for shell in shells:
        shell.wait()
    elapsed = time.perf_counter() - start
    assert all(t.status == "doing" for t in tasks.load_board(project, ROOM))
    return tasks_in_lane / elapsed


def board_json(project, runs: int = 5) -> tuple[float, float]:
    """(median ms of `rooms board --json`, median ms of the library call), cache warm."""
    from rooms_cli.board.render import board_view

    env = env_for(project)
    run_process(["-m", "rooms_cli", "board", "--json"], env)  # warms the local snapshot
    proc = median_ms([run_process(["-m", "rooms_cli", "board", "--json"], env) for _ in range(runs)])
    lib = []
    for _ in range(runs):
        start = time.perf_counter()
        json.dumps(board_view(project, ROOM))
        lib.append(time.perf_counter() - start)
    return proc, median_ms(lib)


def main() -> None:
    rows: list[tuple[str, str]] = []
    env = dict(os.environ)
    base = median_ms([run_process(["-c", "pass"], env) for _ in range(5)])
    rows.append(("python -c pass (process baseline)", f"{base:.1f} ms"))

    small, small_ids = make_board(10)
    large, large_ids = make_board(10_000)
    medium, _ = make_board(1_000)

    rows.append(("add a task, library call (median over 11 010)", f"{median_ms(ADD_SECONDS):.2f} ms"))
    tasks.load_board(large, ROOM)  # build the snapshot once, as any earlier read would have
    rows.append(("ready work: claimable tasks of one lane, board of 10 000 (library)", f"{ready_work(large, 'agent3'):.0f} ms"))
    lib_small = library_claims(small, small_ids, 10)
    lib_large = library_claims(large, large_ids, 200)
    rows.append(("claim, library call, board of 10 (median)", f"{lib_small:.2f} ms"))
    rows.append(("claim, library call, board of 10 000 (median)", f"{lib_large:.2f} ms"))
    rows.append(("claim cost ratio 10 000 / 10 (library)", f"{lib_large / lib_small:.2f}×"))

    small2, small2_ids = make_board(10)
    proc_small = process_claims(small2, small2_ids, 8)
    proc_large = process_claims(large, large_ids, 8)
    rows.append(("`rooms task claim` process, board of 10 (median)", f"{proc_small:.0f} ms"))
    rows.append(("`rooms task claim` process, board of 10 000 (median)", f"{proc_large:.0f} ms"))
    rows.append(("claim cost ratio 10 000 / 10 (process)", f"{proc_large / proc_small:.2f}×"))

    rate, active = contended_claims_per_second(400)
    rows.append((f"claims/s, 8 processes on one lane of 400 (`task next`, {active} won some)", f"{rate:.0f} /s"))

    rows.append(("claims/s, 8 loops of the `rooms task next` command on one lane of 40",
                 f"{contended_cli_claims_per_second(40):.1f} /s"))

    for label, project in (("10", small), ("1 000", medium), ("10 000", large)):
        proc, lib = board_json(project)
        rows.append((f"`rooms board --json`, {label} tasks (process / library)", f"{proc:.0f} ms / {lib:.1f} ms"))

    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  value")
    print(f"{'-' * width}  -----")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
