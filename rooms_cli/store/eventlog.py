"""Event logs that merge in git: each event has a unique `eid` and, as every record, an `hlc` stamp;
replay reads them in the one order of store/order.py (stamp, then eid), each event once.

Git merges `*.jsonl` with `merge=union` (and `rooms sync` appends the other clone's lines), so two
clones' new lines sit in the file in an order that depends on the merge direction. The stamp (a
hybrid logical clock, store/clock.py) keeps one clone's events in their written order, even under a
frozen `ROOMS_NOW`, and interleaves two clones' events the same way whichever way the merge went.
Appending reads only the end of the file (the clock's seed), never the whole log.
"""

from __future__ import annotations

from collections.abc import Iterable

from rooms_cli.store import jsonl, order
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.store.files import StrPath


def event(kind_field: str, kind: str, prefix: str = "e", **data: Any) -> dict[str, Any]:
    """A new event `{kind_field: kind, ts, eid, **data}` (`hlc` is added when it is appended)."""
    return {kind_field: kind, "ts": now_iso(), "eid": new_id(prefix), **data}


def event_key(ev: dict[str, Any]) -> str:
    """What makes an event unique: its `eid`; an event without one (written by hand) by its content."""
    eid = ev.get("eid")
    if isinstance(eid, str) and eid:
        return eid
    return jsonl.dumps({k: v for k, v in ev.items() if k != "hlc"})


def ordered(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events in replay order (store/order.py), each once."""
    return order.ordered(events)


def append(path: StrPath, events: Iterable[dict[str, Any]], *, lock: bool = True) -> list[dict[str, Any]]:
    """Append events, each stamped (an event that has a stamp, copied from another log, keeps it);
    return them as written. `lock=False` only when the caller holds the log's lock."""
    return jsonl.append_many(path, events, lock=lock)
