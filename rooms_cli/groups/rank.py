"""Ballots for the `rank` reducer: each model-backed member ranks the others' anonymised replies.

Replies are labelled A, B, C… in an order shuffled per broadcast (ROOMS_SEED fixes it), so neither
arrival nor handle shows. A ranker never sees its own reply. Its answer is read as the labels it
names, in order ("B, A, C"); unknown labels are ignored. The label → handle map goes into the
result's metadata.
"""

from __future__ import annotations

import asyncio
import re
import string

from rooms_cli.groups.model import OK
from rooms_cli.models import Message
from rooms_cli.store.rand import rng


def assign_labels(bid: str, handles: list[str]) -> dict[str, str]:
    shuffled = list(handles)
    rng("groups-rank", bid).shuffle(shuffled)
    return dict(zip(string.ascii_uppercase, shuffled, strict=False))


def ballot_prompt(objective: str, candidates: list[tuple[str, str]]) -> str:
    one_line = " ".join(objective.split())
    lines = [f"Rank these anonymous replies to: {one_line}", "Answer with the labels only, best first, e.g. B, A, C.", ""]
    lines += [f"{label}: {' '.join(text.split())}" for label, text in candidates]
    return "\n".join(lines)


def parse_ballot(text: str, allowed: list[str]) -> list[str]:
    seen: list[str] = []
    for label in re.findall(r"\b([A-Z])\b", text or ""):
        if label in allowed and label not in seen:
            seen.append(label)
    return seen


async def collect_ballots(call, rankers: list[str], labels: dict[str, str], by_member, objective: str) -> tuple[dict, dict]:
    """Ask every ranker concurrently; `call(handle, prompt)` returns its text. -> (ballots, errors)."""
    handle_label = {h: lab for lab, h in labels.items()}

    async def one(handle: str):
        others = [(lab, by_member[h].text) for lab, h in labels.items() if h != handle and by_member[h].status == OK]
        if not others:
            return handle, [], None
        try:
            text = await call(handle, ballot_prompt(objective, others))
        except Exception as exc:  # a failed ballot only loses that vote
            return handle, None, f"{type(exc).__name__}: {exc}"
        return handle, parse_ballot(text, [lab for lab, _ in others if lab != handle_label.get(handle)]), None

    results = await asyncio.gather(*(one(h) for h in rankers))
    ballots = {h: b for h, b, err in results if b}
    errors = {h: err for h, _, err in results if err}
    return ballots, errors


def ranking_messages(directive: str, prompt: str) -> list[Message]:
    return [Message("system", directive), Message("user", prompt)]
