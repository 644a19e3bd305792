"""Spawns and woken agents whose profile runs on llama.cpp's real server."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration


def ok(run):
    assert run.exit_code == 0, run.stderr
    return run.json()


def spawn_record(project_dir, spawn_id) -> dict:
    return json.loads((project_dir / ".rooms" / "spawns" / f"{spawn_id}.json").read_text("utf-8"))


def test_spawn_with_a_llama_profile_delivers_the_models_reply_to_the_parent(llama_project, llama_server, rooms):
    mark = llama_server.log_mark()
    spawned = ok(rooms("spawn", "--as", "tester", "Summarise the plan", "--description", "plan summary",
                       "--profile", "archer", "--json"))
    assert (spawned["alias"], spawned["profile"], spawned["model"]) == ("plan-summary", "archer", "llamacpp:tiny")
    assert spawned["status"] in ("starting", "running")  # detached: `rooms spawn` did not wait for the model
    waited = ok(rooms("wait", "--as", "tester", "--timeout", "60", "--json"))
    assert waited["timed_out"] is False and waited["pending"] == []
    [message] = waited["messages"]
    record = spawn_record(llama_project, spawned["id"])
    assert (record["status"], record["exit_code"]) == ("done", 0)
    assert (message["from"], message["kind"]) == ("plan-summary", "spawn_output")
    assert message["meta"]["spawn"] == spawned["id"]
    assert message["text"] == record["output"] and record["output"].strip()
    assert [what for what, _, _ in llama_server.engine_events(mark)] == ["start", "end"]


def test_a_spawn_the_engine_refuses_reports_the_error_to_the_parent(llama_project, rooms):
    # a token a character: this prompt overflows the 4096-token slot and llama.cpp answers 400
    spawned = ok(rooms("spawn", "--as", "tester", "y " * 3000, "--profile", "courier", "--json"))
    waited = ok(rooms("wait", "--as", "tester", "--timeout", "60", "--json"))
    [message] = waited["messages"]
    assert message["kind"] == "spawn_error" and message["meta"]["spawn"] == spawned["id"]
    assert "llamacpp" in message["text"] and "context window" in message["text"]
    record = spawn_record(llama_project, spawned["id"])
    assert record["status"] == "failed" and record["exit_code"] != 0


def test_send_wake_runs_a_llama_agent_whose_reply_comes_back_to_the_sender(llama_project, rooms):
    sent = ok(rooms("send", "--as", "tester", "--to", "builder", "--wake", "status please", "--json"))
    [woken] = sent["woken"]
    assert (woken["agent"], woken["model"]) == ("builder", "llamacpp:tiny") and woken["text"].strip()
    inbox = ok(rooms("inbox", "--as", "tester", "--json"))
    [reply] = [m for m in inbox["messages"] if m["from"] == "builder"]
    assert reply["text"] == woken["text"] and reply["meta"]["auto"] == "wake"
    assert reply["meta"]["quote"] == "status please"


def test_tick_wakes_a_llama_agent_with_unread_messages(llama_project, rooms):
    with open(llama_project / ".rooms.yaml", "a", encoding="utf-8") as config:
        config.write("wake: true\n")
    ok(rooms("send", "--as", "tester", "--to", "courier", "deploy status?", "--json"))
    tick = ok(rooms("tick", "--json"))
    [woken] = tick["steps"]["wake"]
    assert woken["action"] == "wake" and woken["detail"].startswith("courier "), woken
    inbox = ok(rooms("inbox", "--as", "tester", "--json"))
    [reply] = [m for m in inbox["messages"] if m["from"] == "courier"]
    assert reply["meta"]["auto"] == "wake" and reply["text"].strip()
