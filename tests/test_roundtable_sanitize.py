"""The turn sanitizer: word-boundary cap, URLs, name prefixes, whitespace."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.roundtable.sanitize import cut_at_word, sanitize

NAMES = ["boss", "Boss", "analyst", "Analyst", "Game Designer"]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Boss: where are we on this?", "where are we on this?"),
        ("**Boss**: ship it", "ship it"),
        ("[analyst]: 3 of 5 cases", "3 of 5 cases"),
        ("Game Designer: is it fun?", "is it fun?"),
        ("Boss: Analyst: echoing history", "echoing history"),
        ("Note: this stays", "Note: this stays"),  # not a participant's name
        ("See https://example.com/x?y=1 for details", "See the link for details"),
        ("See https://x/y and docs now", "See the link and docs now"),
        ("Read www.example.org now.", "Read the link now."),
        ("https://example.com is down. https://example.org too", "The link is down. The link too"),
        ("Docs (https://example.com/doc) are up.", "Docs are up."),
        ("Compare https://a.example, https://b.example and the docs", "Compare the link and the docs"),
        ("Check [the doc](https://example.com/doc).", "Check the doc."),
        ("  lots \n\n of\t space  ", "lots of space"),
        ('"Quoted reply."', "Quoted reply."),
        ("https://only.a/link", ""),
        ("I'm ready. I'm ready to deliver. I'm ready to deliver. You're ready.", "I'm ready. I'm ready to deliver. You're ready."),
        ("Yes! yes! YES!", "Yes!"),
        ("Boss:   ", ""),
        ("", ""),
    ],
)
def test_sanitize_cases(raw, clean):
    assert sanitize(raw, 120, NAMES) == clean


def test_cut_at_a_word_boundary():
    text = "The numbers tell a different story and we should look at them carefully before deciding anything"
    cut = sanitize(text, 40)
    assert cut == "The numbers tell a different story and…"
    assert len(cut) <= 40 and text.startswith(cut[:-1])


def test_one_huge_word_is_cut_hard_and_marked():
    assert cut_at_word("x" * 300, 120) == "x" * 119 + "…"


def test_trailing_punctuation_is_not_left_dangling():
    assert sanitize("alpha beta, gamma delta", 12) == "alpha beta…"


def test_a_turn_that_fits_is_not_marked():
    assert sanitize("alpha beta", 10) == "alpha beta"


@given(st.text(max_size=400), st.integers(min_value=20, max_value=200))
def test_sanitized_text_is_bounded_single_spaced_and_link_free(text, cap):
    out = sanitize(text, cap, NAMES)
    assert len(out) <= cap
    assert not re.search(r"https?://", out)
    assert out == out.strip() and "  " not in out and "\n" not in out


URLS = ["https://x.example/a?b=1", "www.y.example", "http://z.example/"]


@settings(deadline=None)
@given(st.lists(st.sampled_from(["See", "and", "docs", "now", *URLS]), min_size=1, max_size=12))
def test_a_stripped_link_reads_as_the_link_and_a_cut_ends_with_an_ellipsis(words):
    expected: list[str] = []
    for word in words:
        if word not in URLS:
            expected.append(word)
        elif expected[-2:] != ["the", "link"] and expected[-3:] != ["the", "link", "and"]:
            expected += ["the", "link"]
        elif expected[-1] == "and":
            expected.pop()  # "the link and the link" is one link
    full = " ".join(expected) if any(w not in URLS for w in words) else ""
    full = full[:1].upper() + full[1:] if full.startswith("the link") else full
    assert sanitize(" ".join(words), 10_000) == full
    out = sanitize(" ".join(words), 24)
    assert len(out) <= 24 and not re.search(r"https?://|www\\.", out)
    assert out == full if len(full) <= 24 else (out.endswith("…") and full.startswith(out[:-1]))


def test_a_lesson_that_holds_a_whole_short_turn_is_a_copy():
    """SmolLM2 stitched 'Launcher – over.' (a whole turn) onto words of another turn and called it a lesson."""
    from rooms_cli.roundtable.lessons import check_lessons

    turns = [{"speaker": "archer", "text": "The sun was up. I had to be up to get a job in the morning to finish."},
             {"speaker": "courier", "text": "Launcher – over."}]
    raw = {"archer": ["Launcher – over. I had to get out of bed early to finish the work"],
           "courier": ["Ship the launch notes a day early so support can read them"]}
    got = check_lessons(raw, ["archer", "courier"], {"archer": "archer", "courier": "courier"}, turns)
    assert got.lessons == {"courier": ["Ship the launch notes a day early so support can read them"]}, got
