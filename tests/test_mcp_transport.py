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


class _Server:
    """A `rooms mcp` process whose stderr goes to a file (the fuzzer makes it say a lot)."""

    def __init__(self, project_dir, stderr_path):
        self.stderr = open(stderr_path, "wb")
        self.buffer = b""
        self.proc = subprocess.Popen([sys.executable, "-m", "rooms_cli", "mcp", "--dir", str(project_dir), "--as", "alice"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=rooms_env({}))
        for message in HELLO:
            self.send_bytes(json.dumps(message).encode())
        assert self.answer_to(0)["result"]["serverInfo"]["name"] == "rooms"

    def send_bytes(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answer_to(self, request_id, timeout: float = 30) -> dict:
        """The answer to `request_id`, skipping the answers to other requests (fuzzed ones)."""
        import select
        import time

        deadline = time.monotonic() + timeout
        while True:
            while b"\n" not in self.buffer:
                ready, _, _ = select.select([self.proc.stdout], [], [], max(deadline - time.monotonic(), 0))
                assert ready, f"no answer to {request_id!r}: the server hangs"
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)  # not readline: select cannot see its buffer
                assert chunk, f"the server stopped (exit {self.proc.wait(timeout=10)})"
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            answer = json.loads(line)
            if answer.get("id") == request_id:
                return answer

    def close(self) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        self.stderr.close()
        return code


def test_a_notification_with_bad_params_is_dropped_with_a_line_on_stderr_and_the_server_keeps_serving(project_dir, tmp_path):
    """`notifications/cancelled` with `"requestId": [1]` stopped the server (an unhashable id inside its task
    group); a notification gets no reply, so a bad one is dropped, said once on stderr."""
    server = _Server(project_dir, tmp_path / "stderr")
    try:
        for params in ({"requestId": [1]}, {"requestId": {"a": 1}}, {"requestId": None}, {}):  # the last two are valid
            server.send_bytes(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}).encode())
        server.send_bytes(b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": [], "progress": "x"}}')
        server.send_bytes(b'{"jsonrpc": "2.0", "method": "notifications/\xff"}')
        server.send_bytes(json.dumps({"jsonrpc": "2.0", "id": "after", "method": "ping"}).encode())
        assert server.answer_to("after") == {"jsonrpc": "2.0", "id": "after", "result": {}}
    finally:
        assert server.close() == 0
    stderr = (tmp_path / "stderr").read_text()
    assert stderr.count("dropped a notification") == 4 and "internal error" not in stderr, stderr


def test_a_request_that_is_not_utf8_is_refused_with_its_id_and_nothing_is_stored(project_dir, tmp_path):
    """Bytes that are not UTF-8 were decoded as U+FFFD and stored; the CLI refuses such an argument, so the
    server refuses the request whole (a parse error with its id)."""
    server = _Server(project_dir, tmp_path / "stderr")
    try:
        server.send_bytes(b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "send", '
                          b'"arguments": {"to": "bob", "message": "caf\xe9"}}}')
        answer = server.answer_to(7)
        assert answer["error"]["code"] == -32700 and "not valid UTF-8" in answer["error"]["message"]
    finally:
        assert server.close() == 0
    assert not list((project_dir / ".rooms").rglob("*bob*.jsonl"))


def _odd_messages():
    """JSON-RPC-shaped lines with every field of the wrong kind, and raw bytes."""
    from hypothesis import strategies as st

    scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))
    value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)
    methods = st.sampled_from(["notifications/cancelled", "notifications/progress", "notifications/initialized",
                               "notifications/roots/list_changed", "notifications/message", "ping", "tools/list",
                               "tools/call", "resources/read", "prompts/get", "initialize", "logging/setLevel"])
    params = st.one_of(value, st.fixed_dictionaries({}, optional={
        "requestId": value, "progressToken": value, "progress": value, "reason": value, "name": value,
        "arguments": value, "uri": value, "_meta": value, "level": value}))
    notices = st.sampled_from(["notifications/cancelled", "notifications/progress", "notifications/initialized",
                               "notifications/roots/list_changed"])
    notice_params = st.fixed_dictionaries({}, optional={"requestId": value, "progressToken": value, "progress": value,
                                                        "reason": value, "total": value, "message": value})
    notification = st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "method": notices, "params": notice_params})
    request = st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "method": methods, "id": value}, optional={"params": params})
    anything = st.fixed_dictionaries({"jsonrpc": st.sampled_from(["2.0", "1.0"])}, optional={
        "method": st.one_of(methods, value), "id": value, "params": params, "result": value, "error": value})
    message = st.one_of(notification, notification, request, anything)
    as_bytes = message.map(lambda m: json.dumps(m).encode())
    return st.one_of(as_bytes, as_bytes.map(lambda b: b.replace(b'"', b'"\xff', 1)), st.binary(max_size=40))


def test_no_single_odd_line_stops_the_server(project_dir, tmp_path):
    """Hypothesis sends odd JSON-RPC messages (ids, methods and params of every kind, raw bytes), each
    followed by a ping: every ping is answered by the same process, which then exits 0."""
    from hypothesis import HealthCheck, example, given, settings

    server = _Server(project_dir, tmp_path / "stderr")
    probes = iter(range(1_000_000))

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(_odd_messages())
    @example(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}}')  # the issue's
    def one_line_then_a_ping(line: bytes) -> None:
        server.send_bytes(line.replace(b"\n", b" "))
        probe = f"probe-{next(probes)}"
        server.send_bytes(json.dumps({"jsonrpc": "2.0", "id": probe, "method": "ping"}).encode())
        assert server.answer_to(probe)["result"] == {}

    try:
        one_line_then_a_ping()
    finally:
        code = server.close()
    stderr = (tmp_path / "stderr").read_text(errors="replace")
    assert code == 0 and "internal error" not in stderr and "Traceback" not in stderr, stderr[-2000:]
