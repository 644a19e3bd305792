"""The stdio transport of `rooms mcp`: every line a client sends gets an answer, never a hang.

The SDK's own stdio transport drops a line it cannot read (garbage, `"params": "x"`, a request nested
100 000 levels deep) without a reply, and the client waits forever. Here each line is screened before
the SDK sees it (`screen`): what is not one well-formed JSON-RPC message is answered at once —

    not JSON                          -32700 parse error, id null
    nested deeper than MAX_DEPTH      -32602 invalid params, with the request's id (read from a pruned copy)
    params not an object              -32602 invalid params, with the request's id
    not a JSON-RPC message otherwise  -32600 invalid request, with its id when it has one
    not UTF-8                         -32700 parse error, with the request's id (read from a lossy copy)

and only a message the SDK can parse goes on. A notification gets no reply (JSON-RPC 2.0), so one the
SDK could not handle — not UTF-8, not JSON, or not one of MCP's client notifications with its params
(`notifications/cancelled` with `"requestId": [1]` stopped the server) — is dropped with one
`warning:` line on stderr; no line, whatever it holds, stops the server. When the input ends (the client closed it, or a file of
requests was read to its end), the requests already read are answered before the server stops (up to
EOF_GRACE_S seconds; a client that wants a prompt stop closes the input once it has its answers). A
client that closes its end of the output stops the server too, with exit 0. While serving, fd 0 reads the null device and fd 1
writes to stderr (as the SDK's transport does), so a child process can neither eat the client's
requests nor garble the replies.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

MAX_DEPTH = 64  # nesting levels a message may have; MCP's own messages need fewer than ten

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply `value` nests (a scalar: 0), counting no further than limit + 1."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list) and level > deepest:
            deepest = level
            if deepest > limit:
                return deepest
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def shallow(line: str) -> Any:
    """`line` with every array or object below the top level replaced by null, parsed (None if that fails).

    Reads the id and method of a message too deep for the JSON parser, in one linear pass.
    """
    out: list[str] = []
    level, in_string, escaped, start = 0, False, False, 0
    for i, ch in enumerate(line):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                if level == 1:
                    out.append(line[start:i + 1])
            continue
        if ch == '"':
            in_string, start = True, i
            continue
        if ch in "[{":
            level += 1
            if level == 1:
                out.append(ch)
            elif level == 2:
                out.append("null")
        elif ch in "]}":
            if level == 1:
                out.append(ch)
            level -= 1
        elif level == 1:
            out.append(ch)
    try:
        return json.loads("".join(out))
    except (ValueError, RecursionError):
        return None


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def screen(line: str) -> dict[str, Any] | None:
    """The error reply `line` gets at once, or None when it is a message for the SDK to handle."""
    return read_message(line)[0]


def read_message(line: str) -> tuple[dict[str, Any] | None, Any]:
    """(the error reply `line` gets at once, None) — or (None, the JSON-RPC message it is, as the SDK's model)."""
    answer = _screened(line)
    if not isinstance(answer, dict):
        return None, answer
    return answer, None


def _dropped(reason: str) -> dict[str, Any]:
    """No reply (a notification has none): the line is dropped, said once on stderr."""
    from rooms_cli.core import terminal

    terminal.warn(f"rooms mcp: dropped a notification: {reason}")
    return {}


def read_bytes_line(raw: bytes) -> tuple[dict[str, Any] | None, Any]:
    """`read_message` of one line as read from the wire: bytes that are not UTF-8 are refused whole
    (a request gets a parse error with its id, a notification is dropped), never stored as U+FFFD."""
    try:
        line = raw.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        head = shallow(raw.decode("utf-8", errors="replace"))
        if isinstance(head, dict) and "method" in head and "id" not in head:
            return _dropped(f"it is not valid UTF-8 (byte {exc.start})"), None
        request_id = head.get("id") if isinstance(head, dict) else None
        return _error(request_id, PARSE_ERROR, f"parse error: the message is not valid UTF-8 (byte {exc.start}); send text in UTF-8"), None
    return read_message(line) if line else ({}, None)


def _screened(line: str) -> Any:
    """The error reply (a dict; {} for none at all), or the message as the SDK's model."""
    try:
        message = json.loads(line)
    except RecursionError:
        head = shallow(line)
        request_id = head.get("id") if isinstance(head, dict) else None
        return _error(request_id, INVALID_PARAMS, f"the message nests deeper than {MAX_DEPTH} levels")
    except ValueError as exc:
        return _error(None, PARSE_ERROR, f"parse error: not JSON ({exc})")
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "invalid request: a message is one JSON object (batches are not part of MCP)")
    request_id = message.get("id")
    if depth(message) > MAX_DEPTH:
        return _error(request_id, INVALID_PARAMS, f"the message nests deeper than {MAX_DEPTH} levels")
    if message.get("jsonrpc") != "2.0":
        return _error(request_id, INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"')
    if "method" in message:
        if not isinstance(message["method"], str):
            return _error(request_id, INVALID_REQUEST, 'invalid request: "method" must be a string')
        if "params" in message and not isinstance(message["params"], dict):
            return _error(request_id, INVALID_PARAMS, f"invalid params: {message['method']} takes an object as params")
        if "id" in message and (not isinstance(request_id, str | int) or isinstance(request_id, bool)):
            return _error(None, INVALID_REQUEST, 'invalid request: "id" must be a string or an integer')
    from mcp_types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        parsed = jsonrpc_message_adapter.validate_python(message, by_name=False)
        if "method" in message and "id" not in message:
            _client_notification().validate_python({k: v for k, v in message.items() if k != "jsonrpc"}, by_name=False)
        return parsed
    except ValidationError:
        if "method" in message and "id" in message:
            return _error(request_id, INVALID_PARAMS, f"invalid params for {message['method']}")
        if "method" in message:  # a malformed notification gets no reply (JSON-RPC 2.0)
            return _dropped(f"{json.dumps(message['method'], ensure_ascii=True)[:80]} is not one of MCP's client notifications with its params")
        return _error(request_id, INVALID_REQUEST, "invalid request: not a JSON-RPC request, notification or response")


_notification_adapter: list[Any] = []


def _client_notification() -> Any:
    """The SDK's own type of what a client may notify (cancelled, progress, initialized, roots changed),
    built once: a notification it rejects would fail later inside the server's task group."""
    if not _notification_adapter:
        import mcp_types as types
        from pydantic import TypeAdapter

        _notification_adapter.append(TypeAdapter(types.ClientNotification))
    return _notification_adapter[0]


def _claim_std_streams() -> tuple[BinaryIO, BinaryIO, Callable[[], None]]:

    """The wire (stdin, stdout as binary files) and a function that puts fds 0 and 1 back."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)

    return os.fdopen(wire_in, "rb", closefd=False), os.fdopen(wire_out, "wb", closefd=False), restore


EOF_GRACE_S = 30.0  # how long requests still running when the input ends get to be answered
LINE_LIMIT = 1 << 28  # bytes a request line may have before the reader refuses it (a 256 MiB message)


class Wire:
    """Lines in and out over the wire (the process's stdin and stdout as binary files).

    When both ends are pipes or sockets (how a client spawns a server) the event loop serves them
    itself (asyncio's pipe transports); otherwise (a terminal, a regular file: `rooms mcp <
    requests.jsonl`) each line goes through a worker thread. A line read or written through a worker
    thread costs two thread wake-ups each way, a good part of a small call's time. The pipe
    transports make their descriptors non-blocking: a terminal's is shared with the shell, which is
    why only pipes and sockets are served this way, and `close` makes them blocking again."""

    def __init__(self, raw_in: Any, raw_out: Any) -> None:
        import anyio

        self.raw_in, self.raw_out = raw_in, raw_out
        self.fds = raw_in.fileno(), raw_out.fileno()
        self.reader: Any = None
        self.writer: Any = None
        self.read_transport: Any = None
        self.lock = anyio.Lock()

    async def open(self) -> None:
        import asyncio
        import stat

        if not all(stat.S_ISFIFO(os.fstat(fd).st_mode) or stat.S_ISSOCK(os.fstat(fd).st_mode) for fd in self.fds):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another event loop than asyncio's
            return
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        self.read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), self.raw_in)
        # FlowControlMixin gives the writer drain(): a client that stops reading holds back the writes
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, self.raw_out)
        transport.set_write_buffer_limits(high=0)  # drain() returns once the line is in the pipe, as a flush does
        self.reader, self.writer = reader, asyncio.StreamWriter(transport, protocol, None, loop)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.read_transport.close()
            for fd in self.fds:
                os.set_blocking(fd, True)

    async def lines(self) -> AsyncIterator[bytes]:
        import anyio

        if self.reader is None:
            async for raw in anyio.wrap_file(self.raw_in):
                yield raw
            return
        while raw := await self.reader.readline():
            yield raw

    def _send(self, data: bytes) -> None:
        self.raw_out.write(data)
        self.raw_out.flush()

    async def write_line(self, text: str) -> None:
        """Write one line: through the loop's pipe (waiting while the client's pipe is full), or else
        written and flushed in one trip to a worker thread (a pipe write may block while the client
        is not reading)."""
        import anyio.to_thread

        data = text.encode("utf-8") + b"\n"
        async with self.lock:
            try:
                if self.writer is not None:
                    self.writer.write(data)
                    await self.writer.drain()
                else:
                    await anyio.to_thread.run_sync(self._send, data)
            except (BrokenPipeError, ConnectionResetError):
                raise ClientGone from None


class Encoded:
    """JSON text already encoded, as a value of a result the server hands the SDK: the wire writer
    (`wire_line`) splices it into the answer as it is. A quick tool's result (server.py `QuickCalls`)
    is its JSON text twice, as the text content and as structuredContent; so it is encoded once, not
    parsed back, checked and encoded again (a board of 60 tasks is 27 KB). Anything else that tried to
    serialise one would fail loudly, never write something else."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def wire_line(message: Any) -> str:
    """`message` (a JSON-RPC message model) as one line of the wire: a result holding `Encoded`
    values spliced by hand, every other message as the SDK dumps it. A message holding a lone surrogate
    (an error echoing a request's `\\ud800`: no UTF-8 form) is written in ASCII, escapes and all."""
    import mcp_types as types
    import pydantic_core

    if isinstance(message, types.JSONRPCResponse) and any(isinstance(v, Encoded) for v in message.result.values()):
        result = ",".join(json.dumps(key) + ":" + (value.text if isinstance(value, Encoded) else
                                                   pydantic_core.to_json(value).decode())
                          for key, value in message.result.items())
        return f'{{"jsonrpc":"2.0","id":{json.dumps(message.id)},"result":{{{result}}}}}'
    try:
        dumped: str = message.model_dump_json(by_alias=True, exclude_unset=True)
    except pydantic_core.PydanticSerializationError:
        return json.dumps(message.model_dump(mode="json", by_alias=True, exclude_unset=True), separators=(",", ":"))
    return dumped


class ClientGone(Exception):
    """The client closed its end of the wire: nobody reads the answers any more."""


class Pending:
    """The ids of the requests handed to the server and not answered yet, so that the answers to what
    was read before the input ended still go out (`settle`)."""

    def __init__(self) -> None:
        import anyio

        self.ids: set[Any] = set()
        self.answered = anyio.Event()

    def read(self, message: Any) -> None:
        import mcp_types as types

        if isinstance(message, types.JSONRPCRequest):
            self.ids.add(message.id)
        elif getattr(message, "method", None) == "notifications/cancelled":  # a cancelled request gets no answer
            request_id = (getattr(message, "params", None) or {}).get("requestId")
            if isinstance(request_id, str | int):  # screened already; a list would be unhashable
                self.ids.discard(request_id)

    def written(self, message: Any) -> None:
        import mcp_types as types

        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id in self.ids:
            self.ids.discard(message.id)
            self.answered.set()

    async def settle(self, seconds: float) -> None:
        """Wait until every request read has its answer, at most `seconds`."""
        import anyio

        with anyio.move_on_after(seconds):
            while self.ids:
                self.answered = anyio.Event()
                await self.answered.wait()


@asynccontextmanager
async def stdio() -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for `Server.run`, over the process's stdin and stdout, screened."""
    import anyio
    from mcp.shared.message import SessionMessage

    sys.stdout.flush()
    raw_in, raw_out, restore = _claim_std_streams()
    wire = Wire(raw_in, raw_out)
    await wire.open()
    # plain anyio streams (the SDK's dispatcher takes any: a stream carrying contextvars is its own, private)
    reader_in, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, writer_out = anyio.create_memory_object_stream[SessionMessage](0)
    pending = Pending()

    async def forward(raw: bytes) -> None:
        answer, message = read_bytes_line(raw)
        if answer:
            await wire.write_line(json.dumps(answer, separators=(",", ":")))
        elif message is not None:
            pending.read(message)
            await reader_in.send(SessionMessage(message))

    async def read_lines() -> None:
        try:
            async with reader_in:
                async for raw in wire.lines():
                    await forward(raw)
                await pending.settle(EOF_GRACE_S)  # the input ended: answer what was asked before stopping
        except anyio.ClosedResourceError:  # the server stopped reading
            await anyio.lowlevel.checkpoint()

    async def write_messages() -> None:
        try:
            async with writer_out:
                async for session_message in writer_out:
                    message = session_message.message
                    await wire.write_line(wire_line(message))
                    pending.written(message)
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async def until_gone(part: Any) -> None:
        """Run `part`; a client that closed its end stops the server (quietly, exit 0), not a crash."""
        try:
            await part()
        except ClientGone:
            tg.cancel_scope.cancel()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(until_gone, read_lines)
            tg.start_soon(until_gone, write_messages)
            yield read_stream, write_stream
    finally:
        wire.close()
        restore()
