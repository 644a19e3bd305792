"""Damaged files: every kind of file under .rooms/ (and .rooms.yaml), broken in each way a disk,
a crash, a bad merge or a careless edit breaks it, read by the commands that read it.

A broken file is never a traceback: a log with a bad line is read with a warning naming the file
and line (the other lines are kept, nothing is lost); a file that cannot be used at all is one
clear sentence naming it, exit 1, and nothing else is changed.
"""

from __future__ import annotations

import json

import hardening_kit
import pytest
from hardening_kit import changed_files, invoke, problems_with_error, snapshot

template, populated = hardening_kit.template, hardening_kit.populated  # fixtures

BINARY = bytes(range(256)) * 4 + b"\x00\xff\xfe"

# file kind -> (path under the project, the commands that read it)
KINDS: dict[str, tuple[str, list[list[str]]]] = {
    "transcript": (".rooms/rooms/demo-chat/transcript.jsonl", [
        ["transcript", "--room", "demo-chat"], ["transcript", "--room", "demo-chat", "--last", "3"],
        ["chat", "what about rate limits?", "--room", "demo-chat"], ["room", "save", "--room", "demo-chat"],
        ["watch", "--room", "demo-chat", "--timeout", "0.2", "--last", "5"]]),
    "session": (".rooms/rooms/demo-chat/sessions/researcher.jsonl", [
        ["chat", "@researcher what is the rate limit?", "--room", "demo-chat"], ["room", "show", "demo-chat"]]),
    "inbox": (".rooms/inbox/you.jsonl", [
        ["inbox", "--peek"], ["inbox"], ["attention", "--peek"], ["send", "hi", "--to", "you", "--as", "boss"],
        ["wait", "--timeout", "5s"], ["watch", "--inbox", "you", "--timeout", "0.2", "--last", "5"]]),
    "inbox read marks": (".rooms/inbox/read/you.jsonl", [["inbox", "--unread"], ["attention", "--peek"]]),
    "group log": (".rooms/groups/race.jsonl", [
        ["group", "status", "race"], ["group", "list"], ["group", "reply", "race", "yes", "--as", "coder"],
        ["group", "cancel", "race"], ["watch", "--groups", "--timeout", "0.2", "--last", "5"]]),
    "board task": (".rooms/rooms/default/board/tasks/{task}.jsonl", [
        ["board"], ["board", "--json"], ["task", "show", "{TASK}"], ["task", "claim", "{TASK}", "--as", "reviewer"],
        ["task", "next", "--as", "reviewer"], ["tick"], ["watch", "--board", "--timeout", "0.2", "--last", "5"]]),
    "memories": (".rooms/memories/analyst.jsonl", [
        ["memory", "list", "analyst"],
        ["roundtable", "run", "deep-dive", "--participants", "analyst,boss,hustler,writer", "--turns", "2", "--force", "--topic", "x"],
        ["memory", "forget", "analyst", "--all"]]),
    "roundtable queue": (".rooms/roundtables/queue.jsonl", [
        ["tick", "--dry-run"], ["roundtable", "queue"], ["roundtable", "queue", "debate", "--topic", "x"], ["tick"]]),
    "spawn record": (".rooms/spawns/{spawn}.json", [["wait", "--timeout", "5s"], ["agents"], ["tick"]]),
    "status": (".rooms/status/you.jsonl", [["agents"], ["attention", "--peek"], ["status", "set", "here"]]),
    "room state": (".rooms/rooms/demo-chat/state.jsonl", [
        ["room", "show", "demo-chat"], ["room", "list"], ["chat", "hello", "--room", "demo-chat"],
        ["transcript", "--room", "demo-chat"], ["agent", "show", "researcher"]]),
    "agent": (".rooms/agents/researcher.md", [
        ["agent", "list"], ["agent", "show", "researcher"], ["chat", "@researcher hello", "--room", "demo-chat"],
        ["roundtable", "run", "standup", "--turns", "2", "--force", "--topic", "x"], ["models", "test", "researcher"]]),
    "config": (".rooms.yaml", [
        ["config", "show"], ["agent", "list"], ["chat", "hello", "--room", "demo-chat"], ["board"],
        ["tick", "--dry-run"], ["models", "list"], ["group", "list"], ["inbox", "--peek"]]),
    "saved transcript": (".rooms/chat/demo-chat/{save}.md", [["room", "join", "chat/demo-chat"]]),
}
# the config is read by nearly every command: four of them are enough per damage (the broken-config
# test below runs them all)
SHORT = {"config": 4}

