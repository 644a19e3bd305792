"""Groups against a real OpenAI-compatible HTTP server on 127.0.0.1 (tests/fakeserver.py):
concurrency of a gather, and wait-any's hard cancellation of in-flight calls."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from conftest import add_provider
from fakeserver import FakeServer, Reply

import rooms_cli
from rooms_cli.agents.definitions import Agent, create_agent
from rooms_cli.groups import status

LATENCY = {"fast": 0.3, "medium": 0.6, "slow": 3.0}


def answer(request):
    model = (request.json or {}).get("model", "")
    if model == "broken":
        return Reply.server_error(500)
    if model == "hang":
        return Reply.hanging()
    return Reply(text=f"{model} answer", delay=LATENCY.get(model, 0.3))


@pytest.fixture
def server(project_dir, monkeypatch):
    # socketserver's default listen backlog is 5: an 8-way burst of connects overflows it and the
    # kernel retries the SYN a second later, which would measure the test server, not rooms
    from http.server import ThreadingHTTPServer

    monkeypatch.setattr(ThreadingHTTPServer, "request_queue_size", 64)
    with FakeServer(answer) as s:
        add_provider(project_dir, f"local: {{type: openai, base_url: \"{s.openai_url}\", max_retries: 0, timeout: 30}}")
        yield s


def bots(project, **models):
    for agent_id, model in models.items():
        create_agent(project, Agent(id=agent_id, directive=f"You are {agent_id}.", model=f"local:{model}"))


def log_events(project, name):
    path = Path(project.path("groups", f"{name}.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def timed_gather(project, name, handles, **kw):
    await rooms_cli.spawn_group(name, handles, project=project)
    await rooms_cli.broadcast(name, objective="answer", output_format="", tool_guidance="", boundaries="", project=project)
    start = time.monotonic()
    result = await (rooms_cli.wait_any if kw.pop("any_", False) else rooms_cli.wait_all)(name, project=project, **kw)
    return result, time.monotonic() - start


def test_a_gather_of_eight_model_members_takes_about_as_long_as_one_call(project, server):
    bots(project, **{f"bot{i}": "fast" for i in range(8)})
    single = min(asyncio.run(timed_gather(project, f"one{i}", ["bot0"]))[1] for i in range(2))
    server.reset()
    result, wall = asyncio.run(timed_gather(project, "eight", [f"bot{i}" for i in range(8)]))
    assert result.metadata["replied"] == 8
    assert all(r.text == "fast answer" for r in result.by_member.values())
    # in parallel: all eight calls reached the server before the first could have been answered (the
    # server's own clock, so a loaded machine does not make it flaky; a wall-time bound of 1.6x failed
    # in CI at 2.5x while other work ran). The issue's figure, <= 1.3x, is bench/groups.py's to measure.
    arrivals = sorted(r.at for r in server.requests)
    assert len(arrivals) == 8 and arrivals[-1] - arrivals[0] < LATENCY["fast"], arrivals
    assert wall / single <= 4, (wall, single)  # sequential would be 8x


def test_wait_any_cancels_the_slow_members_http_call_at_once_and_returns_with_the_fastest(project, server):
    bots(project, hare="fast", tortoise="slow")

    async def scenario():
        result, wall = await timed_gather(project, "race", ["hare", "tortoise"], any_=True)
        return result, wall, time.monotonic()

    result, wall, returned_at = asyncio.run(scenario())
    assert result.reduced == "fast answer" and result.metadata["winner_handle"] == "hare"
    assert result.by_member["tortoise"].status == "cancelled"
    assert wall <= LATENCY["fast"] * 1.1 + 0.15, wall  # within 10% of the fastest member (+ slack for a busy machine)
    assert server.wait_closed_early(1, timeout=2.0)
    (slow_request,) = [r for r in server.requests if r.json["model"] == "slow"]
    assert slow_request.closed_early and slow_request.closed_at - returned_at < 0.5
    assert not [e for e in log_events(project, "race") if e["ev"] == "reply" and e["handle"] == "tortoise"]


def test_wait_any_over_the_cli_closes_the_losers_connection_before_it_answers(project, server, rooms):
    bots(project, hare="fast", tortoise="slow")
    rooms("group", "spawn-mixed", "race", "--profiles", "hare,tortoise")
    rooms("group", "broadcast", "race", "--objective", "go", "--output-format", "", "--tool-guidance", "", "--boundaries", "")
    start = time.monotonic()
    run = rooms("group", "wait", "race", "--any", "--json")
    assert run.exit_code == 0, run.stderr
    assert time.monotonic() - start < LATENCY["slow"]
    assert run.json()["reduced"] == "fast answer"
    assert server.wait_closed_early(1, timeout=2.0)


def test_without_cancel_losers_the_slow_reply_still_arrives_and_is_recorded_as_dropped(project, server):
    bots(project, hare="fast", snail="medium")

    async def scenario():
        result, _ = await timed_gather(project, "race", ["hare", "snail"], any_=True, cancel_losers=False)
        await rooms_cli.groups.api.drain()
        return result

    result = asyncio.run(scenario())
    assert result.reduced == "fast answer" and result.by_member["snail"].status == "pending"
    dropped = [e for e in log_events(project, "race") if e["ev"] == "dropped"]
    assert [(e["handle"], e["text"]) for e in dropped] == [("snail", "medium answer")]
    assert server.closed_early == 0
    stored = asyncio.run(rooms_cli.wait_all("race", project=project))
    assert stored.reduced == "fast answer"  # the late reply was never reduced


def test_wait_all_timeout_cancels_a_hanging_call_and_keeps_the_replies_that_arrived(project, server):
    bots(project, quick="fast", stuck="hang")
    result, wall = asyncio.run(timed_gather(project, "g", ["quick", "stuck"], timeout=1.0))
    assert result.timed_out and wall < 2.5
    assert result.by_member["quick"].status == "ok" and result.by_member["stuck"].status == "timeout"
    assert result.reduced == "fast answer"
    assert server.wait_closed_early(1, timeout=2.0)


def test_a_failing_provider_marks_the_member_errored_without_failing_the_others(project, server):
    bots(project, good="fast", bad="broken")
    result, _ = asyncio.run(timed_gather(project, "g", ["good", "bad"]))
    assert result.by_member["bad"].status == "error" and "500" in result.by_member["bad"].text
    assert result.by_member["good"].status == "ok" and result.reduced == "fast answer"
    assert status.status(project, "g")["label"] == "▣ g [0/2 ⚠]"


def test_a_killed_waiter_leaves_the_broadcast_in_flight_and_the_next_wait_finishes_it(project, server, rooms):
    import os
    import signal
    import subprocess
    import sys

    from conftest import rooms_env

    bots(project, quick="fast", steady="medium")
    rooms("group", "spawn-mixed", "g", "--profiles", "quick,steady")
    rooms("group", "broadcast", "g", "--objective", "go", "--output-format", "", "--tool-guidance", "", "--boundaries", "")
    waiter = subprocess.Popen([sys.executable, "-m", "rooms_cli", "group", "wait", "g"], env=rooms_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not [e for e in log_events(project, "g") if e["ev"] == "reply"] and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(waiter.pid, signal.SIGKILL)  # after the quick reply landed, before the medium one
    waiter.wait(timeout=10)
    info = rooms("group", "status", "g", "--json").json()
    assert info["in_flight"] is not None and info["in_flight"]["pending"] == ["steady"]
    server.reset()
    run = rooms("group", "wait", "g", "--json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["metadata"]["replied"] == 2
    assert [r.json["model"] for r in server.requests] == ["medium"]  # only the member that had not answered


def test_wait_any_cancels_a_losing_sub_group_its_calls_and_its_external_members(project, server):
    from rooms_cli.messaging.inbox import read_inbox

    bots(project, hare="fast", tortoise="slow")
    create_agent(project, Agent(id="coder", directive="An outside agent.", model="external"))

    async def scenario():
        await rooms_cli.spawn_group("inner", ["tortoise", "coder"], project=project)
        await rooms_cli.spawn_group("outer", ["hare", "group:inner"], project=project)
        await rooms_cli.broadcast("outer", objective="go", output_format="", tool_guidance="", boundaries="", project=project)
        return await rooms_cli.wait_any("outer", project=project)

    result = asyncio.run(scenario())
    assert result.metadata["winner_handle"] == "hare" and result.by_member["inner"].status == "cancelled"
    assert server.wait_closed_early(1, timeout=2.0)  # the sub-group's slow call was closed
    inner = status.status(project, "inner")
    assert inner["in_flight"] is None and inner["recent"][0]["status"] == "cancelled"
    assert [m.kind for m in read_inbox(project, "coder")] == ["group", "group_cancel"]
    assert read_inbox(project, "coder")[1].tag.startswith("group:inner/cancel:")
