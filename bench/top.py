"""How fast `rooms top` shows things, and what it costs when nothing happens.

    python bench/top.py                  # about two minutes on 2 cores (the idle CPU window is 60 s)
    python bench/top.py --idle 10        # a shorter idle window

Measured on the real app, headless (Textual's run_test: the same widgets and refreshes as on a
terminal, without writing to one):

- first frame: from creating the app to every tab drawn once, on a small board and on a board of
  10 000 tasks (and the whole `rooms top --snapshot` process, start-up and import of textual included);
- write → screen: another process appends (a chat message; a claim on the big board) and the line is
  on screen, median of N, timed on the machine's monotonic clock shared by both processes;
- idle CPU: the app's process CPU time over the idle window, with live updates on;
- a key: a cursor move in a lane handled and the screen drawn, on both boards.

Prints a table; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rooms_cli.project.context import Context  # noqa: E402
from rooms_cli.project.init import initialize  # noqa: E402
from rooms_cli.store.paths import open_project  # noqa: E402

ROOM = "default"
WRITER = r"""
import json, sys, time
from rooms_cli.store.paths import open_project
from rooms_cli.store.ids import new_id
from rooms_cli.store.clock import now_iso
from rooms_cli.chat.transcript import append_message
from rooms_cli.board.claims import claim_task
project = open_project(sys.argv[1])
for line in sys.stdin:                       # one request a line: "chat TEXT" or "claim TASK AGENT"
    kind, _, rest = line.strip().partition(" ")
    began = time.monotonic()
    if kind == "chat":
        append_message(project, "default", "bench", rest)
    else:
        task, agent = rest.split()
        claim_task(project, "default", task, agent=agent)
    print(began, flush=True)
