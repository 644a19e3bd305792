"""File patterns, and whether two of them can name one path — decided on the patterns, not on the files.

A pattern is a path relative to the project root (the directory holding `.rooms/`), with `/` between
parts, read like a line of `.gitignore`:

- `*` is any run of characters within one part, `?` one character (neither matches `/`);
- `**` as a whole part is any number of parts (`src/**`, `**/test_*.py`, `a/**/b` — `a/b` too);
- a pattern with no `/` (but a trailing one) matches at any depth: `*.md` is `**/*.md`, `Makefile`
  is every `Makefile`; a leading `/` anchors it instead (`/README.md`: the top one only);
- a pattern whose last part is a plain name also covers everything below it: `src/auth` holds
  `src/auth/login.py` (`src/auth/` says the same); one whose last part has a `*` or `?` names files
  (`*.md` does not reach into a directory called `notes.md`, so `*.md` and `*.py` never overlap).

Character classes and braces (`[ab]`, `{a,b}`) are refused: list the patterns separately.

Overlap: each pattern becomes a small automaton over characters (`compile_pattern`); two patterns
overlap when some real path (no empty part) matches both, found by a search of the pair of automata
(`overlap`), which also returns such a path. Exact for this pattern language: a shared path exists exactly when the
search finds one (tests/test_reservations_patterns.py checks both directions with hypothesis).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache

from rooms_cli.core.errors import InvalidInput

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

MAX_PATTERN = 1024

ANY = "any"  # a transition on any character
PART = "part"  # a transition on any character but `/`


@dataclass
class Automaton:
    """States 0..n; `moves[s]` is a list of (label, target): label a character, PART, ANY, or None (no character)."""

    moves: list[list[tuple[str | None, int]]] = field(default_factory=list)
    final: int = 0

    def state(self) -> int:
        self.moves.append([])
        return len(self.moves) - 1

    def link(self, source: int, label: str | None, target: int) -> None:
        self.moves[source].append((label, target))


def normalize(pattern: str) -> str:
    """The pattern as stored: stripped, `./` and repeated `/` dropped, a trailing `/` kept off.

    Refuses what cannot name a path in the project: empty, absolute-looking escapes (`..`), control
    characters, classes and braces."""
    text = pattern.strip()
    if not text:
        raise InvalidInput("a file pattern is empty; give a path or glob such as src/auth/** or *.md")
    if len(text) > MAX_PATTERN:
        raise InvalidInput(f"a file pattern is longer than {MAX_PATTERN} characters")
    if any(ord(ch) < 32 or ch == "\x7f" for ch in text) or "\\" in text:
        raise InvalidInput(f"file pattern {pattern!r} holds a control character or a backslash; use / between parts")
    if any(ch in text for ch in "[]{}"):
        raise InvalidInput(f"file pattern {pattern!r}: character classes and braces are not supported; "
                           "give each pattern separately (e.g. src/a.py src/b.py)")
    anchored = text.startswith("/")
    parts = [p for p in text.strip("/").split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise InvalidInput(f"file pattern {pattern!r} leaves the project ('..'); patterns are relative to the project root")
    if not parts:
        raise InvalidInput(f"file pattern {pattern!r} names no file; give a path or glob such as src/** or *.md")
    collapsed: list[str] = []
    for part in parts:
        if part == "**" and collapsed and collapsed[-1] == "**":
            continue
        collapsed.append(part)
    return ("/" if anchored else "") + "/".join(collapsed)


def _parts(pattern: str) -> list[str]:
    """The parts of a normalized pattern, with the implied `**` in front of one that has no `/`."""
    if pattern.startswith("/"):
        return pattern[1:].split("/")
    parts = pattern.split("/")
    return parts if len(parts) > 1 or parts == ["**"] else ["**", *parts]


def compile_pattern(pattern: str) -> Automaton:
    """An automaton accepting exactly the paths `pattern` covers (itself and everything below it)."""
    auto = Automaton()
    current = auto.state()
    parts = _parts(normalize(pattern))
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            # zero or more whole parts: here, skip it, or read any characters and then a `/`
            # (the last part: any characters at all — what is below is covered anyway)
            after = auto.state()
            auto.link(current, None, after)
            if last:
                auto.link(current, ANY, current)
            else:
                inside = auto.state()
                auto.link(current, ANY, inside)
                auto.link(inside, ANY, inside)
                auto.link(inside, "/", after)
                auto.link(current, "/", after)  # an empty run (a leading `//` is never a path, but harmless)
            current = after
            continue
        for ch in part:
            nxt = auto.state()
            if ch == "*":
                auto.link(current, PART, current)
                auto.link(current, None, nxt)
            elif ch == "?":
                auto.link(current, PART, nxt)
            else:
                auto.link(current, ch, nxt)
            current = nxt
        if not last:
            nxt = auto.state()
            auto.link(current, "/", nxt)
            current = nxt
    final = auto.state()
    auto.link(current, None, final)
    if _reaches_below(parts[-1]):  # everything below: `/` and any characters
        below = auto.state()
        auto.link(current, "/", below)
        auto.link(below, ANY, below)
        auto.link(below, None, final)
    auto.final = final
    return auto


def _reaches_below(last: str) -> bool:
    """Whether a pattern ending in part `last` covers what lies below it (a plain name: a directory)."""
    return last != "**" and "*" not in last and "?" not in last


def _closure(auto: Automaton, states: frozenset[int]) -> frozenset[int]:
    seen, stack = set(states), list(states)
    while stack:
        for label, target in auto.moves[stack.pop()]:
            if label is None and target not in seen:
                seen.add(target)
                stack.append(target)
    return frozenset(seen)


def _accepts(label: str, ch: str) -> bool:
    return label == ANY or (label == PART and ch != "/") or label == ch


def _step(auto: Automaton, states: frozenset[int], ch: str) -> frozenset[int]:
    return _closure(auto, frozenset(t for s in states for label, t in auto.moves[s] if label is not None and _accepts(label, ch)))


def _alphabet(*autos: Automaton) -> list[str]:
    """One character for each class the automata tell apart: each literal they name, `/`, and one other."""
    literals = {label for auto in autos for moves in auto.moves for label, _t in moves
                if label is not None and label not in (ANY, PART)}
    other = next(ch for ch in "xyzqXYZQ0123456789_" if ch not in literals)
    return sorted(literals | {"/", other})


@lru_cache(maxsize=4096)
def literal_prefix(pattern: str) -> str:
    """What every path `pattern` covers starts with: an anchored pattern's text before its first
    wildcard ('' for one that matches at any depth)."""
    parts = _parts(normalize(pattern))
    if parts[0] == "**":
        return ""
    text = "/".join(parts)
    cut = min((i for i in (text.find("*"), text.find("?")) if i >= 0), default=len(text))
    return text[:cut]


@lru_cache(maxsize=4096)
def overlap(first: str, second: str) -> str | None:
    """A path both patterns cover (one of the shortest), or None when there is none.

    A breadth-first search of the pair of automata (each determinized on the fly), over one character
    of each class they distinguish, keeping to real paths: no empty part, no leading or trailing `/`.
    Two anchored patterns whose literal prefixes part ways (`pkg1/…`, `pkg2/…`) are told apart at once."""
    a, b = literal_prefix(first), literal_prefix(second)
    if not (a.startswith(b) or b.startswith(a)):
        return None
    one, two = compile_pattern(first), compile_pattern(second)
    alphabet = _alphabet(one, two)
    start = (_closure(one, frozenset([0])), _closure(two, frozenset([0])), True)  # True: at the start of a part
    came: dict[tuple[Any, ...], tuple[Any, ...] | None] = {start: None}
    queue: deque[tuple[Any, ...]] = deque([start])
    while queue:
        node = queue.popleft()
        left, right, at_start = node
        if one.final in left and two.final in right and not at_start:
            path, step = [], came[node]
            while step is not None:
                path.append(step[1])
                step = came[step[0]]
            return "".join(reversed(path))
        for ch in alphabet:
            if ch == "/" and at_start:
                continue
            nxt = (_step(one, left, ch), _step(two, right, ch), ch == "/")
            if nxt[0] and nxt[1] and nxt not in came:
                came[nxt] = (node, ch)
                queue.append(nxt)
    return None


@lru_cache(maxsize=4096)
def to_regex(pattern: str) -> re.Pattern[str]:
    """The same language as a regular expression (what `covers` uses, and the tests' second opinion)."""
    parts = _parts(normalize(pattern))
    out = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:.*/)?")
            continue
        out.append("".join("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch) for ch in part))
        if not last:
            out.append("/")
    return re.compile("".join(out) + ("(?:/.*)?" if _reaches_below(parts[-1]) else ""), re.DOTALL)


def covers(pattern: str, path: str) -> bool:
    """Whether `pattern` covers the file `path` (relative to the project root)."""
    return to_regex(pattern).fullmatch(path.strip("/")) is not None
