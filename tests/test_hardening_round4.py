"""Hardening round four (issue 38): the adversarial cases of that round, each as it was found.

A cache a clone can carry, one bad notification, a kill at the first write, a complete last line
taken for a torn tail, absurd durations, far-future stamps, a fast clock, the commit guard, MCP
taking what the CLI refuses, doctor's blind spots: docs/hardening.md, "Round four"."""

from __future__ import annotations

import json
import os

import pytest


def test_an_acknowledged_message_whose_line_lost_its_newline_is_kept_and_its_number_never_reused(cli, project_dir):
    """Item 4: the last line of an inbox is whole JSON without its newline (a hand edit): `inbox --peek`
    shows it, the next `send` finishes the line instead of deleting it, and numbers go on."""
    assert cli("send", "first", "--to", "bob", "--as", "alice").exit_code == 0
    assert cli("send", "second", "--to", "bob", "--as", "alice").exit_code == 0
    log = project_dir / ".rooms" / "inbox" / "bob.jsonl"
    log.write_bytes(log.read_bytes().rstrip(b"\n"))
    peek = cli("inbox", "--peek", "--as", "bob", "--json")
    assert [m["text"] for m in peek.json()["messages"]] == ["first", "second"]
    sent = cli("send", "third", "--to", "bob", "--as", "alice", "--json")
    assert sent.exit_code == 0 and "removed" not in sent.stderr
    messages = cli("inbox", "--peek", "--as", "bob", "--json").json()["messages"]
    assert [(m["n"], m["text"]) for m in messages] == [(1, "first"), (2, "second"), (3, "third")]
    assert all(json.loads(line) for line in log.read_text().splitlines())


@pytest.mark.parametrize("args, largest", [
    (["task", "next", "--as", "worker", "--lease", "99999999d"], "7d"),
    (["task", "next", "--as", "worker", "--lease", "1e308"], "7d"),
    (["task", "next", "--as", "worker", "--lease", "8d"], "7d"),
    (["files", "reserve", "src/**", "--as", "worker", "--ttl", "99999999d"], "7d"),
    (["files", "reserve", "src/**", "--as", "worker", "--ttl", "1e308"], "7d"),
    (["wait", "--as", "worker", "--timeout", "99999999d"], "365d"),
    (["group", "wait", "g", "--timeout", "1e308"], "365d"),
    (["watch", "--timeout", "400d"], "365d"),
])
def test_an_absurd_duration_is_a_usage_error_naming_the_largest_accepted_value(cli, project_dir, args, largest):
    """Item 5: `--lease 99999999d` was an internal error (OverflowError) after parsing: every duration goes
    through one bounded parser (store/clock.parse_duration), so it is exit 2 and one sentence."""
    before = sorted(p.relative_to(project_dir) for p in (project_dir / ".rooms").rglob("*") if "run" not in p.parts)
    result = cli(*args)
    assert result.exit_code == 2, result.stderr
    assert f"the largest accepted is {largest}" in result.stderr and result.stderr.count("\n") == 1
    assert "internal error" not in result.stderr
    after = sorted(p.relative_to(project_dir) for p in (project_dir / ".rooms").rglob("*") if "run" not in p.parts)
    assert after == before


class _Payload:
    """Unpickling this writes a file: the proof that a cache ran as code."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __reduce__(self):
        return (_touch, (self.target,))


def _touch(target: str) -> None:
    with open(target, "w") as handle:
        handle.write("ran")


def test_a_cache_a_clone_carries_into_run_is_never_run(cli, tmp_path, monkeypatch):
    """Item 1: `.rooms/run/groups/<name>.pickle` was unpickled on the assumption that run/ never comes from
    git. Committed with `git add -f`, in a fresh clone `rooms group list` ran it. Caches are JSON now,
    keyed by the log file's device and inode: a planted one (pickle or JSON) is ignored, never run."""
    import pickle
    import subprocess

    from rooms_cli.project.init import initialize

    origin = tmp_path / "origin"
    origin.mkdir()
    initialize(origin, example="dev")
    monkeypatch.chdir(origin)
    assert cli("group", "spawn", "g", "--profile", "ops", "--dir", str(origin)).exit_code == 0
    proof = tmp_path / "it-ran"
    payload = pickle.dumps(_Payload(str(proof)))
    run_groups = origin / ".rooms" / "run" / "groups"
    run_groups.mkdir(parents=True, exist_ok=True)
    for name in ("g.pickle", "g.head.pickle", "g.json", "g.head.json"):
        (run_groups / name).write_bytes(payload)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["add", "-f", ".rooms/run/groups"], ["commit", "-qm", "planted"]):
        subprocess.run([*git, *args], cwd=origin, check=True)
    clone = tmp_path / "clone"
    subprocess.run([*git, "clone", "-q", str(origin), str(clone)], check=True)
    monkeypatch.chdir(clone)
    listed = cli("group", "list", "--json", "--dir", str(clone))
    status = cli("group", "status", "g", "--json", "--dir", str(clone))
    assert listed.exit_code == 0 and status.exit_code == 0, listed.stderr + status.stderr
    assert not proof.exists()
    assert json.loads((clone / ".rooms" / "run" / "groups" / "g.json").read_bytes())["version"] >= 4  # rebuilt as data
    doctor = cli("doctor", "--offline", "--json", "--dir", str(clone))
    planted = [f for f in doctor.json()["findings"] if f.get("check") == "cache"]
    assert planted and all(".rooms/run/" in f["message"] for f in planted), doctor.stdout


