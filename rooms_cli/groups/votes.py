"""Votes for the `majority_vote` reducer: the declared options, and reading one vote from a reply.

The options of a broadcast are declared in its text, read from the output format first, then the
objective:
- a `|` list: "exactly one of: ANCHORED | UNANCHORED | AMBIGUOUS";
- a "one of" list: "one of: red, green, blue" / "one of red, green or blue";
- capitalised words joined by "or" or "/": "ship Friday? YES or NO", "YES/NO/ABSTAIN".
Nothing declared: no options (`[]`); majority_vote then counts the replies themselves (reducers.py).

A reply is read as a vote (`read_vote`) from, in order: a JSON object `{"vote": …}` (what a
structured provider returns); "vote/answer/verdict … X"; the first line that is an option on its
own, or starts with one followed by punctuation ("Yes.", "NO — too risky", "Ship on Friday:\nYes");
else an option written in capitals, when exactly one is. A bare word in prose ("there is no
reason") is never a vote. The result is always one of the options, or None with the reason.

An echo is no vote: what the member was shown (`asked`: the objective, the output format, the
instruction) is taken out of the reply first, sentence by sentence, and so is any list of the
options ("YES or NO", "ANCHORED | UNANCHORED"); `read_vote("Answer YES or NO.", …)` reads nothing
("it only repeats the question or the options"), `"Ship it? Answer YES or NO. Yes."` reads YES.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# what people (and small models) write for the usual options
SYNONYMS = {"YES": ("yes", "yeah", "yep", "aye"), "NO": ("no", "nope", "nay"), "ABSTAIN": ("abstain", "abstains")}

_WORD = r"[A-Za-z0-9][\w-]*"
_PIPE_RE = re.compile(rf"({_WORD})((?:\s*\|\s*{_WORD})+)")
_ONE_OF_RE = re.compile(rf"\bone of\s*:?\s*({_WORD}(?:\s*(?:,|\bor\b|/)\s*{_WORD})+)", re.IGNORECASE)
_CAPS = r"[A-Z][A-Z0-9_-]+"
_OR_RE = re.compile(rf"\b({_CAPS}(?:\s*(?:,|/|\bor\b)\s*{_CAPS})+)\b")
_SPLIT_RE = re.compile(r"\s*(?:,|\||/|\bor\b)\s*", re.IGNORECASE)
_MARKUP = "*_`#>\"'“”‘’[]() \t-•"


def declared_options(fields: dict[str, Any] | None) -> list[str]:
    """The options a broadcast declares (output format first, then objective); [] when it declares none."""
    for key in ("output_format", "objective"):
        text = str((fields or {}).get(key) or "")
        for found in (_pipe_list(text), _listed(_ONE_OF_RE, text), _listed(_OR_RE, text)):
            if len(found) >= 2:
                return found
    return []


def _pipe_list(text: str) -> list[str]:
    match = _PIPE_RE.search(text)
    return _unique([match.group(1), *_SPLIT_RE.split(match.group(2).strip(" |"))]) if match else []


def _listed(pattern: re.Pattern[str], text: str) -> list[str]:
    match = pattern.search(text)
    return _unique(_SPLIT_RE.split(match.group(1))) if match else []


def _unique(words: list[str]) -> list[str]:
    out: list[str] = []
    for word in words:
        word = word.strip()
        if word and word.casefold() not in {w.casefold() for w in out}:
            out.append(word)
    return out


def vote_schema(options: list[str]) -> dict[str, Any]:
    """The JSON Schema a structured provider is held to: {"vote": one of the options, "reason": text}."""
    return {
        "type": "object",
        # a bounded reason: a grammar-held small model otherwise writes until max_tokens cuts the JSON
        "properties": {"vote": {"type": "string", "enum": list(options)}, "reason": {"type": "string", "maxLength": 200}},
        "required": ["vote", "reason"],
        "additionalProperties": False,
    }


def vote_instruction(options: list[str], structured: bool) -> str:
    """What a voting member is told about the shape of its answer."""
    listed = ", ".join(options)
    if structured:
        return f'Reply with JSON only: {{"vote": one of {listed}, "reason": one short sentence}}.'
    return f"Start your reply with exactly one of: {listed}. Then give one short sentence of reason."


def _lookup(options: list[str]) -> dict[str, str]:
    """Every spelling that counts as an option (casefolded) -> the option."""
    table = {o.casefold(): o for o in options}
    for option in options:
        for word in SYNONYMS.get(option.upper(), ()):
            table.setdefault(word, option)
    return table


def read_vote(text: str, options: list[str], asked: Sequence[str] = ()) -> tuple[str | None, str]:
    """(the option `text` votes for, '') or (None, why it cannot be read). Never an undeclared option.

    `asked`: what the member was shown (objective, output format, instruction); its echo is no vote."""
    options = list(options)
    if not (text or "").strip():
        return None, "empty reply"
    table = _lookup(options)
    structured = _json_vote(text)
    if structured is not None:
        option = table.get(structured.strip().strip(".!").casefold())
        return (option, "") if option else (None, f"voted {structured[:40]!r}, not one of {', '.join(options)}")
    words = "|".join(re.escape(w) for w in sorted(table, key=len, reverse=True))
    text = _without_echoes(text, words, asked)
    if not text.strip(_MARKUP + ".,;:!?"):
        return None, ECHO
    stated = re.search(rf"\b(?:vote|answer|verdict|decision|choice|choose|pick)(?:\s+(?:is|for|would be))?\s*[:=-]?\s*[*_\"'`]*({words})\b",
                       text, re.IGNORECASE)
    if stated:
        return table[stated.group(1).casefold()], ""
    for line in text.splitlines():
        line = line.strip(_MARKUP)
        for candidate in (line, line.split(":", 1)[1].strip(_MARKUP) if ":" in line else ""):
            lead = re.match(rf"({words})(?:\s*$|\s*[.,;:!?*_—–-])", candidate, re.IGNORECASE)
            if lead:
                return table[lead.group(1).casefold()], ""
    shouted = {table[w.casefold()] for w in re.findall(rf"\b({words})\b", text, re.IGNORECASE) if w.isupper() and len(w) > 1}
    if len(shouted) == 1:
        return shouted.pop(), ""
    if shouted:
        return None, f"names {' and '.join(sorted(shouted))}"
    return None, f"names none of {', '.join(options)}"


ECHO = "it only repeats the question or the options"


def echoes_question(text: str, asked: Sequence[str]) -> bool:
    """Whether `text` (two words or more) is nothing but words read back from what was asked."""
    plain = _plain(text)
    return len(plain.split()) >= 2 and any(plain in _plain(a) for a in asked)


def _plain(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def _without_echoes(text: str, words: str, asked: Sequence[str]) -> str:
    """`text` less the sentences it copies from `asked` and every list of two or more options."""
    told = [p for p in (_plain(a) for a in asked) if p]
    kept = []
    for piece in re.split(r"(?<=[.!?])\s+|\n", text):
        plain = _plain(piece)
        if plain and len(plain.split()) >= 2 and any(plain in t for t in told):
            continue  # a sentence of the question or the instruction, read back
        kept.append(piece)
    rest = "\n".join(kept)
    listing = rf"(?:\bone of\s*:?\s*)?\b(?:{words})\b(?:\s*(?:,|\||/|\bor\b|\band\b)\s*\b(?:{words})\b)+"
    return re.sub(listing, " ", rest, flags=re.IGNORECASE)


def _json_vote(text: str) -> str | None:
    """The `vote` of the first JSON object in `text` (code fences allowed), if there is one."""
    from rooms_cli.models.structured import json_values

    for value in json_values(text, "{"):
        if isinstance(value, dict) and "vote" in value:
            return str(value["vote"])
    return None
