"""The stdio transport of `rooms mcp`: every line a client sends gets an answer, never a hang.

The SDK's own stdio transport drops a line it cannot read (garbage, `"params": "x"`, a request nested
100 000 levels deep) without a reply, and the client waits forever. Here each line is screened before
the SDK sees it (`screen`): what is not one well-formed JSON-RPC message is answered at once —

    not JSON                          -32700 parse error, id null
    nested deeper than MAX_DEPTH      -32602 invalid params, with the request's id (read from a pruned copy)
    params not an object              -32602 invalid params, with the request's id
    not a JSON-RPC message otherwise  -32600 invalid request, with its id when it has one

and only a message the SDK can parse goes on. While serving, fd 0 reads the null device and fd 1
writes to stderr (as the SDK's transport does), so a child process can neither eat the client's
requests nor garble the replies.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

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
        jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        if "method" in message and "id" in message:
            return _error(request_id, INVALID_PARAMS, f"invalid params for {message['method']}")
        if "method" in message:  # a malformed notification gets no reply (JSON-RPC 2.0)
            return {}
        return _error(request_id, INVALID_REQUEST, "invalid request: not a JSON-RPC request, notification or response")
    return None


def _claim_std_streams():
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


@asynccontextmanager
async def stdio() -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for `Server.run`, over the process's stdin and stdout, screened."""
    import anyio
    import anyio.to_thread
    import mcp_types as types
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage

    sys.stdout.flush()
    raw_in, raw_out, restore = _claim_std_streams()
    stdin = anyio.wrap_file(raw_in)
    reader_in, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, writer_out = create_context_streams[SessionMessage](0)
    lock = anyio.Lock()

    def send(data: bytes) -> None:
        raw_out.write(data)
        raw_out.flush()

    async def write_line(text: str) -> None:
        """Write and flush in one trip to a worker thread (a pipe write may block while the client
        is not reading): each trip is two thread wake-ups, which on a busy machine cost more than the write."""
        async with lock:
            await anyio.to_thread.run_sync(send, text.encode("utf-8") + b"\n")

    async def read_lines() -> None:
        try:
            async with reader_in:
                async for raw in stdin:
                    line = raw.decode("utf-8", errors="replace").strip()
                    if not line:
                        continue
                    answer = screen(line)
                    if answer:
                        await write_line(json.dumps(answer))
                    elif answer is None:
                        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        await reader_in.send(SessionMessage(message))
        except anyio.ClosedResourceError:  # the server stopped reading
            await anyio.lowlevel.checkpoint()

    async def write_messages() -> None:
        try:
            async with writer_out:
                async for session_message in writer_out:
                    await write_line(session_message.message.model_dump_json(by_alias=True, exclude_unset=True))
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_lines)
            tg.start_soon(write_messages)
            yield read_stream, write_stream
    finally:
        restore()
