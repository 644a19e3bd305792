"""Groups and chat rooms in git: real clones work offline, then merge — in both directions.

Every scenario asserts: git merges with 0 conflicts, nothing either clone wrote is lost or hidden,
and the merged state reads the same whichever way the merge went.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

FOUR = ("--output-format", "", "--tool-guidance", "", "--boundaries", "")


def git(cwd: Path, *args: str, check: bool = True) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)}
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60)
    assert not check or proc.returncode == 0, f"git {' '.join(args)}: {proc.stdout}{proc.stderr}"
    return proc.stdout


class Clones:
    """A seeded origin and clones of it; `rooms(clone, …)` runs the CLI in-process on one clone."""

    def __init__(self, tmp_path: Path, cli, count: int):
        from rooms_cli.project import initialize

        self.cli = cli
        seed = tmp_path / "seed"
        seed.mkdir()
        initialize(seed, example="dev")
        git(seed, "init", "-q", "-b", "main")
        self.seed = seed
        self.paths = [tmp_path / f"clone{i}" for i in range(count)]
        self.tmp = tmp_path
        self.committed = False

    def share(self) -> list[Path]:
        """Commit the seed and clone it (call after setting up what every clone starts from)."""
        git(self.seed, "add", "-A")
        git(self.seed, "commit", "-q", "-m", "seed")
        for path in self.paths:
            git(self.tmp, "clone", "-q", str(self.seed), str(path))
        return self.paths

    def rooms(self, where: Path, *args: str, code: int = 0):
        result = self.cli(*args, "--json", env={"ROOMS_DIR": str(where)})
        assert result.exit_code == code, f"rooms {' '.join(args)} on {where.name}: {result.stdout}{result.stderr}"
        return result.json() if code == 0 and result.stdout.strip() else result

    def commit(self, where: Path, message: str = "work") -> None:
        git(where, "add", "-A")
        git(where, "commit", "-q", "--allow-empty", "-m", message)

    def merge(self, where: Path, other: Path) -> list[str]:
        """Merge `other`'s committed head into `where`; return the conflicted files (none expected)."""
        git(where, "fetch", "-q", str(other), "HEAD")
        git(where, "merge", "-q", "--no-edit", "FETCH_HEAD", check=False)
        conflicted = sorted(set(git(where, "diff", "--name-only", "--diff-filter=U").split()))
        if not conflicted:
            git(where, "commit", "-q", "--allow-empty", "-m", "merge", check=False)
        return conflicted

    def merge_both_ways(self, a: Path, b: Path) -> tuple[Path, Path]:
        """Commit both, then merge b into a copy of a and a into b: two merged clones, both directions."""
        self.commit(a)
        self.commit(b)
        a_copy = self.tmp / (a.name + "-merged")
        shutil.copytree(a, a_copy)
        assert self.merge(a_copy, b) == []
        assert self.merge(b, a) == []
        return a_copy, b


@pytest.fixture
def clones(tmp_path, cli):
    return lambda count=2: Clones(tmp_path, cli, count)


def group_view(c: Clones, where: Path, name: str) -> dict:
    status = c.rooms(where, "group", "status", name)
    return {"members": status["members"], "in_flight": status["in_flight"], "recent": status["recent"]}


def broadcast_and_wait(c: Clones, where: Path, name: str, objective: str) -> str:
    bid = c.rooms(where, "group", "broadcast", name, "--objective", objective, *FOUR)["broadcast_id"]
    c.rooms(where, "group", "wait", name)
    return bid


# -- groups ------------------------------------------------------------------------------------


