"""File reservations: `rooms files reserve|release|list|check`, TTL and expiry on the project clock,
16 real processes racing for one pattern, the git pre-commit guard in a real repository, tick, doctor,
merged clones, and the MCP tools."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import rooms_env

T0 = "2026-03-02T09:00:00Z"


def test_an_exclusive_reservation_refuses_an_overlapping_one_naming_both(project_dir, rooms):
    mine = rooms("files", "reserve", "src/auth/**", "--as", "frontend", "--reason", "login form", "--json")
    assert mine.exit_code == 0, mine.stderr
    record = mine.json()
    assert (record["agent"], record["patterns"], record["exclusive"], record["reason"]) == ("frontend", ["src/auth/**"], True, "login form")
    clash = rooms("files", "reserve", "src/auth/login.py", "--as", "backend", "--json")
    assert clash.exit_code == 3
    error = clash.err_json()["error"]
    assert error["code"] == "reserved"
    assert "backend's src/auth/login.py" in error["message"] and "frontend" in error["message"] and record["id"] in error["message"]
    # a shared reservation does not coexist with an exclusive one either; a disjoint one is fine
    assert rooms("files", "reserve", "src/auth/x.py", "--as", "backend", "--shared").exit_code == 3
    assert rooms("files", "reserve", "src/billing/**", "--as", "backend").exit_code == 0
    # the same agent may overlap itself
    assert rooms("files", "reserve", "src/auth/login.py", "--as", "frontend").exit_code == 0


def test_shared_reservations_coexist_but_block_an_exclusive_one(project_dir, rooms):
    assert rooms("files", "reserve", "*.md", "--as", "writer", "--shared").exit_code == 0
    assert rooms("files", "reserve", "docs/x.md", "--as", "editor", "--shared").exit_code == 0
    clash = rooms("files", "reserve", "docs/**", "--as", "bot", "--json")
    assert clash.exit_code == 3 and "shared reservation" in clash.err_json()["error"]["message"]
    listed = rooms("files", "list", "--json").json()
    assert [r["agent"] for r in listed] == ["writer", "editor"]  # a list command prints a bare list


def test_check_exits_3_naming_the_holder_and_ignores_your_own(project_dir, rooms):
    rooms("files", "reserve", "src/**", "--as", "frontend")
    (project_dir / "src").mkdir()
    blocked = rooms("files", "check", "src/a.py", "README.md", "--as", "backend", "--json")
    assert blocked.exit_code == 3
    error = blocked.err_json()["error"]
    assert error["code"] == "reserved" and "src/a.py is reserved: frontend's exclusive reservation" in error["message"]
    assert [b["path"] for b in error["data"]["blocked"]] == ["src/a.py"]
    mine = rooms("files", "check", "src/a.py", "--as", "frontend", "--json")
    assert mine.exit_code == 0 and mine.json()["ok"] is True
    # paths are taken relative to where the command runs
    inside = rooms("files", "check", "a.py", "--as", "backend", cwd=project_dir / "src")
    assert inside.exit_code == 3 and "src/a.py" in inside.stderr
    outside = rooms("files", "check", "/etc/passwd", "--as", "backend")
    assert outside.exit_code == 1 and "outside the project" in outside.stderr


def test_a_reservation_expires_on_the_project_clock_and_tick_records_it(project_dir, rooms):
    at = {"ROOMS_NOW": T0}
    assert rooms("files", "reserve", "src/**", "--as", "frontend", "--ttl", "10m", env=at).exit_code == 0
    assert rooms("files", "reserve", "src/a.py", "--as", "backend", env={"ROOMS_NOW": "2026-03-02T09:09:59Z"}).exit_code == 3
    later = {"ROOMS_NOW": "2026-03-02T09:10:00Z"}
    assert rooms("files", "list", "--json", env=later).json() == []
    doctor = rooms("doctor", "--json", env=later)
    assert any(f["check"] == "reservations" and "expired" in f["message"] for f in doctor.json()["findings"])
    tick = rooms("tick", "--json", env=later)
    assert tick.exit_code == 0, tick.stderr
    assert "reservation" in tick.stdout and "lapsed" in tick.stdout
    doctor = rooms("doctor", "--json", env=later)
    assert not any(f["check"] == "reservations" for f in doctor.json()["findings"])
    assert rooms("files", "reserve", "src/a.py", "--as", "backend", env=later).exit_code == 0


def test_reserving_again_renews_from_now(project_dir, rooms):
    first = rooms("files", "reserve", "src/**", "--as", "frontend", "--ttl", "10m", "--json", env={"ROOMS_NOW": T0}).json()
    again = rooms("files", "reserve", "src/**", "--as", "frontend", "--ttl", "1h", "--json",
                  env={"ROOMS_NOW": "2026-03-02T09:05:00Z"}).json()
    assert again["id"] == first["id"] and again["expires_at"] == "2026-03-02T10:05:00.000Z"
    assert rooms("files", "reserve", "src/a.py", "--as", "backend", env={"ROOMS_NOW": "2026-03-02T09:30:00Z"}).exit_code == 3


def test_release_by_pattern_by_id_or_all(project_dir, rooms):
    a = rooms("files", "reserve", "src/**", "--as", "frontend", "--json").json()
    rooms("files", "reserve", "docs/**", "--as", "frontend")
    rooms("files", "reserve", "tests/**", "--as", "frontend")
    nothing = rooms("files", "release", "lib/**", "--as", "frontend")
    assert nothing.exit_code == 1 and "holds no active reservation" in nothing.stderr
    assert rooms("files", "release", "docs/**", "--as", "frontend").exit_code == 0
    assert rooms("files", "release", a["id"], "--as", "frontend").exit_code == 0
    assert [r["patterns"] for r in rooms("files", "list", "--json").json()] == [["tests/**"]]
    assert len(rooms("files", "release", "--all", "--as", "frontend", "--json").json()) == 1
    assert rooms("files", "release", "--as", "frontend").exit_code == 2  # neither patterns nor --all


@pytest.mark.parametrize("args", [["../x"], ["src/[ab].py"], [""], ["src/**", "--ttl", "forever"], ["src/**", "--ttl", "0"]])
def test_bad_patterns_and_ttls_are_one_sentence(project_dir, rooms, args):
    result = rooms("files", "reserve", *args, "--as", "frontend")
    assert result.exit_code in (1, 2) and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_sixteen_processes_racing_for_one_pattern_one_wins(project_dir):
    def racer(n: int) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "rooms_cli", "files", "reserve", "src/**", "--as", f"agent{n}", "--json"],
                              capture_output=True, text=True, env=rooms_env({"ROOMS_DIR": str(project_dir)}), timeout=120)

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(racer, range(16)))
    winners = [r for r in results if r.returncode == 0]
    losers = [r for r in results if r.returncode != 0]
    assert len(winners) == 1, [r.stderr for r in results]
    assert all(r.returncode == 3 and '"reserved"' in r.stderr for r in losers)
    holder = json.loads(winners[0].stdout)["agent"]
    assert all(holder in r.stderr for r in losers)
    from rooms_cli.reservations.ledger import active_reservations
    from rooms_cli.store.paths import open_project

    assert [r.agent for r in active_reservations(open_project(project_dir))] == [holder]


def _git(cwd, *args, env=None):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60)


def test_the_pre_commit_hook_refuses_a_commit_touching_another_agents_reservation(project_dir, rooms):
    git_env = rooms_env({"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                         "GIT_COMMITTER_EMAIL": "t@x", "ROOMS_DIR": ""})
    # the hook runs `rooms`: put a `rooms` that runs this checkout first on PATH
    bindir = project_dir.parent / "bin"
    bindir.mkdir()
    (bindir / "rooms").write_text(f"#!/bin/sh\nexec {sys.executable} -m rooms_cli \"$@\"\n")
    (bindir / "rooms").chmod(0o755)
    git_env["PATH"] = f"{bindir}:{git_env['PATH']}"
    assert _git(project_dir, "init", "-q", env=git_env).returncode == 0
    installed = rooms("hook", "pre-commit", "--install", cwd=project_dir, env={"ROOMS_DIR": ""})
    assert installed.exit_code == 0, installed.stderr
    assert "rooms hook pre-commit" in (project_dir / ".git" / "hooks" / "pre-commit").read_text()
    assert rooms("files", "reserve", "src/auth/**", "--as", "frontend").exit_code == 0
    (project_dir / "src" / "auth").mkdir(parents=True)
    (project_dir / "src" / "auth" / "login.py").write_text("x = 1\n")
    (project_dir / "notes.txt").write_text("free\n")

    _git(project_dir, "add", "notes.txt", env=git_env)
    assert _git(project_dir, "commit", "-qm", "free file", env={**git_env, "ROOMS_AGENT": "backend"}).returncode == 0
    _git(project_dir, "add", "src", env=git_env)
    refused = _git(project_dir, "commit", "-qm", "auth", env={**git_env, "ROOMS_AGENT": "backend"})
    assert refused.returncode != 0
    assert "src/auth/login.py is reserved: frontend's exclusive reservation" in refused.stderr
    assert _git(project_dir, "commit", "-qm", "auth", env={**git_env, "ROOMS_AGENT": "frontend"}).returncode == 0
    log = _git(project_dir, "log", "--format=%s", env=git_env).stdout.split()
    assert log == ["auth", "free"] or log[:2] == ["auth", "free"]


def test_a_second_install_keeps_a_foreign_hook(project_dir, rooms):
    _git(project_dir, "init", "-q")
    hook = project_dir / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\necho mine\n")
    result = rooms("hook", "pre-commit", "--install", cwd=project_dir)
    assert result.exit_code == 1 and "already exists" in result.stderr
    assert hook.read_text() == "#!/bin/sh\necho mine\n"


def test_two_clones_that_each_granted_an_overlap_keep_the_first_after_a_merge(project):
    from rooms_cli.reservations import ledger
    from rooms_cli.store import eventlog, jsonl

    path = Path(ledger.log_path(project))
    a = eventlog.event("ev", "reserve", "e", id="fr-a", agent="frontend", patterns=["src/**"], exclusive=True,
                       reason="", expires_at="2999-01-01T00:00:00.000Z")
    b = eventlog.event("ev", "reserve", "e", id="fr-b", agent="backend", patterns=["src/a.py"], exclusive=True,
                       reason="", expires_at="2999-01-01T00:00:00.000Z")
    path.parent.mkdir(parents=True, exist_ok=True)
    for order in ([a, b], [b, a]):  # either merge direction
        path.write_text("".join(jsonl.dumps(e) + "\n" for e in order))
        held = ledger.load(project)
        first, second = sorted([a, b], key=lambda e: (e["ts"], e["eid"]))  # no stamp: time, then id
        assert held[second["id"]].lost_to == first["id"] and held[first["id"]].lost_to is None
        assert [r.id for r in ledger.active_reservations(project)] == [first["id"]]


def test_the_mcp_tools_reserve_list_check_and_release(project_dir, rooms):
    pytest.importorskip("mcp")
    from tests.test_mcp import server

    async def go():
        async with server(project_dir, "frontend") as front, server(project_dir, "backend") as back:
            mine = await front.ok("reserve_files", patterns=["src/auth/**"], ttl="1h", reason="login")
            clash = await back.error("reserve_files", patterns=["src/auth/login.py"])
            check = await back.ok("check_files", paths=["src/auth/login.py", "README.md"])
            listed = await back.ok("list_reservations")
            released = await front.ok("release_files", all=True)
            after = await back.ok("check_files", paths=["src/auth/login.py"])
            return mine, clash, check, listed, released, after

    mine, clash, check, listed, released, after = asyncio.run(go())
    assert mine["agent"] == "frontend" and mine["expired"] is False
    assert (clash["code"], clash["exit_code"]) == ("reserved", 3) and mine["id"] in clash["message"]
    assert check["ok"] is False and [b["path"] for b in check["blocked"]] == ["src/auth/login.py"]
    assert [r["id"] for r in listed["reservations"]] == [mine["id"]]
    assert [r["id"] for r in released["released"]] == [mine["id"]] and after["ok"] is True
    assert rooms("files", "list", "--json").json() == []


def test_watch_shows_reservations_being_taken_and_released(project_dir, rooms):
    rooms("files", "reserve", "src/**", "--as", "frontend", "--reason", "refactor")
    rooms("files", "release", "--all", "--as", "frontend")
    watched = rooms("watch", "--all", "--last", "10", "--timeout", "1", "--json")
    events = [json.loads(line) for line in watched.stdout.splitlines()]
    files = [e for e in events if e["type"].startswith("files.")]
    assert [e["type"] for e in files] == ["files.reserve", "files.release"]
    assert files[0]["agent"] == "frontend" and files[0]["patterns"] == ["src/**"] and files[0]["reason"] == "refactor"
    human = rooms("watch", "--all", "--last", "10", "--timeout", "1", env={"NO_COLOR": "1"}).stdout
    assert "frontend reserve src/** (exclusive)" in human
