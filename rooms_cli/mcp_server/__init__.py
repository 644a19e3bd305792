"""`rooms mcp`: the parts as MCP tools over stdio (tools.py: the table; server.py: the SDK wiring).

Needs the optional extra `rooms-cli[mcp]` (the official `mcp` SDK); nothing else imports this package.
"""
