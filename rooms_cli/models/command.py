"""Any program as a model: the prompt on its stdin, the reply on its stdout.

    claude: {type: command, command: ["claude", "-p"], timeout: 600}
    llm:    {type: command, command: ["llm", "-m", "{model}"]}          # llm:gpt-4o-mini fills {model}

The command is an argv list run directly, never through a shell, so agent text can never become
shell syntax. The prompt is rendered from the messages as plain text (system directive first,
then the conversation, one `speaker: text` block each). The reply is streamed to `on_delta` as
the program prints it (surrounding whitespace trimmed). The program runs in its own process
group; `timeout` (seconds, default 600) or cancelling the call kills the whole group. A non-zero
exit is a ProviderError with the exit code and the tail of its stderr. A reply longer than
`max_tokens` (by tokens.estimate_tokens) is cut there: the program is stopped, the text kept up
to the limit, and `finish_reason` is "length". Likewise once a stop string appears in its output
the program is stopped (the text is cut there by the base class). The program sees only the
allow-listed environment of rooms_cli/core/child_env.py plus the names in `pass_env:` (and the spec's
own `api_key_env`): no other API key.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import signal
from collections import deque
from typing import Any

from rooms_cli.core.errors import ProviderError
from rooms_cli.models.base import Completion, Delta, Message, Provider, Usage, first_stop
from rooms_cli.models.http import ProviderTimeout
from rooms_cli.models.tokens import clip_to_tokens, estimate_tokens

DEFAULT_TIMEOUT = 600.0
STDERR_TAIL = 600  # characters of stderr quoted in an error


def render_prompt(messages: list[Message]) -> str:
    """Messages as one plain-text prompt: the system text, then the conversation."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content.strip())
    turns = [m for m in messages if m.role != "system"]
    if len(turns) == 1 and turns[0].role == "user" and not turns[0].name:
        body = turns[0].content
    else:
        lines = []
        for m in turns:
            # a user message carries its speakers' labels already (a chat packs `name: text` lines):
            # it goes as it is, never "user: alice: …"; the agent's own turns are labelled "you"
            speaker = m.name or ("you" if m.role == "assistant" else "")
            lines.append(f"{speaker}: {m.content}" if speaker else m.content)
        body = "\n\n".join(lines)
    return f"{system}\n\n{body}".strip() + "\n" if system else body.strip() + "\n"


