"""One masking for every place configuration is shown or an error names it (issue 29, item 4).

Planted: a password in a provider's `base_url` userinfo, header values (a `Cookie`, an `X-Auth`, an
`X-Api-Key`; `X-Title` is harmless and shown), a `command` provider's argv holding `-H "Authorization:
Bearer …"`, `--token …`, `--api-key=…` and `key=…`. Every command that shows configuration or names it
in an error is run (`config show`, `models list`, `models test`, `doctor`, a chat whose provider is
unreachable); its output, and every file rooms wrote, must not hold any planted secret.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from rooms_cli.core.child_env import mask_argv, mask_config, mask_headers, mask_text

SECRETS = {
    "url password": "PWurl-s3cret-9f8e",
    "cookie": "COOKIE-val-7d6c5b",
    "x-auth": "XAUTH-val-4a3b2c",
    "x-api-key": "XAPIKEY-val-1z2y",
    "bearer": "BEARER-tok-5e6f7g",
    "--token": "TOKENFLAG-8h9i0j",
    "--api-key=": "APIKEYEQ-1k2l3m",
    "key=": "KEYEQ-val-4n5o6p",
}

REPLY = textwrap.dedent(
    """
    import sys
    sys.stdin.read()
    print("pong")
    """
)


def plant(root: Path) -> None:
    script = root / "reply.py"
    script.write_text(REPLY)
    s = SECRETS
    config = {
        "user": "alice",
        "default_model": "offline",
        "providers": {
            "leaky": {"type": "openai", "base_url": f"http://alice:{s['url password']}@127.0.0.1:9/v1",
                      "max_retries": 0, "connect_timeout": 2,
                      "headers": {"Cookie": f"session={s['cookie']}", "X-Auth": s["x-auth"],
                                  "X-Api-Key": s["x-api-key"], "X-Title": "rooms-title"}},
            "cmd": {"type": "command", "command": [sys.executable, str(script), "-H", f"Authorization: Bearer {s['bearer']}",
                                                   "--token", s["--token"], f"--api-key={s['--api-key=']}",
                                                   f"key={s['key=']}"]},
        },
    }
    (root / ".rooms.yaml").write_text(json.dumps(config))  # JSON is YAML
    agent = root / ".rooms" / "agents" / "leaker.md"
    agent.write_text("---\nid: leaker\nname: Leaker\nmodel: leaky:m\ntags: [all]\n---\nYou leak nothing.\n")


def files_text(root: Path) -> dict[str, str]:
    """Every file under .rooms/ but run/parsed.json: the local cache of .rooms.yaml's parsed text
    (store/parsed.py, out of git), which holds what the config file itself holds."""
    out = {}
    for path in (root / ".rooms").rglob("*"):
        if path.is_file() and path.relative_to(root).as_posix() != ".rooms/run/parsed.json":
            out[str(path.relative_to(root))] = path.read_bytes().decode("utf-8", "replace")
    return out


def leaks(text: str) -> list[str]:
    return [name for name, secret in SECRETS.items() if secret in text]


COMMANDS = [
    ("config", "show"), ("config", "show", "--json"),
    ("models", "list"), ("models", "list", "--json"),
    ("models", "test", "leaky:m"), ("models", "test", "leaky:m", "--json"),
    ("models", "test", "cmd:x"), ("models", "test", "cmd:x", "--json"),
    ("models", "test", "leaker"),
    ("doctor",), ("doctor", "--json"),
    ("chat", "@leaker hello there", "--as", "alice"),
    ("transcript",), ("transcript", "--json"),
]


def test_no_command_prints_and_no_file_holds_a_planted_secret(project_dir, rooms):
    plant(project_dir)
    before = files_text(project_dir)
    env = {"ROOMS_DIR": str(project_dir)}
    seen: dict[str, list[str]] = {}
    for args in COMMANDS:
        run = rooms(*args, env=env, timeout=120)
        assert "Traceback" not in run.stderr, (args, run.stderr)
        found = leaks(run.stdout + run.stderr)
        if found:
            seen[" ".join(args)] = found
    for rel, text in files_text(project_dir).items():
        found = leaks(text)
        if found and before.get(rel) != text:
            seen[rel] = found
    assert seen == {}
    # and what is shown is still useful: the user, the host, the harmless header, the program
    shown = rooms("config", "show", "--json", env=env).stdout
    assert "http://alice:****@127.0.0.1:9/v1" in shown and "rooms-title" in shown and "reply.py" in shown
    failed = rooms("models", "test", "leaky:m", env=env)
    assert failed.exit_code == 1 and "alice:****@127.0.0.1:9" in failed.stderr


def test_the_transcript_records_the_provider_failure_masked(project_dir, rooms):
    plant(project_dir)
    env = {"ROOMS_DIR": str(project_dir)}
    run = rooms("chat", "@leaker hello there", "--as", "alice", env=env)
    assert run.exit_code == 1 and leaks(run.stderr) == [], "its only agent failed: exit 1 (issue 24)"
    lines = (project_dir / ".rooms" / "rooms" / "default" / "transcript.jsonl").read_text()
    assert "leaker failed to answer" in lines and "alice:****@127.0.0.1" in lines
    assert leaks(lines) == []


@pytest.mark.parametrize("given, shown", [
    ("http://alice:secret@host/v1", "http://alice:****@host/v1"),
    ("https://h/v1?api_key=abc123&x=1", "https://h/v1?api_key=****&x=1"),
    ("Authorization: Bearer sk-abc", "Authorization: Bearer ****"),
    ("X-Api-Key: zzz", "X-Api-Key: ****"),
    ("Cookie: sess=abc", "Cookie: ****"),
    ("password=hunter2 and token=t0k", "password=**** and token=****"),
    ("provider 'x' (http://a:b@h): connection refused", "provider 'x' (http://a:****@h): connection refused"),
    ("invalid key 'x': use letters", "invalid key 'x': use letters"),
    ("Content-Type: application/json", "Content-Type: application/json"),
    ("http://alice@host/v1", "http://alice@host/v1"),
])
def test_mask_text(given, shown):
    assert mask_text(given) == shown


def test_mask_headers_shows_only_the_harmless_ones():
    assert mask_headers({"Cookie": "a", "X-Auth": "b", "X-Api-Key": "c", "X-Title": "t", "Content-Type": "j",
                         "HTTP-Referer": "r", "anthropic-version": "v", "User-Agent": "u", "Accept": "a"}) == {
        "Cookie": "****", "X-Auth": "****", "X-Api-Key": "****", "X-Title": "t", "Content-Type": "j",
        "HTTP-Referer": "r", "anthropic-version": "v", "User-Agent": "u", "Accept": "a"}


def test_mask_argv_masks_credential_looking_elements():
    argv = ["curl", "-H", "Authorization: Bearer sk-abc", "-H", "Content-Type: application/json", "--token", "T0K",
            "--api-key=K", "key=v", "https://u:p@h", "-p", "claude", "Bearer loose"]
    assert mask_argv(argv) == ["curl", "-H", "Authorization: ****", "-H", "Content-Type: application/json", "--token", "****",
                               "--api-key=****", "key=****", "https://u:****@h", "-p", "claude", "Bearer ****"]


def test_mask_config_masks_secret_named_keys_but_not_the_names_of_variables():
    assert mask_config({"api_key": "k", "api_key_env": "OPENAI_API_KEY", "api_key_file": "~/.k", "model": "m",
                        "headers": {"X-Auth": "x"}, "command": ["a", "--token", "t"]}) == {
        "api_key": "****", "api_key_env": "OPENAI_API_KEY", "api_key_file": "~/.k", "model": "m",
        "headers": {"X-Auth": "****"}, "command": ["a", "--token", "****"]}
