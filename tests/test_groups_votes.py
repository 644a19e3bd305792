"""Votes: the options a broadcast declares, and reading a free-text or JSON reply as one of them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.groups import reducers
from rooms_cli.groups.model import MemberResult
from rooms_cli.groups.votes import ECHO, declared_options, read_vote, vote_schema

YES_NO = ["YES", "NO", "ABSTAIN"]


@pytest.mark.parametrize(("fields", "options"), [
    ({"objective": "ship Friday? YES or NO"}, ["YES", "NO"]),
    ({"objective": "x", "output_format": "exactly one of: ANCHORED | UNANCHORED | AMBIGUOUS"}, ["ANCHORED", "UNANCHORED", "AMBIGUOUS"]),
    ({"objective": "which colour?", "output_format": "one of: red, green or blue"}, ["red", "green", "blue"]),
    ({"objective": "YES/NO/ABSTAIN: merge it?"}, ["YES", "NO", "ABSTAIN"]),
    ({"objective": "ship it? YES or NO", "output_format": "one of: SHIP | WAIT"}, ["SHIP", "WAIT"]),  # the format first
    ({"objective": "ship it?", "output_format": "one word"}, []),  # nothing declared: the replies themselves count
    ({"objective": "is it ok or not"}, []),  # lower-case "or" in prose declares nothing
])
def test_options_are_read_from_the_output_format_then_the_objective(fields, options):
    assert declared_options(fields) == options


@pytest.mark.parametrize(("reply", "vote"), [
    ("Ship on Friday:\nYes\nThe tests are green.", "YES"),
    ("yes.", "YES"),
    ("I vote no", "NO"),
    ("No, too risky.", "NO"),
    ("**YES** — ship it", "YES"),
    ("archer: No, wait a week", "NO"),
    ("My answer is: yes", "YES"),
    ('{"vote": "NO", "reason": "flaky tests"}', "NO"),
    ('```json\n{"vote": "yes", "reason": "green"}\n```', "YES"),
    ("We should say YES here.", "YES"),
])
def test_a_free_text_reply_is_normalised_to_a_declared_option(reply, vote):
    assert read_vote(reply, YES_NO) == (vote, "")


@pytest.mark.parametrize(("reply", "why"), [
    ("", "empty reply"),
    ("There is no reason to wait.", "names none of YES, NO, ABSTAIN"),  # a bare word in prose is not a vote
    ("Yes and no", ECHO),  # a list of the options is no vote
    ("I think NO, but YES", "names NO and YES"),
    ('{"vote": "MAYBE", "reason": "?"}', "voted 'MAYBE', not one of YES, NO, ABSTAIN"),
])
def test_an_unreadable_reply_is_unparsed_with_the_reason(reply, why):
    assert read_vote(reply, YES_NO) == (None, why)


words = st.sampled_from(["yes", "Yes", "YES", "no", "NO", "nope", "vote", "answer:", "I", "A", "maybe", "RED", "red",
                         "ship", "it", ".", ",", ":", "\n", "**", '{"vote": "x"}', '{"vote": "red"}', "ABSTAIN"])


@settings(max_examples=200, deadline=None)
@given(st.lists(words, max_size=25).map(" ".join), st.sampled_from([YES_NO, ["RED", "GREEN"], ["red", "blue", "x"]]))
def test_a_vote_is_always_a_declared_option_or_unparsed_with_a_reason(text, options):
    vote, why = read_vote(text, options)
    assert (vote in options and why == "") or (vote is None and why)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_reading_any_text_never_fails_and_never_invents_an_option(text):
    vote, why = read_vote(text, ["SHIP", "WAIT"])
    assert vote in (None, "SHIP", "WAIT") and (vote is None) == bool(why)


def test_the_schema_holds_the_vote_to_the_options():
    schema = vote_schema(["YES", "NO"])
    assert schema["properties"]["vote"]["enum"] == ["YES", "NO"] and schema["required"] == ["vote", "reason"]


def members(*rows):
    by_member = {h: MemberResult(t, s, 0.1) for h, t, s in rows}
    return by_member, [h for h, _, s in rows if s in ("ok", "error")]


def test_majority_vote_counts_normalised_votes_and_reports_the_unparsed():
    result = reducers.majority_vote(*members(("a", "Ship on Friday:\nYes\n…", "ok"), ("b", "yes.", "ok"),
                                             ("c", "I vote no", "ok"), ("d", "Let me think about it", "ok")),
                                    options=YES_NO)
    assert result.value == "YES"
    meta = result.metadata
    assert meta["votes"] == {"YES": 2, "NO": 1} and meta["parsed"] == 3
    assert meta["voted"] == {"a": "YES", "b": "YES", "c": "NO"}
    assert meta["unparsed"] == {"d": "names none of YES, NO, ABSTAIN"}
    assert meta["winner_handle"] == "a" and meta["consensus"] is False  # 2 of 4 replies is not more than half


def test_majority_vote_reads_the_declared_options():
    result = reducers.majority_vote(*members(("a", "anchored", "ok"), ("b", "UNANCHORED", "ok"), ("c", "Anchored.", "ok")),
                                    options=["ANCHORED", "UNANCHORED", "AMBIGUOUS"])
    assert result.value == "ANCHORED" and result.metadata["consensus"] is True


def test_a_split_vote_or_no_readable_vote_has_no_result_and_says_why():
    split = reducers.majority_vote(*members(("a", "YES", "ok"), ("b", "NO", "ok"), ("c", "MAYBE", "ok")), options=YES_NO)
    assert split.value is None and split.metadata["votes"] == {"YES": 1, "NO": 1}
    assert split.metadata["no_result"] == "no answer was given twice: YES 1, NO 1"
    unread = reducers.majority_vote(*members(("a", "hmm", "ok"), ("b", "", "ok")), options=YES_NO)
    assert unread.value is None and unread.metadata["parsed"] == 0 and set(unread.metadata["unparsed"]) == {"a", "b"}


def test_without_declared_options_the_most_common_reply_wins_as_the_source_says():
    """groups/003: majority_vote is the most common reply by Counter, non-equal answers ignored, the
    first finisher winning ties. Normalised for case, surrounding punctuation and markup."""
    fields = {"objective": "is the regex r'^\\d{4}$' anchored?", "output_format": "one token"}
    assert declared_options(fields) == []
    by_member, order = members(("a", "ANCHORED", "ok"), ("b", "**anchored.**", "ok"), ("c", "UNANCHORED", "ok"))
    result = reducers.apply(reducers.majority_vote, "majority_vote", by_member, order, fields)
    assert result.value == "ANCHORED" and result.metadata["votes"] == {"ANCHORED": 2, "UNANCHORED": 1}
    assert result.metadata["consensus"] is True and result.metadata["winner_handle"] == "a"
    tie = reducers.majority_vote(*members(("a", "blue", "ok"), ("b", "Red", "ok"), ("c", "red!", "ok"), ("d", "BLUE", "ok")))
    assert tie.value == "blue"  # 2 against 2: the first finisher's answer


def test_an_echo_of_the_question_or_the_options_is_no_vote():
    asked = ["Ship the release on Friday? Answer YES or NO.", "YES or NO, then one line why"]
    assert read_vote("Answer YES or NO.", ["YES", "NO"]) == (None, "names none of YES, NO")
    assert read_vote("Answer YES or NO.", ["YES", "NO"], asked) == (None, ECHO)
    assert read_vote("YES or NO", ["YES", "NO"]) == (None, ECHO)
    assert read_vote("Ship the release on Friday? Answer YES or NO.\nYes, the tests pass.", ["YES", "NO"], asked) == ("YES", "")
    echoes = reducers.majority_vote(*members(("a", "Answer YES or NO.", "ok"), ("b", "answer yes or no", "ok"),
                                             ("c", "NO", "ok")), options=["YES", "NO"], asked=asked)
    assert echoes.value == "NO" and echoes.metadata["votes"] == {"NO": 1}  # the echoes are not counted, even twice
    plain = reducers.majority_vote(*members(("a", "Is it anchored?", "ok"), ("b", "is it anchored", "ok")),
                                   asked=["Is it anchored?"])
    assert plain.value is None and plain.metadata["unparsed"] == {"a": ECHO, "b": ECHO}


def test_a_lone_voter_decides_and_ties_go_to_the_first_finisher():
    assert reducers.majority_vote(*members(("a", "no", "ok"), ("b", "", "timeout")), options=YES_NO).value == "NO"
    by_member, _ = members(("a", "YES", "ok"), ("b", "NO", "ok"), ("c", "yes", "ok"), ("d", "no", "ok"))
    assert reducers.majority_vote(by_member, ["b", "a", "c", "d"], options=YES_NO).value == "NO"
    assert reducers.majority_vote(by_member, ["a", "b", "c", "d"]).value == "YES"


def test_majority_vote_does_not_count_errors_or_timeouts():
    result = reducers.majority_vote(*members(("a", "NO", "error"), ("b", "NO", "error"), ("c", "YES", "ok"), ("d", "YES", "ok")))
    assert result.value == "YES" and result.metadata["votes"] == {"YES": 2}
