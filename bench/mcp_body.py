"""The CPU of an MCP tool's own work, in-process: what `rooms mcp` spends inside `task_next` (the claim)
with no protocol around it, on a board of 60 open tasks, in one session. Needs the extra rooms-cli[mcp].

    python bench/mcp_body.py                              # this tree, 5 rounds
    python bench/mcp_body.py --tree OLD --tree . --pairs 5  # two trees (git worktrees), interleaved

Each round is a fresh process and project: 3 warm-up calls, then `task_next` 25 times, each followed
by `task_done` (a fresh task each call) or by `task_release` (one task claimed again and again); the
median CPU time of task_next alone (time.process_time), and of a task claimed and released `--long`
times (the log grows by two events a round). Wall time on a shared machine moves with its neighbours;
CPU time moves less, and interleaving the trees round by round puts both under the same conditions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one_round(calls: int, long: int) -> dict[str, float]:
    """Measure in this process (its sys.path already holds the tree): ms of CPU per task_next."""
    from rooms_cli.board import tasks
    from rooms_cli.mcp_server.server import Tools, ok_result
    from rooms_cli.mcp_server.tools import TOOLS, Session
    from rooms_cli.project.context import Context
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    try:  # as the server runs a quick tool (one operation: each folder's symlink check once), in a tree that has it
        from rooms_cli.mcp_server.server import _one_operation

        def run(fn, session, **args):
            return _one_operation(lambda: fn(session, **args))
    except ImportError:
        def run(fn, session, **args):
            return fn(session, **args)

    out = {}
    for then in ("task_done", "task_release"):
        root = Path(tempfile.mkdtemp(prefix="rooms-body-"))
        initialize(root)
        project = open_project(root)
        for n in range(60):
            tasks.add_task(project, "default", f"open {n}", lane="agent0", done="it is done", by="bench", order=n)
        ctx = Context.open(str(root), as_="agent0")
        session = Session(project=ctx.project, config=ctx.config, me=ctx.me, default_room=ctx.room)
        tools = Tools(session)

        def call(name: str, session=session, tools=tools, **args):
            """The call's wire result as the server makes it: QuickCalls' answer, where the tree has it."""
            if hasattr(tools, "quick_answer"):
                return tools.quick_answer(name, args, "2025-11-25")
            return ok_result(run(TOOLS[name].fn, session, **dict(tools.arguments(name, args))))

        def data(answer: dict) -> dict:
            return json.loads(answer["content"][0]["text"])

        samples = []
        for number in range(3 + calls):
            start = time.process_time()
            answer = call("task_next")
            if number >= 3:
                samples.append(time.process_time() - start)
            claim = data(answer)
            more = {"summary": "ok"} if then == "task_done" else {}
            call(then, task_id=claim["task"]["id"], lease_id=claim["lease_id"], **more)
        out[f"task_next, then {then}"] = statistics.median(samples) * 1000
        if then == "task_release" and long:
            for _ in range(long):
                claim = data(call("task_next"))
                call("task_release", task_id=claim["task"]["id"], lease_id=claim["lease_id"])
            start = time.process_time()
            for _ in range(10):
                claim = data(call("task_next"))
                call("task_release", task_id=claim["task"]["id"], lease_id=claim["lease_id"])
            out[f"task_next + task_release after {long} rounds"] = (time.process_time() - start) * 100
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", help="a source tree to measure (repeat for an A/B); default: this one")
    parser.add_argument("--pairs", type=int, default=5, help="rounds per tree, interleaved")
    parser.add_argument("--calls", type=int, default=25)
    parser.add_argument("--long", type=int, default=300, help="claims of one task before the long measure (0: none)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_round(args.calls, args.long)))
        return
    trees = [str(Path(t).resolve()) for t in (args.tree or [str(REPO)])]
    results: dict[str, list[dict[str, float]]] = {tree: [] for tree in trees}
    for _ in range(args.pairs):
        for tree in trees:
            env = dict(os.environ, PYTHONPATH=tree)
            env.pop("ROOMS_DIR", None)
            proc = subprocess.run([sys.executable, __file__, "--child", "--calls", str(args.calls), "--long", str(args.long)],
                                  env=env, capture_output=True, text=True, check=True)
            results[tree].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    names = list(results[trees[0]][0])
    print("| ms of CPU (median of the rounds' medians; range) | " + " | ".join(trees) + " |")
    print("|---|" + "---|" * len(trees))
    for name in names:
        cells = []
        for tree in trees:
            values = sorted(r[name] for r in results[tree])
            cells.append(f"{statistics.median(values):.2f} ({values[0]:.2f}–{values[-1]:.2f})")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