def test_nothing_in_the_package_unpickles_unmarshals_or_evaluates():
    """No `pickle`, `marshal`, `shelve`, `eval` or `exec` anywhere in rooms_cli: nothing read from the project
    directory is ever run (the brief's rule, and item 1). The one `exec` is core/records.py's, which builds a
    record class's `__init__` from that class's own field names in our source, as `dataclasses` does."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "rooms_cli"
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("eval", "exec"):
                names = [node.func.id]
            found += [f"{path.relative_to(package)} {name}" for name in names
                      if name.split(".")[0] in ("pickle", "marshal", "shelve", "dill", "eval", "exec")]
    assert found == ["core/records.py exec"]


def test_a_stamp_at_the_end_of_time_neither_breaks_later_sends_nor_escapes_doctor(cli, project_dir):
    """Item 6: one inbox line stamped `9999-12-31T23:59:59.999Z-…` made every later `send` an internal error
    (OverflowError) and doctor was silent. The clock does not follow a stamp more than MAX_SKEW_S ahead:
    readers order it, writers keep working, doctor names it."""
    assert cli("send", "first", "--to", "bob", "--as", "alice").exit_code == 0
    log = project_dir / ".rooms" / "inbox" / "bob.jsonl"
    record = json.loads(log.read_text().splitlines()[-1])
    record.update(id="i-END", n=2, text="from the end of time", hlc="9999-12-31T23:59:59.999Z-9999-ffffff")
    with log.open("a") as handle:
        handle.write(json.dumps(record) + "\n")
    for n in range(2):
        sent = cli("send", f"later {n}", "--to", "bob", "--as", "alice")
        assert sent.exit_code == 0 and "internal error" not in sent.stderr, sent.stderr
    texts = [m["text"] for m in cli("inbox", "--peek", "--as", "bob", "--json").json()["messages"]]
    assert sorted(texts) == sorted(["first", "from the end of time", "later 0", "later 1"])
    doctor = cli("doctor", "--offline", "--json")
    future = [f for f in doctor.json()["findings"] if f["check"] == "future-stamp"]
    assert len(future) == 1 and "inbox/bob.jsonl" in future[0]["message"] and "i-END" in future[0]["message"]


def test_a_log_s_own_records_keep_their_order_behind_a_stamp_from_a_clock_far_ahead(tmp_path, monkeypatch):
    """A stamp more than the skew ahead is not followed by the clock, but a record appended to the same log
    still sorts after it (a roundtable queue's claim after its enqueue: a tick on a clock a week behind ran
    one queued roundtable 19 times over) — and the process's stamps in other logs stay on its own time."""
    from rooms_cli.store import clock, jsonl, order

    monkeypatch.setenv("ROOMS_NOW", "2026-11-28T10:00:00Z")
    log, other = tmp_path / "queue.jsonl", tmp_path / "other.jsonl"
    log.write_text(json.dumps({"op": "enqueue", "hlc": "2026-12-05T10:00:00.000Z-0000-aaaaaa"}) + "\n")
    jsonl.append(log, {"op": "claim"})
    jsonl.append(log, {"op": "done"})
    assert [r["op"] for r in order.ordered(jsonl.read(log))] == ["enqueue", "claim", "done"]
    jsonl.append(other, {"op": "elsewhere"})
    assert jsonl.read(other)[0]["hlc"].startswith("2026-11-28T10:00:00")
    assert clock.future_stamp(jsonl.read(log)[-1]["hlc"]) is not None  # doctor still names the log's stamps