def _tail(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    joined = " / ".join(lines)
    return ("…" + joined[-STDERR_TAIL:]) if len(joined) > STDERR_TAIL else joined


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class _Reply:
    """The program's reply as it streams in: trimmed, cut at `max_tokens`, ended by a stop string."""

    def __init__(self, max_tokens: int | None, stop: list[str], on_delta: Delta | None) -> None:
        self.max_tokens, self.stop, self.on_delta = max_tokens, stop, on_delta
        self.out: list[str] = []
        self.pending = ""  # whitespace held back until more text follows (the reply is trimmed)
        self.cut = False  # the reply reached max_tokens: the rest is not read
        self.stopped = False  # a stop string appeared: the rest is not read either

    @property
    def complete(self) -> bool:
        return self.cut or self.stopped

    def text(self) -> str:
        return "".join(self.out)

    def emit(self, piece: str) -> None:
        text = self.pending + piece
        if not self.out:
            text = text.lstrip()
        kept = text.rstrip()
        self.pending = text[len(kept):]
        if kept and self.max_tokens:
            so_far = self.text()
            room = clip_to_tokens(so_far + kept, self.max_tokens)
            if len(room) < len(so_far) + len(kept):
                self.cut = True
                kept = room[len(so_far):]
        if kept:
            self.out.append(kept)
            if self.on_delta:
                self.on_delta(kept)
            if self.stop and first_stop(self.text(), self.stop) is not None:
                self.stopped = True


async def _feed(stdin: asyncio.StreamWriter, prompt: str) -> None:
    try:
        stdin.write(prompt.encode("utf-8"))
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the program does not read its stdin: fine
    finally:
        try:
            stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            pass


async def _read_out(proc: asyncio.subprocess.Process, stdout: asyncio.StreamReader, reply: _Reply) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await stdout.read(4096):
        reply.emit(decoder.decode(chunk))
        if reply.complete:
            _kill_group(proc)  # enough: the rest of the reply would be thrown away
            while await stdout.read(65536):  # drained to its end, so the pipe closes
                pass
            return
    reply.emit(decoder.decode(b"", final=True))


async def _read_err(stderr: asyncio.StreamReader, tail: deque[bytes]) -> None:
    while chunk := await stderr.read(4096):
        tail.append(chunk)


class CommandProvider(Provider):
    type = "command"

    def argv(self, model: str) -> list[str]:
        command = self.spec.get("command")
        if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
            raise ProviderError(
                f"provider {self.name!r}: providers.{self.name}.command must be a non-empty list of arguments, "
                f"such as [claude, -p]"
            )
        if any("{model}" in a for a in command) and not model:
            raise ProviderError(f"provider {self.name!r} needs a model name for its {{model}} argument: write {self.name}:MODEL")
        return [a.replace("{model}", model) for a in command]

    def env(self) -> dict[str, str]:
        """The allow-listed environment (rooms_cli/core/child_env.py) plus this provider's `pass_env:`."""
        from rooms_cli.core.child_env import child_env, provider_env_names

        return child_env(provider_env_names(self.spec))

    def timeout(self) -> float:
        value = self.spec.get("timeout")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return float(value)
        return DEFAULT_TIMEOUT

    async def _start(self, argv: list[str]) -> asyncio.subprocess.Process:
        try:
            return await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True, env=self.env(),
            )
        except FileNotFoundError:
            raise ProviderError(
                f"provider {self.name!r}: command {argv[0]!r} not found; install it or fix "
                f"providers.{self.name}.command in .rooms.yaml"
            ) from None
        except PermissionError:
            raise ProviderError(f"provider {self.name!r}: command {argv[0]!r} is not executable") from None

    async def _run(self, proc: asyncio.subprocess.Process, argv: list[str], prompt: str, reply: _Reply,
                   err_tail: deque[bytes]) -> int:
        """Feed the prompt and read the reply within the timeout; the exit code. Whatever goes wrong
        (timeout, cancel, on_delta failing), the program's whole group is killed."""
        stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
        assert stdin is not None and stdout is not None and stderr is not None  # all three are PIPEs
        limit = self.timeout()
        try:
            async with asyncio.timeout(limit):
                await asyncio.gather(_feed(stdin, prompt), _read_out(proc, stdout, reply), _read_err(stderr, err_tail))
                return await proc.wait()
        except TimeoutError:
            _kill_group(proc)
            await proc.wait()
            raise ProviderTimeout(
                f"provider {self.name!r}: command {argv[0]!r} did not finish within {limit:g} s (timeout); "
                f"it was stopped (raise providers.{self.name}.timeout in .rooms.yaml if it is just slow)"
            ) from None
        except BaseException:  # cancelled (or on_delta failed): never leave the program running
            _kill_group(proc)
            try:
                await asyncio.shield(proc.wait())
            except BaseException:
                pass
            raise

    async def _acomplete(
        self, messages: list[Message], *, model: str, temperature: float | None, max_tokens: int | None,
        stop: list[str], schema: dict[str, Any] | None, on_delta: Delta | None, agent: Any, purpose: str,
    ) -> Completion:
        argv = self.argv(model or str(self.spec.get("model") or ""))
        prompt = render_prompt(messages)
        proc = await self._start(argv)
        reply = _Reply(max_tokens, stop, on_delta)
        err_tail: deque[bytes] = deque(maxlen=64)
        code = await self._run(proc, argv, prompt, reply, err_tail)
        stderr = _tail(b"".join(err_tail))
        if code != 0 and not reply.complete:
            how = f"was killed by signal {_signal_name(-code)}" if code < 0 else f"exited with code {code}"
            raise ProviderError(
                f"provider {self.name!r}: command {argv[0]!r} {how}" + (f": {stderr}" if stderr else " (no stderr)"),
                data={"exit_code": code},
            )
        text = reply.text()
        if not text:
            raise ProviderError(
                f"provider {self.name!r}: command {argv[0]!r} printed no reply" + (f" (stderr: {stderr})" if stderr else "")
            )
        return Completion(
            text=text,
            usage=Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(text)),
            finish_reason="length" if reply.cut else "stop",
        )
