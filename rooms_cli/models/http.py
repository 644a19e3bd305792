"""HTTP behaviour shared by the network providers (openai, anthropic).

- Timeouts: `connect_timeout` (default 10 s) to open a connection, `timeout` (default 120 s) for
  each read or write; a silent server is an error after `timeout`, never a hang.
- Retries: up to `max_retries` (default 3) more tries on 429, 5xx and connection errors, with
  exponential backoff and full jitter (`retry_backoff` × 2^n, default 0.5 s), or the server's
  `Retry-After` (seconds or an HTTP date) capped at `max_retry_wait` (default 30 s). Other 4xx
  answers fail at once: trying again would not help. Nothing is retried once reply text has been
  streamed to the caller.
- Errors: one ProviderError naming the provider, the URL and what happened, on one line, e.g.
  "provider 'ollama' (http://127.0.0.1:9/v1): connection refused after 4 tries; is the server running?"
  A multi-line server text (a chat template's traceback) is reduced to its first meaningful line.
  A prompt the server refuses as too long is a ContextOverflow (never retried) naming the knobs.
- Keys: read from the environment or a key file at call time, never kept on the provider, and
  scrubbed from any text that ends up in an error.
- Cancellation: every call runs in its own client inside `async with`, so cancelling the awaiting
  task closes the connection at once (the server sees the close).

httpx is imported here and only here (start-up must not pay for it).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rooms_cli.core.errors import ContextOverflow, ProviderError
from rooms_cli.core.terminal import undecodable
from rooms_cli.store import files
from rooms_cli.store.rand import rng

if TYPE_CHECKING:
    import ssl

    import httpx

DEFAULT_TIMEOUT = 120.0
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_BACKOFF = 0.5
DEFAULT_MAX_RETRY_WAIT = 30.0
BACKOFF_CAP = 30.0
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


class ProviderTimeout(ProviderError):
    """The provider did not answer within the configured timeout."""

    code = "provider_timeout"


def _number(spec: dict[str, Any], key: str, default: float) -> float:
    value = spec.get(key)
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return default
    return float(value)


@dataclass
class HttpSettings:
    """A network provider's timeouts, retry policy and extra headers, from its spec in .rooms.yaml."""

    timeout: float = DEFAULT_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    retry_backoff: float = DEFAULT_BACKOFF
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> HttpSettings:
        headers = spec.get("headers") or {}
        return cls(
            timeout=_number(spec, "timeout", DEFAULT_TIMEOUT) or DEFAULT_TIMEOUT,
            connect_timeout=_number(spec, "connect_timeout", DEFAULT_CONNECT_TIMEOUT) or DEFAULT_CONNECT_TIMEOUT,
            max_retries=int(_number(spec, "max_retries", DEFAULT_MAX_RETRIES)),
            retry_backoff=_number(spec, "retry_backoff", DEFAULT_BACKOFF),
            max_retry_wait=_number(spec, "max_retry_wait", DEFAULT_MAX_RETRY_WAIT),
            headers={str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else {},
        )


# -- keys ---------------------------------------------------------------------------------------

def read_key(provider: str, spec: dict[str, Any], *, fallback_env: str | None, required: bool) -> str | None:
    """The API key for a provider: `api_key_file`, else `api_key_env`, else `fallback_env`.

    A key is required when the spec names where it lives (or `required`); a missing one is an
    error that names both fixes. The key itself never appears in any message.
    """
    key_file = spec.get("api_key_file")
    if key_file:
        path = Path(os.path.expandvars(str(key_file))).expanduser()
        try:
            key = files.read_text(path).strip()
        except OSError as exc:
            raise ProviderError(
                f"provider {provider!r}: cannot read its key file {str(path)!r} ({exc.strerror or type(exc).__name__}); "
                f"fix providers.{provider}.api_key_file in .rooms.yaml"
            ) from None
        if not key:
            raise ProviderError(f"provider {provider!r}: its key file {str(path)!r} is empty")
        return key
    env = spec.get("api_key_env") or fallback_env
    if not env:
        return None
    key = os.environ.get(str(env), "").strip()
    if key and undecodable(key):
        raise ProviderError(f"provider {provider!r}: environment variable {env} is not valid UTF-8; export the key as text")
    if key:
        return key
    if required or spec.get("api_key_env"):
        raise ProviderError(
            f"provider {provider!r} needs an API key: export {env}=… in your shell, "
            f"or set api_key_env (the name of an environment variable) or api_key_file "
            f"(a path outside the repo) under providers.{provider} in .rooms.yaml",
            code="missing_key",
        )
    return None


def scrub(text: str, secrets: list[str]) -> str:
    """`text` with every secret replaced by ****."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "****")
    return text


# -- the client ---------------------------------------------------------------------------------

_ssl_context: ssl.SSLContext | None = None


def _verify() -> ssl.SSLContext:
    """One SSL context per process: building one costs more than a local request."""
    global _ssl_context
    if _ssl_context is None:
        import ssl

        try:
            import certifi

            _ssl_context = ssl.create_default_context(cafile=certifi.where())
        except ImportError:  # pragma: no cover - certifi comes with httpx
            _ssl_context = ssl.create_default_context()
    return _ssl_context


@dataclass
class Call:
    """One logical request to a provider (possibly several tries)."""

    provider: str
    url: str  # shown in errors: the base URL the user configured
    endpoint: str  # the URL posted to
    headers: dict[str, str]
    body: dict[str, Any]
    settings: HttpSettings
    secrets: list[str] = field(default_factory=list)

    def error(self, what: str, *, cls: type[ProviderError] = ProviderError, code: str | None = None,
              data: dict[str, Any] | None = None) -> ProviderError:
        message = scrub(f"provider {self.provider!r} ({self.url}): {what}", self.secrets)
        return cls(message, code=code, data=data)


def _retry_after(value: str | None, cap: float) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), capped; None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        from datetime import UTC, datetime

        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        # the real clock, not ROOMS_NOW: this is a wait on a real server
        seconds = (when - datetime.now(UTC)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, min(seconds, cap))


def _backoff(settings: HttpSettings, attempt: int, provider: str) -> float:
    """Full jitter: a random wait between 0 and base × 2^(attempt-1), capped."""
    ceiling = min(BACKOFF_CAP, settings.retry_backoff * (2 ** (attempt - 1)))
    return rng("provider-backoff", provider, attempt).uniform(0, ceiling)


_NOISE_LINE = re.compile(r"^(traceback \(most recent call last\)|file \"|at row \d|\^|[\W_]*$)", re.IGNORECASE)
_NOISE_START = re.compile(r"^(error|exception|runtime error|value error|jinja2?\.[\w.]+|[\w.]*error)\s*:?\s*$", re.IGNORECASE)


_RAISED = re.compile(r"^(?:(?:[\w.]+\s+)?[\w.]*(?:error|exception)\s*:\s*)+(?P<msg>\S.*)$", re.IGNORECASE)


def one_line(text: str, limit: int = 300) -> str:
    """A server's message on one line, trimmed: a chat template's 400 can carry a traceback or the
    template itself. Its first meaningful line, and when that only introduces the failure (ends
    with ":"), the error it raised (llama.cpp: "Unable to generate parser for this template.
    Conversation roles must alternate user/assistant/...")."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    meaningful = [line for line in lines if not _NOISE_LINE.match(line) and not _NOISE_START.match(line)]
    line = meaningful[0] if meaningful else " ".join(lines)
    raised = [m.group("msg") for m in map(_RAISED.match, meaningful[1:]) if m]
    if raised and line.endswith(":") and raised[-1] not in line:
        lead = line.split(". ")[0].rstrip(":. ")
        line = f"{lead}. {raised[-1]}" if lead else raised[-1]
    line = " ".join(line.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def error_detail(raw: bytes) -> tuple[str, dict[str, Any]]:
    """(the human part of an error body on one line, the error object) for OpenAI, Anthropic and
    llama.cpp shapes; a body that is not JSON gives its first meaningful line and {}."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return one_line(text), {}
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            msg = err.get("message") or err.get("detail") or err.get("type")
            if msg:
                return one_line(str(msg)), err
            return one_line(text), err
        if isinstance(err, str):
            return one_line(err), data
    return one_line(text), {}


# What each server says when a prompt does not fit (llama.cpp, OpenAI, vLLM, Anthropic, Ollama…)
_OVERFLOW = re.compile(
    r"exceeds? the available context size|context_length_exceeded|maximum context length|"
    r"prompt is too long|context window|input is too large|too many tokens|"
    r"exceed_context_size|longer than the model's context|reduce the length of the (?:messages|prompt)",
    re.IGNORECASE,
)
_N_CTX = (
    re.compile(r"available context size \((\d+) tokens?\)", re.I),
    re.compile(r"maximum context length is (\d+)", re.I),
    re.compile(r"> (\d+) maximum", re.I),
    re.compile(r"context (?:size|window|length) (?:of |is )?(\d+)", re.I),
)
_N_PROMPT = (
    re.compile(r"request \((\d+) tokens?\)", re.I),
    re.compile(r"(?:messages resulted in|your request has|you requested) (\d+)", re.I),
    re.compile(r"prompt is too long: (\d+)", re.I),
    re.compile(r"\((\d+) in the messages", re.I),
)


def _int_field(err: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = err.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _first_int(patterns: Iterable[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


def context_overflow(call: Call, message: str, err: dict[str, Any] | None = None) -> ContextOverflow | None:
    """A ContextOverflow when `message` (or the error object) says the prompt did not fit, else None."""
    err = err or {}
    code = " ".join(str(err.get(k) or "") for k in ("code", "type"))
    if not (_OVERFLOW.search(message) or _OVERFLOW.search(code)):
        return None
    n_ctx = _int_field(err, "n_ctx") or _first_int(_N_CTX, message)
    n_prompt = _int_field(err, "n_prompt_tokens", "n_prompt") or _first_int(_N_PROMPT, message)
    sizes = ""
    if n_prompt and n_ctx:
        sizes = f" ({n_prompt} tokens for a window of {n_ctx})"
    elif n_ctx:
        sizes = f" (a window of {n_ctx} tokens)"
    what = (
        f"the prompt does not fit the model's context window{sizes}: the server said {message!r}; "
        f"set the agent's context_window: (or providers.{call.provider}.context_window) to the server's window, "
        f"or lower max_tokens:, so the prompt is trimmed to fit"
    )
    error = call.error(what, cls=ContextOverflow)
    assert isinstance(error, ContextOverflow)
    error.n_ctx, error.n_prompt = n_ctx, n_prompt
    error.data = {"status": err.get("code") if isinstance(err.get("code"), int) else None, "n_ctx": n_ctx, "n_prompt": n_prompt}
    return error


def reported_error(call: Call, how: str, err: object) -> ProviderError:
    """The error a server reported inside a 200 answer or a stream (`how` says where), on one line;
    a ContextOverflow when it says the prompt did not fit."""
    fields = err if isinstance(err, dict) else {}
    message = one_line(str(fields.get("message") or fields.get("type") or "unknown error") if fields else str(err))
    return context_overflow(call, message, fields) or call.error(f"{how}: {message}")


def _connect_failure(exc: BaseException) -> str:
    """What went wrong when connecting, in words (httpx hides the OS error in the cause chain)."""
    import socket

    seen: BaseException | None = exc
    texts: list[str] = []
    while seen is not None and len(texts) < 10:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return "host name not found"
        texts.append(str(seen).lower())
        seen = seen.__cause__ or seen.__context__
    joined = " ".join(texts)
    if "refused" in joined or "errno 111" in joined:
        return "connection refused"
    if "name or service not known" in joined or "nodename nor servname" in joined or "name resolution" in joined:
        return "host name not found"
    return f"could not connect ({str(exc) or type(exc).__name__})"


def _tries(attempt: int) -> str:
    return f"{attempt} {'try' if attempt == 1 else 'tries'}"


async def _answered_without_reply(call: Call, response: Any, attempt: int) -> tuple[str, float | None]:
    """A non-2xx answer (its body read, the response closed): raises when a retry cannot help (the
    prompt does not fit, a 4xx other than 429); else what failed and how long the server asks to wait."""
    import httpx

    try:
        raw = await response.aread()
    except httpx.HTTPError:
        raw = b""
    finally:
        await response.aclose()
    status = response.status_code
    detail, err = error_detail(raw)
    detail = detail or response.reason_phrase
    overflow = context_overflow(call, detail, err)
    if overflow is not None:  # the same prompt will never fit: no retry
        overflow.data = {**(overflow.data or {}), "status": status}
        raise overflow
    if status not in RETRY_STATUSES:
        hint = ""
        if status in (401, 403):
            hint = "; check the API key (api_key_env / api_key_file)"
        elif status == 404:
            hint = "; check base_url and the model name"
        raise call.error(f"HTTP {status}: {detail}{hint}", data={"status": status})
    label = "rate limited (HTTP 429)" if status == 429 else f"HTTP {status}"
    return (f"{label} after {_tries(attempt)}: {detail}",
            _retry_after(response.headers.get("retry-after"), call.settings.max_retry_wait))


@asynccontextmanager
async def open_response(call: Call) -> AsyncIterator[Any]:
    """POST `call.body` and yield the (streaming) httpx response once it answers 2xx.

    Retries 429/5xx/connection failures as the module docstring says; raises ProviderError
    otherwise. The response and its connection are closed when the block exits (also on cancel).
    """
    import httpx

    settings = call.settings
    timeout = httpx.Timeout(settings.timeout, connect=settings.connect_timeout)
    tries = settings.max_retries + 1
    async with httpx.AsyncClient(timeout=timeout, verify=_verify(), follow_redirects=False) as client:
        attempt = 0
        while True:
            attempt += 1
            wait: float | None = None
            try:
                request = client.build_request("POST", call.endpoint, json=call.body, headers=call.headers)
                response = await client.send(request, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                what = "connection timed out" if isinstance(exc, httpx.ConnectTimeout) else _connect_failure(exc)
                failure = f"{what} after {_tries(attempt)}"
                if what == "connection refused":
                    failure += "; is the server running?"
            except (httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout):
                raise call.error(
                    f"no answer within {settings.timeout:g} s (timeout); raise providers.{call.provider}.timeout "
                    f"in .rooms.yaml if the model is slow",
                    cls=ProviderTimeout,
                ) from None
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                failure = f"the server closed the connection without answering ({exc or type(exc).__name__}) after {_tries(attempt)}"
            except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
                raise call.error(
                    f"invalid URL {call.endpoint!r} ({exc}); fix providers.{call.provider}.base_url in .rooms.yaml "
                    f"(it starts with http:// or https://)"
                ) from None
            except httpx.HTTPError as exc:  # proxies, TLS, protocol: nothing a retry would fix
                raise call.error(f"request failed: {type(exc).__name__}: {exc}") from None
            else:
                if response.status_code < 300:
                    try:
                        yield response
                    finally:
                        await response.aclose()
                    return
                failure, wait = await _answered_without_reply(call, response, attempt)
            if attempt >= tries:
                raise call.error(failure, data={"tries": attempt})
            if wait is None:
                wait = _backoff(settings, attempt, call.provider)
            await asyncio.sleep(wait)


PROBE_TIMEOUT = 5.0


async def probe(url: str, *, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
                timeout: float = PROBE_TIMEOUT, connect_timeout: float | None = None) -> tuple[int, Any]:
    """GET `url` (POST `body` when given) once, no retries: (HTTP status, the JSON answer or None).
    Status 0: the server could not be reached (within `connect_timeout`, default `timeout`).

    For what a server may or may not offer (llama.cpp's /props and /tokenize, Ollama's /api/show,
    vLLM's /v1/models): a missing endpoint, a refused connection or a bad body is never an error."""
    import httpx

    try:
        limits = httpx.Timeout(timeout, connect=min(timeout, connect_timeout or timeout))
        async with httpx.AsyncClient(timeout=limits, verify=_verify(), follow_redirects=False) as client:
            if body is None:
                response = await client.get(url, headers=headers)
            else:
                response = await client.post(url, json=body, headers=headers)
    except httpx.HTTPError:
        return 0, None
    if response.status_code >= 300:
        return response.status_code, None
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None


async def probe_json(url: str, *, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
                     timeout: float = PROBE_TIMEOUT) -> Any:
    """The JSON answer of `probe`, else None."""
    return (await probe(url, body=body, headers=headers, timeout=timeout))[1]


async def post_json(call: Call) -> dict[str, Any]:
    """POST and parse a JSON reply (non-streaming)."""
    async with open_response(call) as response:
        return await read_json(call, response)


def is_event_stream(response: httpx.Response) -> bool:
    content_type: str = response.headers.get("content-type", "")
    return content_type.split(";")[0].strip().lower() == "text/event-stream"


async def read_json(call: Call, response: httpx.Response) -> dict[str, Any]:
    """The whole body of `response` parsed as a JSON object."""
    import httpx

    try:
        raw = await response.aread()
    except httpx.TimeoutException:
        raise call.error(f"no answer within {call.settings.timeout:g} s (timeout)", cls=ProviderTimeout) from None
    except httpx.HTTPError as exc:
        raise call.error(f"the connection was cut before the reply was complete ({exc or type(exc).__name__})") from None
    try:
        data = json.loads(raw)
    except ValueError:
        snippet = " ".join(raw.decode("utf-8", "replace").split())[:120]
        raise call.error(f"the reply is not valid JSON: {snippet!r}") from None
    if not isinstance(data, dict):
        raise call.error("the reply is not a JSON object")
    return data


@dataclass
class SSEEvent:
    """One server-sent event of a streaming reply: its event name and its data."""

    event: str
    data: str

    def json(self, call: Call) -> Any:
        try:
            return json.loads(self.data)
        except ValueError:
            snippet = " ".join(self.data.split())[:120]
            raise call.error(f"invalid JSON in the event stream: {snippet!r}") from None


async def sse_events(call: Call, response: httpx.Response, progress: list[int]) -> AsyncIterator[SSEEvent]:
    """Server-sent events of a streaming response. `progress[0]` is the characters received so
    far, reported when the stream breaks. Transport failures become ProviderError."""
    import httpx

    event = ""
    data: list[str] = []
    try:
        async for line in response.aiter_lines():
            if not line:
                if data:
                    yield SSEEvent(event or "message", "\n".join(data))
                event = ""
                data = []
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)
        if data:  # a last event without its blank line: the stream was cut
            raise call.error(f"the stream was cut off mid-event after {progress[0]} characters of reply")
    except httpx.TimeoutException:
        raise call.error(
            f"the stream stalled: nothing for {call.settings.timeout:g} s (timeout) after {progress[0]} characters",
            cls=ProviderTimeout,
        ) from None
    except httpx.HTTPError as exc:
        raise call.error(
            f"the stream was cut off mid-reply after {progress[0]} characters ({exc or type(exc).__name__}); "
            f"the partial reply was dropped"
        ) from None