@pytest.mark.parametrize("args", [["task", "next", "--as", "w", "--lease", "2h"], ["files", "reserve", "src/**", "--as", "w"]])
def test_a_clock_set_to_the_end_of_time_is_one_sentence(cli, project_dir, args):
    result = cli(*args, env={"ROOMS_NOW": "9999-12-31T23:00:00Z"})
    assert result.exit_code in (1, 2) and "ROOMS_NOW" in result.stderr and "internal error" not in result.stderr
    assert result.stderr.count("\n") == 1


_KILL_AT_WRITE = """
import os, signal, sys
n = int(sys.argv[1])
real = os.write
calls = [0]

def write(fd, data):
    calls[0] += 1
    if calls[0] == n:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(fd, data)

os.write = write
sys.argv = ["rooms", *sys.argv[2:]]
from rooms_cli.__main__ import main
main()
"""

_CREATIONS = [  # {n}: a fresh name for each kill
    (["room", "create", "newroom{n}"], ["room", "show", "newroom{n}"]),
    (["task", "add", "t{n}", "--lane", "lane", "--done", "d"], ["board", "--json"]),
    (["group", "spawn", "g{n}", "--profile", "ops"], ["group", "status", "g{n}"]),
]


def _kill_at_write(project_dir, n: int, args: list[str]) -> int:
    """Run `rooms ARGS` as a real process SIGKILLed at its n-th write: by strace's fault injection when
    it is installed (every write(2), the interpreter's own too), else by a wrapper around os.write."""
    import shutil
    import subprocess
    import sys

    from tests.conftest import rooms_env

    env = rooms_env({"ROOMS_DIR": str(project_dir)})
    if shutil.which("strace") and n == 1:
        command = ["strace", "-f", "-o", "/dev/null", "-e", "trace=write", "-e", "inject=write:signal=KILL:when=1",
                   sys.executable, "-m", "rooms_cli", *args]
    else:
        command = [sys.executable, "-c", _KILL_AT_WRITE, str(n), *args]
    return subprocess.run(command, env=env, capture_output=True, timeout=120).returncode


@pytest.mark.parametrize("create, show", _CREATIONS, ids=["room create", "task add", "group spawn"])
def test_a_kill_at_any_early_write_never_leaves_half_a_name(cli, project_dir, create, show):
    """Item 3: `room create newroom` killed at its first write left an empty state log: the name was
    taken ("already exists") and no room was there ("no such room"); `task add` left an empty task log.
    A log is now made whole (temp file, fsync, link): after a kill at the 1st, 2nd or 3rd write the
    same command works, and doctor finds no error."""
    kills = 0
    for n in (1, 2, 3):
        args = [a.format(n=n) for a in create]
        code = _kill_at_write(project_dir, n, args)
        assert code in (-9, 137, 0), code  # killed (or done before its n-th write)
        kills += code != 0
        again = cli(*args)
        assert again.exit_code in (0, 3), again.stderr  # made now, or made whole before the kill
        shown = cli(*[a.format(n=n) for a in show])
        assert shown.exit_code == 0, shown.stderr
    assert kills >= 1
    doctor = cli("doctor", "--offline", "--json").json()
    assert doctor["errors"] == 0, [f["message"] for f in doctor["findings"] if f["severity"] == "error"]


def test_mcp_refuses_what_the_cli_refuses(project_dir, cli):
    """Item 9: `check_files` answered ok for `/etc/passwd` and `../../x`, and absurd durations were internal
    errors over MCP too. The same validation (ledger.check_paths, clock.parse_duration) serves both surfaces;
    a request that is not UTF-8 is refused by the transport (tests/test_mcp_transport.py)."""
    import asyncio

    pytest.importorskip("mcp")
    from tests.test_mcp import server

    async def go():
        async with server(project_dir, "alice") as t:
            return [await t.error("check_files", paths=["/etc/passwd"]),
                    await t.error("check_files", paths=["../../x"]),
                    await t.error("task_next", lease="99999999d"),
                    await t.error("task_next", lease="1e308"),
                    await t.error("reserve_files", patterns=["src/**"], ttl="8d"),
                    await t.error("reserve_files", patterns=["../**"])], await t.ok("check_files", paths=["src/a.py"])

    errors, fine = asyncio.run(go())
    assert "is not a path inside the project" in errors[0]["message"] and "'../../x'" in errors[1]["message"]
    assert all(e["exit_code"] == 2 and "the largest accepted is 7d" in e["message"] for e in errors[2:5]), errors[2:5]
    assert "leaves the project" in errors[5]["message"]
    assert fine["ok"] is True
    for args in (["/etc/passwd"], ["../../x"]):
        refused = cli("files", "check", *args, "--as", "alice")
        assert refused.exit_code == 1 and "outside the project" in refused.stderr


