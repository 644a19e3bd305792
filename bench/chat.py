"""Chat benchmarks: prints a table (not a timed test).

    /work/venv/bin/python bench/chat.py

1. Coordinator overhead per `rooms chat` (offline model) in a room of 100 vs 100 000 messages:
   the ratio should stay near 1 (only the transcript's tail is read on the hot path).
2. `@jam` of 8 agents against an OpenAI-compatible server answering in 300 ms, vs one call:
   wall / single should be ≤ 1.3 (the calls run concurrently).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))


def make_project(example: str | None = "dev"):
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    root = Path(tempfile.mkdtemp(prefix="rooms-bench-"))
    initialize(root, example=example)
    return open_project(root)


def fill(project, room: str, count: int) -> None:
    from rooms_cli.chat.transcript import make_message
    from rooms_cli.store import jsonl

    path = Path(project.path("rooms", room, "transcript.jsonl"))
    batch = []
    for n in range(count):
        batch.append(make_message(room, "bob" if n % 2 else "ops", f"line {n}: the deploy latency went up again").to_json())
        if len(batch) == 10_000:
            jsonl.append_many(path, batch)
            batch = []
    jsonl.append_many(path, batch)


def refill(project, room: str) -> None:
    from rooms_cli.chat.rooms import update_room

    update_room(project, room, lambda s: setattr(s, "budget_remaining", s.budget_total))


def overhead(sizes=(100, 100_000), reps: int = 30, process_reps: int = 9) -> list[tuple]:
    """Median time of one turn per room size. The sizes are measured alternately, so that load
    from other processes on the machine falls on both alike."""
    from rooms_cli.chat.coordinator import floor, run_message
    from rooms_cli.chat.rooms import create_room
    from rooms_cli.project.config import load_config

    projects = {}
    for size in sizes:
        project = make_project()
        create_room(project, "bench", ["ops", "architect"])
        fill(project, "bench", size)
        projects[size] = project
    turn: dict[int, list[float]] = {size: [] for size in sizes}
    proc: dict[int, list[float]] = {size: [] for size in sizes}
    for rep in range(reps):
        for size, project in projects.items():
            refill(project, "bench")
            start = time.perf_counter()
            with floor(project, "bench"):
                run_message(project, load_config(project), "bench", "alice", "@ops deploy latency?")
            turn[size].append(time.perf_counter() - start)
            if rep >= process_reps + 1:
                continue
            env = {**os.environ, "PYTHONPATH": str(REPO), "ROOMS_DIR": str(project.root)}
            refill(project, "bench")
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "rooms_cli", "chat", "--room", "bench", "@ops deploy latency?"],
                           env=env, check=True, capture_output=True)
            if rep:  # the first process run warms the OS caches
                proc[size].append(time.perf_counter() - start)
    return [(size, statistics.median(turn[size]) * 1000, statistics.median(proc[size]) * 1000) for size in sizes]


def jam(agents: int = 8, delay: float = 0.3, reps: int = 3) -> tuple[float, float]:
    from http.server import ThreadingHTTPServer

    import yaml
    from fakeserver import FakeServer, Reply

    from rooms_cli.agents.definitions import Agent, create_agent
    from rooms_cli.chat.coordinator import run_message
    from rooms_cli.chat.rooms import create_room
    from rooms_cli.project.config import load_config

    ThreadingHTTPServer.request_queue_size = 64  # the default backlog of 5 drops simultaneous connects
    with FakeServer() as server:
        server.set_default(Reply(text="an independent take", delay=delay))
        project = make_project(None)
        (Path(project.root) / ".rooms.yaml").write_text(yaml.safe_dump({"providers": {"fake": {"type": "openai", "base_url": server.openai_url}}}))
        names = [f"a{i}" for i in range(agents)]
        for name in names:
            create_agent(project, Agent(id=name, directive=f"You are {name}.", model="fake:m"))
        create_room(project, "jam", names)
        config = load_config(project)
        singles, jams = [], []
        for _ in range(reps):
            refill(project, "jam")
            start = time.perf_counter()
            run_message(project, config, "jam", "alice", "@a0 one take please")
            singles.append(time.perf_counter() - start)
            refill(project, "jam")
            start = time.perf_counter()
            result = run_message(project, config, "jam", "alice", "@jam your takes?")
            jams.append(time.perf_counter() - start)
            assert len(result.replies) == agents, result.replies
    return statistics.median(singles), statistics.median(jams)


def main() -> None:
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d', time.gmtime())}")
    print()
    print("coordinator overhead per `rooms chat` (offline, one direct reply)")
    print(f"{'messages':>10} {'turn, in-process':>18} {'rooms chat process':>20}")
    rows = overhead()
    for size, turn_ms, proc_ms in rows:
        print(f"{size:>10} {turn_ms:>15.1f} ms {proc_ms:>17.1f} ms")
    print(f"{'ratio':>10} {rows[1][1] / rows[0][1]:>18.2f} {rows[1][2] / rows[0][2]:>20.2f}")
    print()
    single, wall = jam()
    print("@jam of 8 agents, server answering in 300 ms")
    print(f"  one call: {single * 1000:.0f} ms   @jam of 8: {wall * 1000:.0f} ms   wall/single: {wall / single:.2f}")


if __name__ == "__main__":
    main()