def test_a_group_created_in_two_clones_keeps_both_clones_members_and_results(clones):
    c = clones()
    a, b = c.share()
    c.rooms(a, "group", "spawn", "panel", "--profile", "reviewer")
    from_a = broadcast_and_wait(c, a, "panel", "from A")
    c.rooms(b, "group", "spawn", "panel", "--profile", "architect")
    from_b = broadcast_and_wait(c, b, "panel", "from B")
    one, other = c.merge_both_ways(a, b)
    view = group_view(c, one, "panel")
    assert view == group_view(c, other, "panel")
    assert [m["handle"] for m in view["members"]] == ["reviewer", "architect"] or \
        [m["handle"] for m in view["members"]] == ["architect", "reviewer"]
    assert {r["broadcast_id"] for r in view["recent"]} == {from_a, from_b}
    assert all(r["status"] == "gathered" for r in view["recent"])
    findings = [f for f in c.rooms(one, "doctor", "--offline")["findings"] if f["check"] == "group-merge"]
    assert [f["message"] for f in findings] == ["group 'panel' was created in two clones; their members and broadcasts are merged into one group"]


def test_a_group_renamed_in_one_clone_keeps_what_the_other_clone_added_under_the_old_name(clones):
    c = clones()
    c.rooms(c.seed, "group", "spawn", "rev", "--profile", "reviewer")
    a, b = c.share()
    c.rooms(a, "group", "rename", "rev", "reviewers")
    late = broadcast_and_wait(c, b, "rev", "sent on B before it heard of the rename")
    one, other = c.merge_both_ways(a, b)
    for where in (one, other):
        assert [g["name"] for g in c.rooms(where, "group", "list")] == ["reviewers"]
        assert [r["broadcast_id"] for r in c.rooms(where, "group", "status", "reviewers")["recent"]] == [late]
        assert "renamed to 'reviewers'" in c.rooms(where, "group", "status", "rev", code=1).stderr


def test_a_group_renamed_differently_in_two_clones_keeps_both_names_and_doctor_says_so(clones):
    c = clones()
    c.rooms(c.seed, "group", "spawn", "rev", "--profile", "reviewer")
    a, b = c.share()
    c.rooms(a, "group", "rename", "rev", "left")
    c.rooms(b, "group", "rename", "rev", "right")
    one, other = c.merge_both_ways(a, b)
    for where in (one, other):
        assert [g["name"] for g in c.rooms(where, "group", "list")] == ["left", "right"]
        findings = [f for f in c.rooms(where, "doctor", "--offline")["findings"] if f["check"] == "group-merge"]
        assert any("'left'" in f["message"] and "'right'" in f["message"] for f in findings), findings


def test_a_group_dissolved_in_one_clone_while_the_other_used_it_is_kept_and_reported(clones):
    c = clones()
    c.rooms(c.seed, "group", "spawn", "rev", "--profile", "reviewer")
    a, b = c.share()
    c.rooms(a, "group", "dissolve", "rev")
    late = broadcast_and_wait(c, b, "rev", "still in use on B")
    one, other = c.merge_both_ways(a, b)
    for where in (one, other):
        assert [r["broadcast_id"] for r in c.rooms(where, "group", "status", "rev")["recent"]] == [late]
        findings = [f for f in c.rooms(where, "doctor", "--offline")["findings"] if f["check"] == "group-merge"]
        assert any("dissolved" in f["message"] and "rooms group dissolve rev" in f["fix"] for f in findings), findings


def test_a_group_dissolved_in_both_clones_stays_dissolved(clones):
    c = clones()
    c.rooms(c.seed, "group", "spawn", "rev", "--profile", "reviewer")
    a, b = c.share()
    c.rooms(a, "group", "dissolve", "rev")
    c.rooms(b, "group", "dissolve", "rev")
    one, other = c.merge_both_ways(a, b)
    for where in (one, other):
        assert c.rooms(where, "group", "list") == []


