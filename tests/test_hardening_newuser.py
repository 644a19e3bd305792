"""The new-user path: a fresh clone runs `rooms demo`; the README's quick start works, on the offline
model, on an OpenAI-compatible server (the fake server stands in) and on a `command` provider;
common mistakes get an error that says how to fix them."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, rooms_env
from fakeserver import FakeServer, Reply
from hardening_kit import invoke


def run(args, *, cwd, env=None, timeout=120):
    proc = subprocess.run([sys.executable, "-m", "rooms_cli", *map(str, args)], capture_output=True, text=True,
                          env=rooms_env(env), timeout=timeout, cwd=cwd)
    assert proc.returncode == 0, (args, proc.stdout[-500:], proc.stderr[-1500:])
    assert "Traceback" not in proc.stderr
    return proc


def quick_start_commands() -> list[list[str]]:
    """The `rooms …` lines of the README's quick start, as argv lists (comments dropped)."""
    text = (REPO / "README.md").read_text()
    block = re.search(r"## Quick start\s+```bash\n(.*?)```", text, re.S)
    assert block, "the README has no Quick start code block"
    lines = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    return [shlex.split(line)[1:] for line in lines if line.startswith("rooms ")]


def watch_briefly(args: list[str]) -> list[str]:
    """`rooms watch` follows until Ctrl-C; in a test it stops after a second."""
    return [*args, "--timeout", "1"] if args[:1] == ["watch"] else args


