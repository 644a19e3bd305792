"""Event logs that merge in git: each event has a unique `eid` and a Lamport `seq`; replay order is
(seq, ts, eid), each eid read once.

Git merges `*.jsonl` with `merge=union`, so after a merge two clones' new lines sit in the file in
an order that depends on the merge direction. An event appended here takes `seq` one above the
highest seq in the file, so one clone's events keep their written order (even under a frozen
`ROOMS_NOW`), and two clones' events interleave the same way whichever way the merge went. An
event written by an older version has no seq: its line number stands in (older logs replay in
file order, as they always did).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from rooms_cli.store import jsonl
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id

_SEQ_RE = re.compile(rb'"seq": (\d+)')


def event(kind_field: str, kind: str, prefix: str = "e", **data) -> dict:
    """A new event `{kind_field: kind, ts, eid, **data}` (`seq` is added when it is appended)."""
    return {kind_field: kind, "ts": now_iso(), "eid": new_id(prefix), **data}


def event_key(ev: dict) -> str:
    """What makes an event unique: its `eid`; an event of an older version (no eid) by its content."""
    eid = ev.get("eid")
    if isinstance(eid, str) and eid:
        return eid
    return jsonl.dumps({k: v for k, v in ev.items() if k != "seq"})


def _seq(ev: dict) -> int | None:
    seq = ev.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def ordered(events: Iterable[dict]) -> list[dict]:
    """Events in replay order: by (seq, ts, eid); duplicates (same eid) once."""
    keyed = []
    seen: set[str] = set()
    for position, ev in enumerate(events):
        key = event_key(ev)
        if key in seen:
            continue
        seen.add(key)
        seq = _seq(ev)
        keyed.append(((position if seq is None else seq, str(ev.get("ts", "")), str(ev.get("eid", "")), position), ev))
    keyed.sort(key=lambda item: item[0])
    return [ev for _, ev in keyed]


def next_seq(path: Path) -> int:
    """One more than the highest seq in the log (an older version's event counts its line number)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return 0
    highest = max((int(m.group(1)) for m in _SEQ_RE.finditer(data)), default=-1)
    return max(highest + 1, data.count(b"\n"))


def append(path: Path, events: Iterable[dict], *, lock: bool = True) -> list[dict]:
    """Append events with their `seq` stamped (an event that has one, copied from another log, keeps
    it); return them as written. `lock=False` only when the caller holds the log's lock."""
    if lock:
        from rooms_cli.store.locks import locked

        with locked(path):
            return append(path, events, lock=False)
    seq = next_seq(path)
    stamped = []
    for ev in events:
        kept = _seq(ev)
        if kept is not None:
            stamped.append(ev)
            seq = max(seq, kept + 1)
            continue
        stamped.append({**ev, "seq": seq})
        seq += 1
    jsonl.append_many(path, stamped, lock=False)
    return stamped