def test_broadcasts_in_flight_in_two_clones_both_stay_visible_and_can_be_gathered(clones):
    c = clones()
    c.rooms(c.seed, "group", "spawn", "rev", "--profile", "reviewer")
    a, b = c.share()
    on_a = c.rooms(a, "group", "broadcast", "rev", "--objective", "A", *FOUR)["broadcast_id"]
    on_b = c.rooms(b, "group", "broadcast", "rev", "--objective", "B", *FOUR)["broadcast_id"]
    one, other = c.merge_both_ways(a, b)
    view = group_view(c, one, "rev")
    assert view == group_view(c, other, "rev")
    assert {view["in_flight"]["broadcast_id"], *(r["broadcast_id"] for r in view["recent"])} == {on_a, on_b}
    c.rooms(one, "group", "wait", "rev")
    c.rooms(one, "group", "wait", "rev")
    assert {r["status"] for r in c.rooms(one, "group", "status", "rev")["recent"]} == {"gathered"}


def test_three_clones_adding_members_and_broadcasting_merge_in_any_order(clones):
    c = clones(3)
    c.rooms(c.seed, "group", "spawn", "rev", "--profile", "reviewer")
    a, b, d = c.share()
    sent = set()
    for where, profile in ((a, "architect"), (b, "ops"), (d, "scribe")):
        c.rooms(where, "group", "spawn", "rev", "--profile", profile)
        sent.add(broadcast_and_wait(c, where, "rev", f"from {where.name}"))
        c.commit(where)
    assert c.merge(a, b) == [] and c.merge(a, d) == []
    assert c.merge(d, b) == [] and c.merge(d, a) == []
    view = group_view(c, a, "rev")
    assert view == group_view(c, d, "rev")
    assert sorted(m["handle"] for m in view["members"]) == ["architect", "ops", "reviewer", "scribe"]
    assert {r["broadcast_id"] for r in view["recent"]} == sent


def test_a_group_log_written_before_event_ids_still_replays_in_file_order(project, cli):
    import json

    lines = [
        {"ev": "created", "ts": "2026-11-20T10:00:00.000Z", "name": "old", "gid": "g-1", "ephemeral": False},
        {"ev": "member_added", "ts": "2026-11-20T10:00:00.000Z", "handle": "reviewer", "profile": "reviewer"},
        {"ev": "broadcast", "ts": "2026-11-20T10:00:01.000Z", "id": "b-1", "fields": {}, "members": [{"handle": "reviewer", "profile": "reviewer"}], "sender": "x"},
        {"ev": "reply", "ts": "2026-11-20T10:00:01.000Z", "id": "b-1", "handle": "reviewer", "text": "hi", "status": "ok", "elapsed_s": 0.1, "source": "external"},
        {"ev": "cancelled", "ts": "2026-11-20T10:00:01.000Z", "id": "b-1", "by": "x", "reason": "r"},
    ]
    (project.dir / "groups" / "old.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    cli("group", "spawn", "old", "--profile", "architect")
    status = json.loads(cli("group", "status", "old", "--json").stdout)
    assert [m["handle"] for m in status["members"]] == ["reviewer", "architect"]
    assert status["recent"][0]["replied"] == ["reviewer"] and status["recent"][0]["status"] == "cancelled"


def test_group_replay_reads_the_same_whichever_clone_s_events_come_first_in_the_file(project):
    from rooms_cli.groups import log

    base = [log.event("created", name="g", gid="g-1", ephemeral=False)]
    for i, ev in enumerate(base):
        ev["seq"] = i
    ours = [{**log.event("member_added", handle="a", profile="reviewer"), "seq": 1},
            {**log.event("broadcast", id="b-a", fields={}, members=[], sender="a"), "seq": 2}]
    theirs = [{**log.event("member_added", handle="b", profile="ops"), "seq": 1},
              {**log.event("broadcast", id="b-b", fields={}, members=[], sender="b"), "seq": 2},
              {**log.event("created", name="g", gid="g-2", ephemeral=False), "seq": 3}]
    one = log.replay("g", base + ours + theirs)
    other = log.replay("g", base + theirs + ours)
    assert one == other
    assert [m.handle for m in one.members] == [m.handle for m in other.members] and len(one.members) == 2
    assert [b.id for b in one.broadcasts] == [b.id for b in other.broadcasts] and len(one.broadcasts) == 2
