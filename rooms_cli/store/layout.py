"""The `.rooms/` layout, in one place: every file and folder a part or `rooms watch` uses, by name.

Parts never spell a path: they call the function named for the file (`transcript_file(project,
room)`, `inbox_file(project, agent)`…). Each function validates the ids it is given before any path
is built, and `Project.path` refuses anything that would resolve outside `.rooms/`.

    agents/<agent>.md                         agent_file           (agents_dir)
    rooms/<room>/state.jsonl                  room_state_log       (rooms_dir, room_dir)
    rooms/<room>/transcript.jsonl             transcript_file
    rooms/<room>/floor                        floor_lock           (one chat turn at a time)
    rooms/<room>/sessions/<agent>.jsonl       session_file
    rooms/<room>/board/tasks/<task>.jsonl     task_file            (board_dir, tasks_dir)
    chat/<room>/<save-id>.md                  saved_transcripts_dir
    deliberations/<agent>/                    deliberations_dir
    groups/<name>.jsonl | .yaml | .gather     group_log, group_gather_lock (groups_dir: presets *.yaml)
    inbox/<agent>.jsonl, inbox/read/<agent>.jsonl   inbox_file, inbox_read_file (inbox_dir)
    spawns/<id>.json, spawns/aliases          spawn_file, spawn_aliases_lock (spawns_dir)
    status/<agent>.jsonl                      status_log           (status_dir)
    roundtables/queue.jsonl                   roundtable_queue_file
    schedule/fired.jsonl                      schedule_fired_log
    memories/<agent>.jsonl                    memories_file        (memories_dir)
    reservations/log.jsonl                    reservations_log     (file reservations: reserve, renew, release, expire)
    run/…                                     local, never committed (.rooms/.gitignore): current room,
                                              chat history, board snapshots, spawn locks and logs,
                                              seen markers, wake locks
"""

from __future__ import annotations

import os

from rooms_cli.store.ids import validate_name
from rooms_cli.store.paths import Project

TASK_SUFFIX = ".jsonl"


def _room(room: str) -> str:
    return validate_name(room, "room id")


def _agent(agent: str) -> str:
    return validate_name(agent, "agent id")


# agents -------------------------------------------------------------------------------------------

def agents_dir(project: Project) -> str:
    return project.path("agents")


def agent_file(project: Project, agent: str) -> str:
    return project.path("agents", _agent(agent) + ".md")


# chat rooms ---------------------------------------------------------------------------------------

def rooms_dir(project: Project) -> str:
    return project.path("rooms")


def room_dir(project: Project, room: str) -> str:
    return project.path("rooms", _room(room))


def room_state_log(project: Project, room: str) -> str:
    return project.path("rooms", _room(room), "state.jsonl")


def room_exists(project: Project, room: str) -> bool:
    """A room exists when its state log does.

    Here rather than in chat/rooms.py (which keeps the name) so that every board command can check
    its room without importing the chat part (~2 ms: room state, budget, event log ordering). An empty
    state log is no room: logs are made with their first line (store/jsonl.py), but one made empty by
    a version before that, killed at its first write, must not keep the name taken."""
    try:
        return os.stat(room_state_log(project, room)).st_size > 0
    except (FileNotFoundError, NotADirectoryError):
        return False


def transcript_file(project: Project, room: str) -> str:
    return project.path("rooms", _room(room), "transcript.jsonl")


def floor_lock(project: Project, room: str) -> str:
    return project.path("rooms", _room(room), "floor")


def session_file(project: Project, room: str, agent: str) -> str:
    return project.path("rooms", _room(room), "sessions", _agent(agent) + ".jsonl")


def saved_transcripts_dir(project: Project, room: str) -> str:
    """One file per save, `<save-id>.md`, so that saves in two clones merge."""
    return project.path("chat", _room(room))


def deliberations_dir(project: Project, agent: str) -> str:
    return project.path("deliberations", _agent(agent))


def current_room_file(project: Project) -> str:
    return project.path("run", "current-room")


def chat_history_file(project: Project) -> str:
    return project.path("run", "chat-history")


# board --------------------------------------------------------------------------------------------

def board_dir(project: Project, room: str) -> str:
    return project.path("rooms", _room(room), "board")


def tasks_dir(project: Project, room: str) -> str:
    return project.path("rooms", _room(room), "board", "tasks")


def task_file(project: Project, room: str, task_id: str) -> str:
    return project.path("rooms", _room(room), "board", "tasks", task_id.lower() + TASK_SUFFIX)


def board_snapshot_file(project: Project, room: str) -> str:
    return project.path("run", "board", _room(room) + ".json")


def saves_made_here_file(project: Project, room: str) -> str:
    """The saved transcripts of a room this clone wrote (only those does a new save remove)."""
    return project.path("run", "saves", _room(room) + ".json")


def watch_baseline_file(project: Project) -> str:
    """Where each followed log's starting point is kept between watches (watch/baseline.py)."""
    return project.path("run", "watch", "baseline.json")


def transcript_order_file(project: Project, room: str) -> str:
    """How much of a room's transcript is known to be in time order (this machine's cache)."""
    return project.path("run", "transcripts", _room(room) + ".json")


# groups -------------------------------------------------------------------------------------------

def groups_dir(project: Project) -> str:
    return project.path("groups")


