"""`rooms search` on the command line: its output, its errors, its progress line, and real processes
racing for its index."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rooms_cli.chat.rooms import create_room
from rooms_cli.chat.transcript import append_message
from rooms_cli.store import layout
from tests.conftest import rooms_env


@pytest.fixture
def said(project):
    create_room(project, "api", ["architect"])
    return [append_message(project, "api", "alice", "We cap the rate limit at 100 requests a minute."),
            append_message(project, "api", "bob", "The limit is per token, not per user.")]


def test_json_is_a_list_of_search_hit_records_best_first(cli, said):
    result = cli("search", "rate limit", "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json() == [{"kind": "chat", "id": said[0].id, "ref": f"msg:{said[0].id}", "who": "alice", "ts": said[0].ts,
                              "snippet": "We cap the **rate** **limit** at 100 requests a minute.", "room": "api"}]
    assert [hit["id"] for hit in cli("search", "limit", "--json").json()] == [said[1].id, said[0].id]


def test_the_words_need_no_quotes_and_a_leading_dash_goes_after_the_double_dash(cli, said):
    """`rooms search rate limit` is `rooms search "rate limit"`; after `--` every word is the query's."""
    quoted = cli("search", "rate limit", "--json").json()
    assert cli("search", "rate", "limit", "--json").json() == quoted != []
    assert cli("search", "rate", "limit", "--limit", "1").stdout.splitlines()[-1] == "1 hit"
    assert [hit["id"] for hit in cli("search", "--json", "--", "-rate", "limit").json()] == [said[1].id]
    assert cli("search", "nothing", "like", "this").stdout == "no hits for 'nothing like this'\n"


def test_the_flags_filter_as_their_names_say(cli, said, project):

    from rooms_cli.messaging.inbox import deliver

    deliver(project, "architect", "alice", "limit reached")
    assert {hit["kind"] for hit in cli("search", "limit", "--json").json()} == {"chat", "message"}
    assert {hit["kind"] for hit in cli("search", "limit", "--in", "messages", "--json").json()} == {"message"}
    assert {hit["who"] for hit in cli("search", "limit", "--from", "bob", "--json").json()} == {"bob"}
    assert {hit["kind"] for hit in cli("search", "limit", "--room", "api", "--json").json()} == {"chat"}
    assert len(cli("search", "limit", "--limit", "1", "--json").json()) == 1
    assert cli("search", "limit", "--since", "1d", "--json").json() != []


def test_a_person_sees_each_hit_where_it_lives_and_its_match_marked(cli, said):
    result = cli("search", "rate limit")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"msg:{said[0].id}  #api · alice · {said[0].ts[:16].replace('T', ' ')}",
        "  We cap the **rate** **limit** at 100 requests a minute.",
        "1 hit",
    ]
    assert cli("search", "nothing-like-this").stdout == "no hits for 'nothing-like-this'\n"


@pytest.mark.parametrize(("args", "said_text"), [
    (('"rate limit',), "unbalanced quote"),
    (("-",), "lone '-'"),
    (("rate", "--in", "chats"), "--in 'chats' is not something searched"),
    (("rate", "--limit", "0"), "--limit"),
    (("rate", "--since", "soon"), "--since 'soon'"),
])
def test_a_bad_query_or_flag_exits_2_with_one_sentence_and_no_traceback(rooms, project_dir, said, args, said_text):
    result = rooms("search", *args, env={"ROOMS_DIR": str(project_dir)})
    assert result.exit_code == 2
    assert said_text in result.stderr and "Traceback" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if line.lower().startswith("error:")]) == 1, result.stderr
    as_json = rooms("search", *args, "--json", env={"ROOMS_DIR": str(project_dir)})
    assert as_json.exit_code == 2 and json.loads(as_json.stderr.strip().splitlines()[-1])["error"]["code"] == "usage"
    assert not Path(layout.search_index_file(__import__("rooms_cli.store.paths", fromlist=["x"]).open_project(project_dir))).exists()


