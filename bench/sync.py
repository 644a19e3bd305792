"""`rooms sync` figures: python bench/sync.py [--quick] | race … | growth …

(no subcommand, issue 25) one table: a sync with nothing new and with 100 new events (local bare
remote), the median `rooms task next --sync` (a real process), 3 clones x 4 claims each racing through
one remote (claims/s and double claims), and a sync of 100 new events on top of 100 000 vs 1 000 events
of history (sync is incremental: the ratio should stay near 1).

race (issues 41, 46): clones x workers x tasks, each worker a loop of real `rooms task next --sync`
and `rooms task done --sync` processes until nothing is left (tests/syncrace.py), `--runs` times:
claims printed, tasks handed to two workers, done twice, `sync_rejected`, claims/s, boards alike
after one more round of syncs, user's branches untouched. `--network` serves the remote with git
daemon on 127.0.0.1; `--syncers` runs a plain `rooms sync` loop in every clone meanwhile; `--kills N`
SIGKILLs N `task next --sync` at random moments.

growth (issue 46): one clone sends a message and syncs, `--syncs` times: the remote's size on disk,
its loose objects, its size after `git gc --prune=now`, and the chain's length.

Not timed tests; ratios and counts matter.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from syncrace import git, make_world, process_env, rooms  # noqa: E402 - the world the tests race in, too


def project(path: Path):
    from rooms_cli.store.paths import open_project

    return open_project(path)


def sync(path: Path):
    from rooms_cli.store.sync.engine import sync as run_sync

    return run_sync(project(path), "origin")


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def deliver(path: Path, count: int, start: int = 0) -> None:
    from rooms_cli.messaging.inbox import deliver as put

    proj = project(path)
    for n in range(start, start + count):
        put(proj, "dev", "carol", f"message {n}")


def history(base: Path, events: int, repeat: int) -> float:
    """A sync of 100 new events on a clone whose logs hold `events` events (spread over 100 inboxes)."""
    from rooms_cli.store import jsonl

    a, b = make_world(base, 2)
    per = max(1, events // 100)
    proj = project(a)
    from rooms_cli.store import layout

    for n in range(100):  # history written in bulk: one append per log
        jsonl.append_many(layout.inbox_file(proj, f"agent{n}"),
                          [{"id": f"i-{n}-{k}", "n": k + 1, "from": "x", "to": f"agent{n}", "text": f"old {k}"} for k in range(per)])
    sync(a)
    sync(b)
    sync(b)
    times = []
    for r in range(repeat):
        deliver(a, 100, start=1000 * r)
        start = time.perf_counter()
        sync(a)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def race_table(args: argparse.Namespace) -> None:
    """`race`: the issue's race, `--runs` times; one row per run and a total."""
    from syncrace import race

    print(f"race: {args.clones} clones x {args.workers} workers x {args.tasks} tasks"
          f"{', git daemon' if args.network else ', bare path remote'}{', plain syncs meanwhile' if args.syncers else ''}"
          f"{f', {args.kills} killed' if args.kills else ''}")
    print("run  claims  doubles  done twice  sync_rejected  other errors  claims/s  boards alike  branches kept  seconds")
    totals = {"doubles": 0, "twice": 0, "rejected": 0, "claims": 0, "seconds": 0.0}
    for run in range(1, args.runs + 1):
        got = race(args.clones, args.workers, args.tasks, network=args.network, syncers=args.syncers, kills=args.kills)
        rejected = sum(n for code, n in got.errors.items() if "sync_rejected" in code)
        others = {code: n for code, n in got.errors.items() if "sync_rejected" not in code}
        print(f"{run:>3}  {len(got.claims):>6}  {got.doubles:>7}  {got.double_completions:>10}  {rejected:>13}  "
              f"{sum(others.values()):>12}  {got.claims_per_second:>8.2f}  {str(got.boards_alike):>12}  "
              f"{str(got.user_refs_kept):>13}  {got.seconds:>7.1f}" + (f"  {others}" if others else ""))
        totals["doubles"] += got.doubles
        totals["twice"] += got.double_completions
        totals["rejected"] += rejected
        totals["claims"] += len(got.claims)
        totals["seconds"] += got.seconds
    print(f"all  {totals['claims']:>6}  {totals['doubles']:>7}  {totals['twice']:>10}  {totals['rejected']:>13}  "
          f"{'':>12}  {totals['claims'] / totals['seconds']:>8.2f}")


