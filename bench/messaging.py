"""Messaging benchmarks: python bench/messaging.py  (prints a table; not a test).

- deliver one message into an inbox of 10 vs 10 000 messages (numbering reads only the tail)
- read the unread messages of an inbox of 10 vs 10 000 messages (per-message read marks: the whole
  inbox is read, so this grows with the inbox; merge safety over speed, see docs/git.md)
- 4 processes sending 200 messages each into one inbox (locks under contention)
- `rooms spawn` returning vs the spawned runner finishing; the gap from a spawn's end to `rooms wait` returning
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rooms_cli.messaging.inbox import InboxMessage, deliver, mark_read, unread_messages  # noqa: E402
from rooms_cli.project.config import load_config  # noqa: E402
from rooms_cli.project.init import initialize  # noqa: E402
from rooms_cli.store import jsonl  # noqa: E402
from rooms_cli.store.paths import open_project  # noqa: E402


def fill(project, agent: str, count: int) -> None:
    path = Path(project.path("inbox", f"{agent}.jsonl"))
    records = [{"n": i, "id": f"i-{i}", "ts": "2026-11-21T10:00:00.000Z", "from": "x", "to": agent, "kind": "direct",
                "text": f"message {i} " + "lorem ipsum " * 8} for i in range(1, count + 1)]
    jsonl.append_many(path, records)
    mark_read(project, agent, [InboxMessage.from_json(r) for r in records[:-5]])


def per_call(fn, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat * 1000


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="rooms-bench-msg-"))
    initialize(root)
    os.environ["ROOMS_DIR"] = str(root)
    project = open_project(root)
    rows = []

    fill(project, "small", 10)
    fill(project, "big", 10_000)
    small = per_call(lambda: deliver(project, "small", "bench", "hello"), 200)
    big = per_call(lambda: deliver(project, "big", "bench", "hello"), 200)
    rows.append(("deliver one message (ms)", small, big, big / small))
    small = per_call(lambda: unread_messages(project, "small"), 50)
    big = per_call(lambda: unread_messages(project, "big"), 20)
    rows.append(("read unread messages (ms)", small, big, big / small))

    script = (
        "import sys\nfrom rooms_cli.messaging.inbox import deliver\nfrom rooms_cli.store.paths import open_project\n"
        f"p = open_project({str(root)!r})\nfor i in range(200): deliver(p, 'hub', sys.argv[1], str(i))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", script, f"w{k}"], env=env) for k in range(4)]
    for proc in procs:
        proc.wait()
    took = time.perf_counter() - start
    numbers = sorted(r["n"] for r in jsonl.read(project.path("inbox", "hub.jsonl")))
    assert numbers == list(range(1, 801)), "lost or duplicated messages"
    rows.append(("4 procs x 200 sends, messages/s", 800 / took, None, None))

    runner = f'runner: ["{sys.executable}", "-c", "import time, sys; sys.stdin.read(); time.sleep(1); print(42)"]\n'
    with open(root / ".rooms.yaml", "a") as fh:
        fh.write(runner)
    load_config(project)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rooms_cli", "spawn", "bench", "--as", "boss"], env=env, check=True, capture_output=True)
    returned = time.perf_counter() - start
    subprocess.run([sys.executable, "-m", "rooms_cli", "wait", "--as", "boss", "--json"], env=env, check=True, capture_output=True)
    waited = time.perf_counter() - start
    wait_returned = time.time()
    from rooms_cli.messaging.spawn import list_spawns
    from rooms_cli.store.clock import parse_time

    spawn = list_spawns(project)[-1]
    created = parse_time(spawn.created).timestamp()
    finished = parse_time(spawn.finished).timestamp()
    rows.append(("`rooms spawn` returns (s)", returned, None, None))
    rows.append(("spawn created -> output delivered (s, runner sleeps 1 s)", finished - created, None, None))
    rows.append(("spawn finished -> `rooms wait` process exited (s)", wait_returned - finished, None, None))
    rows.append(("spawn + wait, end to end (s)", waited, None, None))

    print(f"{'measure':58} {'10 msgs':>10} {'10 000':>10} {'ratio':>7}")
    for name, a, b, ratio in rows:
        print(f"{name:58} {a:10.2f} {'' if b is None else f'{b:10.2f}':>10} {'' if ratio is None else f'{ratio:7.1f}':>7}")


if __name__ == "__main__":
    main()