"""


def env() -> dict:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ROOMS_")}
    out["PYTHONPATH"] = str(REPO) + os.pathsep + out.get("PYTHONPATH", "")
    return out


def make_project(tasks: int) -> Path:
    """A project whose board has `tasks` open tasks over 8 lanes (written as `rooms task add` writes them)."""
    from rooms_cli.board.tasks import add_task
    from rooms_cli.store.ids import new_id

    root = Path(tempfile.mkdtemp(prefix=f"rooms-bench-top-{tasks}-"))
    initialize(root, example="dev")
    project = open_project(root)
    sample = add_task(project, ROOM, "task 0", lane="agent0", done="it is done", by="bench")
    folder = root / ".rooms" / "rooms" / ROOM / "board" / "tasks"
    record = json.loads((folder / f"{sample.id.lower()}.jsonl").read_text())
    for n in range(1, tasks):
        task_id = new_id("t")
        line = {**record, "task": task_id, "title": f"task {n}", "lane": f"agent{n % 8}", "order": n}
        (folder / f"{task_id.lower()}.jsonl").write_text(json.dumps(line, sort_keys=True) + "\n")
    return root


async def keys(root: Path, presses: int = 20) -> float:
    """Median seconds for a key to be handled and the screen drawn: cursor moves in a lane of the board."""
    from rooms_cli.tui.app import LaneTable, TopApp

    app = TopApp(Context.open(str(root), as_="bench"), live=False)
    samples = []
    async with app.run_test(size=(160, 50)) as pilot:
        while not app.loaded.is_set():
            await pilot.pause(0.005)
        await pilot.pause()
        next(t for t in app.query(LaneTable)).focus()
        for k in range(presses):
            began = time.perf_counter()
            await pilot.press("down" if k < presses - 2 else "end")
            await pilot.pause()
            samples.append(time.perf_counter() - began)
    return statistics.median(samples)


async def first_frame(root: Path) -> float:
    from rooms_cli.tui.app import TopApp

    began = time.perf_counter()
    app = TopApp(Context.open(str(root), as_="bench"), live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        while not app.loaded.is_set():
            await pilot.pause(0.005)
        await pilot.pause()
        return time.perf_counter() - began


def snapshot_process(root: Path) -> float:
    out = Path(tempfile.mkdtemp()) / "top.svg"
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rooms_cli", "top", "--snapshot", str(out)], cwd=root, check=True,
                   env={**env(), "ROOMS_DIR": str(root)}, capture_output=True)
    return time.perf_counter() - began


async def live(root: Path, writes: int, idle_s: float, claim_lane: str | None) -> dict:
    """Write → screen latencies (chat lines, or claims when `claim_lane` is given), then idle CPU."""
    from textual.widgets import RichLog, TabbedContent

    from rooms_cli.tui.app import LaneTable, TopApp

    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root)], env=env(), text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    app = TopApp(Context.open(str(root), as_="bench"), live=True)
    latencies = []
    async with app.run_test(size=(160, 50)) as pilot:
        while not app.loaded.is_set():
            await pilot.pause(0.005)
        await pilot.pause(1.0)
        if claim_lane is None:
            app.query_one(TabbedContent).active = "rooms"
            await pilot.pause(0.3)
            log = app.query_one("#transcript", RichLog)
        else:
            table = next(t for t in app.query(LaneTable) if t.lane == claim_lane)
            todo = [key.value for key in list(table.rows)[:writes]]
        for k in range(writes):
            if claim_lane is None:
                text = f"bench line {k}"
                writer.stdin.write(f"chat {text}\n")
                writer.stdin.flush()
                seen = lambda text=text: any(text in line.text for line in log.lines[-5:])  # noqa: E731
            else:
                task_id = todo[k]
                writer.stdin.write(f"claim {task_id} worker\n")
                writer.stdin.flush()
                seen = lambda task_id=task_id: task_id in table.rows and " worker " in str(table.get_cell(task_id, table.ordered_columns[0].key))  # noqa: E731
            wrote = float(await asyncio.to_thread(writer.stdout.readline))
            while not seen():
                await asyncio.sleep(0.002)
            latencies.append(time.monotonic() - wrote)
            await pilot.pause(0.2)
        await pilot.pause(3.0)  # let the last reloads and any rescans settle
        cpu = time.process_time()
        wall = time.monotonic()
        await asyncio.sleep(idle_s)
        idle = (time.process_time() - cpu) / (time.monotonic() - wall)
    writer.stdin.close()
    writer.wait()
    return {"median": statistics.median(latencies), "max": max(latencies), "idle": idle}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of the idle CPU window (default 60)")
    parser.add_argument("--writes", type=int, default=20, help="writes timed for the latency (default 20)")
    args = parser.parse_args()

    small, big = make_project(10), make_project(10_000)
    rows = []
    for label, root in (("board of 10", small), ("board of 10 000", big)):
        asyncio.run(first_frame(root))  # warm the board cache, as any earlier `rooms board` would
        frame = statistics.median(asyncio.run(first_frame(root)) for _ in range(3))
        rows.append((f"first frame, {label} (in process, median of 3)", f"{frame * 1000:.0f} ms"))
        rows.append((f"`rooms top --snapshot`, {label} (whole process)", f"{snapshot_process(root):.2f} s"))
        rows.append((f"a key (cursor down in a lane) to the screen drawn, {label} (median of 20)", f"{asyncio.run(keys(root)) * 1000:.0f} ms"))
    chat = asyncio.run(live(small, args.writes, args.idle, None))
    rows.append((f"write → screen, a chat line (median / max of {args.writes})", f"{chat['median'] * 1000:.0f} / {chat['max'] * 1000:.0f} ms"))
    rows.append((f"idle CPU over {args.idle:.0f} s, live, board of 10", f"{chat['idle'] * 100:.2f}%"))
    claim = asyncio.run(live(big, args.writes, min(args.idle, 10.0), "agent3"))
    rows.append((f"write → screen, a claim on the board of 10 000 (median / max of {args.writes})",
                 f"{claim['median'] * 1000:.0f} / {claim['max'] * 1000:.0f} ms"))
    rows.append((f"idle CPU over {min(args.idle, 10.0):.0f} s, live, board of 10 000", f"{claim['idle'] * 100:.2f}%"))
    width = max(len(r[0]) for r in rows)
    print(f"rooms top, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for label, value in rows:
        print(f"{label:<{width}}  {value:>12}")


if __name__ == "__main__":
    main()
