"""Ballots for the `rank` reducer: each model-backed member ranks the others' anonymised replies.

Replies are labelled R1, R2, R3… in an order shuffled per broadcast (ROOMS_SEED fixes it), so
neither arrival nor handle shows. A ranker never sees its own reply, and sees the others in an order
of its own (shuffled per broadcast and ranker): a small model often answers with the labels in the
order it was shown (12 of 12 ballots did, under the schema), so a ballot that repeats its shown
order (or starts it and stops) says nothing about the replies: it counts as no information,
reported under `uninformative`, never counted. The prompt shows no example ballot with labels in it
(a small model copies an example as its ballot). The labels are not words, so a capital in prose (the
article "A", the pronoun "I") can never be read as a vote.

A ballot is read only from labels in ranking positions (`parse_ballot`): a JSON array (or
{"ranking": [...]}, what a structured provider returns), a numbered or bulleted list whose items
start with a label ("1. R2", "- **R1** — concise"), or one line that is nothing but labels and
separators ("R2 > R1 > R3", "Ranking: R2, R1"). Labels a ranker may not rank (its own, unknown
ones) are left out. A ballot with no label in a ranking position is unparsed, with the reason; the
ranker is asked once more (the shape in words), then its ballot is lost. The label → handle map
goes into the metadata.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field

from rooms_cli.groups.model import OK
from rooms_cli.models import Message
from rooms_cli.store.rand import rng

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import Any

    from rooms_cli.groups.model import MemberResult

LABEL_PREFIX = "R"
_LABEL = r"[Rr]\d{1,3}"
_ITEM_RE = re.compile(rf"^\s*(?:\(?\d{{1,2}}\s*[.):]|[-*•]|#\d{{1,2}}\b)\s*(?:[Rr]eply\s+)?[*_`\[\"']*({_LABEL})(?![\w])")
_SEPARATORS_RE = re.compile(r"^(?:[\s,;>→⇒=/|*_`\[\]\"'.]|-+>?|\bthen\b|\band\b)*$", re.IGNORECASE)
_LEAD_RE = re.compile(r"^\s*[*_]*[A-Za-z][\w ]{0,30}[*_]*\s*:\s*")


def assign_labels(bid: str, handles: list[str]) -> dict[str, str]:
    """{label: handle}: R1, R2… over the handles in an order shuffled per broadcast."""
    shuffled = list(handles)
    rng("groups-rank", bid).shuffle(shuffled)
    return {f"{LABEL_PREFIX}{n}": h for n, h in enumerate(shuffled, start=1)}


def ballot_prompt(objective: str, candidates: list[tuple[str, str]], structured: bool = False) -> str:
    """What a ranker reads: the objective, the shape of the answer (no example: it would be copied),
    then each labelled reply in the order this ranker is shown them."""
    one_line = " ".join(objective.split())
    labels = ", ".join(label for label, _ in candidates)
    if structured:
        shape = f"Rank them, best first: the ranking lists the labels {labels}, each once."
    else:
        shape = (f'Rank them: reply with JSON only, {{"ranking": [...]}}, the labels {labels} each once, best first; '
                 "or a numbered list of the labels, best first, one per line.")
    lines = [f"Rank these anonymous replies to: {one_line}", shape, ""]
    lines += [f"{label}: {' '.join(text.split())}" for label, text in candidates]
    return "\n".join(lines)


def shown_order(bid: str, ranker: str, labels: list[str]) -> list[str]:
    """The order `ranker` is shown `labels` in: shuffled per broadcast and ranker (ROOMS_SEED fixes it)."""
    order = list(labels)
    rng("groups-rank-shown", bid, ranker).shuffle(order)
    return order


def uninformative(ballot: list[str], shown: list[str]) -> str:
    """Why `ballot` says nothing about the replies ('' when it does): it repeats the order shown."""
    if len(shown) > 1 and ballot == shown[:len(ballot)]:
        return "the ballot repeats the order the replies were shown in"
    return ""


def ballot_schema(allowed: list[str]) -> dict[str, Any]:
    """The JSON Schema of a structured ballot: {"ranking": [labels, best first]}."""
    return {
        "type": "object",
        "properties": {"ranking": {"type": "array", "items": {"type": "string", "enum": list(allowed)},
                                   "minItems": 1, "maxItems": len(allowed)}},
        "required": ["ranking"],
        "additionalProperties": False,
    }


def parse_ballot(text: str, allowed: list[str]) -> tuple[list[str], str]:
    """(labels best first, '') or ([], why nothing was read). Only `allowed` labels, each once."""
    if not (text or "").strip():
        return [], "empty reply"
    found = _json_ballot(text)
    if found is None:
        found = _list_ballot(text)
    if found is None:
        return [], "no ranking found (a numbered list of labels, or R2 > R1)"
    canon = {lab.upper(): lab for lab in allowed}
    ballot = list(dict.fromkeys(canon[lab.upper()] for lab in found if lab.upper() in canon))
    if not ballot:
        return [], f"ranked only labels it may not rank ({', '.join(dict.fromkeys(found))})"
    return ballot, ""


def _json_ballot(text: str) -> list[str] | None:
    from rooms_cli.models.structured import json_values

    for value in json_values(text, "[{"):
        if isinstance(value, dict):
            value = value.get("ranking")
        if isinstance(value, list) and value and all(isinstance(v, str) and re.fullmatch(_LABEL, v.strip()) for v in value):
            return [v.strip() for v in value]
    return None


def _list_ballot(text: str) -> list[str] | None:
    """The first ranking form in `text`: a list (its items from there on) or a line of labels."""
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if _ITEM_RE.match(line):
            return [m.group(1) for m in (_ITEM_RE.match(rest) for rest in lines[n:]) if m]
        body = _LEAD_RE.sub("", line, count=1) if not re.match(rf"^\s*{_LABEL}\b", line) else line
        labels = re.findall(rf"(?<![\w]){_LABEL}(?![\w])", body)
        if labels and _SEPARATORS_RE.match(re.sub(rf"(?<![\w]){_LABEL}(?![\w])", " ", body)):
            return labels
    return None


@dataclass
class Ballots:
    """What the rankers gave: readable ballots, and every other ranker with the reason."""

    ballots: dict[str, list[str]] = field(default_factory=dict)  # handle -> labels, best first
    unparsed: dict[str, str] = field(default_factory=dict)  # handle -> why no ballot was read
    uninformative: dict[str, list[str]] = field(default_factory=dict)  # handle -> a ballot that repeats its shown order
    errors: dict[str, str] = field(default_factory=dict)  # handle -> the call's failure
    paths: dict[str, str] = field(default_factory=dict)  # handle -> how the ballot was asked (structured.py)


async def collect_ballots(ask: Callable[[str, Callable[[bool], list[Message]], dict[str, Any]], Awaitable[tuple[str, str]]],
                          bid: str, rankers: list[str], labels: dict[str, str], by_member: dict[str, MemberResult],
                          objective: str) -> Ballots:
    """Ask every ranker concurrently, once more (the shape in words) when its ballot cannot be read.

    `ask(handle, messages, schema)` makes the call (`messages(structured)` builds the prompt) and
    returns (the reply text, the path: structured.SCHEMA, FALLBACK or TEXT)."""
    handle_label = {h: lab for lab, h in labels.items()}
    out = Ballots()

    async def one(handle: str) -> None:
        replies = {lab: by_member[h].text for lab, h in labels.items() if h != handle and by_member[h].status == OK}
        shown = shown_order(bid, handle, [lab for lab in labels if lab in replies])
        allowed = [lab for lab in shown if lab != handle_label.get(handle)]
        if not shown:
            return
        others = [(lab, replies[lab]) for lab in shown]

        def messages(structured: bool) -> list[Message]:
            return [Message("user", ballot_prompt(objective, others, structured))]

        try:
            text, out.paths[handle] = await ask(handle, messages, ballot_schema(allowed))
            ballot, why = parse_ballot(text, allowed)
            if not ballot:
                retry = [*messages(False), Message("assistant", text or "(nothing)"),
                         Message("user", f"That ballot could not be read: {why}. Answer again: the labels only, best first.")]
                ballot, why = parse_ballot((await ask(handle, lambda _structured: retry, ballot_schema(allowed)))[0], allowed)
        except Exception as exc:  # a failed ballot only loses that vote
            out.errors[handle] = f"{type(exc).__name__}: {exc}"
            return
        if not ballot:
            out.unparsed[handle] = why
        elif uninformative(ballot, allowed):
            out.uninformative[handle] = ballot
        else:
            out.ballots[handle] = ballot

    await asyncio.gather(*(one(h) for h in rankers))
    return out


def ranking_messages(directive: str, messages: list[Message]) -> list[Message]:
    """The ranker's directive as the system message, then the ballot conversation."""
    return [Message("system", directive), *messages]
