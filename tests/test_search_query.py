"""The search query parser: what people type becomes an FTS5 query built by rooms, or one usage sentence."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rooms_cli.core.errors import UsageError
from rooms_cli.search.query import MAX_CHARS, MAX_TERMS, Query, Term, parse

_DB = sqlite3.connect(":memory:")
_DB.execute("CREATE VIRTUAL TABLE t USING fts5(title, body, tokenize='porter unicode61 remove_diacritics 2')")
_DB.executemany("INSERT INTO t VALUES (?, ?)", [
    ("Rate limits", "We decided to cap the rate limit at 100 requests per minute."),
    ("Retry policy", "Retry with backoff; the limit resets hourly."),
    ("Cache", "redis or memcached, whichever ops prefers"),
    ("Café", "naïve résumé of the dry run"),
])


def matches(text: str) -> list[int]:
    return [row[0] for row in _DB.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid", (parse(text).fts(),))]


@pytest.mark.parametrize(("typed", "found"), [
    ("rate limit", [1]),                     # every word must match (the second row has no "rate")
    ("limit", [1, 2]),
    ('"rate limit"', [1]),                   # a phrase
    ('"limit rate"', []),                    # ...in its order
    ("lim*", [1, 2]),                        # a prefix
    ("limit -retry", [1]),                   # a word left out
    ("limit NOT retry", [1]),
    ('limit -"dry run"', [1, 2]),
    ("redis OR backoff", [2, 3]),
    ("limit redis OR backoff", [2]),         # OR binds tighter than the space around it
    ("limit AND rate", [1]),
    ("RATE", [1]),                           # case folded
    ("cafe naive resume", [4]),              # accents folded
    ("limits", [1, 2]),                      # stems: limits finds limit
    ("rate-limit", [1]),                     # punctuation splits a word into a phrase
    ("or", [3]),                             # lowercase or is a word
    ('rate "" limit'.replace('""', "!!!"), [1]),  # a term of punctuation alone is left out
])
def test_queries_as_people_type_them_match_what_they_mean(typed, found):
    assert matches(typed) == found


@pytest.mark.parametrize(("typed", "said"), [
    ('"rate limit', "unbalanced quote"),
    ('rate "limit', "unbalanced quote"),
    ("-", "lone '-'"),
    ("rate -", "lone '-'"),
    ("- rate", "lone '-'"),
    ("*", "lone '*'"),
    ("rate ***", "lone '*'"),
    ("OR rate", "'OR' in the query needs"),
    ("rate OR", "'OR' in the query needs"),
    ("rate OR OR limit", "'OR' in the query needs"),
    ("rate OR -limit", "'OR' in the query needs"),
    ("AND rate", "'AND' in the query needs"),
    ("rate AND", "'AND' in the query needs"),
    ("rate NOT", "'NOT' in the query must be followed"),
    ("NOT", "'NOT' in the query must be followed"),
    ('""', "empty phrase"),
    ("", "no word to look for"),
    ("   ", "no word to look for"),
    ("!!! ---", "no word to look for"),
    ("-rate", "only leaves words out"),
    ("NOT rate -limit", "only leaves words out"),
    ("rate \udcff", "not valid UTF-8"),
    ("w " * (MAX_TERMS + 1), f"more than {MAX_TERMS}"),
    ("w" * (MAX_CHARS + 1), f"at most {MAX_CHARS}"),
])
def test_a_malformed_query_is_one_usage_sentence(typed, said):
    with pytest.raises(UsageError) as caught:
        parse(typed)
    message = str(caught.value)
    assert said in message and "\n" not in message and caught.value.exit_code == 2


def test_the_parse_is_what_the_words_say():
    assert parse('rate "a phrase" lim* -retry x OR y') == Query(
        groups=((Term("rate"),), (Term("a phrase"),), (Term("lim", prefix=True),), (Term("x"), Term("y"))),
        excluded=(Term("retry"),))


def test_quotes_inside_a_term_never_become_fts5_syntax():
    # no way to type an FTS5 operator, column filter or bracket through: each term is one quoted string
    for typed in ("title:secret", "NEAR(a b)", "a + b", "{title}: x", "^start", "x:y*"):
        assert matches(typed) == []


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab "-*()+:^{}ORANDNOT\t\n\\\'é!.x\x00')), max_size=40) | st.text(max_size=60))
@example('a"b')
@example('"a" "')
@example('a OR NOT b')
def test_any_text_is_a_valid_fts5_query_or_a_usage_error(text):
    try:
        query = parse(text)
    except UsageError as err:
        assert err.exit_code == 2 and str(err) and "\n" not in str(err)
        return
    _DB.execute("SELECT rowid FROM t WHERE t MATCH ?", (query.fts(),)).fetchall()  # any sqlite3 error fails the test


@settings(max_examples=200, deadline=None)
@given(st.lists(st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True).filter(lambda w: w not in ("or", "and", "not")),
                min_size=1, max_size=8))
def test_plain_words_are_each_a_group_of_their_own(words):
    assert parse(" ".join(words)).groups == tuple((Term(word),) for word in words)
