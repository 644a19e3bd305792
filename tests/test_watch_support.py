"""A real `rooms watch --json` process for tests, and writers that run in other processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import rooms_env

# notify: no periodic rescan, so every event must come from an OS notification.
# poll: a short polling period, no notifications at all.
MODES = {
    "notify": {"ROOMS_WATCH_RESCAN": "600"},
    "poll": {"ROOMS_WATCH_POLL": "1", "ROOMS_WATCH_INTERVAL": "0.1"},
}


class Watcher:
    """`python -m rooms_cli watch … --json` running in the background; its events collected as they come."""

    def __init__(self, *args: str, env: dict | None = None):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rooms_cli", "watch", *args, "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=rooms_env(env),
        )
        self.events: list[dict] = []
        self.raw: list[str] = []
        self.stderr = ""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            with self._lock:
                self.raw.append(raw)
                self.events.append(json.loads(raw))

    def snapshot(self) -> list[dict]:
        with self._lock:
            return list(self.events)

    def wait_for(self, predicate, timeout: float = 30.0, what: str = "events") -> list[dict]:
        """Wait until predicate(events) is true; return the events. Fails with what arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            events = self.snapshot()
            if predicate(events):
                return events
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; got {self.snapshot()!r}; rc={self.proc.poll()}")

    def wait_text(self, text: str, timeout: float = 30.0) -> dict:
        events = self.wait_for(lambda evs: any(e.get("text") == text for e in evs), timeout, what=repr(text))
        return next(e for e in events if e.get("text") == text)

    def stop(self, sig: int = signal.SIGINT, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.finish(timeout)

    def finish(self, timeout: float = 30.0) -> int:
        rc = self.proc.wait(timeout)
        self._reader.join(timeout)
        self.stderr = self.proc.stderr.read()
        self.proc.stderr.close()
        return rc

    def cpu_seconds(self) -> float:
        """utime + stime of the watcher from /proc/<pid>/stat."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.finish()


def run_python(code: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run Python code in a fresh process (a writer next to the watcher)."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=rooms_env(env), timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return proc


def start_python(code: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=rooms_env(env))


def say(room: str, speaker: str, *texts: str, kind: str = "message") -> str:
    """Python code appending messages to a room's transcript with the chat part's own writer."""
    return (
        "from rooms_cli.store import open_project\n"
        "from rooms_cli.chat.transcript import append_message\n"
        "p = open_project()\n"
        f"for t in {list(texts)!r}:\n"
        f"    append_message(p, {room!r}, {speaker!r}, t, kind={kind!r})\n"
    )
