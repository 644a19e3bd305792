"""Interactive chat mode through a real pseudo-terminal (pexpect)."""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect
from chatkit import records, room, state
from conftest import rooms_env


def spawn(project_dir, *args):
    env = rooms_env({"ROOMS_DIR": str(project_dir), "NO_COLOR": "1", "TERM": "xterm", "ROOMS_AGENT": "alice"})
    child = pexpect.spawn(sys.executable, ["-m", "rooms_cli", "chat", *args], env=env, encoding="utf-8", timeout=30,
                          dimensions=(40, 200))
    child.expect("Chat mode in room")
    return child


def test_chat_mode_streams_replies_runs_slash_commands_and_leaves(project_dir, project):
    room(project)
    child = spawn(project_dir, "--room", "sync")
    child.expect("sync> ")
    child.sendline("@ops what about deploy latency?")
    child.expect("ops: ")
    child.expect("sync> ")
    child.sendline("/mute ops")
    child.expect("ops muted in sync")
    child.expect("sync> ")
    child.sendline("/frobnicate")
    child.expect("unknown command /frobnicate")
    child.expect("sync> ")
    child.sendline("/leave")
    child.expect("the room keeps running")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert state(project).live and state(project).muted == ["ops"]
    assert [m.speaker for m in records(project, kind="message")] == ["alice", "ops"]


def test_tab_completes_slash_commands_and_agent_names(project_dir, project):
    room(project)
    child = spawn(project_dir, "--room", "sync")
    child.expect("sync> ")
    child.send("/inv\t")
    child.expect("/invite ")
    child.send("jud\t")
    child.expect("judge ")
    child.send("\r")
    child.expect("judge joined sync")
    child.expect("sync> ")
    child.send("@reso\t\t")  # no agent starts with "reso": nothing to complete
    child.send("\x15")  # clear the line
    child.send("@resea\t")
    child.expect("@researcher ")
    child.send("api rate limits?\r")
    child.expect("researcher: ")
    child.expect("sync> ")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert "judge" in state(project).roster


def test_history_is_kept_between_sessions(project_dir, project):
    room(project)
    child = spawn(project_dir, "--room", "sync")
    child.expect("sync> ")
    child.sendline("/list")
    child.expect("budget 6/6")
    child.expect("sync> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    assert "/list" in Path(project.path("run", "chat-history")).read_text()
    child = spawn(project_dir, "--room", "sync")
    child.expect("sync> ")
    child.send("\x1b[A")  # up arrow: the previous session's line
    child.expect("/list")
    child.send("\r")
    child.expect("budget 6/6")
    child.sendline("/quit")
    child.expect(pexpect.EOF)


def test_join_switches_room_inside_chat_mode(project_dir, project):
    room(project)
    child = spawn(project_dir, "--room", "sync")
    child.expect("sync> ")
    child.sendline("/join other")
    child.expect("Created room other")
    child.expect("other> ")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
