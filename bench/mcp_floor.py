"""The MCP SDK's own floor for the calls bench/scale.py measures: a low-level server whose tools
return fixed results (the ones `rooms mcp` gave, read from a JSON file), over the SDK's own stdio
transport. What it takes to answer is what the SDK costs for that result, with no work behind it.

    python bench/mcp_floor.py RESULTS.json     # {"tool": result, ...}; spoken to over stdin/stdout
"""

from __future__ import annotations

import json
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

RESULTS = json.loads(open(sys.argv[1]).read())


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name=name, input_schema={"type": "object"}) for name in RESULTS])


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    data = RESULTS[params.name]
    text = json.dumps(data)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=json.loads(text))


async def main() -> None:
    server = Server("floor", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
