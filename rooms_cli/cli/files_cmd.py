"""`rooms files reserve|release|list|check`: say which files you are editing before you edit them.

Each command is declared once in operations/files.py (with its MCP tool); this registers them."""

from __future__ import annotations

import typer

from rooms_cli.cli.shared import declared_command
from rooms_cli.operations import files as operations_files

files_app = typer.Typer(
    help="File reservations: glob patterns an agent is editing, exclusive or shared, under a lease.\n\n"
         "Example: rooms files reserve 'src/auth/**' --as frontend --ttl 1h --reason 'login form'",
    no_args_is_help=True,
)

for _op in operations_files.OPERATIONS:
    files_app.command(_op.words[-1])(declared_command(_op))
