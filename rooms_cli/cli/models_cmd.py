"""Commands of the models part (registered by rooms_cli.cli.app)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this part's commands to the root app."""
