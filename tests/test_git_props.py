"""Random work in two real git clones, merged at random moments: nothing conflicts, nothing is lost,
hidden or misrouted (docs/git.md).

Operations (each at its own `ROOMS_NOW`): send, reply by the reference the inbox shows, read,
peek, status set, queue a roundtable, add and claim a task; merges: a pulls b, b pulls a, both at
once. At the end both clones are merged both ways and must read exactly alike, with every message
in its inbox, unread exactly when no clone read it, distinct references, the latest status, every
queue item and every task.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from gitclones import HAVE_GIT, merge_both_ways, merge_in_direction, run_random_scenario
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.skipif(not HAVE_GIT, reason="git is not installed"), pytest.mark.slow]  # random merge campaigns

AGENTS = ("ann", "bob", "cat")
CLONE = st.sampled_from((0, 1))
AGENT = st.sampled_from(AGENTS)
OPS = st.one_of(
    st.tuples(st.just("send"), CLONE, AGENT, AGENT),
    st.tuples(st.just("reply"), CLONE, AGENT, st.integers(0, 20)),
    st.tuples(st.just("read"), CLONE, AGENT),
    st.tuples(st.just("peek"), CLONE, AGENT),
    st.tuples(st.just("status"), CLONE, AGENT),
    st.tuples(st.just("queue"), CLONE),
    st.tuples(st.just("task"), CLONE, AGENT),
    st.tuples(st.just("merge"), st.sampled_from(("a<b", "b<a", "both"))),
)


class Model:
    """What must be true after the merges: every record sent, who read what, the latest status."""

    def __init__(self) -> None:
        self.clock = 0
        self.inbox: dict[str, dict[str, str]] = {a: {} for a in AGENTS}  # agent -> text -> sender
        self.read: dict[str, set[str]] = {a: set() for a in AGENTS}  # texts marked read in some clone
        self.status: dict[str, str] = {}
        self.queued: set[str] = set()
        self.tasks: set[str] = set()
        self.operations = 0
        self.merges = 0

    def now(self) -> str:
        self.clock += 1
        return f"2026-11-21T{10 + self.clock // 60:02d}:{self.clock % 60:02d}:00Z"


def apply(op: tuple, clones, model: Model) -> None:
    kind = op[0]
    if kind == "merge":
        a, b = clones
        model.merges += 1
        merge_in_direction(op[1], a, b)
        return
    model.operations += 1
    clone = clones[op[1]]
    if kind == "send":
        sender, to = op[2], op[3]
        if sender == to:
            to = AGENTS[(AGENTS.index(to) + 1) % len(AGENTS)]
        text = f"m{model.clock}-{sender}-{clone.name}"
        clone.rooms("send", text, "--to", to, as_=sender, now=model.now())
        model.inbox[to][text] = sender
    elif kind == "reply":
        me, pick = op[2], op[3]
        messages = clone.rooms("inbox", "--peek", as_=me)["messages"]
        if not messages:
            return
        chosen = messages[pick % len(messages)]
        text = f"re{model.clock}-{me}-{clone.name}"
        sent = clone.rooms("send", text, "--reply-to", chosen["ref"], as_=me, now=model.now())
        assert sent["to"] == [chosen["from"]], "a reply went to someone else than the sender of what it answers"
        assert sent["reply_to_id"] == chosen["id"]
        model.inbox[chosen["from"]][text] = me
    elif kind in ("read", "peek"):
        me = op[2]
        shown = clone.rooms("inbox", *(["--peek"] if kind == "peek" else []), as_=me, now=model.now())
        refs = [m["ref"] for m in shown["messages"]]
        assert len(refs) == len(set(refs)), f"two messages show the same reference: {refs}"
        unread = {m["text"] for m in shown["messages"] if not m["read"]}
        looks_read = {m["text"] for m in shown["messages"] if m["read"]}
        assert looks_read <= model.read[me], f"never read, yet shown as read: {looks_read - model.read[me]}"
        if kind == "read":
            model.read[me] |= unread
    elif kind == "status":
        me = op[2]
        text = f"s{model.clock}-{clone.name}"
        clone.rooms("status", "set", text, as_=me, now=model.now())
        model.status[me] = text
    elif kind == "queue":
        item = clone.rooms("roundtable", "queue", "debate", "--topic", f"q{model.clock}", now=model.now())
        model.queued.add(item["id"])
    elif kind == "task":
        title = f"t{model.clock}-{clone.name}"
        task = clone.rooms("task", "add", title, "--lane", op[2], "--done", "x", now=model.now())
        model.tasks.add(task["id"])
        clone.rooms("task", "claim", task["id"], as_=op[2], now=model.now())


def check(clones, model: Model) -> None:
    a, b = clones
    merge_both_ways(a, b)
    for me in AGENTS:
        views = [c.rooms("inbox", "--peek", as_=me)["messages"] for c in clones]
        assert views[0] == views[1], f"{me}'s inbox reads differently in the two clones"
        got = {m["text"]: m["from"] for m in views[0]}
        assert got == model.inbox[me], f"{me}'s inbox lost or gained messages"
        refs = Counter(m["ref"] for m in views[0])
        assert all(n == 1 for n in refs.values()), f"shared references in {me}'s inbox: {refs}"
        unread = {m["text"] for m in views[0] if not m["read"]}
        assert unread == set(model.inbox[me]) - model.read[me], f"{me}: unread messages look read, or read ones unread"
    for clone in clones:
        statuses = {e["name"]: e["status"] for e in clone.rooms("agents")}
        for me, text in model.status.items():
            assert statuses[me] == text
        assert {i["id"] for i in clone.rooms("roundtable", "queue")} == model.queued
        board = clone.rooms("board")
        tasks = {t["id"] for lane in board["lanes"] for t in lane["tasks"]}
        assert tasks == model.tasks


FIGURES = {"examples": 0, "operations": 0, "merges": 0, "conflicts": 0, "losses": 0}


# few examples in CI (each builds an origin and two clones); GIT_PROPS_EXAMPLES=200 for a long run
@settings(max_examples=int(os.environ.get("GIT_PROPS_EXAMPLES", "4")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(OPS, min_size=4, max_size=16))
def test_random_work_in_two_clones_merges_with_no_conflict_loss_or_misrouting(ops):
    run_random_scenario(ops, example=None, model=Model(), apply=apply, check=check, figures=FIGURES)
