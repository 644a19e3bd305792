"""Claude Code hooks, fed the exact JSON Claude Code sends for each event (hooks reference:
common fields session_id, transcript_path, cwd, permission_mode, hook_event_name, plus each event's own)."""

from __future__ import annotations

import json

import pytest


def _common(event: str, cwd: str) -> dict:
    return {
        "session_id": "abc123",
        "transcript_path": "/home/u/.claude/projects/proj/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": event,
    }


def session_start(cwd, source="startup") -> str:
    return json.dumps({**_common("SessionStart", cwd), "source": source, "model": "claude-sonnet-4-5"})


def user_prompt(cwd, prompt="go on") -> str:
    return json.dumps({**_common("UserPromptSubmit", cwd), "prompt": prompt})


def stop(cwd, active=False) -> str:
    return json.dumps({**_common("Stop", cwd), "stop_hook_active": active,
                       "last_assistant_message": "All done."})


def subagent_stop(cwd, active=False) -> str:
    return json.dumps({**_common("SubagentStop", cwd), "stop_hook_active": active, "agent_id": "a7f3c2",
                       "agent_type": "general-purpose",
                       "agent_transcript_path": "/home/u/.claude/projects/proj/subagents/agent-a7f3c2.jsonl",
                       "last_assistant_message": "Found 3 call sites."})


def _unread(project, agent):
    from rooms_cli.messaging.inbox import unread_messages

    return unread_messages(project, agent)


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_session_start_gives_the_attention_block_as_additional_context(cli, project_dir, project, source):
    cli("send", "--as", "alice", "--to", "bob", "the API is yours")
    run = cli("hook", "claude-code", "session-start", "--as", "bob", input=session_start(str(project_dir), source))
    assert run.exit_code == 0, run.stderr
    out = json.loads(run.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    assert out["additionalContext"].startswith("[rooms] You are bob.")
    assert "#1 alice: the API is yours" in out["additionalContext"]
    assert _unread(project, "bob") == []  # injected: the model has seen it


def test_session_start_says_who_the_session_is_even_when_nothing_waits(cli, project_dir):
    cli("send", "--as", "bob", "hello all")  # announced, nothing unread
    run = cli("hook", "claude-code", "session-start", "--as", "bob", input=session_start(str(project_dir)))
    assert "You are bob." in json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]


def test_subagent_stop_lets_the_subagent_finish_and_leaves_the_sessions_messages_unread(cli, project_dir, project):
    cli("send", "--as", "alice", "--to", "bob", "review my patch")
    run = cli("hook", "claude-code", "stop", "--as", "bob", "--timeout", "1s", input=subagent_stop(str(project_dir)))
    assert (run.exit_code, run.stdout) == (0, "")
    assert [m.text for m in _unread(project, "bob")] == ["review my patch"]
    # the session's own Stop hands them over
    block = json.loads(cli("hook", "claude-code", "stop", "--as", "bob", input=stop(str(project_dir))).stdout)
    assert block["decision"] == "block" and "review my patch" in block["reason"]


def test_stop_hook_with_the_stop_payload_blocks_on_unread_messages(cli, project_dir):
    cli("send", "--as", "alice", "--to", "bob", "one more thing")
    run = cli("hook", "claude-code", "stop", "--as", "bob", input=stop(str(project_dir)))
    assert json.loads(run.stdout) == {"decision": "block", "reason": json.loads(run.stdout)["reason"]}
    assert "#1 alice: one more thing" in json.loads(run.stdout)["reason"]
    assert cli("hook", "claude-code", "stop", "--as", "bob", input=stop(str(project_dir), active=True)).stdout == ""


@pytest.mark.parametrize("hook, payload", [
    ("stop", user_prompt), ("stop", session_start),
    ("prompt", stop), ("prompt", session_start), ("prompt", subagent_stop),
    ("session-start", user_prompt), ("session-start", stop),
])
def test_a_hook_given_another_events_payload_does_nothing(cli, project_dir, project, hook, payload):
    cli("send", "--as", "alice", "--to", "bob", "still unread")
    run = cli("hook", "claude-code", hook, "--as", "bob", input=payload(str(project_dir)))
    assert (run.exit_code, run.stdout) == (0, "")
    assert "ignores a" in run.stderr
    assert len(_unread(project, "bob")) == 1


def test_user_prompt_submit_payload_gets_the_attention_block(cli, project_dir):
    cli("send", "--as", "alice", "--to", "bob", "status?")
    run = cli("hook", "claude-code", "prompt", "--as", "bob", input=user_prompt(str(project_dir)))
    out = json.loads(run.stdout)["hookSpecificOutput"]
    assert out == {"hookEventName": "UserPromptSubmit", "additionalContext": out["additionalContext"]}
    assert "#1 alice: status?" in out["additionalContext"]


def test_the_example_settings_wire_each_command_to_its_own_event(cli, project_dir, project):
    import shlex

    settings = json.loads(cli("hook", "claude-code", "settings").stdout)  # shipped as package data
    makers = {"SessionStart": session_start, "UserPromptSubmit": user_prompt, "Stop": stop}
    assert set(settings["hooks"]) == set(makers)
    cli("send", "--as", "alice", "--to", "bob", "hello from the example")
    outputs = {}
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        for group in settings["hooks"][event]:
            for hook in group["hooks"]:
                argv = shlex.split(hook["command"])
                assert argv[0] == "rooms"
                run = cli(*argv[1:], "--as", "bob", input=makers[event](str(project_dir)))
                assert run.exit_code == 0, run.stderr
                outputs[event] = run.stdout
    # SessionStart handed the message over; the later hooks see it read
    assert "hello from the example" in outputs["SessionStart"]
    assert "hello from the example" not in outputs["UserPromptSubmit"] + outputs["Stop"]
    assert settings["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
