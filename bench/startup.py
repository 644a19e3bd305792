"""Start-up and the per-process cost of the hot commands, as ratios measured in one run: `python bench/startup.py`.

    python bench/startup.py [--rounds 15] [--quick] [--startup-only] [--only claims …] [--editable] [--against TREE]

Start-up rows are whole processes, interleaved round by round with `python -c pass` in the same
environment (so machine load hits both alike), medians of `--rounds`. They are measured on a plain
install: the wheel built from this tree (`pip wheel`), installed with pip and its dependencies into a
throw-away venv, run through the console script pip wrote. An editable install's import hook runs in every process of its venv,
`python -c pass` included, which flatters every ratio; `--editable` measures that venv too, for comparison.

Data-path rows (claims/s, board of 10 000 tasks, watch, group replay) use the plain install.
Takes about two minutes on 2 cores. Prints a table; asserts nothing except that no task was claimed twice.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rooms_cli.board import store as board_store  # noqa: E402
from rooms_cli.board import tasks  # noqa: E402
from rooms_cli.project.init import initialize  # noqa: E402
from rooms_cli.store import jsonl  # noqa: E402
from rooms_cli.store.ids import new_id  # noqa: E402
from rooms_cli.store.paths import open_project  # noqa: E402

ROOM = "default"
ROWS: list[tuple[str, str, str]] = []


def row(what: str, figure: str, goal: str) -> None:
    ROWS.append((what, figure, goal))
    print(f"  {what}: {figure}   (goal {goal})", flush=True)


# ---------------------------------------------------------------- environments

def base_env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ROOMS_") and k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "VIRTUAL_ENV")}
    env["NO_COLOR"] = "1"
    return env


class Flavour:
    """A Python to run `rooms` with: the interpreter and the argv prefix that runs `rooms`."""

    def __init__(self, name: str, python: str, rooms: list[str]):
        self.name, self.python, self.rooms = name, python, rooms


def editable_flavour() -> Flavour:
    bindir = Path(sys.executable).parent
    script = bindir / "rooms"
    rooms = [str(script)] if script.exists() else [sys.executable, "-m", "rooms_cli"]
    return Flavour("editable", sys.executable, rooms)


def plain_flavour(tmp: Path, tree: Path = REPO, name: str = "plain") -> Flavour:
    """The wheel of `tree` (this one) installed by pip into a new venv, with its dependencies (pip's
    cache or index: ~10 s), as a user installs it; pip compiles the bytecode."""
    dist = tmp / f"dist-{name}"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(dist), str(tree)],
                   check=True)
    wheel = next(dist.glob("rooms_cli-*.whl"))
    venv = tmp / f"{name}-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)], check=True)
    return Flavour(name, str(python), [str(venv / "bin" / "rooms")])


# ---------------------------------------------------------------- helpers

def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def new_project(tmp: Path, name: str, example: str | None = "dev") -> Path:
    root = tmp / name
    root.mkdir()
    initialize(root, example)
    return root


def write_tasks(root: Path, count: int, *, lanes: int = 10, lane_prefix: str = "agent") -> list[str]:
    """`count` tasks written as `rooms task add` writes them (one create event a file), without fsync."""
    project = open_project(root)
    directory = Path(board_store.tasks_dir(project, ROOM))
    directory.mkdir(parents=True, exist_ok=True)
    ids = []
    for n in range(count):
        task_id = new_id("t")
        event = tasks.new_event("create", "bench", task=task_id, lane=f"{lane_prefix}{n % lanes}", title=f"task {n}",
                                detail="", definition_of_done="it is done", order=n)
        line = jsonl.dumps({k: event[k] for k in sorted(event)}) + "\n"
        Path(board_store.task_path(project, ROOM, task_id)).write_text(line)
        ids.append(task_id)
    return ids


def run(argv: list[str], env: dict, cwd: Path | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.decode()[-800:]}")
    return elapsed


# ---------------------------------------------------------------- rows

def startup_rows(flavours: list[Flavour], tmp: Path, rounds: int) -> None:
    root = new_project(tmp, "startup")
    claimable = write_tasks(root, 3 * rounds * len(flavours) + 2, lanes=1, lane_prefix="dev")
    write_tasks(root, 10)
    env = {**base_env(), "ROOMS_DIR": str(root)}

    def claim(f: Flavour, k: int) -> list[str]:
        return [*f.rooms, "task", "claim", claimable.pop(), "--as", "dev", "--json"]

    def done(f: Flavour, k: int) -> list[str]:
        task_id = claimable.pop()
        out = subprocess.run([*f.rooms, "task", "claim", task_id, "--as", "dev", "--json"], env=env, capture_output=True,
                             text=True, check=True).stdout  # the claim it finishes, not timed
        return [*f.rooms, "task", "done", task_id, "--lease-id", json.loads(out)["lease_id"], "--summary", "did it",
                "--as", "dev", "--json"]

    commands = {
        "python -c pass": lambda f, k: [f.python, "-c", "pass"],
        "rooms task claim": claim,
        "rooms task next": lambda f, k: [*f.rooms, "task", "next", "--as", "dev", "--json"],
        "rooms task done": done,
        "rooms send": lambda f, k: [*f.rooms, "send", "--to", "dev", f"hello {k}", "--as", "bench", "--json"],
        "rooms inbox": lambda f, k: [*f.rooms, "inbox", "--as", "dev", "--json"],
        "rooms board --json (small)": lambda f, k: [*f.rooms, "board", "--json"],
        "rooms --help": lambda f, k: [*f.rooms, "--help"],
        "rooms status set": lambda f, k: [*f.rooms, "status", "set", f"busy {k}", "--as", "dev"],
        "rooms chat (offline model)": lambda f, k: [*f.rooms, "chat", f"@ops status of the deploy {k}?"],  # an agent of the set
        "rooms status": lambda f, k: [*f.rooms, "status", "--as", "dev"],
    }
    samples: dict[tuple[str, str], list[float]] = {(f.name, c): [] for f in flavours for c in commands}
    for k in range(rounds):
        for f in flavours:
            for name, argv in commands.items():
                samples[(f.name, name)].append(run(argv(f, k), env))
    goals = {"rooms task claim": "≤ 3×", "rooms task next": "≤ 3×", "rooms task done": "≤ 3×", "rooms send": "≤ 3×",
             "rooms inbox": "≤ 3×", "rooms board --json (small)": "≤ 3×", "rooms --help": "≤ 4×", "rooms status set": "≤ 4×", "rooms status": "≤ 4×",
             "rooms chat (offline model)": "≤ 5×"}
    for f in flavours:
        base = median_ms(samples[(f.name, "python -c pass")])
        row(f"python -c pass [{f.name}]", f"{base:.1f} ms", "the unit")
        for name, goal in goals.items():
            ms = median_ms(samples[(f.name, name)])
            row(f"{name} [{f.name}]", f"{ms / base:.1f}× ({ms:.0f} ms)", goal)


WORKER = 'while [ "$("$@" task next --as agent0 --json)" != "null" ]; do :; done'


def contention_row(flavour: Flavour, tmp: Path, procs: int = 8, count: int = 200, runs: int = 3) -> None:
    """`runs` races on fresh boards (one run is at the mercy of the scheduler): the median, and the range."""
    rates = []
    for k in range(runs):
        root = new_project(tmp, f"contention{k}", None)
        write_tasks(root, count, lanes=1)
        env = {**base_env(), "ROOMS_DIR": str(root)}
        start = time.perf_counter()
        shells = [subprocess.Popen(["sh", "-c", WORKER, "worker", *flavour.rooms], env=env) for _ in range(procs)]
        for shell in shells:
            shell.wait()
        rates.append(count / (time.perf_counter() - start))
        project = open_project(root)
        claims = [sum(1 for e in board_store.read_events(project, ROOM, t) if e["ev"] == "claim")
                  for t in board_store.list_task_ids(project, ROOM)]
        doubles = sum(1 for c in claims if c > 1)
        unclaimed = sum(1 for c in claims if c == 0)
        if doubles or unclaimed:
            raise SystemExit(f"a task was claimed twice ({doubles}) or left unclaimed ({unclaimed})")
    row(f"{procs} processes looping `rooms task next`, {count} tasks (median of {runs} runs)",
        f"{statistics.median(rates):.1f} claims/s ({min(rates):.1f}–{max(rates):.1f}), 0 double claims, 0 left",
        "≥ 30 claims/s, 0 double")


def board_rows(flavour: Flavour, tmp: Path, runs: int = 5) -> None:
    root = new_project(tmp, "board10k", None)
    write_tasks(root, 10_000)
    env = {**base_env(), "ROOMS_DIR": str(root)}
    argv = [*flavour.rooms, "board", "--json"]
    cold, warm = [], []
    for _ in range(runs):
        shutil.rmtree(root / ".rooms" / "run", ignore_errors=True)  # a fresh clone has no run/
        cold.append(run(argv, env))
        warm.append(run(argv, env))
    row("`rooms board --json`, 10 000 tasks, fresh clone (no run/)", f"{median_ms(cold) / 1000:.2f} s", "≤ 0.5 s")
    row("`rooms board --json`, 10 000 tasks, warm", f"{median_ms(warm) / 1000:.2f} s", "≤ 0.3 s")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def watch_rows(flavour: Flavour, tmp: Path, writes: int = 12, idle_s: float = 4.0) -> None:
    root = new_project(tmp, "watch10k", None)
    ids = write_tasks(root, 10_000)
    env = {**base_env(), "ROOMS_DIR": str(root), "ROOMS_WATCH_POLL": "1"}
    # unbuffered: select() on the pipe must see every line still unread
    watcher = subprocess.Popen([*flavour.rooms, "watch", "--board", "--json"], env=env, stdout=subprocess.PIPE, bufsize=0)
    project = open_project(root)
    try:
        assert watcher.stdout is not None
        # write until the watcher prints: then it has read its baseline and is polling
        for k in range(120):
            tasks.update_task(project, ROOM, ids[0], by="bench", detail=f"warm-up {k}")
            if select.select([watcher.stdout], [], [], 1.0)[0]:
                break
        else:
            raise SystemExit("`rooms watch` printed nothing in two minutes")
        time.sleep(1.0)
        while select.select([watcher.stdout], [], [], 1.5)[0]:  # drain the warm-up events
            watcher.stdout.readline()
        latencies = []
        for k in range(writes):
            time.sleep(0.3 + 0.05 * (k % 3))  # land at different points of the polling period
            began = time.perf_counter()
            tasks.update_task(project, ROOM, ids[1 + k * 97], by="bench", detail=f"edit {k}")
            watcher.stdout.readline()
            latencies.append(time.perf_counter() - began)
            if os.environ.get("BENCH_VERBOSE"):
                print(f"    write {k}: {latencies[-1] * 1000:.0f} ms", flush=True)
        time.sleep(2.5)  # past the racy window of the last write
        before = cpu_seconds(watcher.pid)
        time.sleep(idle_s)
        idle = (cpu_seconds(watcher.pid) - before) / idle_s
    finally:
        watcher.terminate()
        watcher.wait()
    row("`rooms watch` polling, 10 000-task board: write→print (median)", f"{median_ms(latencies):.0f} ms", "≤ 150 ms")
    row("`rooms watch` polling, 10 000-task board: idle CPU", f"{idle * 100:.1f} %", "~0 %")


def group_rows(tmp: Path, rounds: int = 7) -> None:
    import asyncio

    import rooms_cli
    from rooms_cli.agents.definitions import Agent, create_agent
    from rooms_cli.groups import log, status

    root = new_project(tmp, "groups", None)
    project = open_project(root)
    create_agent(project, Agent(id="bot0", directive="You answer.", model="offline"))
    fields = {"objective": "answer", "output_format": "", "tool_guidance": "", "boundaries": ""}

    def replay_ms(broadcasts: int) -> float:
        name = f"replay{broadcasts}"
        asyncio.run(rooms_cli.spawn_group(name, ["bot0"], project=project))
        lines = []
        for _ in range(broadcasts):
            bid = new_id("b")
            lines.append(log.event("broadcast", id=bid, fields=fields, members=[{"handle": "bot0", "profile": "bot0"}],
                                   sender="bench"))
            lines.append(log.event("reply", id=bid, handle="bot0", text="x" * 200, status="ok", elapsed_s=0.3,
                                   source="model"))
            lines.append(log.event("gathered", id=bid, result={"broadcast_id": bid, "by_member": {}, "reduced": "x",
                                                                 "metadata": {}, "order": []}))
        log.append(project, name, *lines, lock=True)
        samples = []
        for _ in range(rounds):
            start = time.perf_counter()
            status.status(project, name)
            samples.append(time.perf_counter() - start)
        return median_ms(samples)

    small, large = replay_ms(10), replay_ms(1000)
    row("group status replay, 1 000 vs 10 broadcasts", f"{large:.1f} ms vs {small:.1f} ms ({large / small:.1f}×)", "flat (≈ 1×)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds of the start-up rows (median)")
    parser.add_argument("--quick", action="store_true", help="5 rounds, for a look while working")
    parser.add_argument("--startup-only", action="store_true", help="only the start-up rows (no data paths)")
    parser.add_argument("--only", choices=("startup", "claims", "board", "watch", "groups"), action="append",
                        help="only these rows (repeatable)")
    parser.add_argument("--editable", action="store_true", help="also measure start-up in this (editable) venv")
    parser.add_argument("--against", type=Path, metavar="TREE",
                        help="also measure start-up for another checkout (a worktree of an older commit), installed the same way")
    args = parser.parse_args()
    rounds = 5 if args.quick else args.rounds
    print(f"start-up bench — {platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.2f}, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC", flush=True)
    with tempfile.TemporaryDirectory(prefix="rooms-bench-startup-") as name:
        tmp = Path(name)
        plain = plain_flavour(tmp)
        flavours = [plain, editable_flavour()] if args.editable else [plain]
        if args.against:
            flavours.append(plain_flavour(tmp, args.against.resolve(), args.against.resolve().name))

        only = set(args.only or (["startup"] if args.startup_only else ["startup", "claims", "board", "watch", "groups"]))
        if "startup" in only:
            startup_rows(flavours, tmp, rounds)
        if "claims" in only:
            contention_row(plain, tmp)
        if "board" in only:
            board_rows(plain, tmp)
        if "watch" in only:
            watch_rows(plain, tmp)
        if "groups" in only:
            group_rows(tmp)
    print()
    print("| command | figure | goal |")
    print("|---|---|---|")
    for what, figure, goal in ROWS:
        print(f"| {what} | {figure} | {goal} |")


if __name__ == "__main__":
    main()
