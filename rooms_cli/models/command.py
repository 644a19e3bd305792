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
allow-listed environment of rooms_cli/child_env.py plus the names in `pass_env:` (and the spec's
own `api_key_env`): no other API key.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import signal
from collections import deque

from rooms_cli.errors import ProviderError
from rooms_cli.models.base import Completion, Provider, Usage, first_stop
from rooms_cli.models.http import ProviderTimeout
from rooms_cli.models.tokens import clip_to_tokens, estimate_tokens

DEFAULT_TIMEOUT = 600.0
STDERR_TAIL = 600  # characters of stderr quoted in an error


def render_prompt(messages) -> str:
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


def _kill_group(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


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
        """The allow-listed environment (rooms_cli/child_env.py) plus this provider's `pass_env:`."""
        from rooms_cli.child_env import child_env, provider_env_names

        return child_env(provider_env_names(self.spec))

    def timeout(self) -> float:
        value = self.spec.get("timeout")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return float(value)
        return DEFAULT_TIMEOUT

    async def _acomplete(
        self, messages, *, model, temperature, max_tokens, stop, schema, on_delta, agent, purpose,
    ) -> Completion:
        argv = self.argv(model or str(self.spec.get("model") or ""))
        prompt = render_prompt(messages)
        try:
            proc = await asyncio.create_subprocess_exec(
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

        stdin, stdout, stderr_pipe = proc.stdin, proc.stdout, proc.stderr
        assert stdin is not None and stdout is not None and stderr_pipe is not None  # all three are PIPEs
        out: list[str] = []
        err_tail: deque[bytes] = deque(maxlen=64)
        pending = [""]  # whitespace held back until more text follows (the reply is trimmed)
        cut = [False]  # the reply reached max_tokens: the rest is not read
        stopped = [False]  # a stop string appeared: the rest is not read either

        def emit(piece: str) -> None:
            text = pending[0] + piece
            if not out:
                text = text.lstrip()
            kept = text.rstrip()
            pending[0] = text[len(kept):]
            if kept and max_tokens:
                so_far = "".join(out)
                room = clip_to_tokens(so_far + kept, max_tokens)
                if len(room) < len(so_far) + len(kept):
                    cut[0] = True
                    kept = room[len(so_far):]
            if kept:
                out.append(kept)
                if on_delta:
                    on_delta(kept)
                if stop and first_stop("".join(out), stop) is not None:
                    stopped[0] = True

        async def feed() -> None:
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

        async def read_out() -> None:
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            while chunk := await stdout.read(4096):
                emit(decoder.decode(chunk))
                if cut[0] or stopped[0]:
                    _kill_group(proc)  # enough: the rest of the reply would be thrown away
                    while await stdout.read(65536):  # drained to its end, so the pipe closes
                        pass
                    return
            emit(decoder.decode(b"", final=True))

        async def read_err() -> None:
            while chunk := await stderr_pipe.read(4096):
                err_tail.append(chunk)

        limit = self.timeout()
        try:
            async with asyncio.timeout(limit):
                await asyncio.gather(feed(), read_out(), read_err())
                code = await proc.wait()
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
        stderr = _tail(b"".join(err_tail))
        if code != 0 and not (cut[0] or stopped[0]):
            how = f"was killed by signal {_signal_name(-code)}" if code < 0 else f"exited with code {code}"
            raise ProviderError(
                f"provider {self.name!r}: command {argv[0]!r} {how}" + (f": {stderr}" if stderr else " (no stderr)"),
                data={"exit_code": code},
            )
        text = "".join(out)
        if not text:
            raise ProviderError(
                f"provider {self.name!r}: command {argv[0]!r} printed no reply" + (f" (stderr: {stderr})" if stderr else "")
            )
        return Completion(
            text=text,
            usage=Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(text)),
            finish_reason="length" if cut[0] else "stop",
        )
