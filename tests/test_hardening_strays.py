"""A stray file never disables a part (issue 29, item 1).

A file that is not a record of its part — `spawns/README.json`, `groups/Notes.jsonl`,
`memories/Notes.jsonl`, `agents/README.md`, `inbox/Notes.jsonl`, a record `{}` with a valid name, a
directory under `.rooms/rooms/` whose name is not UTF-8 — is skipped with one warning on stderr (once
per process), never an error of an unrelated command; the Stop hook still blocks on unread messages;
`rooms doctor` names every one.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

STRAYS = {
    "spawns/README.json": "{}\n",
    "spawns/notes.json": "{}\n",  # a valid name, but not a spawn record
    "groups/Notes.jsonl": "{}\n",
    "memories/Notes.jsonl": "{}\n",
    "agents/README.md": "Our agents live here.\n",
    "inbox/Notes.jsonl": "{}\n",
    "inbox/read/Notes.jsonl": "{}\n",
    "status/Notes.jsonl": "{}\n",
}

# every command the issue saw fail, with the stray files planted; each must exit 0
COMMANDS = [
    ("send", "x", "--to", "bob", "--as", "alice"),
    ("agents",),
    ("attention", "--as", "bob", "--peek"),
    ("wait", "--as", "alice", "--timeout", "0.1"),
    ("tick",),
    ("group", "list"),
    ("memory", "list"),
    ("inbox", "--as", "bob", "--peek"),
    ("status", "set", "reviewing", "--as", "alice"),
]


def plant(root, strays=STRAYS) -> None:
    for rel, text in strays.items():
        path = root / ".rooms" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def stop_payload(cwd) -> str:
    return json.dumps({"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": False,
                       "last_assistant_message": "All done."})


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_stray_file_is_skipped_with_one_warning_and_never_fails_an_unrelated_command(project_dir, rooms, cli, args):
    assert cli("send", "hello", "--to", "bob", "--as", "alice").exit_code == 0
    plant(project_dir)
    run = rooms(*args, env={"ROOMS_DIR": str(project_dir)})
    assert run.exit_code == 0, run.stderr
    assert "Traceback" not in run.stderr and "error:" not in run.stderr
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning: skipping")]
    assert len(warnings) == len(set(warnings)), "each stray file is named once per process"
    for line in warnings:
        assert "rooms doctor lists it" in line


def test_the_stop_hook_still_blocks_on_unread_messages_when_a_stray_file_is_present(project_dir, rooms, cli):
    assert cli("send", "one more thing", "--to", "bob", "--as", "alice").exit_code == 0
    plant(project_dir)
    run = rooms("hook", "claude-code", "stop", "--as", "bob", input=stop_payload(project_dir),
                env={"ROOMS_DIR": str(project_dir)})
    assert run.exit_code == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["decision"] == "block" and "one more thing" in answer["reason"]
    assert cli("send", "and another", "--to", "bob", "--as", "alice").exit_code == 0
    prompt = rooms("hook", "claude-code", "prompt", "--as", "bob",
                   input=json.dumps({**json.loads(stop_payload(project_dir)), "hook_event_name": "UserPromptSubmit",
                                     "prompt": "go on"}), env={"ROOMS_DIR": str(project_dir)})
    assert prompt.exit_code == 0, prompt.stderr
    assert "and another" in prompt.stdout


def test_the_parts_still_list_their_own_records_beside_a_stray_file(project_dir, cli):
    assert cli("group", "spawn", "team", "--profile", "analyst").exit_code == 0
    plant(project_dir)
    listed = cli("group", "list", "--json")
    assert listed.exit_code == 0, listed.stderr
    assert [g["name"] for g in json.loads(listed.stdout)] == ["team"]
    agents = cli("agent", "list", "--json")
    assert agents.exit_code == 0, agents.stderr
    assert "README" not in agents.stdout


def test_doctor_names_every_stray_file(project_dir, cli):
    plant(project_dir)
    run = cli("doctor", "--offline", "--json")
    findings = json.loads(run.stdout)["findings"]
    named = {f["file"] for f in findings if f["check"] == "stray" and f["severity"] == "error"}
    assert named == {f".rooms/{rel}" for rel in STRAYS if rel != "spawns/notes.json"}
    # a record with a valid name that is not a record of its part: named by the part's own check
    assert any(f["file"] == ".rooms/spawns/notes.json" and f["severity"] == "error" for f in findings)
    # an error: had the file held records (a log renamed by hand), every reader would drop them
    assert run.exit_code == 1


@pytest.mark.skipif(sys.platform != "linux", reason="file names that are not UTF-8: a Linux file system")
@pytest.mark.parametrize("poll", ["0", "1"])
def test_watch_goes_on_past_a_room_directory_whose_name_is_not_utf8(project_dir, cli, poll):
    from test_watch_support import Watcher

    bad = os.path.join(os.fsencode(project_dir / ".rooms" / "rooms"), b"\xff\xfe")
    os.mkdir(bad)
    # past events too (--since): the first message is printed whether it lands before or after the start
    watcher = Watcher("--all", "--since", "2000-01-01T00:00:00Z", env={"ROOMS_DIR": str(project_dir), "ROOMS_WATCH_POLL": poll})
    try:
        assert cli("send", "watching", "--to", "bob", "--as", "alice").exit_code == 0
        watcher.wait_text("watching")  # the watcher is live, past the undecodable name at its start
        os.mkdir(os.path.join(bad, b"sub"))  # the notifier sees an event under the undecodable name
        assert cli("send", "still watching", "--to", "bob", "--as", "alice").exit_code == 0
        watcher.wait_text("still watching")
    finally:
        code = watcher.stop()
    assert code == 0 and "internal error" not in watcher.stderr and "Traceback" not in watcher.stderr, watcher.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="file names that are not UTF-8: a Linux file system")
def test_doctor_names_a_room_directory_whose_name_is_not_utf8(project_dir, cli):
    os.mkdir(os.path.join(os.fsencode(project_dir / ".rooms" / "rooms"), b"\xff\xfe"))
    run = cli("doctor", "--offline", "--json")
    assert run.exit_code == 1, run.stderr
    stray = [f for f in json.loads(run.stdout)["findings"] if f["check"] == "stray"]
    assert len(stray) == 1 and "\\xff\\xfe" in stray[0]["message"], stray
