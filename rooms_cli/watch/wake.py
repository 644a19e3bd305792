"""Waking up when files change: OS notifications (watchfiles, inotify on Linux) or polling.

A Waker yields each time something may have changed: a set of changed paths (notifications)
or None (look at everything: a poll tick, or the periodic rescan that covers notifications the OS
dropped). Notifications start at the first wait, after the caller has read and printed its baseline
(importing watchfiles costs ~30 ms, which the first lines no longer wait for), and the first thing the
Waker yields then is None: one look at everything, so nothing written between the baseline read and
the start of watching is missed. A waker whose stop is already set (`--timeout 0`) never imports it.

Environment: ROOMS_WATCH_POLL=1 forces polling; ROOMS_WATCH_INTERVAL (default 0.1s) is the polling
period; ROOMS_WATCH_RESCAN (default 10s) the full rescan period under notifications.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager

from rooms_cli.core import terminal
from rooms_cli.store.clock import parse_duration

DEFAULT_INTERVAL = 0.1  # a polling tick reads the change journal: cheap enough to look often
DEFAULT_RESCAN = 10.0
DEBOUNCE_MS = 200
STEP_MS = 50
TICK_MS = 100  # the notifier returns at least this often with nothing new (the rescan is counted from these ticks)
SLICE_S = 0.25  # the longest sleep between two looks at the stop flag
IGNORED_SUFFIXES = (".lock", ".tmp")


class StopFlag:
    """Set by Ctrl-C or reached by a deadline; `is_set()` is polled by the notification loop (no locks:
    it is safe to set from a signal handler)."""

    def __init__(self, timeout: float | None = None) -> None:
        self._set = False
        self.deadline: float | None = None
        if timeout is not None:
            self.expire_in(timeout)

    def expire_in(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set or (self.deadline is not None and time.monotonic() >= self.deadline)

    def remaining(self, cap: float) -> float:
        """`cap`, or less when the deadline comes sooner; never negative."""
        if self.deadline is None:
            return max(0.0, cap)
        return max(0.0, min(cap, self.deadline - time.monotonic()))


@contextmanager
def stop_on_sigint(flag: StopFlag) -> Iterator[StopFlag]:
    """While inside, Ctrl-C sets `flag` instead of raising KeyboardInterrupt mid-write."""
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: flag.set())
    except ValueError:  # not the main thread: leave signals alone
        yield flag
        return
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    from rooms_cli.core.errors import InvalidInput

    try:
        value = parse_duration(raw)
    except InvalidInput as exc:
        raise InvalidInput(f"{name}: {exc}") from None
    return max(value, 0.01)


def polling_forced() -> bool:
    return os.environ.get("ROOMS_WATCH_POLL", "").lower() not in ("", "0", "false", "no")


def backend() -> str:
    """`notify` when OS notifications will be used, else `poll` (watchfiles is looked for, not imported)."""
    if polling_forced():
        return "poll"
    from importlib.util import find_spec

    return "notify" if find_spec("watchfiles") is not None else "poll"


class Waker:
    """Starts watching on creation (before the caller reads its baseline); iterate to wait.

    Iterating yields changed paths (notifications) or None (check everything) until `stop` is set.
    """

    def __init__(self, root: str, stop: StopFlag) -> None:
        self.root = root
        self.stop = stop
        self.interval = _seconds("ROOMS_WATCH_INTERVAL", DEFAULT_INTERVAL)
        self.rescan = _seconds("ROOMS_WATCH_RESCAN", DEFAULT_RESCAN)
        self.mode = backend()
        self.waits: Generator[set[str] | None, None, None] | None = None

    def __iter__(self) -> Iterator[set[str] | None]:
        self.waits = _polled(self.stop, self.interval) if self.mode == "poll" else self._notified_then_polled()
        return self.waits

    def _notified_then_polled(self) -> Generator[set[str] | None, None, None]:
        """Notifications; when they cannot start, or the notifier fails while watching (a file name that
        is not UTF-8 under `.rooms/`: watchfiles cannot decode it and raises), polling takes over with
        one warning."""
        if self.stop.is_set():
            return
        yield None  # look at everything once: written since the baseline read
        started: list[bool] = []
        try:
            yield from _notified(self.root, self.stop, self.rescan, started)
            return
        except ImportError:  # found but not importable (a broken install): polling, as without it
            pass
        except (OSError, RuntimeError, ValueError) as exc:  # the OS refused (a watch limit), WatchfilesRustInternalError
            # (a RuntimeError), a file name that is not UTF-8 (a ValueError): any failure of the notifier
            if started:
                terminal.warn(f"file notifications failed ({type(exc).__name__}: {exc}); polling instead")
            else:  # e.g. the inotify watch limit: polling still works
                terminal.warn(f"file notifications unavailable ({exc}); polling instead")
        self.mode = "poll"
        yield None  # look at everything once: the failure may have hidden a change
        yield from _polled(self.stop, self.interval)

    def __enter__(self) -> Waker:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.waits is not None:
            self.waits.close()  # the notifier stops with it


def _polled(stop: StopFlag, interval: float) -> Generator[None, None, None]:
    # a tick is cheap (follow.PollingLooks reads the change journal and budgets the full looks)
    while not stop.is_set():
        wake_at = time.monotonic() + interval
        while not stop.is_set() and time.monotonic() < wake_at:
            time.sleep(stop.remaining(min(SLICE_S, wake_at - time.monotonic())))  # Ctrl-C is seen within a slice
        if stop.is_set():
            return
        yield None


def _notified(root: str, stop: StopFlag, rescan: float, started: list[bool]) -> Iterator[set[str] | None]:
    """The changed paths under `root` as the OS reports them (watchfiles' `watch`), None every `rescan`
    seconds (look at everything: a notification may be dropped), until `stop` is set or Ctrl-C. The
    notifier starts at the first wait; once it runs (`started` gets True) everything is looked at once
    more, for what was written before it started."""
    from watchfiles import watch

    real_root = os.path.realpath(root)
    looked = time.monotonic()
    changes = watch(root, watch_filter=None, debounce=DEBOUNCE_MS, step=STEP_MS, stop_event=stop, rust_timeout=TICK_MS,
                    yield_on_timeout=True, ignore_permission_denied=True)
    try:
        for raw in changes:
            if not started:
                started.append(True)
                yield None
                looked = time.monotonic()
            changed = {_under(root, real_root, path) for _change, path in raw}
            changed = {p for p in changed if not p.endswith(IGNORED_SUFFIXES)}
            if changed:
                yield changed
            elif time.monotonic() - looked >= rescan and not stop.is_set():
                yield None
                looked = time.monotonic()
    except KeyboardInterrupt:  # Ctrl-C under Python's own handler (not stop_on_sigint's): stop as it would
        stop.set()


def _under(root: str, real_root: str, path: str) -> str:
    """A reported path spelled the way the sources spell theirs (`root` may hold a symlink)."""
    if path.startswith(real_root + os.sep) and real_root != str(root):
        path = str(root) + path[len(real_root):]
    return os.path.normpath(path)