def _git_repo(path):
    import subprocess

    from rooms_cli.project.init import initialize

    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    initialize(path, example="dev")

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=path, capture_output=True)

    git("add", "-A")
    git("commit", "-qm", "init")
    return git


def test_the_commit_guard_reads_any_name_git_holds_and_fails_closed(tmp_path, rooms):
    """Item 8: a staged `notes-\\xff.txt` was an internal error (UnicodeDecodeError); a ledger overwritten with
    garbage let every commit through (exit 0); one `"patterns": ["../**"]` line broke list, check, reserve and
    the hook for everyone. Real git, real hooks, real processes."""
    repo = tmp_path / "repo"
    git = _git_repo(repo)
    env = {"ROOMS_DIR": str(repo)}
    installed = rooms("hook", "pre-commit", "--install", "--json", cwd=repo, env=env)
    assert installed.exit_code == 0 and {p.rsplit("/", 1)[-1] for p in installed.json()["installed"]} == {"pre-commit", "pre-merge-commit"}
    assert rooms("files", "reserve", "src/**", "--as", "bob", cwd=repo, env=env).exit_code == 0
    odd = os.fsdecode(b"notes-\xff.txt")
    (repo / odd).write_bytes(b"x\n")
    git("add", "--", odd)
    hook = rooms("hook", "pre-commit", "--as", "alice", cwd=repo, env=env)
    assert hook.exit_code == 0 and "internal error" not in hook.stderr, hook.stderr
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("x\n")
    git("add", "src/a.py")
    assert git("commit", "-qm", "blocked").returncode != 0  # the installed hook refuses: bob holds src/**
    checked = rooms("files", "check", "--staged", "--as", "alice", cwd=repo, env=env)
    assert checked.exit_code == 3 and "src/a.py" in checked.stderr

    ledger = repo / ".rooms" / "reservations" / "log.jsonl"
    good = ledger.read_bytes()
    ledger.write_bytes(b"\x00garbage\xff" * 40)
    refused = rooms("hook", "pre-commit", "--as", "alice", cwd=repo, env=env)
    assert refused.exit_code == 1 and "reservations ledger" in refused.stderr and "rooms doctor" in refused.stderr
    assert refused.stderr.count("error:") == 1

    ledger.write_bytes(good + b'{"ev": "reserve", "id": "fr-x", "agent": "eve", "patterns": ["../**"], '
                       b'"expires_at": "2999-01-01T00:00:00.000Z", "eid": "e-x"}\n'
                       + b'{"ev": "reserve", "id": "fr-y", "agent": "eve", "patterns": "src/**", '
                       b'"expires_at": "2999-01-01T00:00:00.000Z", "eid": "e-y"}\n'
                       + b'{"ev": "release", "id": "fr-nobody", "by": "eve", "eid": "e-z"}\n')
    assert rooms("files", "list", cwd=repo, env=env).exit_code == 0
    assert rooms("files", "reserve", "docs/**", "--as", "carol", cwd=repo, env=env).exit_code == 0
    assert rooms("files", "check", "src/a.py", "--as", "alice", cwd=repo, env=env).exit_code == 3
    assert rooms("hook", "pre-commit", "--as", "alice", cwd=repo, env=env).exit_code == 3
    doctor = rooms("doctor", "--offline", "--json", cwd=repo, env=env).json()
    named = [f["message"] for f in doctor["findings"] if f["check"] == "reservations"]
    assert any("'../**'" in m for m in named) and any("'patterns'" in m for m in named)
    assert any("fr-nobody" in m for m in named)


