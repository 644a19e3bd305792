"""Dependencies across real git clones: they are events in the task logs, so two clones that add
dependencies merge to the same graph with `git pull` (both ways) and with `rooms sync`; a cycle that
only the merge makes shows on the board and in doctor, both tasks blocked and named, never a crash."""

from __future__ import annotations

import pytest
from gitclones import HAVE_GIT, GitClones, merge_both_ways

pytestmark = pytest.mark.skipif(not HAVE_GIT, reason="needs git")


def world(tmp_path):
    """An origin whose board holds four tasks (a, b, c, d; lanes dev and qa), and two clones of it."""
    made: dict[str, str] = {}

    def seed(clone):
        for name, lane in (("a", "dev"), ("b", "qa"), ("c", "dev"), ("d", "qa")):
            made[name] = clone.rooms("task", "add", name, "--lane", lane, "--done", "it is done", as_="alice")["id"]

    w = GitClones(tmp_path, example="dev", setup=seed)
    return w, w.clone("one"), w.clone("two"), made


def graph(clone) -> dict[str, tuple[list[str], list[str]]]:
    return {t["title"]: (t["depends_on"], t["blocked_by"]) for t in clone.rooms("task", "list")}


def ready(clone) -> list[str]:
    return [t["title"] for t in clone.rooms("task", "ready")]


def share(how: str, one, two) -> None:
    if how == "git pull":
        merge_both_ways(one, two)
    else:
        one.rooms("sync")
        two.rooms("sync")
        one.rooms("sync")


@pytest.mark.parametrize("how", ["git pull", "rooms sync"])
def test_dependencies_added_on_two_clones_merge_to_the_same_graph(tmp_path, how):
    w, one, two, ids = world(tmp_path)
    one.rooms("task", "update", ids["c"], "--depends-on", ids["a"], as_="alice")
    one.rooms("task", "add", "e", "--lane", "dev", "--done", "x", "--depends-on", ids["d"], as_="alice")
    two.rooms("task", "update", ids["d"], "--depends-on", ids["b"], as_="bob")
    two.rooms("task", "update", ids["c"], "--depends-on", ids["b"], as_="bob")  # the same task, another dependency
    share(how, one, two)
    w.assert_no_conflicts()
    assert graph(one) == graph(two)
    assert graph(one)["c"] == (sorted([ids["a"], ids["b"]]), sorted([ids["a"], ids["b"]]))  # both changes hold
    assert graph(one)["d"][0] == [ids["b"]] and graph(one)["e"][0] == [ids["d"]]
    assert ready(one) == ready(two) == ["a", "b"]
    assert one.rooms("task", "next", as_="dev")["task"]["title"] == "a"


@pytest.mark.parametrize("how", ["git pull", "rooms sync"])
def test_a_cycle_only_the_merge_makes_blocks_both_tasks_and_is_named(tmp_path, how):
    w, one, two, ids = world(tmp_path)
    one.rooms("task", "update", ids["a"], "--depends-on", ids["c"], as_="alice")  # fine on its own
    two.rooms("task", "update", ids["c"], "--depends-on", ids["a"], as_="bob")  # fine on its own
    share(how, one, two)
    first, second = sorted([ids["a"], ids["c"]])
    for clone in (one, two):
        board = clone.rooms("board")
        assert board["cycles"] == [[first, second, first]]
        assert {t["title"]: t["blocked_by"] for lane in board["lanes"] for t in lane["tasks"]} == {
            "a": [ids["c"]], "b": [], "c": [ids["a"]], "d": []}
        assert ready(clone) == ["b", "d"]
        assert clone.rooms("task", "next", as_="dev") is None  # both of dev's tasks wait on each other
        text = clone.run("board").stdout
        assert "dependency cycle" in text and "a person must decide" in text
        doctor = clone.run("doctor", "--offline")
        assert doctor.exit_code == 1 and "dependency cycle" in doctor.stdout
        assert ids["a"] in doctor.stdout and ids["c"] in doctor.stdout and "Traceback" not in doctor.stdout + doctor.stderr
    one.rooms("task", "update", ids["a"], "--depends-on", "", as_="alice")  # a person drops one of them
    share(how, one, two)
    assert ready(two) == ["a", "b", "d"] and two.rooms("board")["cycles"] == []
