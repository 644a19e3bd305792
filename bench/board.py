"""Board benchmarks: claim latency (process and library), claims/s under contention, board reads.

    python bench/board.py            # prints a table; takes about a minute on 2 cores
    python bench/board.py deps       # ready work: a board of 100 000 tasks and 1 000 dependency edges vs 10
                                     # (BENCH_ROUNDS=11, BENCH_SIZES=10,100000; a few minutes: 100 000 logs)

Ratios are measured inside one run (a board of 10 000 tasks vs 10) so the machine's speed cancels out.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
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
from rooms_cli.store.ids import new_id  # noqa: E402
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


# --- ready work (issue 43): `task next` and `task ready` on 100 000 tasks and 1 000 edges vs 10 tasks -----

OPEN = 10  # open tasks of every board, in lane agent0: the second five wait on the first five
EDGES = 1_000


def _log(task_id: str, n: int, depends_on: list[str], stamp: str = "2026-01-01T00:00:00.000Z") -> bytes:
    """The log of a task done long ago (create, claim, done), written straight as bytes."""
    lease = new_id("l")
    create = {"at": stamp, "by": "bench", "definition_of_done": "it is done", "detail": "", "ev": "create",
              "hlc": f"{stamp}-0000-000001", "lane": f"agent{n % 10}", "order": n, "task": task_id, "title": f"task {n}"}
    if depends_on:
        create["depends_on"] = depends_on
    record = {"artifacts": [], "next": None, "plate": "w/bench", "result_ref": None, "status": "done",
              "summary": f"finished {n}", "task_id": task_id}
    lines = [create,
             {"at": stamp, "by": "w", "ev": "claim", "expires_at": "2099-01-01T00:00:00.000Z", "fence": 1,
              "hlc": f"{stamp}-0001-000001", "holder": "w", "lease_id": lease, "plate": "w/bench"},
             {"at": stamp, "by": "w", "ev": "done", "fence": 1, "hlc": f"{stamp}-0002-000001", "lease_id": lease,
              "record": record}]
    return "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines).encode()


def make_graph_board(size: int) -> Path:
    """`size` tasks: size-OPEN done ones (with EDGES - OPEN dependency edges among them when the board
    is large enough), then OPEN open ones in lane agent0, the second half waiting on the first half,
    the first half waiting on done tasks (on the large board): every board has the same ready work."""
    root = Path(tempfile.mkdtemp(prefix=f"rooms-deps-{size}-"))
    initialize(root)
    project = open_project(root)
    folder = Path(project.path("rooms", ROOM, "board", "tasks"))
    folder.mkdir(parents=True, exist_ok=True)
    done: list[str] = []
    history = size - OPEN
    linked = set(range(1, history, max(1, history // (EDGES - OPEN)))[:EDGES - OPEN]) if history > OPEN else set()
    for n in range(history):
        task_id = new_id("t")
        waits = [done[n - 1]] if n in linked else []
        (folder / (task_id.lower() + ".jsonl")).write_bytes(_log(task_id, n, waits))
        done.append(task_id)
    first = []
    for n in range(OPEN):
        waits = [first[n - OPEN // 2]] if n >= OPEN // 2 else ([done[-1 - n]] if done and size > OPEN else [])
        task = tasks.add_task(project, ROOM, f"open {n}", lane="agent0", done="it is done", by="bench", order=n,
                              depends_on=waits)
        first.append(task.id)
    return root


def count_edges(root: Path) -> int:
    """The dependency edges of a board, read from every log (a check of what the bench built)."""
    return sum(len(t.depends_on) for t in tasks.load_board(open_project(root), ROOM, archived=True))


def deps_main() -> None:
    rounds = int(os.environ.get("BENCH_ROUNDS", "11"))
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "10,100000").split(",")]
    roots = {}
    for size in sizes:
        start = time.perf_counter()
        roots[size] = make_graph_board(size)
        print(f"# board of {size} made in {time.perf_counter() - start:.1f} s ({count_edges(roots[size])} edges)",
              file=sys.stderr)
    envs = {size: {**env_for(open_project(root)), "ROOMS_AGENT": "agent0"} for size, root in roots.items()}
    rows: dict[str, dict[int, list[float]]] = {}

    def note(name: str, size: int, seconds: float) -> None:
        rows.setdefault(name, {}).setdefault(size, []).append(seconds)

    ready = [sys.executable, "-m", "rooms_cli", "task", "ready", "--json"]
    for size, root in roots.items():  # the first command of a fresh clone: the index is built
        shutil.rmtree(root / ".rooms" / "run", ignore_errors=True)
        note("first `task ready` (index rebuilt), wall", size, child_seconds(ready, envs[size])[0])
    for _ in range(rounds):  # interleaved: a change of the machine's load hits every size alike
        for size, root in roots.items():
            wall, cpu, _out = child_seconds(ready, envs[size])
            note("`task ready --json` process, wall", size, wall)
            note("`task ready --json` process, CPU", size, cpu)
            wall, cpu = next_and_release(envs[size])
            note("`task next --json` process, wall", size, wall)
            note("`task next --json` process, CPU", size, cpu)
            project = open_project(root)
            start = time.perf_counter()
            found = tasks.ready_tasks(project, ROOM)
            note("ready work (library)", size, time.perf_counter() - start)
            assert [t["title"] for t in found] == [f"open {n}" for n in range(OPEN // 2)], found
            start = time.perf_counter()
            claim = claims.next_task(project, ROOM, agent="agent0")
            note("next, claim (library)", size, time.perf_counter() - start)
            claims.release_task(project, ROOM, claim.task.id, claim.lease.lease_id)
    base = median_ms([child_seconds([sys.executable, "-c", "pass"], dict(os.environ))[1] for _ in range(rounds)])
    for root in roots.values():
        shutil.rmtree(root, ignore_errors=True)
    print(f"python -c pass: {base:.1f} ms of CPU; load average {os.getloadavg()[0]:.1f}")
    print("| measure | " + " | ".join(f"{s} tasks" for s in sizes) + " | ratio |")
    print("|---|" + "---|" * (len(sizes) + 1))
    for name, by_size in rows.items():
        cells = [median_ms(by_size[s]) for s in sizes]
        print(f"| {name} | " + " | ".join(f"{c:.1f} ms" for c in cells) + f" | {cells[-1] / cells[0]:.2f}× |")


def child_seconds(args: list[str], env: dict) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one process: its CPU time (user + system) moves far less
    than its wall time on a shared machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def next_and_release(env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of one `rooms task next --json` process; the task is given back (not timed)."""
    wall, cpu, out = child_seconds([sys.executable, "-m", "rooms_cli", "task", "next", "--json"], env)
    claim = json.loads(out)
    subprocess.run([sys.executable, "-m", "rooms_cli", "task", "release", claim["task"]["id"], "--lease-id", claim["lease_id"]],
                   env=env, capture_output=True, check=True)
    return wall, cpu


if __name__ == "__main__":
    if sys.argv[1:] == ["deps"]:
        deps_main()
    else:
        main()
