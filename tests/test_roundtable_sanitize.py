"""The turn sanitizer: word-boundary cap, URLs, name prefixes, whitespace."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
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
        ("See https://example.com/x?y=1 for details", "See for details"),
        ("Read www.example.org now.", "Read now."),
        ("Check [the doc](https://example.com/doc).", "Check the doc."),
        ("  lots \n\n of\t space  ", "lots of space"),
        ('"Quoted reply."', "Quoted reply."),
        ("https://only.a/link", ""),
        ("Boss:   ", ""),
        ("", ""),
    ],
)
def test_sanitize_cases(raw, clean):
    assert sanitize(raw, 120, NAMES) == clean


def test_cut_at_a_word_boundary():
    text = "The numbers tell a different story and we should look at them carefully before deciding anything"
    cut = sanitize(text, 40)
    assert cut == "The numbers tell a different story and"
    assert len(cut) <= 40 and text.startswith(cut)


def test_one_huge_word_is_cut_hard():
    assert cut_at_word("x" * 300, 120) == "x" * 120


def test_trailing_punctuation_is_not_left_dangling():
    assert sanitize("alpha beta, gamma delta", 12) == "alpha beta"


@given(st.text(max_size=400), st.integers(min_value=20, max_value=200))
def test_sanitized_text_is_bounded_single_spaced_and_link_free(text, cap):
    out = sanitize(text, cap, NAMES)
    assert len(out) <= cap
    assert not re.search(r"https?://", out)
    assert out == out.strip() and "  " not in out and "\n" not in out
