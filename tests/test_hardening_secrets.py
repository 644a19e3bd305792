"""Issue #17 item 5: children see only the environment they need; parts of keys are masked.

Real processes print their environment; a real HTTP server echoes part of a key.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from fakeserver import FakeServer, Reply

from rooms_cli.core.child_env import child_env, mask_secrets
from rooms_cli.core.errors import ProviderError
from rooms_cli.models import get_provider
from rooms_cli.models.base import Message
from rooms_cli.project.config import Config
from tests.test_messaging_spawn import spawn_record, wait_until

KEYS = {"OPENAI_API_KEY": "sk-PLANTED-OPENAI-123456", "ANTHROPIC_API_KEY": "sk-ant-PLANTED-987654",
        "GITHUB_TOKEN": "ghp_PLANTEDTOKEN000111", "FAKE_KEY": "sk-PLANTED-123456789"}

PRINT_ENV = textwrap.dedent(
    """
    import json, os, sys
    sys.stdin.read()
    print(json.dumps(dict(os.environ)))
    """
)


def test_mask_replaces_any_long_run_copied_from_a_key():
    key = "sk-PLANTED-123456789"
    assert mask_secrets(f"bad key {key[:12]}… try again", [key]) == "bad key ****… try again"
    assert mask_secrets(f"x{key}y", [key]) == "x****y"
    assert mask_secrets("sk-PLAN and 1234567", [key]) == "sk-PLAN and 1234567"  # 7 characters: no leak
    assert mask_secrets("nothing here", [key, "short"]) == "nothing here"


def test_child_env_is_an_allow_list(monkeypatch):
    env = child_env(["EXTRA_ONE"], {"ROOMS_AGENT": "kid"}, environ={
        "PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "ROOMS_DIR": "/p", "ROOMS_LEASE": "l-1", "ROOMS_INSTANCE": "i",
        "OPENAI_API_KEY": "k", "GITHUB_TOKEN": "t", "EXTRA_ONE": "1", "EXTRA_TWO": "2"})
    assert env == {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "ROOMS_DIR": "/p", "EXTRA_ONE": "1", "ROOMS_AGENT": "kid"}


def test_a_command_provider_sees_only_its_own_key_and_pass_env(tmp_path, monkeypatch):
    for name, value in {**KEYS, "MY_LLM_KEY": "own-key-value-42", "LLM_HOME": "/models"}.items():
        monkeypatch.setenv(name, value)
    script = tmp_path / "env.py"
    script.write_text(PRINT_ENV)
    config = Config({"providers": {"llm": {"type": "command", "command": [sys.executable, str(script)],
                                            "api_key_env": "MY_LLM_KEY", "pass_env": ["LLM_HOME"]}}})
    seen = json.loads(get_provider("llm", config).complete([Message("user", "hi")], model="").text)
    # its own key is passed (and, printed back, masked like any configured key)
    assert seen["MY_LLM_KEY"] == "****" and seen["LLM_HOME"] == "/models" and seen["PATH"]
    assert not set(KEYS) & set(seen), sorted(seen)


def test_a_spawned_runner_gets_no_api_key_unless_passed(rooms, project_dir, project, tmp_path):
    script = tmp_path / "env.py"
    script.write_text(PRINT_ENV)
    with open(project_dir / ".rooms.yaml", "a") as fh:
        fh.write(f"\nrunner: [{json.dumps(sys.executable)}, {json.dumps(str(script))}]\npass_env: [RUNNER_SETTING]\n")
    run = rooms("spawn", "print your env", "--as", "alice", "--json",
                env={**KEYS, "RUNNER_SETTING": "on", "ROOMS_LEASE": "l-PARENT", "ROOMS_INSTANCE": "host:p"})
    assert run.exit_code == 0, run.stderr
    done = wait_until(lambda: (r := spawn_record(project, run.json()["id"])).status in ("done", "failed") and r)
    seen = json.loads(done.output)
    assert not set(KEYS) & set(seen), sorted(seen)
    assert seen["RUNNER_SETTING"] == "on" and seen["ROOMS_AGENT"] == done.alias and seen["ROOMS_PARENT"] == "alice"
    assert "ROOMS_LEASE" not in seen and "ROOMS_INSTANCE" not in seen


@pytest.fixture
def fake_provider(monkeypatch):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)

    def make(server):
        return get_provider("fake", Config({"providers": {
            "fake": {"type": "openai", "base_url": server.openai_url, "api_key_env": "FAKE_KEY", "max_retries": 0}}}))
    return make


def test_a_server_echoing_part_of_the_key_in_an_error_is_masked(fake_provider):
    echoed = KEYS["FAKE_KEY"][:12]  # sk-PLANTED-1
    with FakeServer(Reply.server_error(401, f"Incorrect API key provided: {echoed}**** (see docs)")) as server:
        with pytest.raises(ProviderError) as info:
            fake_provider(server).complete([Message("user", "hi")], model="tiny")
    assert echoed not in str(info.value) and echoed not in info.value.message and "****" in str(info.value)


def test_a_reply_containing_any_configured_key_is_masked_before_anyone_stores_it(fake_provider):
    reply = f"your keys: {KEYS['FAKE_KEY']} and {KEYS['OPENAI_API_KEY'][:10]} done"
    with FakeServer(reply=reply) as server:
        text = fake_provider(server).complete([Message("user", "hi")], model="tiny").text
    assert KEYS["FAKE_KEY"][:8] not in text and KEYS["OPENAI_API_KEY"][:10] not in text
    assert text.startswith("your keys: ****") and text.endswith("done")


@pytest.mark.parametrize("size", [1, 3, 7, 8, 13], ids=lambda n: f"chunks-of-{n}")
def test_a_key_streamed_live_split_across_chunks_never_reaches_the_terminal(fake_provider, size):
    key = KEYS["FAKE_KEY"]
    reply = f"the key is {key} and part {KEYS['OPENAI_API_KEY'][3:14]} end"
    pieces = [reply[i:i + size] for i in range(0, len(reply), size)]
    shown: list[str] = []
    with FakeServer(Reply(text=reply, pieces=pieces)) as server:
        completion = fake_provider(server).complete([Message("user", "hi")], model="tiny", on_delta=shown.append)
    live = "".join(shown)
    assert len(shown) > 1  # streamed, not held to the end
    for secret in (key, KEYS["OPENAI_API_KEY"]):
        assert not any(secret[i:i + 8] in live for i in range(len(secret) - 7)), live
    assert live == completion.text == "the key is **** and part **** end"


def test_a_stream_without_keys_is_passed_on_whole():
    from rooms_cli.core.child_env import StreamMask

    shown: list[str] = []
    mask = StreamMask(shown.append, ["sk-PLANTED-123456789"])
    for piece in ("hello ", "world, ", "no key here"):
        mask(piece)
    mask.close()
    assert "".join(shown) == "hello world, no key here"
