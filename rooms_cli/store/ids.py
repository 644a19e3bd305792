"""Ids: validation of names users choose, and sortable unique ids for records.

Names (rooms, agents, groups, handles) are lowercase `[a-z0-9][a-z0-9._-]{0,63}`. Record ids are
ULID-like: 48 bits of milliseconds then 80 random bits in Crockford base32, behind a short kind
prefix (`m-`, `t-`, `b-`, `s-`…), so they sort by time and never collide across machines. They use
os.urandom even under ROOMS_SEED: two seeded processes must still never mint the same id.
"""

from __future__ import annotations

import _thread
import os
import re

from rooms_cli.core.errors import InvalidInput, NotFound

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Iterable

NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = _thread.allocate_lock()  # what threading.Lock is, without importing threading (~0.7 ms a process)
_last: tuple[int, int] = (0, 0)


def host_name() -> str:
    """This machine's name, as socket.gethostname() gives it: uname's node name (POSIX).

    Read from os.uname() so that naming the host (a lease's plate, a spawn's or a queue runner's
    host) does not import socket (~5 ms: selectors, array, its enums) in every process."""
    return os.uname().nodename


def validate_name(value: object, what: str = "id") -> str:
    """Return `value` if it is a valid name, else raise InvalidInput naming `what`."""
    if not isinstance(value, str) or not NAME_RE.fullmatch(value) or value in (".", ".."):
        shown = repr(value) if isinstance(value, str) else type(value).__name__
        raise InvalidInput(
            f"invalid {what} {shown}: use 1-64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    if ".." in value:
        raise InvalidInput(f"invalid {what} {value!r}: '..' is not allowed")
    return value


def is_valid_name(value: object) -> bool:
    try:
        validate_name(value)
    except InvalidInput:
        return False
    return True


def _encode(number: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_CROCKFORD[number & 31])
        number >>= 5
    return "".join(reversed(chars))


def new_id(prefix: str) -> str:
    """A new sortable unique id such as `m-01JD3Z…` (26 characters after the prefix).

    Ids minted by one process are strictly increasing, even within one millisecond or under a
    frozen `ROOMS_NOW`.
    """
    from rooms_cli.store.clock import now

    global _last
    ms = int(now().timestamp() * 1000)
    with _lock:
        rand = int.from_bytes(os.urandom(10), "big")
        last_ms, last_rand = _last
        if ms <= last_ms:
            ms, rand = last_ms, last_rand + 1 + (rand & 0xFFFF)
        _last = (ms, rand)
    return f"{prefix}-{_encode(ms, 10)}{_encode(rand & ((1 << 80) - 1), 16)}"


def new_ids(prefix: str, count: int) -> list[str]:
    """`count` new ids at once, increasing, their random parts spread over the whole range (one random value
    in each of `count` equal slots) rather than counted up from one: ids minted in one millisecond by
    `new_id` differ only in their last characters, so a board showing each task's shortest unique prefix
    showed an import's tasks 25 characters long; these differ within the first log32(count) + 1 characters
    of their random part, a lone `task add`'s length plus one or two. Later ids of this process still sort
    after them."""
    from rooms_cli.store.clock import now

    global _last
    ms = int(now().timestamp() * 1000)
    with _lock:
        last_ms, _last_rand = _last
        ms = max(ms, last_ms + 1)  # a millisecond of its own: no id of this process shares it
        slot = (1 << 79) // max(count, 1)  # the top bit left clear: new_id counts up from the last without wrapping
        rands = [n * slot + int.from_bytes(os.urandom(10), "big") % slot for n in range(count)]
        if rands:
            _last = (ms, rands[-1])
    return [f"{prefix}-{_encode(ms, 10)}{_encode(rand, 16)}" for rand in rands]


def resolve_prefix(prefix: str, candidates: Iterable[str], what: str = "id") -> str:
    """Resolve a unique prefix of an id among `candidates`, like git does for commits.

    The kind prefix may be left out (`01JD3` finds `t-01JD3…`); matching ignores case.
    """
    if not prefix or not isinstance(prefix, str):
        raise InvalidInput(f"empty {what}")
    want = prefix.strip()
    cands = list(dict.fromkeys(candidates))
    if want in cands:
        return want
    up = want.upper()
    hits: list[str] = []
    for cand in cands:
        body = cand.split("-", 1)[1] if "-" in cand else cand
        if cand.upper().startswith(up) or body.upper().startswith(up):
            hits.append(cand)
    if not hits:
        raise NotFound(f"no {what} matches {want!r}")
    if len(hits) > 1:
        shown = ", ".join(hits[:5]) + (" …" if len(hits) > 5 else "")
        raise InvalidInput(f"{what} prefix {want!r} is ambiguous: it matches {shown}; give more characters")
    return hits[0]
