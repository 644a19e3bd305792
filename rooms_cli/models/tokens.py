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

# One run of a kind: a word of ASCII letters, a run of digits, a run of hex-like alphanumerics
# (letters and digits mixed), a space before a word, other whitespace, one other ASCII character, one non-ASCII character.
_RUNS = re.compile(
    r"(?P<word>[A-Za-z]+(?![A-Za-z0-9]))"
    r"|(?P<alnum>[A-Za-z0-9]+)"
    r"|(?P<join> (?=[A-Za-z]))"
    r"|(?P<space>\s+)"
    r"|(?P<ascii>[\x21-\x7e])"
    r"|(?P<other>[^\x00-\x7f])",
)


def estimate_tokens(text: str) -> int:
    """A token count for `text` that rarely undercounts a BPE tokenizer (see the module docstring)."""
    if not text:
        return 0
    count = 0.0
    for match in _RUNS.finditer(text):
        kind = match.lastgroup
        run = match.group()
        if kind == "word":
            # a word: one token, another each 6 letters; past 12 letters it is rarely a word
            # (an identifier, a hash, `xxxxxxxx`) and BPE splits it finer
            count += 1 + (min(len(run), 12) - 1) // 6 + max(0, len(run) - 12) // 3
        elif kind == "alnum":
            count += len(run)  # hex, base64, numbers: BPE merges little here (SmolLM2: digits one a token)
        elif kind == "join":
            count += 0.25  # a single space before a word mostly merges into the word's token
        elif kind == "space":
            count += 1
        elif kind == "ascii":
            count += 1
        else:
            count += _non_ascii_cost(run)
    return max(1, round(count))


def _non_ascii_cost(char: str) -> float:
    """Tokens for one non-ASCII character: its UTF-8 bytes, less what BPE merges (measured)."""
    code = ord(char)
    if code < 0x0800:  # two bytes: accented Latin, Greek, Cyrillic, Hebrew, Arabic
        return 1.0
    if code < 0x10000:  # three bytes: CJK, kana, Hangul, most symbols
        return 1.8
    return 3.0  # four bytes: emoji and the rest of the astral planes


def clip_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` whose estimate is within `max_tokens` (cut at a word boundary
    when one is near). Returns `text` itself when it fits."""
    if max_tokens <= 0:
        return ""
    if estimate_tokens(text) <= max_tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits: estimates grow with the prefix
        mid = (low + high + 1) // 2
        if estimate_tokens(text[:mid]) <= max_tokens:
            low = mid
        else:
            high = mid - 1
    cut = text[:low]
    space = cut.rfind(" ")
    if space >= len(cut) * 0.8:
        cut = cut[:space]
    return cut.rstrip()


__all__ = ["clip_to_tokens", "estimate_tokens"]
