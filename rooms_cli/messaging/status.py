"""Who is around: status lines and when an agent was last seen (the roster is in roster.py).

Files:
    .rooms/status/<agent>.jsonl  append-only: {"id": "st-…", "ts", "hlc", "status": text} or {"id",
                                 "ts", "hlc", "announced": ts}; the state is the replay in log order (the
                                 latest status wins, the first announcement counts), so two clones
                                 that both set a status merge with git's union driver, no conflict
    .rooms/run/seen/<agent>      the ISO time the agent last ran a messaging command (local state)

An agent is *idle* unless it is a spawn whose process is running, or it ran a messaging command
(`send`, `inbox`, `status set`, `attention`, `wait`, a hook) in the last IDLE_AFTER seconds.
"""

from __future__ import annotations

from rooms_cli.core.errors import InvalidData, RoomsError
from rooms_cli.store import eventlog, files, jsonl, layout
from rooms_cli.store.clock import now, now_iso, parse_time
from rooms_cli.store.ids import is_valid_name, new_id
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


IDLE_AFTER = 300.0
TOUCH_S = 10.0  # a session active again within this of the time noted is not noted again (touch)
# finished spawns stay on the roster (idle) this long, so the parent sees who just reported back
RECENT_SPAWN = 3600.0


def status_path(project: Project, agent: str) -> str:
    """The agent's status log."""
    return layout.status_log(project, agent)


def seen_path(project: Project, agent: str) -> str:
    return layout.seen_file(project, agent)


def read_status(project: Project, agent: str) -> dict[str, Any]:
    """{"agent", "status"?, "updated"?, "announced"?}: the replay of the agent's status log.

    A record whose fields have the wrong type (schema.SCHEMAS["status"]: a number for the status) is
    InvalidData naming the file and field, not an internal error."""
    from rooms_cli.store import schema

    log = status_path(project, agent)
    records = jsonl.read(log)
    for lineno, record in enumerate(records, 1):
        wrong = schema.problem("status", record)
        if wrong is not None:
            raise InvalidData(f"{project.relative(log)}: record {lineno}: {wrong}")
    state: dict[str, Any] = {"agent": agent}
    # the one order of every log (the latest status wins)
    for record in eventlog.ordered(records):
        if isinstance(record.get("status"), str):
            state["status"], state["updated"] = record["status"], record.get("ts")
        if record.get("announced") and not state.get("announced"):
            state["announced"] = record["announced"]
    return state


def _append_status(project: Project, agent: str, fields: dict[str, Any]) -> dict[str, Any]:
    from rooms_cli.store import schema

    read_status(project, agent)  # a wrong-typed record is named before anything is written
    record = {"id": new_id("st"), "ts": now_iso(), **fields}
    schema.validate("status", record, project.relative(status_path(project, agent)))  # as read_status will read it
    eventlog.append(status_path(project, agent), [record])
    return read_status(project, agent)


def set_status(project: Project, agent: str, text: str) -> dict[str, Any]:
    """Set `agent`'s status line ("Working on frontend"); an empty text clears it."""
    from rooms_cli.core.errors import InvalidInput

    text = " ".join(str(text).split())
    if len(text) > 200:
        raise InvalidInput("status is too long: keep it under 200 characters (one line)")

    touch(project, agent)
    return _append_status(project, agent, {"status": text})


def mark_announced(project: Project, agent: str) -> None:
    """Remember that `agent` has sent a message (the announce-yourself hint stops)."""
    path = status_path(project, agent)
    if read_status(project, agent).get("announced"):
        return
    with locked(path):
        if not read_status(project, agent).get("announced"):
            eventlog.append(path, [{"id": new_id("st"), "ts": now_iso(), "announced": now_iso()}], lock=False)


def has_announced(project: Project, agent: str) -> bool:
    return bool(read_status(project, agent).get("announced"))


def touch(project: Project, agent: str) -> None:
    """Note that `agent` is active now: best effort (local presence, out of git), so that reading
    commands work on a read-only checkout or a full disk. Without fsync, and not again within
    TOUCH_S of the time already noted: presence is minutes (IDLE_AFTER), and rewriting it cost every MCP
    inbox or send call ~10 ms."""
    from rooms_cli.store import cache, changes

    path = seen_path(project, agent)
    stamp = now_iso()
    try:
        seen = files.read_line(path)
    except (OSError, ValueError):  # unreadable: written anew below (or not, best effort)
        seen = None
    if seen and seen <= stamp and (age_seconds(seen) or 0.0) < TOUCH_S:
        return
    cache.save_line(path, stamp)
    changes.note(path)


def last_seen(project: Project, agent: str) -> str | None:
    return files.read_line(seen_path(project, agent)) or None


def age_seconds(moment: str | None) -> float | None:
    if not moment:
        return None
    try:
        return (now() - parse_time(moment)).total_seconds()
    except (RoomsError, ValueError, TypeError):  # a hand-edited or torn time: no age
        return None


def names_in(folder: str, suffix: str = "") -> list[str]:
    names: list[str] = []
    for entry in files.names(folder):
        name = entry[: -len(suffix)] if suffix and entry.endswith(suffix) else entry
        if (not suffix or entry.endswith(suffix)) and is_valid_name(name):
            names.append(name)
    return names


def status_names(project: Project) -> list[str]:
    """Agents with a status log."""
    return sorted(names_in(layout.status_dir(project), ".jsonl"))


def session_names(project: Project) -> set[str]:
    """Every name messaging has heard of apart from spawns: defined agents, sessions, inbox owners."""
    from rooms_cli.agents.definitions import agent_ids
    from rooms_cli.messaging.inbox import inbox_owners

    return (
        set(agent_ids(project)) | set(status_names(project))
        | set(names_in(layout.seen_dir(project))) | set(inbox_owners(project))
    )
