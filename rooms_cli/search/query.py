"""A search query as people type it, read into an FTS5 query built here (raw text never reaches MATCH).

    rate limit            both words (every word must match)
    "rate limit"          the phrase: those words, next to each other, in that order
    lim*                  a word starting with `lim` (also at the end of a phrase: "rate lim"*)
    -retry  NOT retry     leave out what holds `retry` (a phrase too: -"dry run")
    redis OR memcached    either one (OR binds tighter than the words around it: `cache redis OR memcached`
                          is cache AND (redis OR memcached)); AND between two words is what a space means

Words are matched as the index's tokenizer splits them (store/ftsindex.py: letters and digits, case and
accents folded, English stems: `limits` finds `limit`, `limiting`); punctuation separates words, so
`rate-limit` is the phrase "rate limit" and a term of punctuation alone (`!!!`, `--`) is left out.
Lowercase `or`, `and`, `not` are plain words.

A query that cannot be read is a UsageError (exit 2) in one sentence: an unbalanced quote, an operator
without its word (`-`, `*`, `OR` at an end, `NOT` alone), nothing to look for, only excluded words, more
than MAX_TERMS terms or MAX_CHARS characters, or text that is not UTF-8. Every query that is read gives
FTS5 a valid expression: each term goes in as a quoted string (`"` doubled inside), joined by the
operators written here (tests/test_search_query.py holds that for any text, with hypothesis).
"""

from __future__ import annotations

import re

from rooms_cli.core.errors import UsageError
from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)

MAX_TERMS = 64
MAX_CHARS = 1000
OPERATORS = ("OR", "AND", "NOT")


@dataclass(frozen=True)
class Term:
    """One word or phrase to match; `prefix` when it ended with `*`."""

    text: str
    prefix: bool = False

    def fts(self) -> str:
        """The term as an FTS5 string: quoted, its quotes doubled (nothing in it is an operator there)."""
        return '"' + self.text.replace('"', '""') + '"' + ("*" if self.prefix else "")


@dataclass(frozen=True)
class Query:
    """What to match: every group (one of its terms), and none of `excluded`."""

    groups: tuple[tuple[Term, ...], ...]
    excluded: tuple[Term, ...] = ()

    def fts(self) -> str:
        """The FTS5 expression: `(a) AND (b OR c) NOT (d OR e)`."""
        wanted = " AND ".join("(" + " OR ".join(term.fts() for term in group) + ")" for group in self.groups)
        if not self.excluded:
            return wanted
        return f"({wanted}) NOT (" + " OR ".join(term.fts() for term in self.excluded) + ")"


@dataclass(frozen=True)
class _Token:
    """A lexed piece: a term (maybe negated) or an operator word."""

    term: Term | None = None
    negated: bool = False
    operator: str = ""


def parse(text: str) -> Query:
    """The query `text` means; a UsageError (exit 2, one sentence) when it cannot be read."""
    if any("\ud800" <= char <= "\udfff" for char in text):
        raise UsageError("the query is not valid UTF-8 text")
    if len(text) > MAX_CHARS:
        raise UsageError(f"the query is {len(text)} characters long; at most {MAX_CHARS}")
    tokens = _lex(_CONTROLS.sub(" ", text))  # a control character (NUL ends an FTS5 string) separates words
    typed_groups, typed_excluded = _combine(tokens)
    groups = tuple(kept for group in typed_groups if (kept := tuple(term for term in group if _has_words(term.text))))
    excluded = tuple(term for term in typed_excluded if _has_words(term.text))
    if sum(map(len, groups)) + len(excluded) > MAX_TERMS:
        raise UsageError(f"the query has more than {MAX_TERMS} words or phrases; search for fewer")
    if not groups:
        if excluded:
            raise UsageError("the query only leaves words out (-word); add a word or phrase to look for")
        raise UsageError("the query has no word to look for (letters or digits)")
    return Query(groups, excluded)


_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


def _has_words(text: str) -> bool:
    """Whether the tokenizer finds a word in `text`: a letter, a digit, or a private-use character (the
    unicode61 tokenizer's default token characters: categories L*, N*, Co)."""
    return any(char.isalnum() or "\ue000" <= char <= "\uf8ff" or char >= "\U000f0000" for char in text)


def _lex(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    at, end = 0, len(text)
    while at < end:
        char = text[at]
        if char.isspace():
            at += 1
            continue
        negated = char == "-" and at + 1 < end and text[at + 1] != "-"
        if char == "-" and not negated and (at + 1 == end or text[at + 1].isspace()):
            raise UsageError("a lone '-' in the query: write it against the word to leave out (-word)")
        if negated:
            at += 1
            if text[at].isspace():
                raise UsageError("a lone '-' in the query: write it against the word to leave out (-word)")
        if text[at] == '"':
            close = text.find('"', at + 1)
            if close < 0:
                raise UsageError('the query has an unbalanced quote: close the phrase with another "')
            phrase, at = text[at + 1 : close], close + 1
            if not phrase.strip():
                raise UsageError('the query has an empty phrase (""): put words between the quotes')
            stars = _stars(text, at)
            at += stars
            tokens.append(_Token(Term(phrase, prefix=stars > 0), negated))
            continue
        start = at
        while at < end and not text[at].isspace() and text[at] != '"':
            at += 1
        word = text[start:at]
        if not negated and word in OPERATORS:
            tokens.append(_Token(operator=word))
            continue
        stem = word.rstrip("*")
        if not stem:
            raise UsageError("a lone '*' in the query: it ends a word to match its prefix (lim*)")
        tokens.append(_Token(Term(stem, prefix=len(stem) < len(word)), negated))
    return tokens


def _stars(text: str, at: int) -> int:
    count = 0
    while at + count < len(text) and text[at + count] == "*":
        count += 1
    return count


def _combine(tokens: list[_Token]) -> tuple[list[list[Term]], list[Term]]:
    """(the groups of terms joined by OR, in order; the excluded terms), operators checked."""
    left_out = [token.negated or (index > 0 and tokens[index - 1].operator == "NOT") for index, token in enumerate(tokens)]

    def wanted(index: int) -> bool:  # a term to look for at `index` (not one left out, not an operator)
        return 0 <= index < len(tokens) and tokens[index].term is not None and not left_out[index]

    groups: list[list[Term]] = []
    excluded: list[Term] = []
    for index, token in enumerate(tokens):
        if token.operator == "NOT":
            if index + 1 == len(tokens) or tokens[index + 1].term is None or tokens[index + 1].negated:
                raise UsageError("'NOT' in the query must be followed by the word or phrase to leave out")
        elif token.operator == "OR":
            if not (wanted(index - 1) and wanted(index + 1)):
                raise UsageError("'OR' in the query needs a word or phrase to look for on each side (a OR b)")
        elif token.operator == "AND":
            if index == 0 or tokens[index - 1].term is None or index + 1 == len(tokens) or tokens[index + 1].operator in ("AND", "OR"):
                raise UsageError("'AND' in the query needs a word or phrase on each side (a AND b)")
        else:
            term = token.term
            assert term is not None  # not an operator
            if left_out[index]:
                excluded.append(term)
            elif index > 0 and tokens[index - 1].operator == "OR":
                groups[-1].append(term)
            else:
                groups.append([term])
    return groups, excluded