def growth_table(args: argparse.Namespace) -> None:
    """`growth`: the remote after `--syncs` syncs of one new message each."""
    base = Path(tempfile.mkdtemp(prefix="rooms-bench-growth-"))
    try:
        (a,) = make_world(base, 1)
        origin = base / "origin.git"
        start = time.perf_counter()
        marks = sorted({args.syncs // 10, args.syncs // 2, args.syncs})
        print("syncs  remote on disk  loose objects (bytes)  after git gc --prune=now  chain  ms/sync (last 10%)")
        recent: list[float] = []
        for n in range(1, args.syncs + 1):
            deliver(a, 1, start=n)
            began = time.perf_counter()
            sync(a)
            recent = (recent + [time.perf_counter() - began])[-max(1, args.syncs // 10):]
            if n in marks:
                chain = subprocess.run(["git", "rev-list", "--count", "refs/rooms/state"], cwd=origin, capture_output=True,
                                       text=True).stdout.strip()
                objects = [p for p in (origin / "objects").glob("??/*") if p.is_file()]
                loose = f"{len(objects)} ({sum(p.stat().st_size for p in objects) / 1024:.0f} KiB)"
                disk = _disk(origin)
                copy = base / f"gc-{n}.git"
                shutil.copytree(origin, copy)
                git(copy, "gc", "-q", "--prune=now")
                print(f"{n:>5}  {disk / 1024:>11.0f} KiB  {loose:>21}  {_disk(copy) / 1024:>20.0f} KiB  {chain:>5}  "
                      f"{statistics.mean(recent) * 1000:>8.0f}")
                shutil.rmtree(copy, ignore_errors=True)
        print(f"({time.perf_counter() - start:.0f} s)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _disk(folder: Path) -> int:
    """Bytes on disk (blocks, as du counts them) under `folder`."""
    return sum(p.lstat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, 10 000 events instead of 100 000")
    sub = parser.add_subparsers(dest="what")
    racing = sub.add_parser("race", help="clones x workers x tasks racing task next/done --sync")
    racing.add_argument("--clones", type=int, default=3)
    racing.add_argument("--workers", type=int, default=3, help="workers in each clone")
    racing.add_argument("--tasks", type=int, default=30)
    racing.add_argument("--runs", type=int, default=10)
    racing.add_argument("--network", action="store_true", help="serve the remote with git daemon on 127.0.0.1")
    racing.add_argument("--syncers", action="store_true", help="a plain rooms sync loop in every clone meanwhile")
    racing.add_argument("--kills", type=int, default=0, help="SIGKILL this many task next --sync mid-way")
    growing = sub.add_parser("growth", help="the remote's size after many syncs")
    growing.add_argument("--syncs", type=int, default=1000)
    args = parser.parse_args()
    if args.what == "race":
        race_table(args)
        return
    if args.what == "growth":
        growth_table(args)
        return
    repeat = 3 if args.quick else 7
    big = 10_000 if args.quick else 100_000
    rows = []
    base = Path(tempfile.mkdtemp(prefix="rooms-bench-sync-"))
    try:
        a, b, c = make_world(base / "w", 3)
        sync(a)
        sync(b)
        rows.append(("sync, nothing new (library)", f"{timed(lambda: sync(a), repeat) * 1000:.0f} ms", "≤ 300 ms"))
        rows.append(("rooms sync, nothing new (process)", f"{timed(lambda: rooms(a, 'sync'), repeat) * 1000:.0f} ms",
                     "≤ 300 ms"))

        def hundred():
            deliver(b, 100)
            start = time.perf_counter()
            sync(b)
            return time.perf_counter() - start

        rows.append(("sync with 100 new events (library)", f"{statistics.median(hundred() for _ in range(repeat)) * 1000:.0f} ms",
                     "≤ 500 ms"))
        from rooms_cli.board.tasks import add_task

        for n in range(repeat * 2 + 12):
            add_task(project(a), "default", f"task {n}", lane="dev", done="d", by="bench")
        sync(a)
        for clone in (b, c):
            sync(clone)
        nexts = []
        for _ in range(repeat):
            start = time.perf_counter()
            out = rooms(a, "task", "next", "--sync", "--as", "dev", "--json")
            nexts.append(time.perf_counter() - start)
            assert out.returncode == 0, out.stderr
        rows.append(("rooms task next --sync, median (process)", f"{statistics.median(nexts) * 1000:.0f} ms", "≤ 500 ms"))

        # 3 clones x 4 claims, racing through one remote
        for clone in (a, b, c):
            sync(clone)
        loop = 'for i in 1 2 3 4; do "$PY" -m rooms_cli task next --sync --as dev --json || exit 1; done'
        start = time.perf_counter()
        procs = [subprocess.Popen(["sh", "-c", loop], cwd=p, env={**process_env(p), "PY": sys.executable},
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for p in (a, b, c)]
        claimed = []
        for p in procs:
            out, err = p.communicate()
            claimed += [line for line in out.splitlines() if line.strip() and line.strip() != "null"]
        elapsed = time.perf_counter() - start
        for clone in (a, b, c, a):
            sync(clone)
        import json

        held = [json.loads(line)["task"]["id"] for line in claimed]
        from rooms_cli.board.tasks import board_json

        doubles = sum(1 for t in board_json(project(a), "default") if any(x["kind"] == "double_claim" for x in t["conflicts"]))
        rows.append(("3 clones x 4 claims through one remote", f"{len(held) / elapsed:.1f} claims/s, {len(held)} claims, "
                     f"{len(held) - len(set(held))} handed out twice, {doubles} double claims", "0 double claims"))

        small = history(base / "h1", 1_000, repeat)
        large = history(base / "h2", big, repeat)
        rows.append((f"sync of 100 new events: {big:,} vs 1 000 events of history",
                     f"{large * 1000:.0f} ms vs {small * 1000:.0f} ms ({large / small:.2f}×)", "≤ 1.3×"))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    width = max(len(r[0]) for r in rows)
    print(f"{'what'.ljust(width)}  figure  (target)")
    for what, figure, target in rows:
        print(f"{what.ljust(width)}  {figure}  ({target})")


if __name__ == "__main__":
    main()
