"""Cleaning a model's turn so agents talk like people, not essays.

In order: links made readable (a markdown link keeps its text; a bare URL becomes "the link", so
"See https://x/y and docs now" reads "See the link and docs now", never "See and docs now"; a URL in
parentheses goes; a turn that is nothing but links is empty), whitespace collapsed, wrapping quotes
and leading speaker labels ("Boss:", "**Boss**:", "[analyst]:") removed, a sentence the turn already
said dropped ("I'm ready. I'm ready." says it once), then capped at `max_chars` at a word boundary,
a cut turn ending with "…".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

DEFAULT_MAX_CHARS = 120  # the cap on each roundtable turn (`--max-chars`)
MIN_MAX_CHARS = 20  # below this a turn cannot say anything

# a URL, less the sentence punctuation that follows it ("see https://x/y." keeps its full stop)
_URL_RE = re.compile(r"(?:https?://|ftp://|www\.)[^\s<>\"]*[^\s<>\".,;:!?)\]']", re.IGNORECASE)
_BARE_URL_RE = re.compile(r"(?:https?://|ftp://|www\.)\S*", re.IGNORECASE)
_PAREN_URL_RE = re.compile(r"\(\s*(?:https?://|ftp://|www\.)[^\s)]*\s*\)", re.IGNORECASE)
LINK = "the link"
ELLIPSIS = "…"
_MD_LINK_RE = re.compile(r"\[([^\]]*)\]\((?:https?://|www\.)[^)]*\)", re.IGNORECASE)
# a leading label: one to three words (optionally bold/bracketed) then a colon
_LABEL_RE = re.compile(r"^\s*[\*_\[\(]*([A-Za-z][\w .'-]{0,30}?)[\*_\]\)]*\s*:(?:\s+|$)")
_QUOTES = "\"'“”‘’`"


def _strip_labels(text: str, names: set[str]) -> str:
    for _ in range(3):  # "Boss: Analyst: …" happens when models echo the history
        match = _LABEL_RE.match(text)
        if not match:
            break
        label = match.group(1).strip().lower()
        if names and label not in names:
            break
        if not names and len(label.split()) > 1:
            break
        text = text[match.end() :]
    return text


def cut_at_word(text: str, max_chars: int) -> str:
    """`text` if it fits, else its longest prefix ending at a word boundary, then "…", within `max_chars`."""
    if len(text) <= max_chars:
        return text
    room = max(1, max_chars - len(ELLIPSIS))
    head = text[: room + 1]
    if " " in head:
        head = head[: head.rfind(" ")]
    else:
        head = head[:room]  # one huge word: cut it
    return head.rstrip(" ,;:-–—") + ELLIPSIS


def readable_links(text: str) -> str:
    """Markdown links as their text, a URL in parentheses dropped, any other URL as "the link"."""
    text = _MD_LINK_RE.sub(r"\1", text)
    text = _PAREN_URL_RE.sub("", text)
    if not re.search(r"\w", _BARE_URL_RE.sub("", text)):
        return ""  # nothing but links: nothing to say

    def link(match: re.Match[str]) -> str:
        before = text[: match.start()].rstrip()
        return LINK.capitalize() if not before or before[-1] in ".!?" else LINK

    text = _URL_RE.sub(link, text)
    return re.sub(rf"\b({LINK})(?:\s*(?:,|and)?\s*{LINK})+\b", r"\1", text, flags=re.IGNORECASE)


def sanitize(text: str, max_chars: int = DEFAULT_MAX_CHARS, names: Iterable[str] = ()) -> str:
    """The cleaned turn (possibly empty). `names` are the speakers' ids and display names."""
    known = {n.strip().lower() for n in names if n}
    text = readable_links(text or "")
    text = " ".join(text.split())
    text = _strip_labels(text, known)
    text = text.strip()
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)  # "see ( ) ." left by a dropped link
    text = re.sub(r"\(\s*\)", "", text).strip()
    text = once_each(" ".join(text.split()))
    if not re.search(r"\w", text):
        return ""
    return cut_at_word(text, max_chars)


def plain(text: str) -> str:
    """Lower-case words only: what two sentences (or turns) must share to be the same."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def once_each(text: str) -> str:
    """`text` without the sentences it already said (a small model's loop: "I'm ready. I'm ready.")."""
    seen: set[str] = set()
    kept: list[str] = []
    for sentence in re.split(r"(?<=[.!?…])\s+", text):
        key = plain(sentence)
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(sentence)
    return " ".join(kept)
