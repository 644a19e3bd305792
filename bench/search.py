"""`rooms search` benchmarks (issue 44): the first build, a warm search, a search after new messages.

    python bench/search.py                 # 100 000 messages + 50 000 tasks (a few minutes on 2 cores)
    BENCH_SIZE=small python bench/search.py   # 10 000 messages + 5 000 tasks: a quick look
    BENCH_ROUNDS=11 python bench/search.py    # rounds of each timed process (medians)

A project is written straight as logs (the way a long-lived one looks): MESSAGES transcript lines over
ROOMS rooms and TASKS task logs on one board (every third one done, with a summary), their text drawn
from a fixed vocabulary (ROOMS_SEED-style: the same project every run). Then, each as a `rooms search`
process through the fast path:

- **first search**: no index; builds it (the target is ≤ 30 s);
- **warm search**: nothing changed since the last search, against `python -c pass` (target ≤ 4×, wall
  time and CPU time: on a shared machine the CPU time is the steadier of the two);
- **after 100 new messages**: 100 messages appended with `rooms`'s own writer since the last search
  (target ≤ 5× `python -c pass`);
- **after a task added**: the board's folder changed; the journal names the new log, the folder's digest says nothing else changed;
- **after git wrote a transcript anew**: the same lines plus 100 more under a new inode (a pull).

Ratios are of medians of interleaved rounds, so the machine's load cancels out as far as it can.
"""

from __future__ import annotations

import json
import os
import random
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

from rooms_cli.board.tasks import add_task  # noqa: E402
from rooms_cli.chat.transcript import append_message  # noqa: E402
from rooms_cli.project.init import initialize  # noqa: E402
from rooms_cli.store import layout  # noqa: E402
from rooms_cli.store.ids import new_id  # noqa: E402
from rooms_cli.store.paths import open_project  # noqa: E402

SIZES = {"full": (100_000, 50_000), "small": (10_000, 5_000)}
ROOMS = 4
QUERIES = ("rate limit", '"token lifetime"', "deploy* -staging", "cache redis OR memcached")
COMMON = ("the a to we it is of and for on in that this be with not have as at but are was will can do so if or from "
          "by an my our you they just about what when now then there here all some one more out up no yes ok").split()
# words the queries look for, at the rank they would have in a team's chat (rarer further down)
PLACED = {"rate": 300, "limit": 420, "cache": 650, "token": 800, "deploy": 900, "deployment": 1400, "staging": 1200,
          "deployed": 2000, "lifetime": 2500, "redis": 3000, "memcached": 5200}
VOCABULARY = 20_000  # Zipf over this many words: a few very common, most rare, as in real text


def vocabulary(rng: random.Random) -> list[str]:
    letters = "bcdfghjklmnprstvwz"
    words = list(COMMON)
    while len(words) < VOCABULARY:
        word = "".join(rng.choice(letters) + rng.choice("aeiou") for _ in range(rng.randint(2, 4)))
        if word not in PLACED:
            words.append(word)
    for word, rank in sorted(PLACED.items(), key=lambda item: item[1]):
        words.insert(rank, word)
    return words[:VOCABULARY]


class Text:
    """Sentences drawn from a Zipf distribution over the vocabulary (the same ones every run)."""

    def __init__(self) -> None:
        self.rng = random.Random(44)
        self.words = vocabulary(self.rng)
        total, self.cumulative = 0.0, []
        for rank in range(1, len(self.words) + 1):
            total += 1 / rank
            self.cumulative.append(total)

    def sentence(self, low: int, high: int) -> str:
        words = self.rng.choices(self.words, cum_weights=self.cumulative, k=self.rng.randint(low, high))
        if self.rng.random() < 0.003:
            words.insert(self.rng.randint(0, len(words)), "rate limit")
        return " ".join(words).capitalize() + "."


