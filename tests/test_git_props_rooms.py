"""Random chat-room and group work in two real git clones, merged at random moments in both
directions: nothing conflicts, nothing is lost or hidden (docs/git.md, "Chat rooms and groups").

Operations (each at its own `ROOMS_NOW`): chat in the room, mute/unmute/kick/invite an agent, refill
the budget (`room continue`), save the room; spawn a group member (model-backed, or one of the two
external agents `coder` and `tester`), broadcast (gathered at once when every member runs on a model,
else left in flight), reply as an external member (`rooms group reply --broadcast ID`, to the one in
flight or an older one), gather (`rooms group wait` with a short timeout), rename and dissolve a group;
merges: a pulls b, b pulls a, both at once. Every example also holds one exchange: a broadcast with
external members in one clone, pulled by the other, then a reply to it in each clone (by the same
member or by two).

After every merge, each clone that merged holds every reply it knows of exactly once (as a reply or
as dropped), under its own member and broadcast and nowhere else. At the end both clones are merged
both ways and must read exactly alike: every chat message in `rooms transcript`, in time order; every
broadcast in `rooms group status` (unless a dissolve ran); every group's full replay (broadcasts,
replies, dropped replies, results); the room's roster and mutes holding both clones' effects; every
saved message in the merged saves.
"""

from __future__ import annotations

import os

import pytest
from gitclones import HAVE_GIT, merge_both_ways, merge_in_direction, run_random_scenario
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.skipif(not HAVE_GIT, reason="git is not installed"), pytest.mark.slow]  # random merge campaigns

AGENTS = ("reviewer", "ops", "architect", "researcher")
EXTERNAL = ("coder", "tester")  # model: external, added to the seed: they answer with `rooms group reply`
FOUR = ("--output-format", "", "--tool-guidance", "", "--boundaries", "")
CLONE = st.sampled_from((0, 1))
AGENT = st.sampled_from(AGENTS)
GROUP = st.sampled_from(("g", "h"))
OPS = st.one_of(
    st.tuples(st.just("chat"), CLONE),
    st.tuples(st.sampled_from(("mute", "unmute", "kick", "invite")), CLONE, AGENT),
    st.tuples(st.just("continue"), CLONE),
    st.tuples(st.just("save"), CLONE),
    st.tuples(st.just("spawn"), CLONE, GROUP, st.sampled_from(("reviewer", "architect", *EXTERNAL))),
    st.tuples(st.just("broadcast"), CLONE, st.integers(0, 3)),
    # group, member, broadcast (0: the one in flight, else an older one): as `group status` shows them
    st.tuples(st.just("reply"), CLONE, st.integers(0, 3), st.integers(0, 3), st.integers(0, 2)),
    st.tuples(st.just("gather"), CLONE, st.integers(0, 3)),
    st.tuples(st.just("rename"), CLONE, st.integers(0, 3)),
    st.tuples(st.just("dissolve"), CLONE, st.integers(0, 3)),
    st.tuples(st.just("merge"), st.sampled_from(("a<b", "b<a", "both"))),
)
# a broadcast with external members in one clone, pulled by the other, answered in both (same member?)
EXCHANGE = st.tuples(st.just("exchange"), CLONE, GROUP, st.booleans())


class Model:
    def __init__(self) -> None:
        self.clock = 0
        self.said: set[str] = set()  # every chat text, in any clone
        self.known: list[set[str]] = [set(), set()]  # chat texts each clone has (its own + merged in)
        self.saved: set[str] = set()  # texts some save held
        self.room_ops: dict[str, set[str]] = {a: set() for a in AGENTS}  # agent -> ops that succeeded on it
        self.broadcasts: set[str] = set()
        self.replies: dict[str, tuple[str, str]] = {}  # reply text -> (broadcast id, handle), every clone's
        self.replies_known: list[set[str]] = [set(), set()]  # reply texts each clone has
        self.dissolved = False
        self.operations = 0
        self.merges = 0

    def now(self) -> str:
        self.clock += 1
        return f"2026-11-23T{10 + self.clock // 60:02d}:{self.clock % 60:02d}:00.000Z"


def groups(clone) -> list[str]:
    return sorted(g["name"] for g in clone.rooms("group", "list"))


