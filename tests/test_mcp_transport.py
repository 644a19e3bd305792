"""The stdio transport of `rooms mcp` over the event loop's own pipes, and over plain files.

A client spawns the server with pipes: lines are read and written by the event loop (no worker
thread per line). A server reading a file of requests (`rooms mcp < requests.jsonl > answers.jsonl`)
has no pipe to hand to the loop and reads and writes through worker threads; both answer alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the extra rooms-cli[mcp] (in the test extras)")

from tests.conftest import rooms_env  # noqa: E402
from tests.test_mcp_strict import Pipe  # noqa: E402

HELLO = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "file", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def _call(request_id: int, name: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def test_a_file_of_requests_is_answered_into_a_file(project_dir, tmp_path):
    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps(m) + "\n" for m in [
        *HELLO, _call(1, "send", {"to": "bob", "message": "from a file"}), {"jsonrpc": "2.0", "id": 2, "method": "ping"}]))
    answers = tmp_path / "answers.jsonl"
    with open(requests, "rb") as stdin, open(answers, "wb") as stdout:
        done = subprocess.run([sys.executable, "-m", "rooms_cli", "mcp", "--dir", str(project_dir), "--as", "alice"],
                              stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=rooms_env({}), timeout=60)
    assert done.returncode == 0, done.stderr
    replies = {r["id"]: r for r in map(json.loads, answers.read_text().splitlines())}
    assert replies[1]["result"]["structuredContent"]["to"] == ["bob"], replies[1]
    assert replies[2]["result"] == {}


def test_long_lines_are_read_whole_over_a_pipe(project_dir):
    pipe = Pipe(project_dir)
    try:
        text = "x" * 90_000  # past asyncio's default 64 KiB line limit, within rooms' message limit
        pipe.send(_call(1, "send", {"to": "bob", "message": text}))
        answer = pipe.reply()
        assert "error" not in answer and not answer["result"]["isError"], str(answer)[:300]
        pipe.send(_call(3, "send", {"to": "bob", "message": "y" * (3 * 1024 * 1024)}))
        answer = pipe.reply()  # read whole, then refused by the message limit, not by the transport
        assert "the limit is 100000" in answer["result"]["structuredContent"]["error"]["message"], str(answer)[:300]
        pipe.send(_call(2, "inbox", {}))
        assert pipe.reply()["id"] == 2
    finally:
        pipe.close()


def test_the_pipes_are_blocking_again_after_the_server_ends(project_dir):
    """The loop's pipe transports make the descriptors non-blocking; a process that hands its pipe on
    (a shell pipeline) must get it back as it was."""
    read_end, write_end = os.pipe()
    out_read, out_write = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "rooms_cli", "mcp", "--dir", str(project_dir), "--as", "alice"],
                            stdin=read_end, stdout=out_write, stderr=subprocess.DEVNULL, env=rooms_env({}))
    os.close(out_write)
    with os.fdopen(write_end, "wb") as requests:
        requests.write("".join(json.dumps(m) + "\n" for m in [*HELLO, {"jsonrpc": "2.0", "id": 5, "method": "ping"}]).encode())
    assert proc.wait(timeout=60) == 0
    with os.fdopen(out_read, "rb") as answers:
        assert any(json.loads(line).get("id") == 5 for line in answers.read().splitlines())
    assert os.get_blocking(read_end)  # the same open file description the server read from
    os.close(read_end)


def test_a_tool_result_is_the_wire_form_of_the_sdks_own_model():
    """ok_result builds the CallToolResult's wire dict itself (no model built and dumped again): it
    must stay what the SDK's model would dump."""
    import mcp_types as types

    from rooms_cli.mcp_server.server import ok_result

    data = {"task": {"id": "t-1", "tags": ("a", "b")}, "n": 3, "none": None}
    built = ok_result(data)
    model = types.CallToolResult(content=[types.TextContent(type="text", text=built["content"][0]["text"])],
                                 structured_content=json.loads(built["content"][0]["text"]))
    assert built == model.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert types.CallToolResult.model_validate(built).structured_content["task"]["tags"] == ["a", "b"]


TRICKY = {"title": 'quote " backslash \\ newline \n tab \t é 漢 \u2028 \U0001f600 </script>', "n": 1.5e-07,
          "big": 10**20, "list": [None, True, {"": []}], "empty": {}}
TITLE = 'quote " backslash \\ é 漢 \U0001f600 </script>'  # a title is one line


