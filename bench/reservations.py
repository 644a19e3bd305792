"""File reservation benchmarks: pattern overlap, ledger replay at 10 vs 1 000 reservations, a check.

Replay compares each reservation with those held at the same time (a merge may have granted two), so
its cost grows with records × reservations held; the ledger here is a long history with 10 held.

    python bench/reservations.py     # prints a table; takes about ten seconds

Ratios are measured inside one run (1 000 reservations vs 10) so the machine's speed cancels out.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rooms_cli.project.init import initialize  # noqa: E402
from rooms_cli.reservations import ledger, patterns  # noqa: E402
from rooms_cli.store.paths import open_project  # noqa: E402

PAIRS = [("src/**", "src/a.py"), ("*.md", "docs/x.md"), ("src/**/test_*.py", "src/*/test_a?.py"),
         ("a/*/c/**", "a/b/*/d"), ("src/**", "docs/**"), ("*.py", "*.md")]


def clear_caches() -> None:
    for cached in (patterns.overlap, patterns.literal_prefix, patterns.to_regex):
        cached.cache_clear()


def overlap_us() -> float:
    samples = []
    for _ in range(50):
        clear_caches()
        started = time.perf_counter()
        for a, b in PAIRS:
            patterns.overlap(a, b)
        samples.append((time.perf_counter() - started) / len(PAIRS))
    return statistics.median(samples) * 1e6


def ledger_of(size: int, active: int = 10) -> object:
    """A ledger of `size` reservations (each of its own package), all but the last `active` released:
    the log of a long-lived project, where history grows and few reservations are held at once."""
    from rooms_cli.store import eventlog

    root = Path(tempfile.mkdtemp(prefix="rooms-bench-res-"))
    initialize(root)
    project = open_project(root)
    events = []
    for i in range(size):
        rid = f"fr-bench{i:06d}"
        events.append(eventlog.event("ev", "reserve", "e", id=rid, agent=f"agent{i % 50}", exclusive=True, reason="",
                                     patterns=[f"pkg{i}/**", f"docs/pkg{i}.md"], expires_at="2999-01-01T00:00:00.000Z"))
        if i < size - active:
            events.append(eventlog.event("ev", "release", "e", id=rid, by=f"agent{i % 50}"))
    path = Path(ledger.log_path(project))
    path.parent.mkdir(parents=True, exist_ok=True)
    eventlog.append(path, events)
    return project


def replay_ms(project) -> float:
    samples = []
    for _ in range(5):
        clear_caches()
        started = time.perf_counter()
        ledger.load(project)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def check_ms(project) -> float:
    clear_caches()
    started = time.perf_counter()
    ledger.check_paths(project, ["pkg7/a.py", "README.md", "docs/pkg3.md"], agent="nobody")
    return (time.perf_counter() - started) * 1000


def main() -> None:
    small, large = ledger_of(10), ledger_of(1000)
    replay_small, replay_large = replay_ms(small), replay_ms(large)
    print(f"{'file reservations':<44}{'value':>12}")
    print(f"{'overlap of two patterns (cold), µs':<44}{overlap_us():>12.0f}")
    print(f"{'replay 10 reservations, ms':<44}{replay_small:>12.1f}")
    print(f"{'replay 1 000 (10 held), ms':<44}{replay_large:>12.1f}")
    print(f"{'  ratio 1 000 / 10 (100× the records)':<44}{replay_large / replay_small:>12.0f}")
    print(f"{'check 3 paths against 1 000 (10 held), ms':<44}{check_ms(large):>12.1f}")


if __name__ == "__main__":
    main()
