"""Ballots for the `rank` reducer: each model-backed member ranks the others' anonymised replies.

Replies are labelled R1, R2, R3… in an order shuffled per broadcast (ROOMS_SEED fixes it), so
neither arrival nor handle shows. A ranker never sees its own reply. The labels are not words, so a
capital in prose (the article "A", the pronoun "I") can never be read as a vote.

A ballot is read only from labels in ranking positions (`parse_ballot`): a JSON array (or
{"ranking": [...]}, what a structured provider returns), a numbered or bulleted list whose items
start with a label ("1. R2", "- **R1** — concise"), or one line that is nothing but labels and
separators ("R2 > R1 > R3", "Ranking: R2, R1"). Labels a ranker may not rank (its own, unknown
ones) are left out. A ballot with no label in a ranking position is unparsed, with the reason; the
ranker is asked once more, then its ballot is lost. The label → handle map goes into the metadata.
"""

from __future__ import annotations

import asyncio
import json
import re

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
    """What a ranker reads: the objective, the shape of the answer, then each labelled reply."""
    one_line = " ".join(objective.split())
    labels = [label for label, _ in candidates]
    if structured:
        shape = f'Reply with JSON only: {{"ranking": [{", ".join(json.dumps(lab) for lab in labels)}]}} reordered best first.'
    else:
        shape = (f"Answer with a numbered list of the labels {', '.join(labels)}, best first, one per line, "
                 f"like:\n1. {labels[-1]}\n2. {labels[0]}")
    lines = [f"Rank these anonymous replies to: {one_line}", shape, ""]
    lines += [f"{label}: {' '.join(text.split())}" for label, text in candidates]
    return "\n".join(lines)


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


async def collect_ballots(
    ask: Callable[[str, list[Message], dict[str, Any] | None], Awaitable[str]], structured: Callable[[str], bool],
    rankers: list[str], labels: dict[str, str], by_member: dict[str, MemberResult], objective: str,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Ask every ranker concurrently, once more when its ballot cannot be read.

    `ask(handle, messages, schema)` returns the reply text; `structured(handle)` says whether its
    provider honours a schema. -> (ballots {handle: labels}, unparsed {handle: reason}, errors {handle: error}).
    """
    handle_label = {h: lab for lab, h in labels.items()}

    async def one(handle: str) -> tuple[str, list[str], str, str | None]:
        others = [(lab, by_member[h].text) for lab, h in labels.items() if h != handle and by_member[h].status == OK]
        allowed = [lab for lab, _ in others if lab != handle_label.get(handle)]
        if not others:
            return handle, [], "", None
        schema = ballot_schema(allowed) if structured(handle) else None
        messages = [Message("user", ballot_prompt(objective, others, schema is not None))]
        try:
            text = await ask(handle, messages, schema)
            ballot, why = parse_ballot(text, allowed)
            if not ballot:
                retry = [*messages, Message("assistant", text),
                         Message("user", f"That ballot could not be read: {why}. Answer again: the labels only, best first.")]
                ballot, why = parse_ballot(await ask(handle, retry, schema), allowed)
        except Exception as exc:  # a failed ballot only loses that vote
            return handle, [], "", f"{type(exc).__name__}: {exc}"
        return handle, ballot, why, None

    results = await asyncio.gather(*(one(h) for h in rankers))
    ballots = {h: b for h, b, _, _ in results if b}
    unparsed = {h: why for h, b, why, err in results if not b and why and not err}
    errors = {h: err for h, _, _, err in results if err}
    return ballots, unparsed, errors


def ranking_messages(directive: str, messages: list[Message]) -> list[Message]:
    """The ranker's directive as the system message, then the ballot conversation."""
    return [Message("system", directive), *messages]
