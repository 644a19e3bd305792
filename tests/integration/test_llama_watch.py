"""`rooms watch` following a chat on llama.cpp's real server as it happens."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
AGENTS = ["archer", "builder", "courier", "drafter"]


def test_watch_shows_a_jam_as_it_lands_with_the_servers_usage(llama_project, cli):
    from rooms_cli.store.clock import now_iso

    since = now_iso()  # watch prints from here on, so it cannot miss what lands while it starts
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    watch = subprocess.Popen(
        [sys.executable, "-m", "rooms_cli", "watch", "--json", "--since", since, "--timeout", "60"],
        cwd=llama_project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in watch.stdout], daemon=True).start()
    events: list[dict] = []

    def read_until(done, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while not done() and time.monotonic() < deadline:
            try:
                events.append(json.loads(lines.get(timeout=0.5)))
            except queue.Empty:
                pass

    try:
        # a first event seen through watch proves it is following before the chat starts
        assert cli("room", "continue").exit_code == 0
        read_until(lambda: any(e["type"] == "chat.continue" for e in events))
        assert [e["type"] for e in events] == ["chat.continue"]
        run = cli("chat", "@jam ideas, go", "--json")
        assert run.exit_code == 0, run.stderr
        replies = {r["speaker"]: r for r in run.json()["replies"] if r["kind"] == "message"}
        read_until(lambda: len([e for e in events if e.get("speaker") in AGENTS]) == 4)
    finally:
        os.kill(watch.pid, signal.SIGTERM)
        watch.wait(10)
    said = [e for e in events[1:] if e["type"] == "chat.message"]
    assert said[0]["speaker"] == "tester" and said[0]["text"] == "@jam ideas, go"
    spoken = {e["speaker"]: e for e in said[1:]}
    assert sorted(spoken) == AGENTS
    for agent, event in spoken.items():
        assert event["model"] == "llamacpp:tiny"
        assert event["usage"] == replies[agent]["usage"] and event["id"] == replies[agent]["id"]