def ok(result, *also: int) -> bool:
    """A command may refuse (exit 1, one sentence: kicking who is not there…; or an exit code of
    `also`); never anything else."""
    assert result.exit_code in (0, 1, *also), (result.exit_code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code == 0


def setup(seed) -> None:
    from rooms_cli.agents.definitions import Agent, create_agent
    from rooms_cli.store.paths import find_project

    for agent_id in EXTERNAL:
        create_agent(find_project(seed.path), Agent(id=agent_id, directive="An outside coding agent.", model="external"))


def merge(direction: str, clones, model: Model) -> None:
    """Merge as `merge_in_direction` does, then check the replies in each clone that merged."""
    a, b = clones
    model.merges += 1
    merge_in_direction(direction, a, b)
    merged = {"a<b": (0,), "b<a": (1,)}.get(direction, (0, 1))
    for side in merged:
        for known in (model.known, model.replies_known):
            known[side] = known[side] | known[1 - side]
    for side in merged:
        check_replies(clones[side], model, model.replies_known[side])


def in_flight_or_recent(clone, name: str) -> list[dict]:
    """The broadcasts `group status` shows: the one in flight first, then the recent ones, newest first."""
    status = clone.rooms("group", "status", name)
    return ([status["in_flight"]] if status["in_flight"] else []) + status["recent"]


def reply(clone, model: Model, side: int, name: str, bid: str, handle: str) -> None:
    """`rooms group reply` as an external member, with the broadcast id; remembered when recorded."""
    text = f"r{model.clock}-{clone.name}-{handle}"
    sent = clone.run("group", "reply", name, text, "--as", handle, "--broadcast", bid, "--json", now=model.now())
    if ok(sent):
        assert sent.json()["broadcast_id"] == bid, sent.stdout
        model.replies[text] = (bid, handle)
        model.replies_known[side].add(text)


def gather(clone, name: str, now: str) -> None:
    """`rooms group wait` with a short timeout: pending external members time out (exit 4)."""
    ok(clone.run("group", "wait", name, "--timeout", "0.3", "--json", now=now), 3, 4)


def externals(handles) -> list[str]:
    return [h for h in handles if h.split("-")[0] in EXTERNAL]


def exchange(op: tuple, clones, model: Model) -> None:
    """One clone broadcasts to a group with both external members; the other pulls it and replies;
    then the first replies too (as the same member, or the other one)."""
    side, name, same = op[1], op[2], op[3]
    x, y = clones[side], clones[1 - side]
    members = {m["handle"] for m in x.rooms("group", "status", name)["members"]} if name in groups(x) else set()
    for profile in EXTERNAL:
        if profile not in members:
            ok(x.run("group", "spawn", name, "--profile", profile, "--json", now=model.now()), 3)
    for _ in range(3):  # whatever is in flight (several after merges) is gathered first
        if not x.rooms("group", "status", name)["in_flight"]:
            break
        gather(x, name, model.now())
    sent = x.run("group", "broadcast", name, "--objective", f"x{model.clock}", *FOUR, "--json", now=model.now())
    if not ok(sent, 3):
        return
    bid = sent.json()["broadcast_id"]
    model.broadcasts.add(bid)
    merge("b<a" if side == 0 else "a<b", clones, model)
    held = [n for n in groups(y) if any(b["broadcast_id"] == bid for b in in_flight_or_recent(y, n))]
    first = externals(sent.json()["members"])
    if held and first:
        before = len(model.replies)
        reply(y, model, 1 - side, held[0], bid, first[0])
        again = first[0] if same or len(first) == 1 else first[1]
        reply(x, model, side, name, bid, again)
        FIGURES["both sides"] += len(model.replies) - before == 2


def apply(op: tuple, clones, model: Model) -> None:
    kind = op[0]
    if kind == "merge":
        merge(op[1], clones, model)
        return
    if kind == "exchange":
        model.operations += 1
        exchange(op, clones, model)
        return
    model.operations += 1
    side = op[1]
    clone = clones[side]
    now = model.now()
    if kind == "chat":
        text = f"c{model.clock}-{clone.name}"
        clone.rooms("chat", text, "--room", "default", as_="alice", now=now)
        model.said.add(text)
        model.known[side].add(text)
    elif kind in ("mute", "unmute", "kick", "invite"):
        if ok(clone.run("room", kind, op[2], "--room", "default", "--json", now=now)):
            model.room_ops[op[2]].add(kind)
    elif kind == "continue":
        ok(clone.run("room", "continue", "--room", "default", "--json", now=now))
    elif kind == "save":
        clone.rooms("room", "save", "--room", "default", now=now)
        model.saved |= model.known[side]
    elif kind == "spawn":
        ok(clone.run("group", "spawn", op[2], "--profile", op[3], "--json", now=now))
    else:
        names = groups(clone)
        if not names:
            return
        name = names[op[2] % len(names)]
        if kind == "broadcast":
            sent = clone.run("group", "broadcast", name, "--objective", f"o{model.clock}", *FOUR, "--json", now=now)
            if ok(sent, 3):  # 3: one is in flight
                model.broadcasts.add(sent.json()["broadcast_id"])
                if not externals(sent.json()["members"]):  # model-backed members only: gathered at once
                    clone.rooms("group", "wait", name, now=model.now())
        elif kind == "reply":
            shown = in_flight_or_recent(clone, name)
            if not shown:
                return
            b = shown[op[4] % len(shown)]
            handles = externals(b["members"]) or b["members"]  # a model-backed member is refused (exit 1)
            reply(clone, model, side, name, b["broadcast_id"], handles[op[3] % len(handles)])
        elif kind == "gather":
            gather(clone, name, now)
        elif kind == "rename":
            ok(clone.run("group", "rename", name, f"{name}{model.clock}", "--json", now=now), 3)  # 3: in flight
        elif kind == "dissolve":
            if ok(clone.run("group", "dissolve", name, "--json", now=now)):
                model.dissolved = True


def view(clone) -> dict:
    room = clone.rooms("room", "show", "default")
    full = clone.rooms("transcript", "--room", "default")
    statuses = {name: clone.rooms("group", "status", name) for name in groups(clone)}
    for status in statuses.values():
        status.pop("label", None)
    return {
        "room": {**room, "roster": sorted(m["id"] for m in room["roster"])},
        "transcript": full,
        "last3": clone.rooms("transcript", "--room", "default", "--last", "3"),
        "groups": statuses,
    }


def replays(clone) -> tuple[dict[str, list], dict[str, list]]:
    """Every broadcast id -> the broadcast as each group log replays it: (live groups, gone ones)."""
    from rooms_cli.groups import log
    from rooms_cli.store.paths import find_project

    project = find_project(clone.path)
    live: dict[str, list] = {}
    gone: dict[str, list] = {}
    for name in log.log_names(project):
        group = log.load_any(project, name)
        for b in group.broadcasts if group is not None else ():
            (gone if group.gone else live).setdefault(b.id, []).append(b)
    return live, gone


def check_replies(clone, model: Model, texts: set[str]) -> None:
    """Each reply the clone has is held exactly once (accepted or dropped) by its broadcast, under its
    member, in every group that holds that broadcast; no other broadcast holds it; a broadcast no
    live group holds means a dissolve ran."""
    live, gone = replays(clone)
    where: dict[str, list[tuple[str, str]]] = {}  # reply text -> (broadcast id, handle) of each holder
    for bid, copies in (*live.items(), *gone.items()):
        for b in copies:
            held = [(r.text, r.handle) for r in b.replies.values() if r.source == "external"]
            for text, handle in held + [(d["text"], d["handle"]) for d in b.dropped]:
                where.setdefault(text, []).append((bid, handle))
            texts_here = [text for text, _ in held] + [d["text"] for d in b.dropped]
            assert len(texts_here) == len(set(texts_here)), f"{clone.name}: a reply twice in {bid}: {texts_here}"
    for text, holders in where.items():
        if text in model.replies:
            assert set(holders) == {model.replies[text]}, \
                f"{clone.name}: reply {text!r} to {model.replies[text]} is held by {holders}"
    for text in texts:
        bid, _ = model.replies[text]
        copies = live.get(bid) or []
        if not copies:  # only a dissolve that saw it ends a broadcast (its log is a tombstone, or the name a new group's)
            assert model.dissolved, f"{clone.name}: broadcast {bid} (replied {text!r}) is lost"
            copies = gone.get(bid, [])
        for b in copies:
            found = [r for r in b.replies.values() if r.text == text] + [d for d in b.dropped if d["text"] == text]
            assert len(found) == 1, f"{clone.name}: reply {text!r} held {len(found)} times by {bid}"


def check(clones, model: Model) -> None:
    import dataclasses

    a, b = clones
    merge_both_ways(a, b)
    for clone in clones:
        check_replies(clone, model, set(model.replies))
    assert [{k: [dataclasses.asdict(x) for x in v] for k, v in sorted(r.items())} for r in replays(a)] == \
           [{k: [dataclasses.asdict(x) for x in v] for k, v in sorted(r.items())} for r in replays(b)], \
        "the groups' replays (broadcasts, replies, results) differ between the merge directions"
    FIGURES["replies"] += len(model.replies)
    FIGURES["dropped"] += len(set(model.replies) & {d["text"] for copies in replays(a)[0].values() for d in copies[0].dropped})
    seen = view(a)
    assert seen == view(b), "the two merge directions read differently"
    full = seen["transcript"]
    assert [m["ts"] for m in full] == sorted(m["ts"] for m in full), "the transcript is not in time order"
    assert seen["last3"] == full[-3:], "transcript --last 3 is not the newest 3"
    said = {m["text"] for m in full if m["speaker"] == "alice"}
    assert said == model.said, f"chat messages lost or gained: {said ^ model.said}"
    roster, muted = seen["room"]["roster"], seen["room"]["muted"]
    for agent, done in model.room_ops.items():
        if "invite" in done and "kick" not in done:
            assert agent in roster, f"{agent} invited in one clone is not in the merged roster"
        if "kick" in done and "invite" not in done:
            assert agent not in roster, f"{agent} kicked in one clone is back in the merged roster"
        if "mute" in done and not done & {"unmute", "kick", "invite"}:
            assert agent in muted, f"{agent} muted in one clone is not muted after the merge"
    shown = set()
    for status in seen["groups"].values():
        shown |= {r["broadcast_id"] for r in status["recent"]}
        if status.get("in_flight"):
            shown.add(status["in_flight"]["broadcast_id"])
    if not model.dissolved:
        many = any(len(s["recent"]) >= 5 for s in seen["groups"].values())  # status shows the newest 5
        assert shown <= model.broadcasts and (many or shown == model.broadcasts), \
            f"broadcasts hidden by the merge: {model.broadcasts - shown}"
    if model.saved:
        from rooms_cli.chat.lifecycle import load_saved
        from rooms_cli.store.paths import find_project

        for clone in clones:
            saved = load_saved(find_project(clone.path), "default")
            kept = {m.text for m in saved.messages} if saved else set()
            assert model.saved <= kept, f"saved messages lost: {model.saved - kept}"


FIGURES = {"examples": 0, "operations": 0, "merges": 0, "conflicts": 0, "losses": 0, "replies": 0, "dropped": 0, "both sides": 0}


# few examples in CI (each builds an origin and two clones); GIT_PROPS_EXAMPLES=200 for a long run
@settings(max_examples=int(os.environ.get("GIT_PROPS_EXAMPLES", "4")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(OPS, min_size=4, max_size=14), EXCHANGE, st.integers(0, 14))
# found by hypothesis: a reply to a broadcast of a group renamed in one clone was held twice by the
# other clone's copy of that broadcast after a merge (see test_git_groups_rename_reply_once)
@example(ops=[("gather", 1, 2), ("spawn", 1, "g", "tester"), ("broadcast", 0, 1), ("gather", 0, 3),
              ("reply", 1, 3, 2, 2), ("continue", 1), ("spawn", 1, "h", "tester"), ("rename", 1, 2),
              ("rename", 0, 0), ("gather", 0, 3), ("reply", 0, 2, 3, 1), ("broadcast", 0, 3),
              ("spawn", 1, "h", "coder"), ("reply", 0, 2, 0, 2)],
         exchange_op=("exchange", 1, "g", True), at=0)
# and a group renamed in one clone, dissolved in the other: the dissolve, overruled by the replies it
# did not see, brought the old name back without the reply sent under the new one
@example(ops=[("gather", 1, 0), ("rename", 1, 0), ("reply", 1, 0, 3, 1), ("dissolve", 0, 1)],
         exchange_op=("exchange", 0, "h", True), at=0)
def test_random_room_and_group_work_in_two_clones_merges_with_nothing_lost_or_hidden(ops, exchange_op, at):
    ops = [*ops[:at], exchange_op, *ops[at:]]
    run_random_scenario(ops, example="dev", model=Model(), apply=apply, check=check, figures=FIGURES, setup=setup)
