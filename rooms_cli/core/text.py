"""Plain-text utilities shared by the parts: content words, crude stems, an extractive summary, counts.

Deterministic and dependency-free (a leaf: it imports nothing of rooms_cli), so chat's activation,
the roundtable's speaker interests and lessons, the handoff summary and the offline model all read
words the same way.
"""

from __future__ import annotations

import re
from collections import Counter

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just let me more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves anyone anybody everyone someone thing things got get
    think know like want need really also still even ever much many lot yes yeah ok okay hey hi hello
    please thanks thank one two new via vs etc whats what's who's it's that's we're i'm don't can't""".split()
)
TOKEN_RE = re.compile(r"[a-z0-9][a-z0-9'_-]*")
_JOINERS = re.compile(r"[-_]")


def tokens(text: str) -> list[str]:
    """Lowercase content words of `text` (stopwords and 1-2 letter words dropped)."""
    out = []
    for tok in TOKEN_RE.findall(text.lower()):
        tok = tok.strip("'_-")
        if "-" not in tok and "_" not in tok:  # most words: no split (5 MB of text in ~1 s, not ~5)
            if len(tok) > 2 and tok not in STOPWORDS:
                out.append(tok)
            continue
        for part in _JOINERS.split(tok):
            if len(part) > 2 and part not in STOPWORDS:
                out.append(part)
    return out


def stem(word: str) -> str:
    """A crude stem so 'limits' meets 'limit' and 'testing' meets 'tests'."""
    for suffix in ("ings", "ing", "ers", "er", "ies", "es", "ed", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)][:6]
    return word[:6]


def persona_words(agent: object) -> set[str]:
    """The stemmed content words of an agent's tags and disposition: what it is interested in."""
    words = []
    for tag in getattr(agent, "tags", []) or []:
        words.extend(tokens(tag))
    words.extend(tokens(getattr(agent, "disposition", "") or ""))
    return {stem(w) for w in words}


def summarize(text: str, max_chars: int = 600) -> str:
    """Extractive summary: the sentences richest in the text's most frequent content words, in order."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s.strip()) > 3]
    if not sentences:
        return ""
    freq = Counter(tokens(text))
    scored = sorted(
        range(len(sentences)),
        key=lambda i: (-sum(freq[w] for w in set(tokens(sentences[i]))) / (1 + len(tokens(sentences[i])) ** 0.5), i),
    )
    chosen: list[int] = []
    size = 0
    for idx in scored:
        if size + len(sentences[idx]) > max_chars and chosen:
            continue
        chosen.append(idx)
        size += len(sentences[idx]) + 1
        if size >= max_chars:
            break
    return " ".join(sentences[i] for i in sorted(chosen))[:max_chars].strip()


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and `noun` agreeing: "1 turn", "2 turns", "0 errors", "1 match", "3 matches", "2 replies"
    (`plural` for a noun the rule misses). Every human message that counts something goes through here."""
    if n == 1:
        return f"{n} {noun}"
    if plural is None:
        if noun.endswith(("s", "x", "ch", "sh")):
            plural = noun + "es"
        elif noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
            plural = noun[:-1] + "ies"
        else:
            plural = noun + "s"
    return f"{n} {plural}"