LOGS = {k for k, (p, _) in KINDS.items() if p.endswith(".jsonl")}
MALFORMED = {
    ".json": b'{"status": "running", ',
    ".yaml": b"id: demo-chat\nroster: [a, b\nmuted: {\n",
    ".md": b"---\ntags: 5\nmodel: [x\n---\nYou are broken.\n",
}
CONFIG_BREAKS = {
    "malformed": b"providers: {x: [\n",
    "wrong type": b"providers: 5\n",
    "unknown provider type": b"providers:\n  x: {type: telepathy}\n",
    "command as a string": b"providers:\n  x: {type: command, command: 'claude -p'}\n",
    "a key in the file": b"providers:\n  x: {type: openai, api_key: sk-123}\n",
    "a list": b"- a\n- b\n",
}


# commands that never need the config: they may run on while it is broken
CONFIG_FREE = {"board", "inbox", "group"}


# a well-formed line whose field has the wrong type (a hand edit, a bad merge): readers name file and
# field (store/schema.py), doctor reports it
WRONG_TYPED = {
    "status": b'{"id": "st-01WRONG", "ts": "2026-01-01T00:00:00.000Z", "status": ["not", "text"]}\n',
    "room state": b'{"op": "set", "field": "budget_remaining", "value": "abc", "ts": "2099-01-01T00:00:00.000Z", '
                  b'"eid": "e-01WRONG", "seq": 999}\n',
    "board task": b'{"ev": "create", "task": "t-01WRONG", "lane": "../../x", "title": "t", "at": "2026-01-01T00:00:00.000Z"}\n',
}


def damages(kind: str) -> list[str]:
    if kind in WRONG_TYPED:
        return ["bad middle line", "torn tail", "empty", "binary", "a directory", "unresolved merge", "wrong type"]
    if kind in LOGS:
        # a line that is JSON but not an object takes the same path as "bad middle line" (the fuzzers try both)
        return ["bad middle line", "torn tail", "empty", "binary", "a directory", "unresolved merge"]
    return ["malformed", "empty", "binary", "a directory", "unresolved merge"]


def placeholders(root) -> dict[str, str]:
    """{task}: the open task of the reviewer lane; {spawn}: the finished spawn."""
    tasks = [p for p in (root / ".rooms/rooms/default/board/tasks").glob("t-*.jsonl") if b'"reviewer"' in p.read_bytes()]
    spawn = next((root / ".rooms/spawns").glob("s-*.json"))
    save = next((root / ".rooms/chat/demo-chat").glob("s-*.md"))
    return {"{task}": tasks[0].stem, "{TASK}": tasks[0].stem.upper(), "{spawn}": spawn.stem, "{save}": save.stem}


def resolve(fill: dict[str, str], text: str) -> str:
    for key, value in fill.items():
        text = text.replace(key, value)
    return text


def damage(path, how: str, original: bytes) -> None:
    if how == "bad middle line":
        lines = original.splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:1]) + b"{this is not json\n" + b"".join(lines[1:]))
    elif how == "not an object":
        lines = original.splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:1]) + b"[1, 2, 3]\n" + b"".join(lines[1:]))
    elif how == "torn tail":
        path.write_bytes(original + b'{"id": "m-01TORN", "text": "half a')
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "binary":
        path.write_bytes(BINARY)
    elif how == "a directory":
        path.unlink()
        path.mkdir()
        (path / "x").write_text("x")
    elif how == "malformed":
        path.write_bytes(MALFORMED[path.suffix])
    elif how == "wrong type":
        kind = {"status": "status", "tasks": "board task"}.get(path.parent.name, "room state")
        path.write_bytes(original + WRONG_TYPED[kind])
    elif how == "unresolved merge":
        # what git leaves when it could not merge: both sides between conflict markers
        lines = original.splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:1]) + b"<<<<<<< HEAD\n" + b"".join(lines[1:]) + b"=======\n"
                         + b"".join(lines[1:2]) + b">>>>>>> theirs\n")


