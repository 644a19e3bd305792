"""How fast `rooms watch` sees a new line, and what it costs when idle: notifications vs polling.

    python bench/watch.py

For each backend: the latency from an append (in another process) to the event on the watcher's
stdout (median of 20), the watcher's CPU over 5 idle seconds (/proc/<pid>/stat), and the same idle
CPU with a board of 10 000 task files; then the start-up time and peak memory on a transcript of
100 and of 100 000 messages. Prints tables; not a test.
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
MODES = {"notify": {}, "poll": {"ROOMS_WATCH_POLL": "1"}}


def env(extra: dict) -> dict:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ROOMS_")}
    out["PYTHONPATH"] = str(REPO) + os.pathsep + out.get("PYTHONPATH", "")
    out.update(extra)
    return out


def cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def project(tasks: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="rooms-bench-watch-"))
    subprocess.run([sys.executable, "-m", "rooms_cli", "init"], cwd=root, env=env({}), check=True, capture_output=True)
    board = root / ".rooms" / "rooms" / "default" / "board" / "tasks"
    board.mkdir(parents=True)
    for k in range(tasks):
        (board / f"t-{k:026d}.jsonl").write_text(json.dumps({"ev": "create", "at": "2026-11-21T09:00:00.000Z", "title": f"task {k}"}) + "\n")
    return root


def measure(mode: str, tasks: int) -> tuple[float, float]:
    root = project(tasks)
    watcher = subprocess.Popen([sys.executable, "-m", "rooms_cli", "watch", "--all", "--json"], cwd=root,
                               env=env({"ROOMS_DIR": str(root), **MODES[mode]}), stdout=subprocess.PIPE, text=True)
    transcript = root / ".rooms" / "rooms" / "default" / "transcript.jsonl"
    time.sleep(3)  # start-up and the first full read
    latencies = []
    for k in range(20):
        record = {"id": f"m-bench{k}", "ts": "2026-11-21T09:00:00.000Z", "room": "default", "speaker": "b",
                  "kind": "message", "text": str(k)}
        began = time.perf_counter()
        with open(transcript, "a") as handle:
            handle.write(json.dumps(record) + "\n")
        watcher.stdout.readline()
        latencies.append(time.perf_counter() - began)
        time.sleep(0.1)
    time.sleep(2.5)
    before = cpu(watcher.pid)
    time.sleep(5)
    idle = (cpu(watcher.pid) - before) / 5
    watcher.terminate()
    watcher.wait()
    return statistics.median(latencies), idle


def start_up(messages: int) -> tuple[float, float]:
    """Seconds and peak MB for `rooms watch --timeout 0` on a transcript of `messages` records."""
    root = project(0)
    text = "hello there, this is a message of a moderate length " * 3
    with open(root / ".rooms" / "rooms" / "default" / "transcript.jsonl", "w") as handle:
        for k in range(messages):
            handle.write(json.dumps({"id": f"m-{k:026d}", "ts": "2026-11-21T09:00:00.000Z", "room": "default",
                                     "speaker": "alice", "kind": "message", "text": text}) + "\n")
    code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "subprocess.run([sys.executable, '-m', 'rooms_cli', 'watch', '--timeout', '0'], check=True); "
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env({"ROOMS_DIR": str(root)}), check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


def main() -> None:
    print(f"{'backend':8} {'board tasks':>11} {'latency (median)':>17} {'idle CPU':>9}")
    for tasks in (0, 10_000):
        for mode in MODES:
            latency, idle = measure(mode, tasks)
            print(f"{mode:8} {tasks:>11} {latency * 1000:>14.0f} ms {idle * 100:>8.1f}%")
    print()
    print(f"{'transcript':>12} {'start-up':>9} {'peak memory':>12}")
    for messages in (100, 100_000):
        seconds, mb = start_up(messages)
        print(f"{messages:>12} {seconds:>8.2f}s {mb:>9.0f} MB")


if __name__ == "__main__":
    main()
