"""`rooms files reserve|release|list|check`: say which files you are editing before you edit them.

Each command is declared once in operations/files.py (with its MCP tool); this registers them."""

from __future__ import annotations

from rooms_cli.cli.dispatch import declared_command
from rooms_cli.cli.help import GROUPS
from rooms_cli.cli.options import commands
from rooms_cli.operations import files as ops

files_app = commands(GROUPS["files"])

for _op in ops.OPERATIONS:
    files_app.command(_op.words[-1])(declared_command(_op))
