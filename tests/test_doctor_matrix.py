"""Doctor names every damage (issue 29, item 2): 59 planted corruptions, one fresh project each.

Each case plants one corruption in a copy of the populated project (hardening_kit: `rooms demo` and
more) and runs `rooms doctor --offline --json`: the corruption must be a finding naming its file (and
its line, where it is one line of a log), of the severity decided in docs/hardening.md; an error
exits 1, a warning alone exits 0. The categories are the issue's: wrong types, unknown kinds,
duplicates (benign: a warning counted once; conflicting ids: an error), names that are not names or
ids, an agent file whose id is not its file name, a double claim after a merge, torn tails and temp
files (warnings), plus the damage doctor already named (bad lines, conflict markers, symlinks…).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hardening_kit import invoke, template  # noqa: F401  (template: the session fixture)

from rooms_cli.store import layout

TRANSCRIPT = "rooms/demo-chat/transcript.jsonl"
STATE = "rooms/demo-chat/state.jsonl"
SESSION = "rooms/demo-chat/sessions/ops.jsonl"
GROUP = "groups/vote.jsonl"
INBOX = "inbox/you.jsonl"
READ = "inbox/read/you.jsonl"
QUEUE = "roundtables/queue.jsonl"
TASK = "rooms/default/board/tasks/t-*.jsonl"
STATUS = "status/you.jsonl"
SPAWN = "spawns/s-*.json"
MEMORIES = "memories/boss.jsonl"
TS = "2099-01-01T00:00:00.000Z"  # after every record of the template, whatever the clock: replay order is by time
OTHER_TASK = "t-01AAAAAAAAAAAAAAAAAAAAAAAA"
TORN = '{"id": "x-01TORN'

E, W = "error", "warning"

# (case, file (a glob under .rooms/), action, argument, severity)
#   edit N field value (N: a line, or the first line of that event kind) · clash N field value (line N again, same id, one field changed) · dup N (line N
#   again, unchanged) · insert N raw (a raw line at N) · append raw-or-record · torn · write text ·
#   copy-to NAME · symlink TARGET · mkdir
CASES = [
    # transcript: wrong types, unknown kind, duplicates, bad lines
    ("transcript bad middle line", TRANSCRIPT, "insert", (2, "{not json"), E),
    ("transcript torn tail", TRANSCRIPT, "torn", None, W),
    ("transcript text is a list", TRANSCRIPT, "edit", (2, "text", ["a", "b"]), E),
    ("transcript speaker is null", TRANSCRIPT, "edit", (2, "speaker", None), E),
    ("transcript ts is a number", TRANSCRIPT, "edit", (2, "ts", 1), E),
    ("transcript unknown kind", TRANSCRIPT, "edit", (2, "kind", "bogus"), E),
    ("transcript line is not a mapping", TRANSCRIPT, "insert", (2, "[1, 2]"), E),
    ("transcript line twice", TRANSCRIPT, "dup", 2, W),
    ("transcript id on two messages", TRANSCRIPT, "clash", (2, "text", "a different message"), E),
    ("transcript conflict markers", TRANSCRIPT, "insert", (2, "<<<<<<< HEAD"), E),
    # room state events
    ("state set budget_remaining -5", STATE, "append", {"op": "set", "field": "budget_remaining", "value": -5,
                                                          "eid": "e-01NEG", "ts": TS}, E),
    ("state set of an unknown field", STATE, "append", {"op": "set", "field": "bogus", "value": 1, "eid": "e-01UNK",
                                                          "ts": TS}, E),
    ("state unknown op", STATE, "append", {"op": "explode", "field": "roster", "value": "x", "eid": "e-01OP", "ts": TS}, E),
    ("state roster value not a name", STATE, "append", {"op": "add", "field": "roster", "value": 5, "eid": "e-01RV",
                                                         "ts": TS}, E),
    ("state line twice", STATE, "dup", 2, W),
    ("state eid on two events", STATE, "clash", (2, "value", 3), E),
    # group log
    ("group unknown event", GROUP, "append", {"ev": "bogus", "ts": TS, "eid": "e-01BOGUS"}, E),
    ("group fields is a list", GROUP, "edit", ("broadcast", "fields", []), E),
    ("group handle is null", GROUP, "edit", (2, "handle", None), E),
    ("group ts is a number", GROUP, "edit", (2, "ts", 1), E),
    ("group line twice", GROUP, "dup", 2, W),
    ("group eid on two events", GROUP, "clash", (2, "profile", "judge"), E),
    ("group bad middle line", GROUP, "insert", (2, "{not json"), E),
    ("group torn tail", GROUP, "torn", None, W),
    # inbox and read marks
    ("inbox unknown kind", INBOX, "edit", (1, "kind", "bogus"), E),
    ("inbox n is text", INBOX, "edit", (1, "n", "one"), E),
    ("inbox text is a number", INBOX, "edit", (1, "text", 5), E),
    ("inbox line twice", INBOX, "dup", 1, W),
    ("inbox id on two messages", INBOX, "clash", (1, "text", "another message"), E),
    ("inbox bad middle line", INBOX, "insert", (2, "{not json"), E),
    ("read marks read is text", READ, "edit", (1, "read", "x"), E),
    # roundtable queue
    ("queue unknown op", QUEUE, "append", {"op": "bogus", "id": "q-01BOGUS", "ts": TS}, E),
    ("queue request is text", QUEUE, "edit", (1, "request", "x"), E),
    ("queue by is a number", QUEUE, "edit", (1, "by", 5), E),
    ("queue line twice", QUEUE, "dup", 1, W),
    # board
    ("board double claim after a merge", TASK, "append", {"ev": "claim", "at": TS, "by": "judge", "holder": "judge",
                                                          "plate": "judge/9", "lease_id": "l-01RIVAL", "fence": 1,
                                                          "expires_at": "2099-01-01T01:00:00.000Z"}, E),
    ("board unknown event", TASK, "append", {"ev": "bogus", "at": TS, "by": "judge"}, E),
    ("board lane escapes", TASK, "edit", (1, "lane", "../x"), E),
    ("board create names another task", TASK, "edit", (1, "task", OTHER_TASK), E),
    ("board log copied under another id", TASK, "copy-to", f"{OTHER_TASK.lower()}.jsonl", E),
    ("board bad middle line", TASK, "insert", (2, "{not json"), E),
    ("board torn tail", TASK, "torn", None, W),
    # sessions, status, spawns, memories
    ("session tokens are text", SESSION, "edit", (1, "input_tokens", "x"), E),
    ("session line twice", SESSION, "dup", 1, W),
    ("session bad middle line", SESSION, "insert", (2, "{not json"), E),
    ("status is a number", STATUS, "edit", (1, "status", 5), E),
    ("status bad middle line", STATUS, "insert", (2, "{not json"), E),
    ("spawn depth is text", SPAWN, "edit", (None, "depth", "x"), E),
    ("spawn id is not its file name", SPAWN, "edit", (None, "id", "s-someone-else"), E),
    ("spawn record is not JSON", SPAWN, "write", "{", E),
    ("spawn record is an empty object", "spawns/notes.json", "write", "{}\n", E),
    ("memory lesson is a number", MEMORIES, "edit", (1, "lesson", 5), E),
    ("memory line twice", MEMORIES, "dup", 1, W),
    # agents and names
    ("agent id is not its file name", "agents/counsel.md", "agent-id", "someone-else", E),
    ("agent frontmatter never closed", "agents/counsel.md", "write", "---\nid: counsel\nname: Counsel\n", E),
    ("group log under a name that is not a name", "groups/Notes.jsonl", "copy-from", GROUP, E),
    ("spawn record under a name that is not an id", "spawns/README.json", "write", "{}\n", E),
    # left-overs and escapes
    ("temp file left by a killed writer", "inbox/.you.jsonl.k3j2.tmp", "write", '{"n": 1}\n', W),
    ("symlink leading outside", "inbox/evil.jsonl", "symlink", "/etc/passwd", E),
]


FUTURE = "9999-12-31T23:59:59.999Z-9999-ffffff"
LEDGER = "reservations/log.jsonl"


def _ledger(*records: dict) -> str:
    return "".join(json.dumps({"ts": "2026-01-01T00:00:00.000Z", "hlc": f"2026-01-01T00:00:00.00{n}Z-0000-aaaaaa",
                               "eid": f"e-{n}", **r}) + "\n" for n, r in enumerate(records))


_HELD = {"ev": "reserve", "id": "fr-1", "agent": "bob", "patterns": ["src/**"], "exclusive": True,
         "expires_at": "2026-01-01T00:30:00.000Z"}  # a 30m reservation (its own time bounds it: issue 38)

# issue 38: the 15 plants the adversarial round added (13 here, 2 that need git below)
NEW_CASES = [
    ("inbox record without id", INBOX, "drop", (1, "id"), E),
    ("task-log line twice", TASK, "dup", 1, W),
    ("stray file in a board's tasks", "rooms/default/board/tasks/notes.jsonl", "write", '{"a": 1}\n', E),
    ("blank line in a log", TRANSCRIPT, "insert", (2, ""), W),
    ("reservation patterns is a string", LEDGER, "write", _ledger({**_HELD, "patterns": "src/**"}), E),
    ("release of an unknown reservation", LEDGER, "write", _ledger(_HELD, {"ev": "release", "id": "fr-nobody", "by": "bob"}), W),
    ("reservation pattern leaves the project", LEDGER, "write", _ledger({**_HELD, "patterns": ["../**"]}), E),
    ("reservations ledger overwritten with garbage", LEDGER, "write", "\u0000garbage\n" * 3, E),
    ("record stamped at the end of time", INBOX, "edit", (1, "hlc", FUTURE), W),
    ("lease claiming longer than the longest", TASK, "edit", ("claim", "expires_at", TS), E),
    ("log without its final newline", TRANSCRIPT, "chop", None, W),
    ("room state log left empty", "rooms/ghost/state.jsonl", "write", "", E),
    ("pickle planted in the caches", "run/groups/vote.pickle", "write", "cos\nsystem\n(S'true'\ntR.", W),
]


def test_the_matrix_has_the_issues_59_cases():
    assert len(CASES) == 59
    assert len({c[0] for c in CASES}) == 59


def _lines(path: Path) -> list[str]:
    return path.read_text("utf-8").split("\n")[:-1]


def _write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), "utf-8")


def plant(rooms: Path, rel: str, action: str, arg) -> tuple[str, int | None]:
    """Plant one corruption; (the file doctor must name, relative to the project, and its line or None)."""
    matches = sorted(rooms.glob(rel))
    path = matches[0] if matches else rooms / rel
    line: int | None = None
    if action in ("edit", "clash", "dup"):
        if path.suffix == ".json":
            record = json.loads(path.read_text())
            record[arg[1]] = arg[2]
            path.write_text(json.dumps(record))
        else:
            lines = _lines(path)
            number = arg if action == "dup" else arg[0]
            if isinstance(number, str):  # the first line of that event kind
                number = next(i for i, text in enumerate(lines, 1) if json.loads(text).get("ev") == number)
            record = json.loads(lines[number - 1])
            if action != "dup":
                record[arg[1]] = arg[2]
            if action == "edit":
                lines[number - 1] = json.dumps(record)
                line = number
            else:
                lines.append(json.dumps(record))
                line = len(lines)
            _write_lines(path, lines)
    elif action == "insert":
        lines = _lines(path)
        lines.insert(arg[0] - 1, arg[1])
        _write_lines(path, lines)
        line = arg[0]
    elif action == "append":
        lines = _lines(path) + [json.dumps(arg)]
        _write_lines(path, lines)
        line = len(lines)
    elif action == "torn":
        with path.open("a") as f:
            f.write(TORN)
    elif action == "chop":
        path.write_bytes(path.read_bytes().rstrip(b"\n"))
    elif action == "drop":
        lines = _lines(path)
        record = json.loads(lines[arg[0] - 1])
        del record[arg[1]]
        lines[arg[0] - 1] = json.dumps(record)
        _write_lines(path, lines)
        line = arg[0]
    elif action == "write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(arg)
    elif action == "copy-to":
        shutil.copy(path, path.parent / arg)
        path = path.parent / arg
    elif action == "copy-from":
        shutil.copy(rooms / arg, path)
    elif action == "agent-id":
        text = path.read_text()
        path.write_text(text.replace("id: counsel", f"id: {arg}", 1) if "id: counsel" in text
                        else text.replace("---\n", f"---\nid: {arg}\n", 1))
    elif action == "symlink":
        os.symlink(arg, path)
    else:
        raise AssertionError(action)
    return str(path.relative_to(rooms.parent)), line


@pytest.fixture
def fresh(template, tmp_path, monkeypatch) -> Path:  # noqa: F811
    root = tmp_path / "proj"
    shutil.copytree(template, root, symlinks=True, ignore=shutil.ignore_patterns("*.lock"))
    monkeypatch.setenv("ROOMS_DIR", str(root))
    monkeypatch.setenv("ROOMS_AGENT", "you")
    monkeypatch.chdir(root)
    layout._skipped.clear()
    return root


def test_the_unplanted_project_is_clean(fresh):
    out = invoke(["doctor", "--offline", "--json"])
    assert out.exit_code == 0, out.stdout
    assert json.loads(out.stdout)["findings"] == []


@pytest.mark.parametrize("case, rel, action, arg, severity", CASES + NEW_CASES, ids=[c[0] for c in CASES + NEW_CASES])
def test_doctor_names_each_planted_corruption(fresh, case, rel, action, arg, severity):
    named, line = plant(fresh / ".rooms", rel, action, arg)
    out = invoke(["doctor", "--offline", "--json"])
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr, out.stderr
    report = json.loads(out.stdout)
    mine = [f for f in report["findings"] if f["file"] == named or named in f["message"]]
    assert mine, f"{case}: {named} is not named: {report['findings']}"
    if line is not None:
        assert any(f"line {line}" in f["message"] for f in mine), f"{case}: line {line} is not named: {mine}"
    assert {f["severity"] for f in mine} == {severity}, f"{case}: {mine}"
    assert out.exit_code == (1 if severity == "error" else 0), (case, report)


def test_an_octopus_merge_is_named_with_its_recovery_and_the_recovery_works(project_dir, rooms):
    """git's octopus strategy runs no merge driver: two branches that both appended to one log conflict.
    Doctor names the merge and says to merge one branch at a time, which then merges cleanly."""
    import subprocess

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(project_dir), *args], capture_output=True, text=True,
                              env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x",
                                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"})

    env = {"ROOMS_DIR": str(project_dir)}
    assert git("init", "-q", "-b", "main").returncode == 0
    assert rooms("send", "base", "--to", "ops", "--as", "alice", env=env).exit_code == 0
    git("add", "-A")
    git("commit", "-qm", "base")
    for branch in ("b", "c"):
        git("checkout", "-q", "-b", branch, "main")
        assert rooms("send", f"from {branch}", "--to", "ops", "--as", "alice", env=env).exit_code == 0
        git("commit", "-qam", branch)
    git("checkout", "-q", "main")
    assert git("merge", "b", "c").returncode != 0  # the octopus conflicts on .rooms/inbox/ops.jsonl
    out = rooms("doctor", "--offline", "--json", env=env)
    assert out.exit_code == 1
    findings = json.loads(out.stdout)["findings"]
    octopus = [f for f in findings if f["check"] == "octopus"]
    assert len(octopus) == 1 and "merge one branch at a time" in octopus[0]["fix"]
    assert any(f["check"] == "merge-conflict" and f["file"] == ".rooms/inbox/ops.jsonl" for f in findings)
    # the recovery it prints
    assert git("merge", "--abort").returncode == 0
    assert git("merge", "-q", "b").returncode == 0
    assert git("merge", "-q", "c", "-m", "c").returncode == 0
    texts = [json.loads(line)["text"] for line in (project_dir / ".rooms" / "inbox" / "ops.jsonl").read_text().splitlines()]
    assert sorted(texts) == ["base", "from b", "from c"]
    assert rooms("doctor", "--offline", env=env).exit_code == 0


def _git_project(fresh: Path):
    import subprocess

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=fresh,
                              capture_output=True, text=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "base")
    return git


def test_doctor_names_a_state_ref_pointing_at_a_blob(fresh):
    """Issue 38's 14th new plant: `refs/rooms/state` naming a blob (every `rooms sync` would fail on it)."""
    git = _git_project(fresh)
    blob = git("hash-object", "-w", ".rooms.yaml").stdout.strip()
    assert git("update-ref", "refs/rooms/state", blob).returncode == 0
    out = invoke(["doctor", "--offline", "--json"])
    mine = [f for f in json.loads(out.stdout)["findings"] if f["file"] == "refs/rooms/state"]
    assert [f["severity"] for f in mine] == [E] and "blob" in mine[0]["message"] and out.exit_code == 1


def test_doctor_names_a_cache_committed_to_git(fresh):
    """Issue 38's 15th new plant: a file under `.rooms/run/` that git tracks (`git add -f`): a clone's copy
    of a cache is never trusted (a warning naming it)."""
    git = _git_project(fresh)
    planted = fresh / ".rooms" / "run" / "board" / "default.json"
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text('{"version": 1}')
    assert git("add", "-f", ".rooms/run/board/default.json").returncode == 0
    out = invoke(["doctor", "--offline", "--json"])
    mine = [f for f in json.loads(out.stdout)["findings"] if f["file"] == ".rooms/run/board/default.json"]
    assert [f["severity"] for f in mine] == [W] and "tracked by git" in mine[0]["message"] and out.exit_code == 0


def test_the_matrix_has_the_15_new_plants_of_issue_38():
    git_plants = (test_doctor_names_a_state_ref_pointing_at_a_blob, test_doctor_names_a_cache_committed_to_git)
    assert len(NEW_CASES) + len(git_plants) == 15 and len({c[0] for c in CASES + NEW_CASES}) == 59 + 13
