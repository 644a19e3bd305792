"""`rooms search`: one ranked search over everything said and planned (docs/search.md).

Declared in operations/search.py (on the fast path: agents search in loops)."""

from __future__ import annotations

from rooms_cli.cli.shared import declared_command
from rooms_cli.operations.search import search

search_cmd = declared_command(search)