def test_a_fresh_clone_runs_the_demo(tmp_path):
    """Only what is committed: a file the package needs but git does not hold fails here.

    Run from an unpacked sdist (the second half of `.ci/run`) there is no git history to clone: the
    tree itself is then what was published, copied as it is, so the same check asks whether the sdist
    holds everything the demo needs."""
    clone = tmp_path / "clone"
    if (REPO / ".git").exists():
        subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(clone)], check=True, timeout=120)
    else:
        shutil.copytree(REPO, clone, ignore=shutil.ignore_patterns(".venv*", "__pycache__", ".pytest_cache"))
    env = rooms_env({"PYTHONPATH": str(clone)})
    proc = subprocess.run([sys.executable, "-m", "rooms_cli", "demo", "--dir", str(tmp_path / "demo"), "--json"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert set(summary["sections"]) >= {"chat", "board", "roundtable", "groups", "messaging"}, summary["sections"]
    check = subprocess.run([sys.executable, "-c", "import rooms_cli, sys; print(rooms_cli.__file__)"], capture_output=True,
                           text=True, env=env, cwd=tmp_path)
    assert check.stdout.strip().startswith(str(clone)), "the demo did not run from the clone"
    doctor = subprocess.run([sys.executable, "-m", "rooms_cli", "doctor", "--offline", "--json"], capture_output=True,
                            text=True, env=rooms_env({"PYTHONPATH": str(clone), "ROOMS_DIR": str(tmp_path / "demo")}))
    assert json.loads(doctor.stdout)["errors"] == 0, doctor.stdout


def test_the_quick_start_works_offline(tmp_path):
    commands = quick_start_commands()
    assert commands and commands[0][0] == "init"
    proj = tmp_path / "myproj"
    proj.mkdir()
    outputs = [run(watch_briefly(args), cwd=proj).stdout for args in commands]
    assert "researcher" in outputs[2], "the fuzzy @reseacher reached the researcher"
    assert len((proj / ".rooms/rooms/default/transcript.jsonl").read_text().splitlines()) >= 4


def test_the_quick_start_works_on_an_openai_compatible_server(tmp_path):
    """The README's way: OPENAI_BASE_URL and OPENAI_API_KEY, then `models test` and a chat."""
    with FakeServer(reply=Reply(text=lambda req: f"(fake) on {req.last_user_text[:30]!r}: check the limits.")) as server:
        env = {"OPENAI_BASE_URL": server.openai_url, "OPENAI_API_KEY": "sk-local"}
        proj = tmp_path / "myproj"
        proj.mkdir()
        run(["init", "--example", "dev"], cwd=proj, env=env)
        test = json.loads(run(["models", "test", "openai:gpt-4o-mini", "--json"], cwd=proj, env=env).stdout)
        assert "(fake)" in test["reply"]
        cfg = proj / ".rooms.yaml"
        cfg.write_text(cfg.read_text().replace("default_model: offline", "default_model: openai:gpt-4o-mini"))
        assert "default_model: openai:gpt-4o-mini" in cfg.read_text()
        for args in quick_start_commands()[1:]:
            run(watch_briefly(args), cwd=proj, env=env)
        models = {r.json.get("model") for r in server.requests if isinstance(r.json, dict)}
    assert models == {"gpt-4o-mini"}
    transcript = (proj / ".rooms/rooms/default/transcript.jsonl").read_text()
    assert "(fake)" in transcript


def test_the_quick_start_works_on_a_command_provider(tmp_path):
    script = tmp_path / "model.py"
    script.write_text("import sys\nprompt = sys.stdin.read()\nprint(f'(cmd) I read {len(prompt.split())} words.')\n")
    proj = tmp_path / "myproj"
    proj.mkdir()
    run(["init", "--example", "dev"], cwd=proj)
    cfg = proj / ".rooms.yaml"
    local = f"  local: {{type: command, command: [{json.dumps(sys.executable)}, {json.dumps(str(script))}], timeout: 60}}\n"
    cfg.write_text(cfg.read_text().replace("default_model: offline", "default_model: local:default")
                   .replace("\nproviders:\n", "\nproviders:\n" + local, 1))
    test = json.loads(run(["models", "test", "local:default", "--json"], cwd=proj).stdout)
    assert test["reply"].startswith("(cmd)")
    for args in quick_start_commands()[1:]:
        run(watch_briefly(args), cwd=proj)
    assert "(cmd) I read" in (proj / ".rooms/rooms/default/transcript.jsonl").read_text()


# (what the user did, argv, files to write first, words the error must hold: the fix); a bad option
# value is a usage error (exit 2), the rest exit 1
USAGE = {"unknown example", "bad duration", "bad time"}
MISTAKES = [
    ("no project", ["agent", "list"], None, ["rooms init"]),
    ("unknown agent", ["agent", "show", "resercher"], {}, ["known agents", "researcher"]),
    ("unknown room", ["chat", "hi", "--room", "nosuch"], {}, ["rooms room create nosuch"]),
    ("unknown group", ["group", "status", "nosuch"], {}, ["known groups"]),
    ("unknown example", ["init", ".", "--example", "nope"], {}, ["--example", "dev, gamedev, roundtable"]),
    ("missing key", ["models", "test", "anthropic:claude"], {}, ["ANTHROPIC_API_KEY", "api_key_env"]),
    ("key in config", ["config", "show"], {".rooms.yaml": "providers:\n  x: {type: openai, api_key: sk-1}\n"}, ["api_key_env"]),
    ("shell string", ["config", "show"], {".rooms.yaml": "providers:\n  x: {type: command, command: 'claude -p'}\n"},
     ["list of arguments", "[claude, -p]"]),
    ("unknown provider", ["agent", "list"], {".rooms/agents/x.md": "---\nmodel: olama:llama3\n---\nYou are x.\n"},
     ["known providers", "ollama"]),
    ("bad duration", ["task", "next", "--lease", "10 minutes"], {}, ["15m"]),
    ("bad time", ["watch", "--since", "yesterday", "--timeout", "1"], {}, ["ISO 8601", "2026-"]),
    ("bad id", ["room", "create", "My Room"], {}, ["lowercase"]),
    ("unreachable server", ["models", "test", "dead:x"],
     {".rooms.yaml": "providers:\n  dead: {type: openai, base_url: 'http://127.0.0.1:9/v1', max_retries: 0}\n"},
     ["is the server running"]),
]


@pytest.mark.parametrize("what,args,files,hints", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_common_mistake_gets_an_error_that_says_the_fix(project_dir, tmp_path, monkeypatch, what, args, files, hints):
    if files is None:
        monkeypatch.delenv("ROOMS_DIR")
        monkeypatch.chdir(tmp_path)
    else:
        for rel, text in files.items():
            (project_dir / rel).write_text(text)
    out = invoke(args)
    assert out.exit_code == (2 if what in USAGE else 1), (what, out.stdout, out.stderr)
    message = out.stderr.strip()
    assert message.startswith("error: ") and "\n" not in message, message
    for hint in hints:
        assert hint in message, f"{what}: {message!r} does not say {hint!r}"


def test_joining_a_saved_transcript_that_does_not_exist_makes_a_fresh_room_and_says_so(project_dir):
    """chat.md: `rooms room join chat/<room>` with no saved transcript of that id gives a fresh room."""
    out = invoke(["room", "join", "chat/nosuch"])
    assert out.exit_code == 0
    assert "No saved transcript in .rooms/chat/nosuch/" in out.stdout and "fresh room nosuch" in out.stdout
    assert (project_dir / ".rooms/rooms/nosuch/state.jsonl").exists()


def test_rooms_help_starts_a_new_user_off(cli):
    out = cli("--help")
    assert "Example: rooms init" in out.stdout
    assert all(part in out.stdout for part in ("chat", "board", "task", "roundtable", "group", "send", "spawn", "watch", "doctor"))


def test_the_readme_quick_start_block_is_found():
    commands = [c[0] for c in quick_start_commands()]
    assert commands[0] == "init" and commands.count("chat") >= 2 and "transcript" in commands, commands


def test_the_packaged_config_example_is_the_repository_one():
    from rooms_cli.project.init import config_example_text

    assert (Path(REPO) / ".rooms.yaml.example").read_text() == config_example_text()
