"""`rooms models test|list` against a real fake server: the doctor reports facts or the exact failure."""

from __future__ import annotations

import json

import pytest
import yaml
from fakeserver import FakeServer, Reply

SECRET = "sk-cli-SECRET-abcdef0123456789"


@pytest.fixture
def server():
    with FakeServer("pong") as s:
        yield s


def write_config(project_dir, **data) -> None:
    (project_dir / ".rooms.yaml").write_text(yaml.safe_dump({"user": "alice", **data}))


def local_provider(url: str, **extra) -> dict:
    return {"local": {"type": "openai", "base_url": url, "retry_backoff": 0.01, **extra}}


def test_models_test_json_reports_provider_model_latency_usage_and_reply(cli, project_dir, server):
    write_config(project_dir, providers=local_provider(server.openai_url))
    server.push(Reply(usage=(17, 1)))
    run = cli("models", "test", "local:llama3.2", "--json")
    assert run.exit_code == 0, run.stderr
    report = run.json()
    assert report["ok"] is True and report["provider"] == "local" and report["type"] == "openai"
    assert report["model"] == "llama3.2" and report["base_url"] == server.openai_url
    assert report["reply"] == "pong" and report["usage"] == {"input_tokens": 17, "output_tokens": 1}
    assert report["latency_s"] >= 0 and report["first_token_s"] is not None
    req = server.requests[0]
    assert req.json["model"] == "llama3.2" and req.json["stream"] is True  # the doctor checks streaming


def test_models_test_defaults_to_the_default_model(cli, project_dir, server):
    write_config(project_dir, default_model="local:qwen", providers=local_provider(server.openai_url))
    run = cli("models", "test", "--json")
    assert run.exit_code == 0 and run.json()["target"] == "local:qwen"
    assert server.requests[0].json["model"] == "qwen"


