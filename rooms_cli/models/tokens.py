"""A conservative token count for text, when no server tokenizer is at hand.

Four characters a token holds only for English prose. BPE tokenizers (SmolLM2's, GPT-2-style,
Llama's) spend far more on everything else: a hex dump or base64 takes one token per one to
three characters, digits often one token each, punctuation runs one a character, and a CJK
character or an emoji one to three tokens. `estimate_tokens` counts each kind of run by its
own rate, so it errs on the side of too many, never far too few. Measured against SmolLM2's
tokenizer (llama.cpp's `/tokenize`) in docs/providers.md ("Counting tokens").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

# One run of a kind: a word of ASCII letters, a run of digits, a run of hex-like alphanumerics
# (letters and digits mixed), a space before a word, other whitespace, one other ASCII character
# (control characters too), one non-ASCII character.
_RUNS = re.compile(
    r"(?P<word>[A-Za-z]+(?![A-Za-z0-9]))"
    r"|(?P<alnum>[A-Za-z0-9]+)"
    r"|(?P<join> (?=[A-Za-z]))"
    r"|(?P<space>\s+)"
    r"|(?P<ascii>[\x00-\x7f])"
    r"|(?P<other>[^\x00-\x7f])",
)


@lru_cache(maxsize=512)
def estimate_tokens(text: str) -> int:
    """A token count for `text` that rarely undercounts a BPE tokenizer (see the module docstring).

    Remembered per text: a chat turn estimates the same transcript messages for every agent and every
    fitting pass, and a 5 MB message takes seconds to count."""
    if not text:
        return 0
    return max(1, round(sum(cost for _, cost in _run_costs(text))))


def _run_costs(text: str) -> Iterator[tuple[int, float]]:
    """(end of the run, its cost in tokens) for each run of `text`, in order."""
    for match in _RUNS.finditer(text):
        kind = match.lastgroup
        run = match.group()
        cost: float
        if kind == "word":
            # a word: one token, another each 6 letters; past 12 letters it is rarely a word
            # (an identifier, a hash, `xxxxxxxx`) and BPE splits it finer
            cost = 1 + (min(len(run), 12) - 1) // 6 + max(0, len(run) - 12) // 3
        elif kind == "alnum":
            cost = len(run)  # hex, base64, numbers: BPE merges little here (SmolLM2: digits one a token)
        elif kind == "join":
            cost = 0.25  # a single space before a word mostly merges into the word's token
        elif kind in ("space", "ascii"):
            cost = 1
        else:
            cost = _non_ascii_cost(run)
        yield match.end(), cost


def _non_ascii_cost(char: str) -> float:
    """Tokens for one non-ASCII character: its UTF-8 bytes, less what BPE merges (measured)."""
    code = ord(char)
    if code < 0x0800:  # two bytes: accented Latin, Greek, Cyrillic, Hebrew, Arabic
        return 1.0
    if code < 0x10000:  # three bytes: CJK, kana, Hangul, most symbols
        return 1.8
    return 3.0  # four bytes: emoji and the rest of the astral planes


def clip_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` (ending with a whole run) whose estimate is within
    `max_tokens`, cut back to a word boundary when one is near. Returns `text` itself when it fits."""
    if max_tokens <= 0:
        return ""
    total, fits = 0.0, 0
    for end, cost in _run_costs(text):  # one pass: the estimate of a prefix is the sum of its runs
        total += cost
        if max(1, round(total)) > max_tokens:
            break
        fits = end
    else:
        return text
    cut = text[:fits]
    space = cut.rfind(" ")
    if space >= len(cut) * 0.8:
        cut = cut[:space]
    return cut.rstrip()


__all__ = ["clip_to_tokens", "estimate_tokens"]
