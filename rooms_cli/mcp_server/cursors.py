"""The `events` tool: what `rooms watch` would print, since a cursor, without holding a call open.

A cursor is `<token>@<time>`: the token names a watch Follower the server keeps (its byte offsets
and what it has seen, so each event comes once), the time is that of the last event returned. A
cursor the server does not know — it was restarted — starts a new follower from that time, so
nothing is lost, though the events of that very instant may come again.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from rooms_cli.store.clock import now_iso, parse_time
from rooms_cli.store.ids import new_id

TYPE_CHECKING = False  # the names below are for mypy; the tool server imports them only when the tool runs
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Protocol

    from rooms_cli.store.paths import Project
    from rooms_cli.watch import Follower, Selection

    class CursorSession(Protocol):
        """What the events tool needs of the server's session (mcp_server/tools.py's Session)."""

        project: Project
        default_room: str
        cursors: dict[str, Any]

MAX_CURSORS = 32  # followers kept per server; the oldest is dropped (its cursor then restarts by time)
POLL_S = 0.2


class _Cursor:
    def __init__(self, follower: Follower) -> None:
        self.follower = follower
        self.lock = threading.Lock()  # a follower is not for two threads at once
        self.held: list[dict[str, Any]] = []  # events read but past the last call's limit: the next call returns them first


def _selection(session: CursorSession, rooms: Iterable[str], inboxes: Iterable[str], boards: bool,
               groups: bool) -> Selection:
    from rooms_cli.watch import Selection

    if not (rooms or inboxes or boards or groups):
        return Selection(all=True)
    selection = Selection.from_flags(rooms=rooms, inboxes=inboxes, board=boards, groups=groups,
                                     current_room=session.default_room)
    selection.check(session.project)
    return selection


def poll_events(session: CursorSession, cursor: str | None, *, rooms: Iterable[str] = (), inboxes: Iterable[str] = (),
                boards: bool = False, groups: bool = False, wait_seconds: float = 0, last: int = 0,
                limit: int | None = None) -> dict[str, Any]:

    """{"cursor", "events", "count", "remaining"}: the events since `cursor` (none given: a new cursor,
    with the `last` past events), at most `limit`; the rest wait in the cursor for the next call."""
    from rooms_cli.core.errors import InvalidInput
    from rooms_cli.watch import Follower

    token, _, at = (cursor or "").partition("@")
    state = session.cursors.get(token) if token else None
    if state is None:
        since = None
        if cursor:
            try:
                since = parse_time(at)
            except InvalidInput:
                raise InvalidInput(f"cursor {cursor!r} is not one the events tool returned; call it without a cursor to start") from None
        state = _Cursor(Follower(session.project, _selection(session, rooms, inboxes, boards, groups)))
        token = new_id("c")
        with state.lock:
            found = state.follower.start(since=since, last=last or None)
        while len(session.cursors) >= MAX_CURSORS:
            session.cursors.pop(next(iter(session.cursors)))
        session.cursors[token] = state
    else:
        with state.lock:
            found = state.held + state.follower.poll()
    deadline = time.monotonic() + wait_seconds
    while not found and time.monotonic() < deadline:
        time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))
        with state.lock:
            found = state.follower.poll()
    shown, state.held = (found[:limit], found[limit:]) if limit is not None else (found, [])
    latest = str(shown[-1].get("ts") or "") if shown else ""
    return {"cursor": f"{token}@{latest or at or now_iso()}", "events": shown, "count": len(shown),
            "remaining": len(state.held)}