def make_project(messages: int, tasks: int) -> Path:
    """A project with `messages` transcript lines over ROOMS rooms and `tasks` task logs on one board."""
    text = Text()
    root = Path(tempfile.mkdtemp(prefix="rooms-search-"))
    initialize(root)
    project = open_project(root)
    stamp = "2026-01-01T00:00:00.000Z"
    for r in range(ROOMS):
        room = f"room{r}"
        path = Path(layout.transcript_file(project, room))
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as out:
            for n in range(messages // ROOMS):
                mid = new_id("m")
                out.write(json.dumps({"id": mid, "ts": stamp, "room": room, "speaker": f"agent{n % 7}", "kind": "message",
                                      "text": text.sentence(6, 30), "hlc": f"{stamp}-{n % 10000:04d}-000001"}) + "\n")
        Path(layout.room_state_log(project, room)).write_text(
            json.dumps({"op": "created", "eid": new_id("e"), "ts": stamp, "state": {"id": room}}) + "\n")
    folder = Path(layout.tasks_dir(project, "room0"))
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(tasks):
        task_id = new_id("t")
        lines = [{"at": stamp, "by": f"agent{n % 7}", "definition_of_done": text.sentence(5, 10), "detail": text.sentence(8, 25),
                  "ev": "create", "hlc": f"{stamp}-0000-000001", "lane": f"lane{n % 10}", "order": n, "task": task_id,
                  "title": text.sentence(3, 8)}]
        if n % 3 == 0:
            lease = new_id("l")
            lines += [{"at": stamp, "by": "w", "ev": "claim", "expires_at": "2099-01-01T00:00:00.000Z", "fence": 1,
                       "hlc": f"{stamp}-0001-000001", "holder": "w", "lease_id": lease, "plate": "w/bench"},
                      {"at": stamp, "by": "w", "ev": "done", "fence": 1, "hlc": f"{stamp}-0002-000001", "lease_id": lease,
                       "record": {"artifacts": [], "next": None, "plate": "w/bench", "result_ref": None, "status": "done",
                                  "summary": text.sentence(6, 15), "task_id": task_id}}]
        (folder / (task_id.lower() + ".jsonl")).write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    return root


def env_for(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["ROOMS_DIR"] = str(root)
    env["ROOMS_AGENT"] = "bench"
    return env


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return elapsed, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def settle(query: list[str], env: dict[str, str]) -> None:
    """Let what was just written age past the index's racy window (store/cache.py RACY_S), and search once
    (untimed): the next search finds nothing to look at again."""
    time.sleep(1.2)
    timed(query, env)


def search_args(query: str) -> list[str]:
    return [sys.executable, "-m", "rooms_cli", "search", query, "--json"]


def main() -> None:
    messages, tasks = SIZES[os.environ.get("BENCH_SIZE", "full")]
    rounds = int(os.environ.get("BENCH_ROUNDS", "9"))
    started = time.perf_counter()
    root = make_project(messages, tasks)
    print(f"project: {messages} messages in {ROOMS} rooms, {tasks} tasks on one board ({time.perf_counter() - started:.0f} s to write)")
    env = env_for(root)
    project = open_project(root)
    try:
        first = timed(search_args(QUERIES[0]), env)
        size = Path(layout.search_index_file(project)).stat().st_size
        base, warm, after_messages, after_task, after_pull = [], [], [], [], []
        transcript = Path(layout.transcript_file(project, "room2"))
        for n in range(rounds):
            query = search_args(QUERIES[n % len(QUERIES)])
            settle(query, env)
            base.append(timed([sys.executable, "-c", "pass"], env))
            warm.append(timed(query, env))
            for i in range(100):
                append_message(project, "room1", "bench", f"new message {n} {i}: the rate limit moved again")
            after_messages.append(timed(query, env))
            add_task(project, "room0", f"bench task {n}", lane="lane0", done="done", by="bench")
            after_task.append(timed(query, env))
            settle(query, env)
            pulled = transcript.with_name("pulled.tmp")  # git writes a merged log anew: the same lines, more after
            pulled.write_bytes(transcript.read_bytes() + b"".join(
                (json.dumps({"id": new_id("m"), "ts": "2026-01-02T00:00:00.000Z", "room": "room2", "speaker": "remote",
                             "kind": "message", "text": f"pulled {n} {i}"}) + "\n").encode() for i in range(100)))
            os.replace(pulled, transcript)
            after_pull.append(timed(query, env))
        py_wall, py_cpu = (statistics.median(sample[k] for sample in base) for k in (0, 1))
        print(f"index: {size / 1e6:.1f} MB; first search (builds it): {first[0]:.1f} s wall, {first[1]:.1f} s CPU (target ≤ 30 s)")
        print(f"python -c pass: {py_wall * 1000:.1f} ms wall, {py_cpu * 1000:.1f} ms CPU (medians of {rounds} interleaved rounds)")
        print(f"{'what':46} {'wall':>8} {'×':>6} {'CPU':>8} {'×':>6}  target")
        for name, samples, target in (("warm search", warm, "≤ 4×"), ("search after 100 new messages", after_messages, "≤ 5×"),
                                      ("search after a task added (a 50 000-task board)", after_task, ""),
                                      ("search after git wrote a transcript anew", after_pull, "")):
            wall, cpu = (statistics.median(sample[k] for sample in samples) for k in (0, 1))
            print(f"{name:46} {wall * 1000:>6.0f}ms {wall / py_wall:>5.1f}× {cpu * 1000:>6.0f}ms {cpu / py_cpu:>5.1f}×  {target}")
    finally:
        if not os.environ.get("BENCH_KEEP"):
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"kept {root}")


if __name__ == "__main__":
    main()
