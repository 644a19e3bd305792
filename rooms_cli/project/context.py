"""Who acts, where, in which project: resolved once per call from flags and the environment.

Every operation's body (rooms_cli/operations/) takes a Context first. The adapter that runs it makes one:
the CLI from `--dir`, `--as`, `--room` (cli/shared.py `Run`, which also shows notes and live lines on a
terminal), the MCP server from its session and the call's `room`, `rooms top` from its own. What the
person at a terminal may see while an operation runs goes through the hooks below, which do nothing
here: `note` (a line on stderr), `waiting` (a live status line while it blocks) and `on_event` (the chat
turn's and the roundtable's events as they happen).
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from functools import cached_property

from rooms_cli.project.config import Config, identity, load_config
from rooms_cli.store import layout
from rooms_cli.store.ids import validate_name
from rooms_cli.store.paths import Project, open_project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from typing import Any

DEFAULT_ROOM = "default"


class Context:
    """One call's project, identity, room and config, each resolved on first use.

    `project` may be given (the MCP server's) or found from `dir` (`--dir`, `ROOMS_DIR`, upwards);
    `config` may be given (a server keeps its own); `as_` and `room` are the flags as given (None: not)."""

    on_event: Callable[..., Any] | None = None  # the listener of a chat turn or a roundtable (adapters set it)
    person = False  # a person at a terminal (the command line, `rooms top`): slash commands are theirs alone

    def __init__(self, project: Project | None = None, *, dir: str | None = None, as_: str | None = None,
                 room: str | None = None, config: Config | None = None) -> None:
        self.dir = dir
        self.as_ = as_
        self.room_ = room  # as given (None: not given); `room` is the one resolved
        if project is not None:
            self.project = project
        if config is not None:
            self.config = config

    @classmethod
    def open(cls, dir: str | None = None, as_: str | None = None, room: str | None = None) -> Context:
        """The context of `dir` (found upwards when None), its project opened now."""
        return cls(open_project(dir), as_=as_, room=room)

    @cached_property
    def project(self) -> Project:
        return open_project(self.dir)

    @cached_property
    def config(self) -> Config:
        return load_config(self.project)

    @cached_property
    def me(self) -> str:
        """The acting identity: --as, ROOMS_AGENT, user: in .rooms.yaml, $USER."""
        return identity(self.as_, lambda: self.config)

    @cached_property
    def room(self) -> str:
        """The current room: --room, ROOMS_ROOM, `rooms room use`, else `default`."""
        if self.room_ is not None:  # an explicit empty --room is an error, not "unset"
            return validate_name(self.room_, "room id")
        env = os.environ.get("ROOMS_ROOM")
        if env:
            return validate_name(env, "room id (ROOMS_ROOM)")
        current = read_current_room(self.project)
        return current or DEFAULT_ROOM

    def note(self, text: str) -> None:
        """A line for the person who asked (the CLI prints it on stderr); nothing by default."""

    def done(self, sentence: str) -> None:
        """What the operation has done so far (a write that completed: "released t-…"): should a later
        step fail (a push, printing the result), the CLI's error says it; nothing by default."""

    def waiting(self, describe: Callable[[float], str]) -> AbstractContextManager[object]:
        """Around a wait: the CLI redraws `describe(seconds elapsed)` on a terminal; nothing by default."""
        return nullcontext()


def current_room_path(project: Project) -> str:
    # run/ is local state, kept out of git by .rooms/.gitignore
    return layout.current_room_file(project)


def read_current_room(project: Project) -> str | None:
    from rooms_cli.store import files

    value = files.read_line(current_room_path(project))
    return value if value and validate_name(value, "current room") else None


def write_current_room(project: Project, room: str) -> None:
    from rooms_cli.store import atomic

    atomic.write_text(current_room_path(project), validate_name(room, "room id") + "\n")
