"""Benchmarks of groups: a gather of 8 model-backed members against a server answering in 300 ms,
wait-any against the fastest member, and the cost of replaying a long group log.

    python bench/groups.py            # prints a table; nothing is asserted

The server is tests/fakeserver.py (a real OpenAI-compatible HTTP server on 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from fakeserver import FakeServer, Reply  # noqa: E402

import rooms_cli  # noqa: E402
from rooms_cli.agents.definitions import Agent, create_agent  # noqa: E402
from rooms_cli.groups import log, status  # noqa: E402
from rooms_cli.project.init import initialize  # noqa: E402
from rooms_cli.store.paths import open_project  # noqa: E402

LATENCY = {"fast": 0.300, "slow": 0.900}
ROUNDS = 7
FIELDS = {"objective": "answer", "output_format": "", "tool_guidance": "", "boundaries": ""}


def setup(server: FakeServer):
    root = Path(tempfile.mkdtemp(prefix="rooms-bench-groups-"))
    initialize(root)
    (root / ".rooms.yaml").write_text(
        f"default_model: offline\nproviders:\n  local: {{type: openai, base_url: \"{server.openai_url}\", max_retries: 0}}\n")
    project = open_project(root)
    for i in range(8):
        create_agent(project, Agent(id=f"bot{i}", directive="You answer.", model="local:fast"))
    create_agent(project, Agent(id="tortoise", directive="You answer slowly.", model="local:slow"))
    os.environ["ROOMS_DIR"] = str(root)
    return project


async def gather_once(project, name: str, handles: list[str], any_: bool = False) -> tuple[float, float]:
    """(wall time of the wait, the winner's / slowest member's own call time)."""
    if not log.exists(project, name):
        await rooms_cli.spawn_group(name, handles, project=project)
    await rooms_cli.broadcast(name, **FIELDS, project=project)
    start = time.perf_counter()
    if any_:
        result = await rooms_cli.wait_any(name, project=project)
        member = result.by_member[result.metadata["winner_handle"]].elapsed_s
    else:
        result = await rooms_cli.wait_all(name, project=project)
        member = max(r.elapsed_s for r in result.by_member.values())
    return time.perf_counter() - start, member


def median_of(project, name, handles, any_=False) -> tuple[float, float]:
    runs = [asyncio.run(gather_once(project, name, handles, any_)) for _ in range(ROUNDS)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def replay_cost(project, broadcasts: int) -> float:
    name = f"replay{broadcasts}"
    asyncio.run(rooms_cli.spawn_group(name, ["bot0"], project=project))
    lines = []
    for i in range(broadcasts):
        bid = f"b-{i:026d}"
        lines.append(log.event("broadcast", id=bid, fields=FIELDS, members=[{"handle": "bot0", "profile": "bot0"}], sender="bench"))
        lines.append(log.event("reply", id=bid, handle="bot0", text="x" * 200, status="ok", elapsed_s=0.3, source="model"))
        lines.append(log.event("gathered", id=bid, result={"broadcast_id": bid, "by_member": {}, "reduced": "x", "metadata": {}, "order": []}))
    log.append(project, name, *lines, lock=True)
    start = time.perf_counter()
    for _ in range(ROUNDS):
        status.status(project, name)
    return (time.perf_counter() - start) / ROUNDS


def main() -> None:
    ThreadingHTTPServer.request_queue_size = 64  # the stdlib's backlog of 5 would drop an 8-way burst of connects
    with FakeServer(lambda r: Reply(text="ok", delay=LATENCY[(r.json or {}).get("model", "fast")])) as server:
        project = setup(server)
        asyncio.run(gather_once(project, "warmup", ["bot0"]))
        single, _ = median_of(project, "single", ["bot0"])
        eight, _ = median_of(project, "eight", [f"bot{i}" for i in range(8)])
        race, fastest = median_of(project, "race", ["bot0", "tortoise"], any_=True)
        short, long = replay_cost(project, 10), replay_cost(project, 1000)
    rows = [
        ("single model member, wait-all", f"{single * 1000:.0f} ms", ""),
        ("8 model members, wait-all", f"{eight * 1000:.0f} ms", f"wall/single = {eight / single:.2f} (target ≤ 1.3)"),
        ("fastest member's own call (300 ms server)", f"{fastest * 1000:.0f} ms", ""),
        ("wait-any: 300 ms vs 900 ms member", f"{race * 1000:.0f} ms",
         f"wait-any/fastest call = {race / fastest:.2f} (target ≤ 1.10)"),
        ("status replay, 10 broadcasts", f"{short * 1000:.1f} ms", ""),
        ("status replay, 1000 broadcasts", f"{long * 1000:.1f} ms", f"ratio {long / short:.0f}x for 100x the log"),
    ]
    print(f"groups benchmark · {os.cpu_count()} cores · median of {ROUNDS} · server latency 300 ms")
    width = max(len(r[0]) for r in rows)
    for label, value, note in rows:
        print(f"{label:<{width}}  {value:>9}  {note}")


if __name__ == "__main__":
    main()
