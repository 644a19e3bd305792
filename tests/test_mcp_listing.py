"""`rooms mcp` keeps its tool listing in .rooms/run/mcp-tools.json: the same listing as deriving it,
derived again when rooms' sources (or the SDK, pydantic, Python) change or the copy is damaged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from rooms_cli.mcp_server import server  # noqa: E402
from rooms_cli.mcp_server.tools import TOOLS  # noqa: E402
from rooms_cli.store import layout  # noqa: E402


def dumped(tools) -> list[dict]:
    return [t.model_dump(mode="json", by_alias=True, exclude_unset=True) for t in tools]


def test_the_kept_listing_is_the_derived_one(project):
    derived = dumped(server.describe(op) for op in TOOLS.values())
    assert dumped(server.listing(project)) == derived  # derives and keeps it
    assert Path(layout.mcp_tools_file(project)).exists()
    assert dumped(server.listing(project)) == derived  # read back


def test_a_listing_of_other_sources_or_a_damaged_one_is_derived_again(project, monkeypatch):
    path = Path(layout.mcp_tools_file(project))
    server.listing(project)
    kept = json.loads(path.read_text())
    kept["tools"][0]["description"] = "stale"
    path.write_text(json.dumps(kept))
    assert server.listing(project)[0].description == "stale"  # the same sources: trusted
    monkeypatch.setattr(server, "source_key", lambda: "a rooms_cli file changed")
    assert server.listing(project)[0].description != "stale"
    path.write_text("{broken")
    assert [t.name for t in server.listing(project)] == list(TOOLS)


def test_a_tool_whose_arguments_model_is_built_on_its_first_call(project):
    from rooms_cli.mcp_server.tools import Session
    from rooms_cli.project.config import load_config

    tools = server.Tools(Session(project=project, config=load_config(project), me="ann", default_room="default"))
    assert tools._models == {}
    assert dict(tools.arguments("inbox", {"peek": True}))["peek"] is True
    assert list(tools._models) == ["inbox"]
