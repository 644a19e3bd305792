"""Every operation, declared once: its words, parameters, body and MCP tool (declare.py says how).

The command line (cli/), the MCP server (mcp_server/) and `rooms top` (tui/) are adapters over these
declarations; none of them imports another.
"""