CASES = [(kind, how) for kind in KINDS for how in damages(kind)]


@pytest.mark.parametrize("kind,how", CASES, ids=str)
def test_a_damaged_file_is_a_warning_or_one_sentence_never_a_traceback(populated, kind, how):
    rel, commands = KINDS[kind]
    commands = commands[: SHORT.get(kind)]
    fill = placeholders(populated)
    path = populated / resolve(fill, rel)
    assert path.is_file(), f"the template has no {rel}"
    original = path.read_bytes()
    good = [ln for ln in original.splitlines() if ln.strip()]
    damage(path, how, original)
    for command in commands:
        args = [resolve(fill, a) for a in command]
        before = snapshot(populated)
        out = invoke(args, input="{}")
        assert not problems_with_error(out, codes=(0, 1)), (kind, how, args, problems_with_error(out, codes=(0, 1)))
        if how == "unresolved merge" and path.name in out.stderr:
            # one clear error (or, where the command goes on without the file, a warning) naming it
            assert "unresolved git merge" in out.stderr, (kind, how, args, out.stderr)
        if out.exit_code == 1:
            assert path.name in out.stderr or path.parent.name in out.stderr, (kind, how, args, out.stderr)
            # an I/O failure (or a conflicted log refusing an append) may come after the command's work (a
            # chat turn, then its session); a tick runs its other steps before it exits 1 for the one that failed
            if how not in ("a directory", "unresolved merge") and args[0] != "tick":
                assert changed_files(before, snapshot(populated)) == [], (kind, how, args)
        elif how in ("bad middle line", "not an object"):
            # read on, but never silently: the warning names the file and the line
            if args[:2] != ["memory", "forget"]:  # forgetting all lessons drops the bad line too, as asked
                assert f"{path.name}" in out.stderr and "line " in out.stderr, (kind, how, args, out.stderr)
        if how in ("bad middle line", "not an object", "torn tail") and path.is_file():
            kept = path.read_bytes().splitlines()
            lost = [ln for ln in good if ln not in kept]
            assert not lost or args[:2] in (["memory", "forget"],), (kind, how, args, f"{len(lost)} good lines lost")


@pytest.mark.parametrize("kind", sorted(WRONG_TYPED), ids=str)
def test_doctor_finds_every_wrong_typed_file(populated, kind):
    rel = resolve(placeholders(populated), KINDS[kind][0])
    path = populated / rel
    damage(path, "wrong type", path.read_bytes())
    out = invoke(["doctor", "--json"])
    assert out.exit_code == 1, out
    findings = json.loads(out.stdout)["findings"]
    assert any(f["severity"] == "error" and path.name in f["message"] for f in findings), (kind, findings)


@pytest.mark.parametrize("how", sorted(CONFIG_BREAKS), ids=str)
def test_a_broken_config_is_one_sentence_naming_the_file_and_key(populated, how):
    (populated / ".rooms.yaml").write_bytes(CONFIG_BREAKS[how])
    before = snapshot(populated)
    for command in KINDS["config"][1]:
        out = invoke(command)
        if out.exit_code == 0 and command[0] in CONFIG_FREE:
            continue
        assert not problems_with_error(out), (how, command, problems_with_error(out))
        assert ".rooms.yaml" in out.stderr, (how, command, out.stderr)
    assert changed_files(before, snapshot(populated)) == []


