"""A real HTTP server on 127.0.0.1 that speaks the model providers' wire protocols, for tests.

It answers OpenAI chat completions (``POST …/chat/completions``: a JSON body, or SSE ``data:``
chunks ending in ``data: [DONE]``, with the usage chunk when the request asks for
``stream_options.include_usage``) and Anthropic messages (``POST …/messages``: a JSON body, or the
SSE events ``message_start``, ``content_block_start``, ``ping``, ``content_block_delta``,
``content_block_stop``, ``message_delta``, ``message_stop``). It runs in a background thread on a
free port, handles requests concurrently (one thread each), records every request, and can be
scripted to misbehave. No mocks: clients talk to it over real sockets.

Quick use::

    from fakeserver import FakeServer, Reply

    with FakeServer(reply="Hello there") as server:
        spec = {"type": "openai", "base_url": server.openai_url}      # http://127.0.0.1:PORT/v1
        spec = {"type": "anthropic", "base_url": server.base_url,     # posts to /v1/messages
                "api_key_env": "ANTHROPIC_API_KEY"}
        ...
        assert server.requests[0].json["model"] == "m"

As a pytest fixture, write one in the test module::

    @pytest.fixture
    def server():
        with FakeServer("pong") as s:
            yield s

The module is importable as ``fakeserver`` because pytest puts tests/ on sys.path (tests/ has no
__init__.py); the benchmarks put tests/ on sys.path themselves. It needs only the standard library
(no pytest), so `python bench/chat.py` and `python bench/groups.py` run after a plain `pip install -e .`.

Behaviour
---------
Each request is answered by the next ``Reply`` pushed with ``server.push(...)`` (one-shot, in
order); when the queue is empty, by ``server.default`` (a ``Reply`` or a function
``Request -> Reply``; set it with ``server.set_default(...)`` or the constructor). ``Reply`` fields:

    text          str, or a function Request -> str (e.g. echo the last user message); None (the
                  default) uses the server's default text
    status        HTTP status (200); non-2xx answers with the protocol's JSON error body
    error         the error message for a non-2xx status ("fake error")
    headers       extra response headers, e.g. {"Retry-After": "1"}
    body          raw body (str/bytes) sent as is instead of the protocol's body (invalid JSON…)
    delay         seconds to wait before the status line (300 ms for parallelism tests)
    chunk_delay   seconds between stream events
    pieces        how the text is split into stream deltas (default: words with their spaces)
    cut_after     stream: drop the connection abruptly after this many deltas (no last chunk);
                  non-stream: send half the body, then drop the connection
    end_early     stream: end the HTTP body cleanly after all deltas, but never send
                  ``[DONE]`` / ``message_stop`` (a stream that stops short)
    bad_json_after  stream: after this many deltas send a ``data:`` line that is not JSON
    stream_error  stream: after the deltas, send the protocol's in-stream error (a message string)
    hang          never answer; holds the connection until the client closes it or the server stops
    usage         (input_tokens, output_tokens); default computed (chars/4 of the prompt, #deltas)
    omit_usage    send no usage at all (the client must estimate)
    finish_reason "stop" (OpenAI) / mapped to "end_turn" (Anthropic)

Shortcuts: ``Reply.rate_limited(retry_after="1")`` (429 + Retry-After), ``Reply.server_error(500)``,
``Reply.invalid_json()`` (200 with a body that is not JSON), ``Reply.slow(seconds)``,
``Reply.hanging()``, ``Reply.cut(after=2)``. ``server.fail(times, status=500)`` queues N errors.

What a real server does with the request (on by default; switch off to test the client's own
enforcement): ``server.honour_max_tokens`` cuts the reply after ``max_tokens`` /
``max_completion_tokens`` pieces (words) with finish_reason "length" (Anthropic "max_tokens");
``server.honour_stop`` ends it before the first of ``stop`` / ``stop_sequences``.
``server.refuse`` (a set of request fields, e.g. {"response_format"}) answers 400 naming the field
when a request carries one, as a server without that feature does. An Anthropic request that
forces a tool (``tool_choice: {type: tool}``) is answered with a ``tool_use`` block whose input
is the reply text parsed as JSON.

Server facts (llama.cpp, vLLM, Ollama), answered without touching the reply queue and recorded in
``server.probes`` (not ``server.requests``): ``server.n_ctx`` answers ``GET /props``;
``server.tokenize`` (a function text -> token count) answers ``POST /tokenize``;
``server.max_model_len`` answers ``GET /v1/models``; ``server.ollama_show`` (a dict) answers
``POST /api/show``. Unset, each is a 404.

Recording
---------
``server.requests`` lists a ``Request`` per request in arrival order: ``method``, ``path``,
``headers`` (lower-case keys), ``body`` (bytes), ``json`` (parsed or None), ``protocol``
("openai" | "anthropic" | None), ``stream`` (bool), ``at`` (time.monotonic() on arrival),
``messages`` (the request's messages) and ``last_user_text`` (the last user message's text),
``closed_early`` (the client closed the connection before the answer was complete) and
``closed_at``. ``server.closed_early`` counts such closes; ``server.wait_closed_early(n, timeout)``
waits for them (True when seen) so a test can assert that a cancellation reached the server.
``server.wait_requests(n, timeout)`` waits until n requests arrived. ``server.reset()`` clears
the queue, the records and the counters.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_TEXT = "Hello from the fake server."
FACT_PATHS = ("/props", "/tokenize", "/models", "/api/show")


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any
    protocol: str | None
    stream: bool
    at: float
    closed_early: bool = False
    closed_at: float | None = None

    @property
    def messages(self) -> list[dict]:
        return list((self.json or {}).get("messages") or []) if isinstance(self.json, dict) else []

    @property
    def last_user_text(self) -> str:
        for msg in reversed(self.messages):
            if msg.get("role") == "user":
                content = msg.get("content")
                if isinstance(content, list):  # Anthropic content blocks
                    return "".join(b.get("text", "") for b in content if isinstance(b, dict))
                return str(content or "")
        return ""


@dataclass
class Reply:
    text: str | Callable[[Request], str] | None = None  # None: the server's default text
    status: int = 200
    error: str = "fake error"
    headers: dict[str, str] = field(default_factory=dict)
    body: str | bytes | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0
    pieces: list[str] | None = None
    cut_after: int | None = None
    end_early: bool = False
    bad_json_after: int | None = None
    stream_error: str | None = None
    hang: bool = False
    usage: tuple[int, int] | None = None
    omit_usage: bool = False
    finish_reason: str = "stop"

    @classmethod
    def rate_limited(cls, retry_after: str | None = "1", **kw) -> Reply:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status=429, error="rate limited, slow down", headers=headers, **kw)

    @classmethod
    def server_error(cls, status: int = 500, message: str = "internal server error", **kw) -> Reply:
        return cls(status=status, error=message, **kw)

    @classmethod
    def invalid_json(cls) -> Reply:
        return cls(body=b'{"id": "broken", "choices": [', headers={"Content-Type": "application/json"})

    @classmethod
    def slow(cls, seconds: float, **kw) -> Reply:
        return cls(delay=seconds, **kw)

    @classmethod
    def hanging(cls) -> Reply:
        return cls(hang=True)

    @classmethod
    def cut(cls, after: int = 2, **kw) -> Reply:
        return cls(cut_after=after, **kw)


class _ClientGone(Exception):
    pass


def _split(text: str) -> list[str]:
    pieces: list[str] = []
    word = ""
    for ch in text:
        word += ch
        if ch == " ":
            pieces.append(word)
            word = ""
    if word:
        pieces.append(word)
    return pieces


class FakeServer:
    """See the module docstring."""

    def __init__(self, reply: str | Reply | Callable[[Request], Reply] = DEFAULT_TEXT, *, model: str | None = None):
        self.default: Reply | Callable[[Request], Reply] = Reply(text=reply) if isinstance(reply, str) else reply
        self.model = model
        self.requests: list[Request] = []
        self.closed_early = 0
        self._queue: deque[Reply] = deque()
        self._lock = threading.Condition()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.honour_max_tokens = True
        self.honour_stop = True
        self.refuse: set[str] = set()
        self.n_ctx: int | None = None
        self.props_extra: dict = {}  # more of /props (llama.cpp's chat_template_caps…), answered with n_ctx
        self.tokenize: Callable[[str], int] | None = None
        self.max_model_len: int | None = None
        self.ollama_show: dict | None = None
        self.probes: list[Request] = []

    # -- life cycle ------------------------------------------------------------------------------
    def start(self) -> FakeServer:
        owner = self

        class Handler(_Handler):
            server_owner = owner

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def default_text(self) -> str | Callable[[Request], str]:
        default = self.default
        return default.text if isinstance(default, Reply) and default.text is not None else DEFAULT_TEXT

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"{self.base_url}/v1"

    # -- scripting -------------------------------------------------------------------------------
    def push(self, *replies: Reply | str) -> FakeServer:
        with self._lock:
            for r in replies:
                self._queue.append(Reply(text=r) if isinstance(r, str) else r)
        return self

    def fail(self, times: int, status: int = 500, **kw) -> FakeServer:
        return self.push(*[Reply.server_error(status, **kw) for _ in range(times)])

    def set_default(self, reply: str | Reply | Callable[[Request], Reply]) -> None:
        self.default = Reply(text=reply) if isinstance(reply, str) else reply

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.probes.clear()
            self.closed_early = 0

    # -- observing -------------------------------------------------------------------------------
    def wait_closed_early(self, n: int = 1, timeout: float = 5.0) -> bool:
        with self._lock:
            return self._lock.wait_for(lambda: self.closed_early >= n, timeout)

    def wait_requests(self, n: int = 1, timeout: float = 5.0) -> bool:
        with self._lock:
            return self._lock.wait_for(lambda: len(self.requests) >= n, timeout)

    # -- used by the handler ---------------------------------------------------------------------
    def _record(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            self._lock.notify_all()
            if self._queue:
                return self._queue.popleft()
        default = self.default
        return default(request) if callable(default) else replace(default)

    def _fact(self, request: Request) -> tuple[int, dict]:
        """The answer to a question about the server (see "Server facts" in the module docstring)."""
        with self._lock:
            self.probes.append(request)
        body = request.json if isinstance(request.json, dict) else {}
        if request.path.endswith("/props") and self.n_ctx:
            return 200, {"default_generation_settings": {"n_ctx": self.n_ctx}, "total_slots": 1, **self.props_extra}
        if request.path.endswith("/tokenize") and self.tokenize and isinstance(body.get("content"), str):
            return 200, {"tokens": list(range(self.tokenize(body["content"])))}
        if request.path.endswith("/models") and self.max_model_len:
            return 200, {"object": "list", "data": [{"id": self.model or "m", "max_model_len": self.max_model_len}]}
        if request.path.endswith("/api/show") and self.ollama_show is not None:
            return 200, self.ollama_show
        return 404, {"error": {"message": f"no such path {request.path}", "type": "not_found"}}

    def _note_closed_early(self, request: Request) -> None:
        with self._lock:
            if not request.closed_early:
                request.closed_early = True
                request.closed_at = time.monotonic()
                self.closed_early += 1
                self._lock.notify_all()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # many parallel clients (a @jam of agents) must not overflow the backlog


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_owner: FakeServer
    timeout = 30  # idle keep-alive connections end on their own

    def log_message(self, format, *args) -> None:  # quiet
        pass

    # -- plumbing --------------------------------------------------------------------------------
    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _wait(self, seconds: float | None) -> None:
        """Sleep `seconds` (None: until stopped), noticing at once when the client hangs up."""
        end = None if seconds is None else time.monotonic() + seconds
        while True:
            if self._client_gone():
                raise _ClientGone
            if self.server_owner._stopping.is_set():
                raise _ClientGone
            left = 0.05 if end is None else min(0.05, end - time.monotonic())
            if left <= 0:
                return
            try:
                readable, _, _ = select.select([self.connection], [], [], left)
            except (OSError, ValueError):
                raise _ClientGone from None
            if readable:
                if self._client_gone():
                    raise _ClientGone
                time.sleep(left)  # stray bytes from the client: just let the time pass

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            raise _ClientGone from None

    def _chunk(self, data: bytes) -> None:
        self._write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def _drop(self) -> None:
        """Close the connection abruptly, mid-answer."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- HTTP ------------------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            data = json.loads(body) if body else None
        except ValueError:
            data = None
        path = self.path.split("?")[0]
        protocol = "openai" if path.endswith("/chat/completions") else "anthropic" if path.endswith("/messages") else None
        stream = bool(isinstance(data, dict) and data.get("stream"))
        request = Request(
            method=self.command, path=path, headers={k.lower(): v for k, v in self.headers.items()},
            body=body, json=data, protocol=protocol, stream=stream, at=time.monotonic(),
        )
        if protocol is None and path.endswith(FACT_PATHS):
            status, answer = self.server_owner._fact(request)
            self._send_json(status, answer, Reply())
            return
        reply = self.server_owner._record(request)
        try:
            self._answer(request, reply)
        except _ClientGone:
            self.server_owner._note_closed_early(request)
            self.close_connection = True

    def _answer(self, request: Request, reply: Reply) -> None:
        if reply.hang:
            self._wait(None)
            return
        if reply.delay:
            self._wait(reply.delay)
        if request.protocol is None and reply.body is None:
            self._send_json(404, {"error": {"message": f"no such path {request.path}", "type": "not_found"}}, reply)
            return
        if reply.body is not None:
            raw = reply.body.encode() if isinstance(reply.body, str) else reply.body
            self._send_bytes(reply.status, raw, reply, reply.headers.get("Content-Type", "application/json"))
            return
        body = request.json if isinstance(request.json, dict) else {}
        refused = sorted(f for f in self.server_owner.refuse if f in body)
        if refused and reply.status < 300:
            reply = replace(reply, status=400, error=f"unsupported parameter: '{refused[0]}' is not supported by this server")
        if reply.status >= 300:
            self._send_json(reply.status, self._error_body(request, reply), reply)
            return
        text = reply.text if reply.text is not None else self.server_owner.default_text
        text = text(request) if callable(text) else text
        pieces = reply.pieces if reply.pieces is not None else _split(text)
        pieces, reply = self._honour(body, pieces, reply)
        usage = reply.usage or (max(1, sum(len(json.dumps(m)) for m in request.messages) // 4), len(pieces))
        if request.stream:
            self._stream(request, reply, pieces, usage)
        elif request.protocol == "openai":
            self._send_json(200, self._openai_body(request, reply, "".join(pieces), usage), reply)
        else:
            self._send_json(200, self._anthropic_body(request, reply, "".join(pieces), usage), reply)

    def _honour(self, body: dict, pieces: list[str], reply: Reply) -> tuple[list[str], Reply]:
        """The reply as a server that reads `stop` and the token limit would give it."""
        owner = self.server_owner
        stops = body.get("stop") or body.get("stop_sequences") or []
        stops = [stops] if isinstance(stops, str) else [s for s in stops if isinstance(s, str) and s]
        if owner.honour_stop and stops:
            text = "".join(pieces)
            at = min((i for i in (text.find(s) for s in stops) if i >= 0), default=None)
            if at is not None:
                pieces, reply = _split(text[:at]), replace(reply, finish_reason="stop")
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        if owner.honour_max_tokens and isinstance(limit, int) and 0 < limit < len(pieces):
            pieces, reply = pieces[:limit], replace(reply, finish_reason="length")
        return pieces, reply

    def _send_json(self, status: int, data: dict, reply: Reply) -> None:
        self._send_bytes(status, json.dumps(data).encode(), reply, "application/json")

    def _send_bytes(self, status: int, raw: bytes, reply: Reply, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(raw)))
        for k, v in reply.headers.items():
            if k.lower() != "content-type":
                self.send_header(k, v)
        self.end_headers()
        if reply.cut_after is not None:
            self._write(raw[: len(raw) // 2])
            self._drop()
            return
        self._write(raw)

    # -- protocol bodies -------------------------------------------------------------------------
    def _model(self, request: Request) -> str:
        return self.server_owner.model or str((request.json or {}).get("model") or "fake-model")

    def _error_body(self, request: Request, reply: Reply) -> dict:
        if request.protocol == "anthropic":
            kind = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error"}.get(reply.status, "api_error")
            return {"type": "error", "error": {"type": kind, "message": reply.error}}
        kind = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(reply.status, "server_error")
        return {"error": {"message": reply.error, "type": kind, "param": None, "code": kind}}

    def _openai_body(self, request: Request, reply: Reply, text: str, usage: tuple[int, int]) -> dict:
        body: dict[str, Any] = {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000, "model": self._model(request),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": None,
                         "finish_reason": reply.finish_reason}],
        }
        if not reply.omit_usage:
            body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
        return body

    def _anthropic_body(self, request: Request, reply: Reply, text: str, usage: tuple[int, int]) -> dict:
        body: dict[str, Any] = {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": self._model(request),
            "content": [_anthropic_block(request, text)],
            "stop_reason": _anthropic_stop(request, reply), "stop_sequence": None,
        }
        if not reply.omit_usage:
            body["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
        return body

    # -- streaming -------------------------------------------------------------------------------
    def _stream(self, request: Request, reply: Reply, pieces: list[str], usage: tuple[int, int]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        events = self._openai_events if request.protocol == "openai" else self._anthropic_events
        for i, item in enumerate(events(request, reply, pieces, usage)):
            if item == "__delta__":
                continue
            if isinstance(item, tuple):  # ("delta", n): n deltas have been sent so far
                sent = item[1]
                if reply.cut_after is not None and sent >= reply.cut_after:
                    self._drop()
                    return
                if reply.bad_json_after is not None and sent >= reply.bad_json_after:
                    self._chunk(b'data: {"type": "content_block_delta", "delta": {"text": "oops\n\n')
                    self._chunk(b"data: not json at all\n\n")
                    self._write(b"0\r\n\r\n")
                    return
                continue
            if item is None:  # end of deltas
                if reply.end_early:
                    self._write(b"0\r\n\r\n")
                    return
                continue
            if i and reply.chunk_delay:
                self._wait(reply.chunk_delay)
            self._chunk(item)
        self._write(b"0\r\n\r\n")

    def _openai_events(self, request: Request, reply: Reply, pieces: list[str], usage: tuple[int, int]):
        model = self._model(request)
        include_usage = bool(((request.json or {}).get("stream_options") or {}).get("include_usage")) and not reply.omit_usage

        def chunk(choices: list, usage_value: Any = None) -> bytes:
            data: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
                                    "model": model, "system_fingerprint": "fp_fake", "choices": choices}
            if include_usage:
                data["usage"] = usage_value
            return b"data: " + json.dumps(data).encode() + b"\n\n"

        yield chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}])
        for n, piece in enumerate(pieces):
            yield ("delta", n)
            yield chunk([{"index": 0, "delta": {"content": piece}, "logprobs": None, "finish_reason": None}])
        yield ("delta", len(pieces))
        yield None
        if reply.stream_error:
            yield b"data: " + json.dumps({"error": {"message": reply.stream_error, "type": "server_error"}}).encode() + b"\n\n"
            return
        yield chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": reply.finish_reason}])
        if include_usage:
            yield chunk([], {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)})
        yield b"data: [DONE]\n\n"

    def _anthropic_events(self, request: Request, reply: Reply, pieces: list[str], usage: tuple[int, int]):
        def event(name: str, data: dict) -> bytes:
            return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

        start_usage = {} if reply.omit_usage else {"usage": {"input_tokens": usage[0], "output_tokens": 1}}
        yield event("message_start", {"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "content": [], "model": self._model(request),
            "stop_reason": None, "stop_sequence": None, **start_usage}})
        tool = _forced_tool(request)
        block = {"type": "tool_use", "id": "toolu_fake", "name": tool, "input": {}} if tool else {"type": "text", "text": ""}
        yield event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block})
        yield event("ping", {"type": "ping"})
        for n, piece in enumerate(pieces):
            yield ("delta", n)
            delta = {"type": "input_json_delta", "partial_json": piece} if tool else {"type": "text_delta", "text": piece}
            yield event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        yield ("delta", len(pieces))
        yield None
        if reply.stream_error:
            yield event("error", {"type": "error", "error": {"type": "overloaded_error", "message": reply.stream_error}})
            return
        yield event("content_block_stop", {"type": "content_block_stop", "index": 0})
        stop = _anthropic_stop(request, reply)
        end_usage = {} if reply.omit_usage else {"usage": {"output_tokens": usage[1]}}
        yield event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, **end_usage})
        yield event("message_stop", {"type": "message_stop"})


def _forced_tool(request: Request) -> str | None:
    """The tool an Anthropic request forces (`tool_choice: {type: tool, name}`), else None."""
    choice = (request.json or {}).get("tool_choice") if isinstance(request.json, dict) else None
    return str(choice.get("name")) if isinstance(choice, dict) and choice.get("type") == "tool" else None


def _anthropic_block(request: Request, text: str) -> dict:
    tool = _forced_tool(request)
    if not tool:
        return {"type": "text", "text": text}
    try:
        data = json.loads(text)
    except ValueError:
        data = {"text": text}
    return {"type": "tool_use", "id": "toolu_fake", "name": tool, "input": data if isinstance(data, dict) else {"value": data}}


def _anthropic_stop(request: Request, reply: Reply) -> str:
    if reply.finish_reason == "length":
        return "max_tokens"
    if reply.finish_reason == "stop":
        return "tool_use" if _forced_tool(request) else "end_turn"
    return reply.finish_reason
