"""Reducers turn the replies of one broadcast into one result: `(by_member, order) -> Any`.

`by_member` maps each handle to its MemberResult (text, status, elapsed_s) — every member, also
those that timed out or were cancelled; `order` lists the handles that replied, in arrival order.
The built-in reducers read only replies with status `ok`.

Custom reducers: `reducers: {name: "module:function"}` in .rooms.yaml (imported with the project
directory on sys.path), or `register_reducer(name, fn)` from Python. A reducer may return a
`Reduction(value, metadata)` to add keys to the result's metadata.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rooms_cli.core.errors import InvalidData, InvalidInput, RoomsError
from rooms_cli.groups.model import OK, MemberResult

if TYPE_CHECKING:
    from rooms_cli.project.config import Config

Reducer = Callable[[dict[str, MemberResult], list[str]], Any]


@dataclass
class Reduction:
    """A reducer's value with extra keys for the result's metadata (a plain return value has none)."""

    value: Any
    metadata: dict[str, Any] = field(default_factory=dict)


def _replies(by_member: dict[str, MemberResult], order: list[str]) -> list[tuple[str, str]]:
    """(handle, text) of the ok replies, in arrival order."""
    return [(h, by_member[h].text) for h in order if h in by_member and by_member[h].status == OK]


def concat(by_member: dict[str, MemberResult], order: list[str]) -> Any:
    """Every reply in arrival order, each under a `## handle` header, joined by a blank line.

    The header keeps multi-paragraph replies apart and says who wrote what. A single reply (a
    wait-any winner, a group of one) is returned as it is: there is nothing to tell apart."""
    replies = _replies(by_member, order)
    if len(replies) == 1:
        return replies[0][1]
    return "\n\n".join(f"## {handle}\n{text.strip()}" for handle, text in replies)


def join_by_handle(by_member: dict[str, MemberResult], order: list[str]) -> Any:
    """{handle: reply} for every member that replied, in member order."""
    replied = dict(_replies(by_member, order))
    return {h: replied[h] for h in by_member if h in replied}


def last_wins(by_member: dict[str, MemberResult], order: list[str]) -> Any:
    """The reply that arrived last (None when nobody replied)."""
    replies = _replies(by_member, order)
    return replies[-1][1] if replies else None


_AROUND = "*_`#>\"'“”‘’[]()<>{} \t\r\n.,;:!?…-—–•"


def normal_reply(text: str) -> str:
    """A reply as majority_vote compares it: surrounding punctuation and markup stripped, inner
    whitespace collapsed (case is compared apart: `casefold` the result)."""
    return " ".join((text or "").strip(_AROUND).split()).strip(_AROUND)


def majority_vote(by_member: dict[str, MemberResult], order: list[str], options: list[str] | None = None,
                  asked: list[str] | None = None) -> Reduction:
    """The most common reply, by Counter; replies that share no value with another are ignored; the
    first finisher wins ties (the source's rule, groups/003).

    Replies are compared normalised (case, surrounding punctuation and markup: "ANCHORED",
    "**anchored**" and "Anchored." are one answer, shown as the first finisher wrote it). Declared
    `options` (the gather reads them from the broadcast, votes.declared_options) map what a reply
    says onto them ("Yes, ship it" -> YES, votes.read_vote), and a reply that reads as none of them
    is not counted (`unparsed` says why). An echo of the question (`asked`) is no vote, with options
    or without. With two
    or more votes, a value voted only once does not win (no consensus: None, and `no_result` says
    why). Metadata: `options`, `votes` {value: n}, `voted` {handle: value}, `parsed` (replies that
    read as a declared option; every non-empty reply without options), `unparsed` {handle: reason},
    `consensus` (the winner has more than half of the replies), `winner_handle`.
    """
    from rooms_cli.groups.votes import ECHO, echoes_question, read_vote

    options = list(options or [])
    replies = _replies(by_member, order)
    voted: dict[str, str] = {}
    unparsed: dict[str, str] = {}
    shown: dict[str, str] = {}  # casefolded value -> as its first finisher wrote it
    for handle, text in replies:
        if options:
            value, why = read_vote(text, options, asked or ())
        else:
            value = normal_reply(text)
            why = "empty reply" if not value else ECHO if echoes_question(text, asked or ()) else ""
        if value is None or why:  # an echo of the question is no vote, however many members make it
            unparsed[handle] = why
            continue
        voted[handle] = shown.setdefault(value.casefold(), value)
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    for handle, value in voted.items():
        counts[value] = counts.get(value, 0) + 1
        first.setdefault(value, handle)
    metadata: dict[str, Any] = {"options": options, "votes": counts, "voted": voted, "unparsed": unparsed,
                                "parsed": len(voted), "consensus": False}
    arrival = list(first.values())
    contenders = [v for v, n in counts.items() if n >= 2 or len(voted) == 1]  # a lone voter decides
    if not contenders:
        metadata["no_result"] = ("no reply" if not replies else "no readable vote" if not voted else
                                 "no answer was given twice: " + ", ".join(f"{v} {n}" for v, n in counts.items()))
        return Reduction(None, metadata)
    best = min(contenders, key=lambda v: (-counts[v], arrival.index(first[v])))
    metadata.update(consensus=counts[best] * 2 > len(replies), winner_handle=first[best])
    return Reduction(best, metadata)


def rank_from_ballots(labels: dict[str, str], ballots: dict[str, list[str]], by_member: dict[str, MemberResult],
                      order: list[str]) -> Reduction:
    """The candidate with the best (lowest) average rank over the ballots that ranked it.

    `labels` maps R1, R2… to handles; `ballots` maps a ranker to its labels, best first. A
    candidate no ballot ranked comes after every ranked one; ties go to the earlier arrival
    (`metadata.tie` says so). One candidate wins alone; several and no ballot: no result (None).
    """
    sums: dict[str, list[int]] = {h: [] for h in labels.values()}
    for ballot in ballots.values():
        for position, label in enumerate(ballot, start=1):
            if label in labels:
                sums[labels[label]].append(position)
    average = {h: (sum(p) / len(p) if p else None) for h, p in sums.items()}
    arrival = {h: i for i, h in enumerate(order)}
    metadata: dict[str, Any] = {"labels": labels, "ballots": ballots, "parsed": len(ballots),
                      "average_rank": {h: (round(v, 3) if v is not None else None) for h, v in average.items()}}
    if not average or (len(average) > 1 and not ballots):
        return Reduction(None, metadata)
    key = {h: (average[h] is None, average[h] or 0) for h in average}
    winner = min(average, key=lambda h: (*key[h], arrival.get(h, len(order))))
    metadata.update(winner_handle=winner, tie=sum(1 for h in average if key[h] == key[winner]) > 1)
    return Reduction(by_member[winner].text, metadata)


BUILTIN: dict[str, Reducer] = {
    "concat": concat,
    "join_by_handle": join_by_handle,
    "last_wins": last_wins,
    "majority_vote": majority_vote,
}
# `rank` needs model calls (the ballots), so the gather runs it; see rank.py
MODEL_REDUCERS = ("rank",)

_registered: dict[str, Reducer] = {}


def register_reducer(name: str, fn: Reducer) -> None:
    """Make `fn` available as reducer `name` in this process. Built-in names cannot be replaced."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("a reducer needs a non-empty name")
    if name in BUILTIN or name in MODEL_REDUCERS:
        raise InvalidInput(f"{name!r} is a built-in reducer; register yours under another name")
    if not callable(fn):
        raise InvalidInput(f"reducer {name!r} must be a function (by_member, order) -> Any")
    _registered[name] = fn


def _import(name: str, ref: object, project_root: object) -> Reducer:
    where = f".rooms.yaml reducers.{name}"
    if not isinstance(ref, str) or ref.count(":") != 1:
        raise InvalidData(f"{where}: expected \"module:function\", found {ref!r}")
    module_name, _, func = ref.partition(":")
    from pkgutil import resolve_name

    root = str(project_root)
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        module = resolve_name(module_name + ":")  # the module alone: a missing function is said apart
    except Exception as exc:
        raise InvalidData(f"{where}: cannot import {module_name!r}: {type(exc).__name__}: {exc}") from None
    fn = getattr(module, func, None)
    if not callable(fn):
        raise InvalidData(f"{where}: {module_name!r} has no function {func!r}")
    reducer: Reducer = fn
    return reducer


def known(config: Config | None = None) -> list[str]:
    configured = list(((config.get("reducers") if config else None) or {}).keys())
    return sorted({*BUILTIN, *MODEL_REDUCERS, *_registered, *configured})


def resolve(name: str, config: Config | None = None, project_root: object = None) -> Reducer | None:
    """The function for reducer `name` (None for `rank`, which the gather runs); unknown is an error."""
    if name in BUILTIN:
        return BUILTIN[name]
    if name in MODEL_REDUCERS:
        return None
    if name in _registered:
        return _registered[name]
    configured = (config.get("reducers") if config else None) or {}
    if name in configured:
        return _import(name, configured[name], project_root)
    raise InvalidInput(f"unknown reducer {name!r}; known reducers: {', '.join(known(config))}")


def apply(fn: Reducer, name: str, by_member: dict[str, MemberResult], order: list[str],
          fields: dict[str, Any] | None = None) -> Reduction:
    """Run a reducer; its failure is one clear error naming it, never a traceback.

    `fields` are the broadcast's: `majority_vote` reads its options there (votes.declared_options)."""
    if fn is majority_vote:
        from functools import partial

        from rooms_cli.groups.votes import declared_options

        asked = [str((fields or {}).get(k) or "") for k in ("objective", "output_format")]
        fn = partial(majority_vote, options=declared_options(fields), asked=asked)
    try:
        value = fn(dict(by_member), list(order))
    except RoomsError:
        raise
    except Exception as exc:
        raise RoomsError(f"reducer {name!r} failed: {type(exc).__name__}: {exc}", code="reducer_failed") from None
    return value if isinstance(value, Reduction) else Reduction(value)
