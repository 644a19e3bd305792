"""The command provider with real programs: prompt on stdin, reply on stdout, exit codes, timeouts."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rooms_cli.core.errors import ProviderError
from rooms_cli.models.base import Message
from rooms_cli.models.command import CommandProvider, render_prompt
from rooms_cli.models.http import ProviderTimeout

MESSAGES = [Message("system", "You are the boss."), Message("user", "What ships this week?")]

# A tiny "model": echoes its stdin (so tests see the prompt), or misbehaves on request.
MODEL_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    mode = sys.argv[1]
    prompt = sys.stdin.read()
    if mode == "echo":
        sys.stdout.write("PROMPT<" + prompt + ">")
    elif mode == "pieces":
        for word in ["alpha ", "beta ", "gamma"]:
            sys.stdout.write(word); sys.stdout.flush(); time.sleep(0.2)
        sys.stdout.write("\\n")
    elif mode == "fail":
        sys.stderr.write("loading model...\\n" + "x" * 2000 + "\\nerror: model 'nope' not found\\n")
        sys.exit(3)
    elif mode == "sleep":
        # a child in the same process group, recorded so the test can check it was killed too
        import subprocess
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open(sys.argv[2], "w").write(f"{os.getpid()} {child.pid}")
        sys.stdout.write("thinking"); sys.stdout.flush()
        time.sleep(60)
    elif mode == "silent":
        pass
    elif mode == "argv":
        sys.stdout.write(" ".join(sys.argv[2:]))
    """
)


@pytest.fixture
def script(tmp_path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(MODEL_SCRIPT)
    return path


def provider(script: Path, *args: str, **spec) -> CommandProvider:
    return CommandProvider("local", {"type": "command", "command": [sys.executable, str(script), *args], **spec})


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_prompt_goes_to_stdin_and_the_reply_comes_from_stdout(script):
    done = provider(script, "echo").complete(MESSAGES, model="default")
    assert done.text == "PROMPT<You are the boss.\n\nWhat ships this week?\n>"
    assert done.usage.input_tokens > 0 and done.usage.output_tokens > 0
    assert done.model == "local:default"


def test_the_reply_streams_as_the_program_prints_it(script):
    stamps: list[tuple[float, str]] = []
    done = provider(script, "pieces").complete(MESSAGES, model="", on_delta=lambda d: stamps.append((time.monotonic(), d)))
    assert "".join(d for _, d in stamps) == done.text == "alpha beta gamma"
    assert len(stamps) >= 3
    assert stamps[-1][0] - stamps[0][0] > 0.25  # pieces came as printed, not all at the end


def test_agent_text_is_never_shell_syntax(script):
    evil = [Message("user", "$(touch pwned); `rm -rf /`; echo hi")]
    done = provider(script, "echo").complete(evil, model="")
    assert "$(touch pwned)" in done.text  # passed through as data
    assert not Path("pwned").exists()


def test_model_placeholder_fills_an_argument(script):
    done = provider(script, "argv", "-m", "{model}").complete(MESSAGES, model="gpt-4o-mini")
    assert done.text == "-m gpt-4o-mini"
    with pytest.raises(ProviderError, match="needs a model name"):
        provider(script, "argv", "{model}").complete(MESSAGES, model="")


def test_non_zero_exit_is_an_error_with_the_code_and_the_tail_of_stderr(script):
    with pytest.raises(ProviderError) as err:
        provider(script, "fail").complete(MESSAGES, model="")
    msg = str(err.value)
    assert "exited with code 3" in msg and "error: model 'nope' not found" in msg
    assert len(msg) < 800  # the tail, not all of it
    assert err.value.data == {"exit_code": 3}


def test_an_empty_reply_is_an_error(script):
    with pytest.raises(ProviderError, match="printed no reply"):
        provider(script, "silent").complete(MESSAGES, model="")


def test_a_missing_program_is_a_clear_error():
    p = CommandProvider("claude", {"type": "command", "command": ["no-such-llm-binary-xyz", "-p"]})
    with pytest.raises(ProviderError, match=r"command 'no-such-llm-binary-xyz' not found; install it or fix providers.claude.command"):
        p.complete(MESSAGES, model="")


def test_timeout_kills_the_whole_process_group(script, tmp_path):
    pids = tmp_path / "pids"
    start = time.monotonic()
    with pytest.raises(ProviderTimeout, match=r"did not finish within 1 s \(timeout\); it was stopped"):
        provider(script, "sleep", str(pids), timeout=1).complete(MESSAGES, model="")
    assert time.monotonic() - start < 10
    parent, child = map(int, pids.read_text().split())
    deadline = time.monotonic() + 5
    while (alive(parent) or alive(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(parent) and not alive(child)


def test_cancelling_the_call_kills_the_program(script, tmp_path):
    pids = tmp_path / "pids"

    async def scenario():
        started = asyncio.Event()
        task = asyncio.create_task(
            provider(script, "sleep", str(pids)).acomplete(MESSAGES, model="", on_delta=lambda _: started.set())
        )
        await asyncio.wait_for(started.wait(), 20)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    parent, child = map(int, pids.read_text().split())
    deadline = time.monotonic() + 5
    while (alive(parent) or alive(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(parent) and not alive(child)


def test_render_prompt_labels_speakers_in_a_conversation():
    text = render_prompt([
        Message("system", "Be brief."), Message("user", "hi", name="alice"), Message("assistant", "hello"),
        Message("user", "ship it?"),
    ])
    # an unnamed user message goes as it is (a chat packs its own `name: text` labels): no "user: user: …"
    assert text == "Be brief.\n\nalice: hi\n\nyou: hello\n\nship it?\n"
    packed = render_prompt([Message("user", "user: hi"), Message("assistant", "hello"), Message("user", "user: and?")])
    assert "user: user:" not in packed and packed == "user: hi\n\nyou: hello\n\nuser: and?\n"
