"""File reservations: agents say which paths they are editing before they edit (ledger.py), decided on
glob patterns against each other (patterns.py); `rooms files …`, MCP reserve_files…, and a git pre-commit guard."""
