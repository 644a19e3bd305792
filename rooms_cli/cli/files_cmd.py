"""`rooms files reserve|release|list|check`: say which files you are editing before you edit them.

Each command is declared once in operations/files.py (with its MCP tool); this registers them."""

from __future__ import annotations

from rooms_cli.cli.dispatch import declared_command
from rooms_cli.cli.options import commands
from rooms_cli.operations import files as ops

files_app = commands("File reservations: glob patterns an agent is editing, exclusive or shared, under a lease.\n\n"
         "Example: rooms files reserve 'src/auth/**' --as frontend --ttl 1h --reason 'login form'")

for _op in ops.OPERATIONS:
    files_app.command(_op.words[-1])(declared_command(_op))