def test_a_range_of_commits_is_checked_for_what_no_hook_saw(tmp_path, rooms):
    """Cherry-picks, rebases and fast-forwards run no pre-commit hook: `files check --range A..B` in CI."""
    repo = tmp_path / "repo"
    git = _git_repo(repo)
    env = {"ROOMS_DIR": str(repo)}
    assert rooms("files", "reserve", "src/**", "--as", "bob", cwd=repo, env=env).exit_code == 0
    (repo / "src").mkdir()
    (repo / "src" / "b.py").write_text("x\n")
    git("add", "src/b.py")
    assert git("commit", "-qm", "no hook installed").returncode == 0
    ranged = rooms("files", "check", "--range", "HEAD~1..HEAD", "--as", "alice", cwd=repo, env=env)
    assert ranged.exit_code == 3 and "src/b.py" in ranged.stderr
    assert rooms("files", "check", "--range", "HEAD~1..HEAD", "--as", "bob", cwd=repo, env=env).exit_code == 0
    assert rooms("files", "check", "--range", "--help=x", "--as", "bob", cwd=repo, env=env).exit_code in (1, 2)


def test_a_fast_clock_holds_a_task_or_files_no_longer_than_the_longest_lease(cli, project_dir, monkeypatch):
    """Item 7: `task next --lease 15m` under a clock a year ahead held the task for a year, and `files
    reserve` under a clock 2h ahead was granted over a live reservation (two exclusive holders), with doctor
    saying "All good". A lease or reservation holds at most 7d after the record before it; one granted for a
    time beyond the allowed skew is not in force before then; doctor names both."""
    from datetime import timedelta

    from rooms_cli.store import clock

    monkeypatch.setattr(clock, "_hlc_last", clock._hlc_last)  # the stamps this test's fast clocks issue stay here
    added = cli("task", "add", "t", "--lane", "w", "--done", "d", "--json").json()
    year_ahead = clock.iso(clock.now() + timedelta(days=365))
    claimed = cli("task", "claim", added["id"], "--as", "w", "--lease", "15m", "--json", env={"ROOMS_NOW": year_ahead})
    assert claimed.exit_code == 0
    lease = cli("task", "show", added["id"], "--json").json()["lease"]
    assert lease["expires_at"] <= clock.iso(clock.now() + timedelta(days=7, minutes=1))

    assert cli("files", "reserve", "src/**", "--as", "bob", "--ttl", "30m").exit_code == 0
    two_hours = clock.iso(clock.now() + timedelta(hours=2))
    assert cli("files", "reserve", "src/**", "--as", "alice", env={"ROOMS_NOW": two_hours}).exit_code == 0  # its own clock
    holders = [r["agent"] for r in cli("files", "list", "--json").json()]
    assert holders == ["bob"]  # as every clock that is right sees it
    assert cli("files", "check", "src/x.py", "--as", "carol").exit_code == 3

    doctor = cli("doctor", "--offline", "--json").json()
    messages = [f["message"] for f in doctor["findings"]]
    assert not doctor["ok"] and any("longer than the longest lease allows" in m for m in messages)
    assert sum(f["check"] == "future-stamp" for f in doctor["findings"]) == 2


def test_a_claim_or_reservation_after_a_quiet_week_holds_for_its_lease(cli, project_dir):
    """The bound on a fast clock counted from the record before a claim: a task written eight days ago
    and claimed now read as lapsed the moment it was claimed (rooms top showed "lapsed: scribe"), and a
    reservation after a quiet week was expired at once. The bound counts from the claim's own time."""
    from datetime import timedelta

    from rooms_cli.store import clock

    week_ago = clock.iso(clock.now() - timedelta(days=8))
    added = cli("task", "add", "old", "--lane", "w", "--done", "d", "--json", env={"ROOMS_NOW": week_ago}).json()
    assert cli("task", "claim", added["id"], "--as", "w", "--lease", "15m").exit_code == 0
    shown = cli("task", "show", added["id"], "--json").json()
    assert shown["status"] == "doing" and shown["lease"]["holder"] == "w"
    assert shown["lease"]["expires_at"] > clock.iso(clock.now() + timedelta(minutes=14))
    assert cli("doctor", "--offline", "--json").json()["ok"]

    assert cli("files", "reserve", "docs/**", "--as", "bob", "--ttl", "30m", env={"ROOMS_NOW": week_ago}).exit_code == 0
    assert cli("files", "reserve", "src/**", "--as", "bob", "--ttl", "30m").exit_code == 0
    assert [r["agent"] for r in cli("files", "list", "--json").json()] == ["bob"]
    assert cli("files", "check", "src/x.py", "--as", "carol").exit_code == 3
