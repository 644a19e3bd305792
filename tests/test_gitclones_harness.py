"""The git clone harness itself (tests/gitclones.py): clones, in-process rooms, commits and merges."""

from __future__ import annotations

import pytest
from gitclones import HAVE_GIT, GitClones, MergeConflict, merge_both_ways

pytestmark = pytest.mark.skipif(not HAVE_GIT, reason="git is not installed")


def test_two_clones_share_work_through_origin(tmp_path):
    world = GitClones(tmp_path)
    a, b = world.clone("a"), world.clone("b")
    a.rooms("task", "add", "From A", "--lane", "worker", "--done", "x")
    b.rooms("task", "add", "From B", "--lane", "worker", "--done", "y")
    a.sync()
    b.sync()
    a.sync()
    titles = sorted(t["title"] for lane in a.rooms("board")["lanes"] for t in lane["tasks"])
    assert titles == ["From A", "From B"]
    world.assert_no_conflicts()


def test_a_real_conflict_is_reported_with_the_file(tmp_path):
    world = GitClones(tmp_path)
    a, b = world.clone("a"), world.clone("b")
    (a.path / "notes.txt").write_text("a\n")
    (b.path / "notes.txt").write_text("b\n")
    a.commit()
    b.commit()
    with pytest.raises(MergeConflict, match="notes.txt"):
        merge_both_ways(a, b)


def test_rooms_runs_with_the_identity_and_clock_given(tmp_path):
    world = GitClones(tmp_path)
    a = world.clone("a")
    sent = a.rooms("send", "hello", "--to", "reviewer", as_="carol", now="2026-01-02T03:04:05Z")
    assert sent["from"] == "carol"
    inbox = a.rooms("inbox", "--peek", as_="reviewer")
    assert inbox["messages"][0]["ts"].startswith("2026-01-02T03:04:05")