def test_an_encoded_result_is_written_as_the_sdk_would_write_it():
    """A quick call's result is encoded once and spliced into the answer's line (transport.Encoded): the
    line must say what the SDK's own dump of the same result says, on one line."""
    import mcp_types as types

    from rooms_cli.mcp_server.server import encoded_result, ok_result
    from rooms_cli.mcp_server.transport import wire_line

    for data in ({"task": TRICKY, "tags": ("a", "b")}, {}, {"board": [TRICKY] * 3}):
        spliced = wire_line(types.JSONRPCResponse(jsonrpc="2.0", id="r-1", result=encoded_result(data)))
        sdk = {key: value for key, value in ok_result(data).items() if key != "resultType"}  # the handshake-era surface
        dumped = types.JSONRPCResponse(jsonrpc="2.0", id="r-1", result=sdk).model_dump_json(by_alias=True, exclude_unset=True)
        assert "\n" not in spliced and json.loads(spliced) == json.loads(dumped)
        assert types.CallToolResult.model_validate(json.loads(spliced)["result"]).structured_content == sdk["structuredContent"]
    with pytest.raises(TypeError, match="not an object"):
        encoded_result([1, 2])


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_quick_calls_answer_every_handshake_version_with_the_full_result(project_dir, version):
    """Over the wire, in each protocol version of the initialize handshake: a quick tool's answer (made by
    server.QuickCalls) has the text and the same structuredContent; errors keep their shapes."""
    import mcp_types as types

    proc = subprocess.Popen([sys.executable, "-m", "rooms_cli", "mcp", "--dir", str(project_dir), "--as", "alice"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=rooms_env({}))
    hello = [{**HELLO[0], "params": {**HELLO[0]["params"], "protocolVersion": version}}, HELLO[1]]
    requests = [*hello, _call(1, "task_add", {"title": TITLE, "lane": "alice", "done": "done"}), _call(2, "board", {}),
                _call(3, "task_claim", {"task_id": "no-such-task"}), _call(4, "board", {"lane": 5}),
                _call(5, "board", {"lame": "alice"})]
    out, err = proc.communicate("".join(json.dumps(m) + "\n" for m in requests).encode(), timeout=60)
    assert proc.returncode == 0, err.decode()
    replies = {r["id"]: r for r in map(json.loads, out.decode().splitlines())}
    assert replies[0]["result"]["protocolVersion"] == version
    for n in (1, 2, 3, 4):
        result = types.CallToolResult.model_validate(replies[n]["result"])
        assert result.structured_content == json.loads(result.content[0].text)
        assert "resultType" not in replies[n]["result"]  # not of the handshake era
    assert replies[1]["result"]["structuredContent"]["title"] == TITLE
    assert replies[2]["result"]["structuredContent"]["lanes"][0]["tasks"][0]["title"] == TITLE
    assert replies[3]["result"]["isError"] and replies[3]["result"]["structuredContent"]["error"]["code"] == "not_found"
    assert replies[4]["result"]["isError"] and replies[4]["result"]["structuredContent"]["error"]["code"] == "usage"
    assert replies[5]["error"]["code"] == -32602 and "'lane'" in replies[5]["error"]["message"]


def test_a_lone_surrogate_is_a_usage_error_naming_the_argument_and_nothing_is_written(project_dir):
    """JSON may escape a lone surrogate (\\ud800), which no UTF-8 file can hold: as the CLI refuses an argument
    that is not UTF-8, the server refuses it in one sentence (code usage), and the next call is served."""
    pipe = Pipe(project_dir)
    try:
        pipe.send('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "send", "arguments": '
                  '{"to": "bob", "message": "a\\ud800b"}}}')
        error = pipe.reply()["result"]["structuredContent"]["error"]
        assert error["code"] == "usage" and error["exit_code"] == 2 and "argument 'message'" in error["message"]
        pipe.send('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "task_add", "arguments": '
                  '{"title": "ok", "lane": "x", "done": "d", "detail": ["\\udc80"]}}}')
        assert "argument 'detail'" in pipe.reply()["result"]["structuredContent"]["error"]["message"]
        pipe.send(_call(3, "board", {}))
        assert pipe.reply()["result"]["structuredContent"]["lanes"] == []
    finally:
        pipe.close()
    assert not list((project_dir / ".rooms").rglob("*bob*.jsonl"))


def test_an_answer_echoing_a_lone_surrogate_is_written_and_the_server_keeps_serving(project_dir):
    """An error naming what the request said (a tool, an argument, a method, a uri) echoes its lone surrogate,
    which has no UTF-8 form: the answer goes out in ASCII instead of stopping the server."""
    s = "\\ud800"  # as the JSON text of the request has it
    lines = [f'{{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {{"name": "board{s}", "arguments": {{}}}}}}',
             f'{{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {{"name": "board", "arguments": {{"l{s}": 1}}}}}}',
             f'{{"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {{"uri": "rooms://inbox/a{s}"}}}}',
             f'{{"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": {{"name": "join_room", "arguments": {{"room": "a{s}"}}}}}}',
             f'{{"jsonrpc": "2.0", "id": 5, "method": "pi{s}ng"}}']
    pipe = Pipe(project_dir)
    try:
        for number, line in enumerate(lines, 1):
            pipe.send(line)
            answer = pipe.reply()
            assert answer["id"] == number and answer["error"]["code"] in (-32602, -32601), answer
        pipe.send({"jsonrpc": "2.0", "id": 6, "method": "ping"})
        assert pipe.reply() == {"jsonrpc": "2.0", "id": 6, "result": {}}
    finally:
        pipe.close()


def test_a_result_holding_a_lone_surrogate_is_written_in_ascii():
    """Only a hand-edited file can put a lone surrogate in a result; its answer is then all ASCII (escapes),
    and parses back to the same text."""
    from rooms_cli.mcp_server.server import encode

    assert encode({"t": "é"}) == '{"t":"é"}'
    text = encode({"t": "a\ud800é"})
    assert text.isascii() and json.loads(text) == {"t": "a\ud800é"}


def test_a_client_that_closes_its_end_stops_the_server_quietly(project_dir):
    proc = subprocess.Popen([sys.executable, "-m", "rooms_cli", "mcp", "--dir", str(project_dir), "--as", "alice"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=rooms_env({}))
    proc.stdin.write((json.dumps(HELLO[0]) + "\n").encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0
    proc.stdout.close()  # the client stops reading: the next answers have nowhere to go
    try:
        for n in range(3):
            proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": n + 1, "method": "ping"}) + "\n").encode())
            proc.stdin.flush()
        proc.stdin.close()
    except BrokenPipeError:  # the server already saw it was alone and stopped
        pass
    assert proc.wait(timeout=60) == 0
    assert b"internal error" not in proc.stderr.read()