def test_the_first_build_shows_a_progress_line_on_a_terminal_only(project_dir, project, rooms):
    import pexpect

    create_room(project, "big", ["architect"])
    path = Path(layout.transcript_file(project, "big"))
    with open(path, "a") as out:
        for n in range(60_000):
            out.write(json.dumps({"id": f"m-{n:026d}", "ts": "2026-01-01T00:00:00.000Z", "room": "big", "speaker": "a",
                                  "kind": "message", "text": f"message number {n} about the quarterly roadmap"}) + "\n")
    env = rooms_env({"ROOMS_DIR": str(project_dir), "NO_COLOR": "1", "TERM": "xterm"})
    # the line shows once a build has taken half a second: a fast machine builds 60 000 lines sooner,
    # so this process shows it at once (what is tested is the terminal, not the machine's speed)
    at_once = ("import sys; from rooms_cli.cli.search_view import Progress; Progress.SHOW_AFTER = 0; "
               "sys.argv[1:] = ['search', 'roadmap', '--limit', '1']; from rooms_cli.cli.fast import main; main()")
    child = pexpect.spawn(sys.executable, ["-c", at_once], env=env, encoding="utf-8", timeout=120, dimensions=(24, 120))
    child.expect("indexing")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    Path(layout.search_index_file(project)).unlink()
    piped = rooms("search", "roadmap", "--limit", "1", env={"ROOMS_DIR": str(project_dir)})
    assert piped.exit_code == 0 and piped.stderr == ""


WRITER = """
import sys
from rooms_cli.store.paths import open_project
from rooms_cli.chat.transcript import append_message
project = open_project(sys.argv[1])
for n in range(int(sys.argv[2])):
    append_message(project, "api", "writer", f"concurrent note {n}")
"""


def test_searches_racing_each_other_and_a_writer_never_corrupt_the_index_or_index_a_line_twice(project_dir, project, said):
    env = rooms_env({"ROOMS_DIR": str(project_dir)})
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(project_dir), "150"], env=env)
    searches = [subprocess.Popen([sys.executable, "-c",
                                  "import subprocess, sys\n"
                                  "for _ in range(6):\n"
                                  "    r = subprocess.run([sys.executable, '-m', 'rooms_cli', 'search', 'concurrent note', '--json'],"
                                  " capture_output=True, text=True)\n"
                                  "    assert r.returncode == 0, r.stderr\n"], env=env) for _ in range(4)]
    assert writer.wait(timeout=300) == 0
    assert all(proc.wait(timeout=300) == 0 for proc in searches)
    final = subprocess.run([sys.executable, "-m", "rooms_cli", "search", "concurrent note", "--limit", "1000", "--json"],
                           env=env, capture_output=True, text=True, timeout=120)
    assert len(json.loads(final.stdout)) == 150
    db = sqlite3.connect(layout.search_index_file(project))
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.execute("INSERT INTO text_index (text_index) VALUES ('integrity-check')")  # raises if the text index disagrees
    assert db.execute("SELECT count(*), count(DISTINCT rid) FROM docs WHERE kind = 'chat'").fetchone() == (152, 152)


def test_the_mcp_tool_takes_the_same_arguments_strictly_and_returns_bounded_hits(project_dir, project):
    pytest.importorskip("mcp", reason="the MCP SDK is the extra rooms-cli[mcp] (in the test extras)")
    import asyncio

    from jsonschema import Draft202012Validator
    from mcp.shared.exceptions import MCPError

    from rooms_cli.core.shapes import RECORDS
    from tests.test_mcp import server

    create_room(project, "api", ["architect"])
    for n in range(120):
        append_message(project, "api", "alice", f"outage report {n}")

    async def go():
        async with server(project_dir) as t:
            tool = {tool.name: tool for tool in (await t.client.list_tools()).tools}["search"]
            assert set(tool.input_schema["properties"]) == {"query", "within", "room", "who", "since", "limit"}
            assert tool.input_schema["properties"]["limit"]["maximum"] == 100
            assert tool.annotations.read_only_hint is True
            found = await t.ok("search", query="outage", limit=100)
            assert (found["count"], found["remaining"], found["next_cursor"]) == (100, 20, None)
            for hit in found["hits"]:
                assert not list(Draft202012Validator(RECORDS["hit"]).iter_errors(hit))
            assert (await t.ok("search", query="outage", within=["tasks"]))["hits"] == []
            assert (await t.ok("search", query="outage", who="bob"))["hits"] == []
            assert "unbalanced quote" in (await t.error("search", query='"outage'))["message"]
            assert (await t.error("search", query="outage", limit=101))["code"] == "usage"
            assert (await t.error("search", query="outage", within=["chats"]))["code"] == "usage"
            with pytest.raises(MCPError):
                await t.raw("search", query="outage", form="alice")  # an unknown argument is refused, never ignored

    asyncio.run(go())