def test_models_test_accepts_an_agent_id(cli, project_dir, server):
    write_config(project_dir, providers=local_provider(server.openai_url))
    assert cli("agent", "new", "probe", "--model", "local:tiny").exit_code == 0
    run = cli("models", "test", "probe", "--json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["agent"] == "probe" and server.requests[0].json["model"] == "tiny"


def test_models_test_human_output(cli, project_dir, server):
    write_config(project_dir, providers=local_provider(server.openai_url))
    run = cli("models", "test", "local:m")
    assert run.exit_code == 0
    assert "ok  local:m" in run.stdout and "latency:" in run.stdout and "reply:   pong" in run.stdout


def test_models_test_failure_is_the_exact_error_and_exit_1(cli, project_dir, server):
    write_config(project_dir, providers=local_provider(server.openai_url, max_retries=1))
    server.set_default(Reply.server_error(503, "model is loading"))
    run = cli("models", "test", "local:m", "--json")
    assert run.exit_code == 1 and run.stdout == ""
    err = run.err_json()["error"]
    assert err["code"] == "provider_error"
    assert err["message"] == f"provider 'local' ({server.openai_url}): HTTP 503 after 2 tries: model is loading"
    assert err["data"]["ok"] is False and err["data"]["model"] == "m"


def test_models_test_connection_refused_as_a_real_process(rooms, project_dir, closed_port):
    port = closed_port
    write_config(project_dir, providers={"ollama": {"type": "openai", "ollama": True, "retry_backoff": 0.01}})
    run = rooms("models", "test", "ollama:llama3.2", env={"OLLAMA_HOST": f"127.0.0.1:{port}"})
    assert run.exit_code == 1
    assert run.stderr.strip() == (
        f"error: provider 'ollama' (http://127.0.0.1:{port}/v1): connection refused after 4 tries; is the server running?"
    )
    assert "Traceback" not in run.stderr


def test_models_test_unknown_provider_or_agent_is_one_clear_line(cli, project_dir):
    run = cli("models", "test", "nosuch:model")
    assert run.exit_code == 1 and "unknown provider 'nosuch'" in run.stderr


def test_models_test_works_outside_a_project(rooms, tmp_path, server):
    run = rooms("models", "test", "ollama:m", "--json", env={"OLLAMA_HOST": f"127.0.0.1:{server.port}"}, cwd=tmp_path)
    assert run.exit_code == 0, run.stderr
    assert run.json()["reply"] == "pong"


def test_keys_never_reach_the_output(cli, project_dir, server, monkeypatch):
    monkeypatch.setenv("LOCAL_KEY", SECRET)
    write_config(project_dir, providers=local_provider(server.openai_url, api_key_env="LOCAL_KEY"))
    server.push(Reply.server_error(401, f"bad key {SECRET}"))
    failed = cli("models", "test", "local:m", "--json")
    assert failed.exit_code == 1
    listed = cli("models", "list", "--json")
    shown = cli("config", "show", "--json")
    for run in (failed, listed, shown):
        assert SECRET not in run.stdout + run.stderr
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"  # it was used, just never shown
    local = next(p for p in listed.json()["providers"] if p["name"] == "local")
    assert local["key"] == "$LOCAL_KEY" and local["key_set"] is True


def test_models_list_shows_builtins_and_configured_providers(cli, project_dir):
    write_config(project_dir, default_model="claude:default", providers={
        "claude": {"type": "command", "command": ["claude", "-p"], "timeout": 600},
        "local": {"type": "openai", "base_url": "http://127.0.0.1:8080/v1"},
    })
    run = cli("models", "list", "--json")
    assert run.exit_code == 0
    data = run.json()
    by_name = {p["name"]: p for p in data["providers"]}
    assert data["default_model"] == "claude:default"
    assert {"offline", "external", "openai", "ollama", "anthropic", "claude", "local"} <= set(by_name)
    assert by_name["claude"]["command"] == ["claude", "-p"]
    assert by_name["local"]["base_url"] == "http://127.0.0.1:8080/v1" and by_name["local"]["builtin"] is False
    assert by_name["openai"]["key"] == "$OPENAI_API_KEY" and by_name["openai"]["key_set"] is False
    human = cli("models", "list")
    assert "claude" in human.stdout and "claude -p" in human.stdout
    json.dumps(data)


@pytest.mark.parametrize("key, value", [("retry_backoff", "fast"), ("max_retry_wait", -1), ("max_tokens", 0), ("model", 3)])
def test_a_provider_setting_of_the_wrong_type_is_one_clear_error(cli, project_dir, key, value):
    write_config(project_dir, providers={"local": {"type": "openai", "base_url": "http://127.0.0.1:1/v1", key: value}})
    run = cli("models", "list")
    assert run.exit_code == 1
    assert run.stderr.startswith(f"error: .rooms.yaml: key 'providers.local.{key}' must be")
    assert len(run.stderr.strip().splitlines()) == 1


def test_models_test_reports_finish_reason_window_and_structured_output(cli, project_dir, server):
    write_config(project_dir, providers=local_provider(server.openai_url))
    server.n_ctx = 2048
    server.push(Reply(text="pong"), Reply(text='{"ok": true}'))
    run = cli("models", "test", "local:m", "--json")
    assert run.exit_code == 0, run.stderr
    report = run.json()
    assert report["finish_reason"] == "stop" and report["cut"] is False
    assert report["context_window"] == 2048
    assert report["structured"] is True and "response_format" in server.requests[1].json
    server.push(Reply(text="pong"), Reply(text='{"ok": true}'))
    human = cli("models", "test", "local:m")
    assert "finish:  stop" in human.stdout and "window:  2048 tokens" in human.stdout
    assert "structured output: yes" in human.stdout


def test_models_test_says_when_the_server_refuses_structured_output(cli, project_dir, server):
    write_config(project_dir, providers=local_provider(server.openai_url))
    server.refuse = {"response_format"}
    run = cli("models", "test", "local:m", "--json")
    assert run.exit_code == 0, run.stderr
    report = run.json()
    assert report["structured"] is False and "refused" in report["structured_note"]
    assert report["context_window"] is None


def test_models_test_of_the_offline_model_has_no_structured_output(cli, project_dir):
    run = cli("models", "test", "offline", "--json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["structured"] is None and run.json()["finish_reason"] == "stop"


def test_models_list_shows_a_providers_limits(cli, project_dir, server):
    write_config(project_dir, providers=local_provider(server.openai_url, max_tokens=300, context_window=2048))
    run = cli("models", "list", "--json")
    [local] = [p for p in run.json()["providers"] if p["name"] == "local"]
    assert (local["max_tokens"], local["context_window"]) == (300, 2048)
    assert "max_tokens: 300  context_window: 2048" in cli("models", "list").stdout


def test_a_bad_context_window_or_agent_max_tokens_is_one_clear_error(cli, project_dir, server):
    write_config(project_dir, providers=local_provider(server.openai_url, context_window="big"))
    run = cli("models", "list")
    assert run.exit_code == 1 and "providers.local.context_window" in run.stderr
    write_config(project_dir)
    (project_dir / ".rooms" / "agents" / "terse.md").write_text("---\nid: terse\nmax_tokens: 0\n---\nBe terse.\n", "utf-8")
    run = cli("agent", "show", "terse")
    assert run.exit_code == 1 and "max_tokens" in run.stderr and len(run.stderr.strip().splitlines()) == 1
