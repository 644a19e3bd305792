"""Property tests: the group log round-trips through replay, GroupResult through JSON, ballots parse."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.groups import log, rank
from rooms_cli.groups.model import GroupResult, MemberResult
from rooms_cli.store import jsonl

handles = st.sampled_from(["a", "b", "c", "d", "sec", "style"])
texts = st.text(max_size=40)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "remove"]), handles), max_size=30))
def test_replaying_member_events_gives_the_same_roster_as_applying_them(ops):
    events = [log.event("created", name="g", gid="g-1", ephemeral=False)]
    roster: list[str] = []
    for op, handle in ops:
        if op == "add" and handle not in roster:
            roster.append(handle)
            events.append(log.event("member_added", handle=handle, profile="analyst"))
        elif op == "remove" and handle in roster:
            roster.remove(handle)
            events.append(log.event("member_removed", handle=handle))
    lines = "".join(jsonl.dumps(e) + "\n" for e in events).encode()
    group = log.replay("g", jsonl.parse_bytes(lines).records)
    assert [m.handle for m in group.members] == roster


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(handles, texts, st.sampled_from(["reply", "dropped"])), max_size=20), st.booleans())
def test_only_the_first_reply_of_a_member_before_the_result_counts(replies, gather_midway):
    members = [{"handle": h, "profile": "x"} for h in ["a", "b", "c", "d", "sec", "style"]]
    events = [log.event("created", name="g", gid="g-1"), log.event("broadcast", id="b-1", fields={}, members=members, sender="me")]
    expected: dict[str, str] = {}
    cut = len(replies) // 2 if gather_midway else len(replies)
    for i, (handle, text, kind) in enumerate(replies):
        if i == cut:
            events.append(log.event("gathered", id="b-1", result={}))
        events.append(log.event(kind, id="b-1", handle=handle, text=text, status="ok"))
        if kind == "reply" and i < cut:
            expected.setdefault(handle, text)
    b = log.replay("g", events).broadcast("b-1")
    assert {h: r.text for h, r in b.replies.items()} == expected


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(handles, st.tuples(texts, st.sampled_from(["ok", "error", "timeout"]), st.floats(0, 100)), max_size=6),
       st.one_of(st.none(), texts, st.dictionaries(handles, texts)))
def test_group_result_round_trips_through_json(rows, reduced):
    result = GroupResult(
        broadcast_id="b-1", by_member={h: MemberResult(t, s, round(e, 3)) for h, (t, s, e) in rows.items()},
        reduced=reduced, metadata={"reducer": "concat", "replied": len(rows)}, order=list(rows),
    )
    assert GroupResult.from_json(result.to_json()).to_json() == result.to_json()


LABELS = ["R1", "R2", "R3"]
prose = st.lists(st.sampled_from(["A", "I", "B", "C", "R", "a", "good", "reply", "is", "best", "the", "1.", "2)", "-", ",", ">",
                                  "rank", "R1st", "R22", "\n"]), max_size=30).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=string.ascii_letters + string.digits + ", .>-\n[]{}\"", max_size=60))
def test_a_ballot_only_ever_holds_allowed_labels_once_each(text):
    ballot, why = rank.parse_ballot(text, LABELS[:2])
    assert set(ballot) <= set(LABELS[:2]) and len(ballot) == len(set(ballot))
    assert bool(ballot) != bool(why)  # read, or a reason why not


@settings(max_examples=150, deadline=None)
@given(prose)
def test_a_capital_in_prose_is_never_a_vote(text):
    # the article "A", the pronoun "I", any lone capital, in lists or chains: labels are R1, R2…, never a letter
    assert rank.parse_ballot(text, LABELS)[0] == []


@settings(max_examples=100, deadline=None)
@given(st.permutations(LABELS), st.sampled_from(["numbered", "chain", "list", "json", "bullets"]), prose)
def test_a_ranking_in_any_accepted_form_reads_in_order_whatever_prose_follows(order, form, tail):
    body = {
        "numbered": "\n".join(f"{n}. {lab}" for n, lab in enumerate(order, 1)),
        "chain": " > ".join(order),
        "list": "Ranking: " + ", ".join(order),
        "json": '{"ranking": [' + ", ".join(f'"{lab}"' for lab in order) + "]}",
        "bullets": "\n".join(f"- **{lab}** — fine" for lab in order),
    }[form]
    assert rank.parse_ballot(f"{body}\n\n{tail}", LABELS) == (list(order), "")


def test_ballots_read_labels_only_in_ranking_positions():
    assert rank.parse_ballot("R2, R1, R3", LABELS) == (["R2", "R1", "R3"], "")
    assert rank.parse_ballot("1. R3\n2. r1", LABELS) == (["R3", "R1"], "")
    assert rank.parse_ballot("I think R2 is better than R1.", LABELS)[0] == []  # prose: not a ranking position
    assert rank.parse_ballot("1. A good reply\n2. I like B", LABELS) == ([], "no ranking found (a numbered list of labels, or R2 > R1)")
    assert rank.parse_ballot("R2 > R3", ["R1", "R2"]) == (["R2"], "")  # R3 is the ranker's own: left out
    assert rank.parse_ballot("R3", ["R1", "R2"]) == ([], "ranked only labels it may not rank (R3)")
    assert rank.parse_ballot("", LABELS) == ([], "empty reply")
