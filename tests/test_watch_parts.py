"""`rooms watch --all` while the real commands of every part run: chat, board, groups, messaging, spawn."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from conftest import rooms_env
from test_watch_support import MODES, Watcher

from rooms_cli.watch.events import GROUP_EVENTS, TASK_EVENTS

SINCE_EVER = "2000-01-01T00:00:00Z"


@pytest.fixture
def watcher():
    started: list[Watcher] = []

    def start(*args: str, env: dict | None = None) -> Watcher:
        w = Watcher(*args, "--since", SINCE_EVER, env=env or MODES["notify"])
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill()


def run(*args: str, env: dict | None = None, ok: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "rooms_cli", *args], capture_output=True, text=True,
                          env=rooms_env(env), timeout=120)
    if ok:
        assert proc.returncode == 0, f"rooms {' '.join(args)}: {proc.stderr}"
    return proc


def at_once(*commands: list[str]) -> list[subprocess.CompletedProcess]:
    """Run several `rooms` commands as concurrent processes."""
    procs = [subprocess.Popen([sys.executable, "-m", "rooms_cli", *c], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=rooms_env()) for c in commands]
    return [subprocess.CompletedProcess(p.args, p.wait(120), *p.communicate()) for p in procs]


def records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def types(events, prefix: str) -> list[str]:
    return [e["type"] for e in events if e["type"].startswith(prefix)]


def chat_until_the_budget_runs_out(rooms_dir) -> None:
    run("room", "create", "tiny", "--agent", "researcher", "--agent", "ops")
    run("chat", "-r", "tiny", "the birthday cake was delicious")  # open and off both agents' tags: passes
    for k in range(10):
        run("chat", "-r", "tiny", f"@researcher @ops what about the api rate limits and paging {k}?")
        if "budget_exhausted" in (rooms_dir / "rooms" / "tiny" / "transcript.jsonl").read_text():
            break
    run("room", "mute", "ops", "-r", "tiny")
    run("room", "kick", "researcher", "-r", "tiny")


def work_the_board() -> tuple[str, str]:
    """Two agents race for one task while a message lands; then renew, done, release, a lapsed lease."""
    task_id = json.loads(run("task", "add", "Write spec", "--lane", "researcher", "--done", "spec merged", "--json").stdout)["id"]
    raced = at_once(["task", "claim", task_id, "--as", "researcher", "--json"],
                    ["task", "claim", task_id, "--as", "ops", "--json"],
                    ["send", "ready for review", "--to", "bob", "--as", "alice"])
    winners = [r for r in raced[:2] if r.returncode == 0]
    assert len(winners) == 1 and sorted(r.returncode for r in raced[:2]) == [0, 3]
    lease = json.loads(winners[0].stdout)["lease_id"]
    run("task", "renew", task_id, "--lease-id", lease)
    run("task", "done", task_id, "--lease-id", lease, "--summary", "spec written", "--next", "review it")
    other = json.loads(run("task", "add", "Deploy", "--lane", "ops", "--done", "live", "--json").stdout)["id"]
    lease2 = json.loads(run("task", "claim", other, "--as", "ops", "--json").stdout)["lease_id"]
    run("task", "release", other, "--lease-id", lease2)
    run("task", "claim", other, "--as", "ops", "--lease", "1s")
    run("tick", env={"ROOMS_NOW": "2099-01-01T00:00:00Z"})  # the lease has lapsed: tick records the expiry
    return task_id, other


def work_a_group() -> None:
    """Gather all, a race with a dropped loser, a cancel."""
    run("agent", "new", "coder", "--model", "external")  # a coding-agent session: it replies by hand
    run("group", "spawn-mixed", "rev", "--profiles", "researcher,coder")
    four = ["--output-format", "one line", "--tool-guidance", "", "--boundaries", ""]
    run("group", "broadcast", "rev", "--objective", "review the api", *four)
    run("group", "reply", "rev", "--as", "coder", "looks fine")
    run("group", "wait", "rev")
    run("group", "broadcast", "rev", "--objective", "fastest answer", *four)
    run("group", "wait", "rev", "--any")  # researcher's model answers; coder has not
    late = run("group", "reply", "rev", "--as", "coder", "late answer")  # after the race was gathered: dropped
    assert "dropped" in late.stdout + late.stderr, late
    run("group", "broadcast", "rev", "--objective", "never mind", *four)
    run("group", "cancel", "rev")


def message_and_spawn() -> None:
    """A broadcast to everyone, a spawn that reports back."""
    run("send", "standup in five", "--as", "alice")
    run("spawn", "summarize the api docs", "--description", "api summary", "--as", "alice")
    run("wait", "--as", "alice", "--timeout", "60")


def test_every_part_s_commands_show_up_once_in_order(project_dir, watcher):
    from concurrent.futures import ThreadPoolExecutor

    w = watcher("--all")
    rooms_dir = project_dir / ".rooms"
    with ThreadPoolExecutor(4) as pool:  # the four parts at once, each in its own order
        jobs = [pool.submit(chat_until_the_budget_runs_out, rooms_dir), pool.submit(work_the_board),
                pool.submit(work_a_group), pool.submit(message_and_spawn)]
        task_id, other = jobs[1].result()
        for job in jobs:
            job.result()

    w.wait_for(lambda evs: "spawn.finish" in types(evs, "spawn.") and "inbox.spawn_output" in types(evs, "inbox."),
               what="the spawn's end")
    time.sleep(0.5)
    assert w.stop() == 0
    events = w.snapshot()

    # chat: each transcript record once, in file order
    ids = [r["id"] for r in records(rooms_dir / "rooms" / "tiny" / "transcript.jsonl")]
    assert [e["id"] for e in events if e["type"].startswith("chat.")] == ids
    chat = types(events, "chat.")
    assert chat.count("chat.budget_exhausted") == 1
    assert {"chat.message", "chat.mute", "chat.kick"} <= set(chat)
    assert "chat.pass" in chat or "chat.flavor" in chat

    # board: per task, the events of its log once and in order
    tasks = [e for e in events if e["type"].startswith("task.")]
    for tid in (task_id, other):
        log = rooms_dir / "rooms" / "default" / "board" / "tasks" / f"{tid.lower()}.jsonl"
        assert [e["type"] for e in tasks if e["task"] == tid] == [f"task.{TASK_EVENTS[r['ev']]}" for r in records(log)]
    assert [e["type"] for e in tasks if e["task"] == task_id] == ["task.created", "task.claimed", "task.renewed", "task.done"]
    done = next(e for e in tasks if e["type"] == "task.done")
    assert (done["summary"], done["next"], done["title"]) == ("spec written", "review it", "Write spec")
    assert [e["type"] for e in tasks if e["task"] == other] == [
        "task.created", "task.claimed", "task.released", "task.claimed", "task.lease_expired"]
    assert next(e for e in tasks if e["type"] == "task.lease_expired")["agent"] == "ops"

    # groups: the log once and in order; result, dropped and cancel among them
    group = [e for e in events if e.get("group") == "rev"]
    log = records(rooms_dir / "groups" / "rev.jsonl")
    assert [e["type"] for e in group] == [f"group.{GROUP_EVENTS[r['ev']]}" for r in log]
    assert {"group.broadcast", "group.reply", "group.result", "group.dropped", "group.cancel"} <= set(types(group, ""))
    assert types(group, "group.broadcast") == ["group.broadcast"] * 3
    assert [e["objective"] for e in group if e["type"] == "group.broadcast"] == ["review the api", "fastest answer", "never mind"]

    # inboxes: every message once, in order; group envelopes are left to the group's own events
    for path in sorted((rooms_dir / "inbox").glob("*.jsonl")):
        agent = path.name[: -len(".jsonl")]
        wanted = [r["n"] for r in records(path) if not str(r.get("tag", "")).startswith("group:")]
        assert [e["n"] for e in events if e["type"].startswith("inbox.") and e["agent"] == agent] == wanted
    assert [e["text"] for e in events if e["type"] == "inbox.direct" and e["agent"] == "bob"] == ["ready for review"]
    assert len([e for e in events if e["type"] == "inbox.broadcast" and e["text"] == "standup in five"]) >= 5

    # spawn: one start, one finish
    spawn = [e for e in events if e["type"].startswith("spawn.")]
    assert [e["type"] for e in spawn] == ["spawn.start", "spawn.finish"]
    assert spawn[1]["status"] == "done" and spawn[1]["agent"] == spawn[0]["agent"] and spawn[1]["parent"] == "alice"


def test_a_rehydrated_room_is_not_printed_again(project_dir, watcher):
    run("room", "create", "sync", "--agent", "researcher")
    w = watcher("--room", "sync")
    run("chat", "-r", "sync", "@researcher what about the api?")
    run("room", "drop", "-r", "sync")  # saves .rooms/chat/sync.md, then stops the room
    path = project_dir / ".rooms" / "rooms" / "sync" / "transcript.jsonl"
    inode = path.stat().st_ino
    run("room", "join", "chat/sync")  # rebuilds the transcript from the saved copy (os.replace)
    assert path.stat().st_ino != inode
    run("chat", "-r", "sync", "@researcher and after the rehydrate?")
    w.wait_for(lambda evs: any(e["text"] == "@researcher and after the rehydrate?" for e in evs), what="the new message")
    w.wait_for(lambda evs: len(evs) == len(records(path)), what="every record")
    time.sleep(0.5)
    assert w.stop() == 0
    assert [e["id"] for e in w.snapshot()] == [r["id"] for r in records(path)]


def test_a_renamed_group_is_not_printed_again(project_dir, watcher):
    w = watcher("--groups")
    run("group", "spawn", "old", "--profile", "researcher")
    w.wait_for(lambda evs: any(e["type"] == "group.member_added" for e in evs), what="the new group")
    run("group", "rename", "old", "new")
    w.wait_for(lambda evs: any(e["type"] == "group.renamed" for e in evs), what="the rename")
    run("group", "broadcast", "new", "--objective", "hello", "--output-format", "", "--tool-guidance", "", "--boundaries", "")
    w.wait_for(lambda evs: any(e["type"] == "group.broadcast" for e in evs), what="the broadcast")
    time.sleep(0.5)
    assert w.stop() == 0
    seen = [(e["group"], e["type"]) for e in w.snapshot()]
    assert seen == [("old", "group.created"), ("old", "group.member_added"), ("new", "group.renamed"),
                    ("new", "group.broadcast")]
