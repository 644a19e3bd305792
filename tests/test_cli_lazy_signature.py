"""`@shared` builds a command's signature only when typer converts that command (start-up cost)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rooms_cli.cli.shared import Run, shared

PROBE = """
import gc
from rooms_cli.cli import app, board_cmd, shared
app.app(["task", "next", "--help"], standalone_mode=False)
built = {c.__name__ for c in gc.get_objects() if isinstance(c, shared.Command) and "__signature__" in vars(c)}
tasks = {c.callback.__name__ for c in board_cmd.task_app.registered_commands}
print(sorted(built - tasks), "task_next" in built)
"""


def test_running_one_command_builds_only_the_signatures_of_its_group():
    """`rooms task next --help` converts the group `task` (typer converts a group whole), no other command."""
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[] True"


def test_a_command_declaring_a_shared_option_itself_is_refused_when_converted():
    @shared(as_=True)
    def clash(run: Run, as_: str = "") -> None:
        pass

    with pytest.raises(TypeError, match="declares as_ itself"):
        clash.__signature__  # noqa: B018


def test_the_command_passes_the_shared_options_as_a_run():
    @shared(room=True)
    def show(run: Run, task_id: str) -> tuple:
        return run.room_, run.json, task_id

    assert show(task_id="t-1", room="r", dir=None, json_=True) == ("r", True, "t-1")
    assert list(show.__signature__.parameters) == ["task_id", "room", "dir", "json_"]