AGENT_BREAKS = {
    "no frontmatter end": "---\ntags: [a]\nYou never close the frontmatter.\n",
    "tags a number": "---\ntags: 5\n---\nYou are x.\n",
    "temperature text": "---\ntemperature: hot\n---\nYou are x.\n",
    "unknown provider": "---\nmodel: nosuchprovider:x\n---\nYou are x.\n",
    "no directive": "---\nname: X\n---\n",
    "id with a slash": "---\nid: ../etc\n---\nYou are x.\n",
    "voice a list": "---\nvoice: [a, b]\n---\nYou are x.\n",
    "affinity out of range": "---\naffinity: {boss: 7}\n---\nYou are x.\n",
    "frontmatter a list": "---\n- a\n- b\n---\nYou are x.\n",
}


@pytest.mark.parametrize("how", sorted(AGENT_BREAKS), ids=str)
def test_a_broken_agent_file_is_one_sentence_naming_the_file_and_field(populated, how):
    (populated / ".rooms/agents/researcher.md").write_text(AGENT_BREAKS[how])
    before = snapshot(populated)
    for command in KINDS["agent"][1]:
        out = invoke(command)
        assert not problems_with_error(out), (how, command, problems_with_error(out))
        assert "researcher.md" in out.stderr, (how, command, out.stderr)
    assert changed_files(before, snapshot(populated)) == []


# --- huge input, unreachable providers -------------------------------------------------------------

HUGE = ("lorem ipsum dolor sit amet " * 200_000)[:5_000_000]  # 5 MB, one argument
HUGE_COMMANDS = [
    ["chat", HUGE, "--room", "demo-chat"],
    ["send", HUGE, "--to", "researcher"],
    ["task", "add", HUGE, "--lane", "scribe", "--done", "x"],
    ["task", "add", "t", "--lane", "scribe", "--done", "x", "--detail", HUGE],
    ["group", "reply", "race", HUGE, "--as", "coder"],
    ["status", "set", HUGE],
    ["agent", "new", "big", "--directive", HUGE],
    ["roundtable", "queue", "debate", "--topic", HUGE],
]


@pytest.mark.parametrize("args", HUGE_COMMANDS, ids=lambda a: " ".join(x[:12] for x in a[:3]))
def test_a_huge_message_is_stored_whole_or_refused_in_one_sentence(populated, args):
    import time

    before = snapshot(populated)
    began = time.monotonic()
    out = invoke(args)
    took = time.monotonic() - began
    assert not problems_with_error(out, codes=(0, 1)), (args[:3], problems_with_error(out, codes=(0, 1)))
    assert took < 60, f"{args[:3]} took {took:.0f}s on a 5 MB input"
    changed = changed_files(before, snapshot(populated))
    if out.exit_code == 1:
        assert changed == [], changed
        return
    from rooms_cli.store import jsonl

    for rel in changed:
        if rel.endswith(".jsonl"):
            assert not jsonl.parse_bytes((populated / rel).read_bytes()).bad, rel


def test_an_unreachable_provider_is_one_sentence_or_a_visible_system_line(populated, closed_port):
    port = closed_port
    (populated / ".rooms.yaml").write_text(
        f"default_model: dead:tiny\nproviders:\n  dead: {{type: openai, base_url: 'http://127.0.0.1:{port}/v1', max_retries: 0}}\n")
    for args in (["models", "test", "researcher"], ["roundtable", "run", "standup", "--topic", "x", "--turns", "2", "--force"],
                 ["room", "handoff", "researcher", "--room", "demo-chat"]):
        out = invoke(args)
        assert not problems_with_error(out), (args, problems_with_error(out))
        assert f"127.0.0.1:{port}" in out.stderr and "server running" in out.stderr, (args, out.stderr)
    transcript = populated / ".rooms/rooms/demo-chat/transcript.jsonl"
    lines = len(transcript.read_bytes().splitlines())
    out = invoke(["chat", "@researcher what is the rate limit?", "--room", "demo-chat"])
    assert out.exit_code == 1 and "no agent could answer" in out.stderr and "Traceback" not in out.stderr, out.stderr
    new = [json.loads(x) for x in transcript.read_bytes().splitlines()[lines:]]
    assert [m["speaker"] for m in new][0] == "you"
    failures = [m for m in new if m["speaker"] != "you"]
    assert failures and all(f"127.0.0.1:{port}" in m["text"] for m in failures), new  # a system line, no half reply