def group_replay_cache(project: Project, name: str) -> str:
    """The replayed state of a group log, JSON (local, git-ignored; a fresh clone rebuilds it)."""
    return project.path("run", "groups", validate_name(name, "group name") + ".json")


def group_log(project: Project, name: str) -> str:
    return project.path("groups", validate_name(name, "group name") + ".jsonl")


def group_gather_lock(project: Project, name: str) -> str:
    return project.path("groups", validate_name(name, "group name") + ".gather")


# messaging ----------------------------------------------------------------------------------------

def inbox_dir(project: Project) -> str:
    return project.path("inbox")


def inbox_file(project: Project, agent: str) -> str:
    return project.path("inbox", _agent(agent) + ".jsonl")


def inbox_read_file(project: Project, agent: str) -> str:
    return project.path("inbox", "read", _agent(agent) + ".jsonl")


def inbox_cursor_file(project: Project, agent: str) -> str:
    """This machine's unread cursor of an inbox (messaging/unread.py), out of git."""
    return project.path("run", "inbox", _agent(agent) + ".unread.json")


def mcp_tools_file(project: Project) -> str:
    """This machine's copy of `rooms mcp`'s tool listing (mcp_server/server.py), out of git."""
    return project.path("run", "mcp-tools.json")


def capabilities_file(project: Project) -> str:
    """This machine's record of what each provider's server honours (models/capabilities.py), out of git."""
    return project.path("run", "providers.json")


def spawns_dir(project: Project) -> str:
    return project.path("spawns")


def spawn_file(project: Project, spawn_id: str) -> str:
    return project.path("spawns", validate_name(spawn_id, "spawn id") + ".json")


def spawn_aliases_lock(project: Project) -> str:
    return project.path("spawns", "aliases")


def spawn_lock(project: Project, spawn_id: str) -> str:
    return project.path("run", "spawns", validate_name(spawn_id, "spawn id") + ".lock")


def spawn_log(project: Project, spawn_id: str) -> str:
    return project.path("run", "spawns", validate_name(spawn_id, "spawn id") + ".log")


def status_dir(project: Project) -> str:
    return project.path("status")


def status_log(project: Project, agent: str) -> str:
    return project.path("status", _agent(agent) + ".jsonl")


def seen_dir(project: Project) -> str:
    return project.path("run", "seen")


def seen_file(project: Project, agent: str) -> str:
    return project.path("run", "seen", _agent(agent))


def tick_log(project: Project) -> str:
    """What cron's `rooms tick` prints (git-ignored like the rest of run/)."""
    return project.path("run", "tick.log")


def wake_lock(project: Project, agent: str) -> str:
    return project.path("run", "wake", _agent(agent))


# roundtables, schedule, memories ------------------------------------------------------------------

def roundtable_queue_file(project: Project) -> str:
    return project.path("roundtables", "queue.jsonl")


def schedule_fired_log(project: Project) -> str:
    return project.path("schedule", "fired.jsonl")


def memories_dir(project: Project) -> str:
    return project.path("memories")


def memories_file(project: Project, agent: str) -> str:
    return project.path("memories", _agent(agent) + ".jsonl")


def reservations_log(project: Project) -> str:
    return project.path("reservations", "log.jsonl")


# listing a part's folder ----------------------------------------------------------------------------

_skipped: set[str] = set()
_quiet: list[bool] = []  # `rooms doctor` names stray files itself: no warning on top


def record_names(project: Project, folder: str, suffix: str, what: str) -> list[str]:
    """The names of the `what` records in `folder` (files named `<name><suffix>`), sorted.

    A file whose name is not a valid name (`spawns/README.json`, `groups/Notes.jsonl`, a name that is
    not UTF-8) is not a record of the part — a person or another tool put it there: it is skipped with
    one warning per process (`skip_stray`), so a stray file never disables the part or an unrelated
    command. `rooms doctor` names each one (`stray_files`)."""
    from rooms_cli.store.ids import is_valid_name

    try:
        entries = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    names = []
    for entry in entries:
        if not entry.endswith(suffix) or entry.startswith("."):
            continue
        name = entry[: -len(suffix)] if suffix else entry
        if is_valid_name(name):
            names.append(name)
        else:
            skip_stray(project, os.path.join(folder, entry), f"its name is not a valid {what}")
    return sorted(names)


def quiet_strays(quiet: bool = True) -> None:
    """No skip warnings until `quiet_strays(False)` (`rooms doctor` lists each stray file as a finding)."""
    _quiet[:] = [True] if quiet else []


def skip_stray(project: Project, path: str, why: str) -> None:
    """Warn once per process that `path` is skipped because `why` (a reader that does not own it)."""
    rel = project.relative(path)
    if rel in _skipped or _quiet:
        return
    _skipped.add(rel)
    from rooms_cli.core import terminal

    terminal.warn(f"skipping {rel}: {why} (rooms doctor lists it)")


# search ---------------------------------------------------------------------------------------------

def search_index_file(project: Project) -> str:
    """This machine's full-text index of the logs (store/ftsindex.py), out of git: deleting it loses nothing.
    Only its folder is checked here: whatever is found at the file's own name (a symlink, a folder) is not
    the index, and store/ftsindex.py removes it (never following it) and builds the index anew."""
    return os.path.join(project.path("run", "search"), "index.sqlite")
