"""Scale: cost follows the work, not the history.

    python bench/scale.py            # prints a table (a few minutes on 2 cores: it writes 100 000 task logs)
    BENCH_INBOX=100,100000 python bench/scale.py   # inbox --unread / --peek / --all
    BENCH_MCP=1 python bench/scale.py              # rooms mcp: spawn -> tools/list vs importing the SDK; calls
    BENCH_WATCH=1 python bench/scale.py            # watch --timeout 0: the demo project, 100 000 messages
    BENCH_OUTSIDE=1 python bench/scale.py          # --version, task list, transcript, board, watch: × python -c pass

Boards of 10, 10 000 and 100 000 tasks where all but 10 are done (the done ones written straight as
logs, the way a long-lived board looks), then each command as a process, medians, and the ratio to the
10-task board in the same run. `python -c pass` is measured too, for the "× python" column.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rooms_cli.board import tasks  # noqa: E402
from rooms_cli.project.init import initialize  # noqa: E402
from rooms_cli.store.ids import new_id  # noqa: E402
from rooms_cli.store.paths import open_project  # noqa: E402

ROOM = "default"
OPEN = 10


def _done_log(task_id: str, n: int, stamp: str) -> bytes:
    lease = new_id("l")
    record = {"artifacts": [], "next": None, "plate": "w/bench", "result_ref": None, "status": "done",
              "summary": f"finished {n}", "task_id": task_id}
    lines = [
        {"at": stamp, "by": "bench", "definition_of_done": "it is done", "detail": "", "ev": "create",
         "hlc": f"{stamp}-0000-000001", "lane": f"agent{n % 10}", "order": n, "task": task_id, "title": f"task {n}"},
        {"at": stamp, "by": "w", "ev": "claim", "expires_at": "2099-01-01T00:00:00.000Z", "fence": 1,
         "hlc": f"{stamp}-0001-000001", "holder": "w", "lease_id": lease, "plate": "w/bench"},
        {"at": stamp, "by": "w", "ev": "done", "fence": 1, "hlc": f"{stamp}-0002-000001", "lease_id": lease,
         "record": record},
    ]
    return "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines).encode()


def make_board(size: int) -> Path:
    """A project whose board has `size` tasks: size-OPEN done ones, then OPEN todo ones in lane agent0."""
    root = Path(tempfile.mkdtemp(prefix=f"rooms-i27-{size}-"))
    initialize(root)
    project = open_project(root)
    folder = Path(project.path("rooms", ROOM, "board", "tasks"))
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(size - OPEN):
        task_id = new_id("t")
        (folder / (task_id.lower() + ".jsonl")).write_bytes(_done_log(task_id, n, "2026-01-01T00:00:00.000Z"))
    for n in range(OPEN):
        tasks.add_task(project, ROOM, f"open {n}", lane="agent0", done="it is done", by="bench", order=n)
    return root


def env_for(root: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["ROOMS_DIR"] = str(root)
    env["ROOMS_AGENT"] = "agent0"
    return env


def timed(args: list[str], env: dict, check: bool = True) -> float:
    start = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


ROOMS = [sys.executable, "-m", "rooms_cli"]


def _next_and_release(env: dict) -> float:
    """Seconds of one `task next` (the first open task claimed), then the task given back (not timed)."""
    start = time.perf_counter()
    proc = subprocess.run([*ROOMS, "task", "next", "--json"], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    claim = json.loads(proc.stdout)
    subprocess.run([*ROOMS, "task", "release", claim["task"]["id"], "--lease-id", claim["lease_id"]], env=env,
                   capture_output=True, check=True)
    return seconds


COMMANDS = (("board --json", ["board", "--json"]), ("board", ["board"]),
            ("task list --status todo", ["task", "list", "--status", "todo"]))


def measure_boards(roots: dict[int, Path], rounds: int) -> dict[int, dict[str, float]]:
    """Each command's median on every board, the boards taking turns round by round (interleaved: a
    change of the machine's load hits every size alike, which measuring one board after the other
    did not: `task next` read 1.65× in a run where the same code, interleaved, read 0.99×)."""
    envs = {size: env_for(root) for size, root in roots.items()}
    out: dict[int, dict[str, float]] = {size: {} for size in roots}
    for size, root in roots.items():
        shutil.rmtree(root / ".rooms" / "run", ignore_errors=True)
        out[size]["fresh clone: board --json"] = timed([*ROOMS, "board", "--json"], envs[size]) * 1000
    for name, args in COMMANDS:
        samples: dict[int, list[float]] = {size: [] for size in roots}
        for size in roots:
            timed([*ROOMS, *args], envs[size])
        for _ in range(rounds):
            for size in roots:
                samples[size].append(timed([*ROOMS, *args], envs[size]))
        for size in roots:
            out[size][name] = median_ms(samples[size])
    samples = {size: [] for size in roots}
    for _ in range(rounds):  # claim the first open task, then give it back
        for size in roots:
            samples[size].append(_next_and_release(envs[size]))
    for size in roots:
        out[size]["task next"] = median_ms(samples[size])
    return out


def measure_import(size: int) -> float:
    """Seconds for `rooms task import` of `size` JSONL rows into an empty board (one process)."""
    root = Path(tempfile.mkdtemp(prefix="rooms-i27-import-"))
    initialize(root)
    source = root / "tasks.jsonl"
    source.write_text("".join(json.dumps({"title": f"task {n}", "lane": f"agent{n % 10}", "done": "it is done"}) + "\n"
                              for n in range(size)))
    seconds = timed([*ROOMS, "task", "import", str(source)], env_for(root))
    shutil.rmtree(root, ignore_errors=True)
    return seconds


def make_inbox(size: int, unread: int = 5) -> Path:
    """A project whose agent0 has `size` messages, all but `unread` marked read (written straight as lines)."""
    root = Path(tempfile.mkdtemp(prefix=f"rooms-i27-inbox-{size}-"))
    initialize(root)
    folder = root / ".rooms" / "inbox"
    (folder / "read").mkdir(parents=True, exist_ok=True)
    ids, lines = [], []
    for n in range(1, size + 1):
        message_id = new_id("i")
        ids.append(message_id)
        stamp = f"2026-01-01T00:00:00.000Z-{n:08d}-000001"
        lines.append(json.dumps({"from": "alice", "hlc": stamp, "id": message_id, "kind": "direct", "n": n,
                                 "text": f"message {n}", "to": "agent0", "ts": "2026-01-01T00:00:00.000Z"}))
    (folder / "agent0.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "read" / "agent0.jsonl").write_text(json.dumps(
        {"hlc": "2026-01-01T00:00:01.000Z-0000-000001", "id": new_id("r"), "read": ids[:-unread],
         "ts": "2026-01-01T00:00:01.000Z"}) + "\n")
    return root


def measure_inbox(sizes: list[int], rounds: int) -> None:
    results = {}
    for size in sizes:
        root = make_inbox(size)
        env = env_for(root)
        timed([*ROOMS, "inbox", "--unread", "--peek"], env)  # the first read builds the cursor
        results[size] = {
            "inbox --unread --peek": median_ms([timed([*ROOMS, "inbox", "--unread", "--peek"], env) for _ in range(rounds)]),
            "inbox --peek (unread + last 10)": median_ms([timed([*ROOMS, "inbox", "--peek"], env) for _ in range(rounds)]),
            "inbox --peek --json": median_ms([timed([*ROOMS, "inbox", "--peek", "--json"], env) for _ in range(rounds)]),
            "inbox --peek --all (every message)": median_ms([timed([*ROOMS, "inbox", "--peek", "--all"], env)
                                                            for _ in range(min(rounds, 3))]),
        }
        shutil.rmtree(root, ignore_errors=True)
    small, large = results[sizes[0]], results[sizes[-1]]
    base = median_ms([timed([sys.executable, "-c", "pass"], dict(os.environ)) for _ in range(rounds)])
    print(f"python -c pass: {base:.1f} ms")
    print("| command | " + " | ".join(f"{s} messages" for s in sizes) + " | ratio |")
    print("|---|" + "---|" * (len(sizes) + 1))
    for name in small:
        print(f"| {name} | " + " | ".join(f"{results[s][name]:.0f} ms" for s in sizes) + f" | {large[name] / small[name]:.2f}× |")


def _rpc(proc, message: dict) -> dict | None:
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    if "id" not in message:
        return None
    while True:
        answer = json.loads(proc.stdout.readline())
        if answer.get("id") == message["id"]:
            return answer


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process `pid` has used (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


CPU: dict[str, float] = {}  # call -> the server's CPU ms per call in the last session (with its untimed follow-up)
RESULTS: dict[str, dict] = {}  # call -> the structuredContent of its last answer (what the SDK floor serves)

# (the name in the table, the tool, its arguments, the tool called after it untimed: none, or with the claim)
CALLS = (("send", "send", {"message": "hi", "to": "bob"}, None),
         ("inbox", "inbox", {"peek": True}, None),
         ("board", "board", {}, None),  # first: the board of 60 open tasks, none finished yet
         ("task_next (then task_release)", "task_next", {}, "task_release"),
         ("task_next (then task_done)", "task_next", {}, "task_done"))


def mcp_session(env: dict, calls: int = 0, command: list[str] | None = None) -> tuple[float, dict[str, float]]:
    """Spawn `rooms mcp` (or `command`): seconds from spawn to the tools/list answer, then the median ms of
    `calls` calls of each of CALLS in that one session. task_next is followed by a task_release (the same
    task is claimed again and again, its log growing) or by a task_done (each call claims a fresh task, the
    loop an agent runs); neither follow-up is timed. The server's CPU time per call goes to CPU: on a
    shared machine the wall time also holds the waits for a core."""
    start = time.perf_counter()
    proc = subprocess.Popen(command or [*ROOMS, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    listed = _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    started = time.perf_counter() - start
    assert listed and "result" in listed, listed
    medians: dict[str, float] = {}
    ids = iter(range(3, 10**9))
    floor = command is not None
    for number, (label, name, args, then) in enumerate(CALLS if calls else ()):
        samples = []
        used = cpu_seconds(proc.pid)
        for _ in range(calls):
            begin = time.perf_counter()
            answer = _rpc(proc, {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
                                 "params": {"name": f"call{number}" if floor else name, "arguments": {} if floor else args}})
            samples.append(time.perf_counter() - begin)
            assert answer and not answer["result"].get("isError"), answer
            result = answer["result"]["structuredContent"]
            RESULTS.setdefault(label, result)
            if then and not floor and result["task"]:
                more = {"summary": "done"} if then == "task_done" else {}
                _rpc(proc, {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": {
                    "name": then, "arguments": {"task_id": result["task"]["id"], "lease_id": result["lease_id"], **more}}})
        medians[label] = median_ms(samples)
        CPU[label] = (cpu_seconds(proc.pid) - used) * 1000 / calls
    proc.stdin.close()
    proc.wait()
    return started, medians


def measure_mcp(rounds: int) -> None:
    """rooms mcp on a board of 60 open tasks: spawn -> tools/list against `python -c "import mcp.server.stdio"`
    (interleaved, medians), then the calls' medians in one session, and the same calls answered with the
    same results by bench/mcp_floor.py (the SDK's own cost for them, no work behind it)."""
    root = Path(tempfile.mkdtemp(prefix="rooms-i27-mcp-"))
    initialize(root)
    project = open_project(root)
    for n in range(60):  # the board of 60; the task_done loop finishes 30 of them after the board was measured
        tasks.add_task(project, ROOM, f"open {n}", lane="agent0", done="it is done", by="bench", order=n)
    env = env_for(root)
    mcp_session(env)  # the first start derives and keeps the tool listing (.rooms/run/mcp-tools.json)
    base, sdk, start = [], [], []
    for _ in range(rounds):
        base.append(timed([sys.executable, "-c", "pass"], env))
        sdk.append(timed([sys.executable, "-c", "import mcp.server.stdio"], env))
        start.append(mcp_session(env)[0])
    calls = max(rounds, 30)
    _, measured = mcp_session(env, calls=calls)
    cpu = dict(CPU)
    results = root / "floor.json"
    results.write_text(json.dumps({f"call{number}": RESULTS[call[0]] for number, call in enumerate(CALLS)}))
    _, floor = mcp_session(env, calls=calls, command=[sys.executable, str(REPO / "bench" / "mcp_floor.py"), str(results)])
    shutil.rmtree(root, ignore_errors=True)
    print(f"python -c pass: {median_ms(base):.0f} ms")
    print(f"| rooms mcp spawn -> tools/list | {median_ms(start):.0f} ms | import mcp.server.stdio {median_ms(sdk):.0f} ms"
          f" | {median_ms(start) / median_ms(sdk):.2f}× |")
    print(f"| MCP call (median of {calls}, one session) | rooms mcp | server CPU a call | the SDK's floor (bench/mcp_floor.py) |")
    print("|---|---|---|---|")
    for label, ms in measured.items():
        print(f"| {label} | {ms:.1f} ms | {cpu[label]:.1f} ms | {floor[label]:.1f} ms |")


def _cpu_ms(args: list[str], env: dict, cwd: Path) -> float:
    """CPU time (user + system) of one process, in ms: on a shared machine it varies less than wall time."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, env=env, cwd=cwd, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000


def measure_watch(rounds: int) -> None:
    """`rooms watch --json --all --timeout 0` against `python -c pass` (CPU, interleaved, medians) on the
    demo project and on it with a transcript of 100 000 messages; the first watch of each keeps the
    baseline the others start from (watch/baseline.py)."""
    root = Path(tempfile.mkdtemp(prefix="rooms-bench-watch-"))
    env = env_for(root / "demo")
    subprocess.run([*ROOMS, "demo", "--dir", str(root / "demo")], env=env, check=True, capture_output=True)
    watch = [*ROOMS, "watch", "--json", "--all", "--timeout", "0"]
    print("| project | python -c pass | first watch | watch | × python |")
    print("|---|---|---|---|---|")
    for name, messages in (("demo", 0), ("demo + 100 000 messages", 100_000)):
        if messages:
            text = "hello there, this is a message of a moderate length " * 3
            with open(root / "demo" / ".rooms" / "rooms" / ROOM / "transcript.jsonl", "a") as handle:
                for k in range(messages):
                    handle.write(json.dumps({"id": f"m-{k:026d}", "ts": "2026-11-21T09:00:00.000Z", "room": ROOM,
                                             "speaker": "alice", "kind": "message", "text": text}) + "\n")
        first = _cpu_ms(watch, env, root / "demo")
        base, cost = [], []
        for _ in range(rounds):
            base.append(_cpu_ms([sys.executable, "-c", "pass"], dict(os.environ), root))
            cost.append(_cpu_ms(watch, env, root / "demo"))
        b, c = statistics.median(base), statistics.median(cost)
        print(f"| {name} | {b:.0f} ms | {first:.0f} ms | {c:.0f} ms | {c / b:.2f}× |")
    shutil.rmtree(root, ignore_errors=True)


OUTSIDE = {  # the commands of the goal "outside the fast path: ≤ 4× python -c pass (--version ≤ 2×)"
    "rooms --version": ["--version"],
    "rooms task list": ["task", "list"],
    "rooms task list --json": ["task", "list", "--json"],
    "rooms transcript": ["transcript"],
    "rooms transcript --json": ["transcript", "--json"],
    "rooms board": ["board"],
    "rooms watch --json --all --timeout 0": ["watch", "--json", "--all", "--timeout", "0"],
}


def measure_outside(rounds: int) -> None:
    """Each command of OUTSIDE on the demo project (`rooms demo`) against `python -c pass`: CPU time, the
    two interleaved round by round, medians; through the `rooms` console script when it is installed
    (what a user runs), else `python -m rooms_cli`."""
    root = Path(tempfile.mkdtemp(prefix="rooms-bench-outside-"))
    env = env_for(root / "demo")
    subprocess.run([*ROOMS, "demo", "--dir", str(root / "demo")], env=env, check=True, capture_output=True)
    script = shutil.which("rooms", path=str(Path(sys.executable).parent))
    rooms = [script] if script else ROOMS
    base: list[float] = []
    cost: dict[str, list[float]] = {name: [] for name in OUTSIDE}
    for args in OUTSIDE.values():
        _cpu_ms([*rooms, *args], env, root / "demo")  # the first run of each writes what later ones keep
    for _ in range(rounds):
        base.append(_cpu_ms([sys.executable, "-c", "pass"], dict(os.environ), root))
        for name, args in OUTSIDE.items():
            cost[name].append(_cpu_ms([*rooms, *args], env, root / "demo"))
    shutil.rmtree(root, ignore_errors=True)
    b = statistics.median(base)
    print(f"python -c pass: {b:.1f} ms of CPU ({' '.join(rooms[:1])})")
    print("| command (demo project) | CPU | × python -c pass | goal |")
    print("|---|---|---|---|")
    for name in OUTSIDE:
        c = statistics.median(cost[name])
        print(f"| {name} | {c:.0f} ms | {c / b:.2f}× | {'≤ 2×' if 'version' in name else '≤ 4×'} |")


def main() -> None:
    if os.environ.get("BENCH_OUTSIDE"):
        measure_outside(int(os.environ.get("BENCH_ROUNDS", "11")))
        return
    if os.environ.get("BENCH_WATCH"):
        measure_watch(int(os.environ.get("BENCH_ROUNDS", "11")))
        return
    if os.environ.get("BENCH_MCP"):
        measure_mcp(int(os.environ.get("BENCH_ROUNDS", "7")))
        return
    if os.environ.get("BENCH_INBOX"):
        measure_inbox([int(s) for s in os.environ["BENCH_INBOX"].split(",")], int(os.environ.get("BENCH_ROUNDS", "7")))
        return
    if os.environ.get("BENCH_IMPORT"):
        size = int(os.environ["BENCH_IMPORT"])
        print(f"task import of {size} tasks: {measure_import(size):.1f} s")
        return
    rounds = int(os.environ.get("BENCH_ROUNDS", "7"))
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "10,10000,100000").split(",")]
    base = median_ms([timed([sys.executable, "-c", "pass"], dict(os.environ)) for _ in range(rounds)])
    roots = {}
    for size in sizes:
        start = time.perf_counter()
        roots[size] = make_board(size)
        print(f"# board of {size} made in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    try:
        results = measure_boards(roots, rounds)
    finally:
        for root in roots.values():
            shutil.rmtree(root, ignore_errors=True)
    small = results[sizes[0]]
    print(f"python -c pass: {base:.1f} ms")
    print("| command | " + " | ".join(f"{s} tasks" for s in sizes) + " | ratio largest/smallest |")
    print("|---|" + "---|" * (len(sizes) + 1))
    for name in small:
        cells = " | ".join(f"{results[s][name]:.0f} ms" for s in sizes)
        print(f"| {name} | {cells} | {results[sizes[-1]][name] / small[name]:.2f}× |")


if __name__ == "__main__":
    main()
