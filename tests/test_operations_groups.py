"""The group operations are declared once (operations/groups.py): the MCP tools' schemas that the
declarations carry where the tool differs from the command line, held to what the hand-written tools took."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rooms_cli.mcp_server.server import input_model, input_schema
from rooms_cli.mcp_server.tools import TOOLS
from rooms_cli.operations import groups as operations_groups


def schema(name: str) -> dict:
    return input_schema(input_model(TOOLS[name]))


def test_every_group_tool_comes_from_its_declaration():
    declared = {op.mcp.name: op for op in operations_groups.OPERATIONS if op.mcp is not None}
    assert set(declared) == {n for n in TOOLS if n.startswith("group_")}
    assert all(TOOLS[name].declared is op for name, op in declared.items())


def test_group_spawn_takes_lists_where_the_command_line_takes_one_member():
    props = schema("group_spawn")["properties"]
    assert list(props) == ["name", "profiles", "handles"]
    assert props["profiles"]["minItems"] == 1 and props["profiles"]["items"] == {"type": "string"}
    assert props["handles"]["anyOf"][0]["items"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    model = input_model(TOOLS["group_spawn"])
    assert model.model_validate({"name": "rev", "profiles": ["a", "b"], "handles": [None, "sec"]}).handles == [None, "sec"]
    with pytest.raises(ValidationError):
        model.model_validate({"name": "rev", "profiles": []})


def test_group_ask_takes_its_members_as_a_list_over_mcp_and_comma_separated_on_the_command_line():
    """One parameter a side takes differently: a list of profiles over MCP, `--profiles a,b` (or a preset) on the command line."""
    props = schema("group_ask")["properties"]
    assert list(props) == ["objective", "profiles", "output_format", "tool_guidance", "boundaries", "reducer", "mode",
                           "timeout_seconds"]
    assert props["profiles"]["type"] == "array" and props["profiles"]["minItems"] == 1
    assert props["mode"]["enum"] == ["all", "any"] and props["mode"]["default"] == "all"
    assert (props["timeout_seconds"]["minimum"], props["timeout_seconds"]["maximum"]) == (0, 3600)
    ask = operations_groups.group_ask
    assert [p.name for p in ask.cli_params()][:3] == ["objective", "profiles", "preset"]
    assert ask.options()["--profiles"].kind == "str"  # comma-separated on the command line
