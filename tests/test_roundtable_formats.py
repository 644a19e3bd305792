"""Formats: the 16 built-ins, overrides and additions from .rooms.yaml, validation with the key path."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rooms_cli.core.errors import InvalidData
from rooms_cli.project.config import Config
from rooms_cli.roundtable.formats import BUILTINS, load_formats


def _fmt(name, spec):
    return load_formats(Config({"formats": {name: spec}}))[name]


def test_sixteen_builtins_with_the_sources_numbers():
    assert len(BUILTINS) == 16
    s, d, w = BUILTINS["standup"], BUILTINS["debate"], BUILTINS["watercooler"]
    assert (s.min_agents, s.max_agents, s.min_turns, s.max_turns, s.temperature, s.opens) == (4, 6, 6, 12, 0.6, "leader")
    assert (d.min_agents, d.max_agents, d.min_turns, d.max_turns, d.temperature) == (2, 3, 6, 10, 0.8)
    assert (w.min_agents, w.max_agents, w.min_turns, w.max_turns, w.temperature) == (2, 3, 2, 5, 0.9)
    for name in ("brainstorm", "strategy", "deep-dive", "check-in", "content-review", "night-briefing", "retro",
                 "post-mortem", "pre-mortem", "planning", "design-review", "one-on-one", "decision"):
        fmt = BUILTINS[name]
        assert fmt.purpose and fmt.min_agents <= fmt.max_agents and fmt.min_turns <= fmt.max_turns


def test_an_override_changes_only_the_keys_given():
    fmt = _fmt("standup", {"min_agents": 3})
    assert (fmt.min_agents, fmt.max_agents, fmt.temperature, fmt.source) == (3, 6, 0.6, "overridden")


def test_a_new_format_needs_every_range_key():
    fmt = _fmt("lightning", {"min_agents": 2, "max_agents": 4, "min_turns": 2, "max_turns": 4, "temperature": 0.7,
                             "opens": "random"})
    assert fmt.source == ".rooms.yaml"
    with pytest.raises(InvalidData, match="formats.lightning is a new format and needs .*max_turns"):
        _fmt("lightning", {"min_agents": 2, "max_agents": 4, "min_turns": 2, "temperature": 0.7, "opens": "random"})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"min_agents": 5, "max_agents": 3}, r"formats.debate: min_agents \(5\) is greater than max_agents \(3\)"),
        ({"min_turns": 9, "max_turns": 2}, r"formats.debate: min_turns \(9\) is greater than max_turns \(2\)"),
        ({"temperature": 2.5}, r"formats.debate.temperature must be a number from 0 to 2, found 2.5"),
        ({"temperature": -0.1}, r"formats.debate.temperature must be a number from 0 to 2"),
        ({"opens": "loudest"}, r"formats.debate.opens must be one of leader, first, random, found 'loudest'"),
        ({"min_agents": 1}, r"formats.debate.min_agents must be a whole number ≥ 2"),
        ({"max_turns": "ten"}, r"formats.debate.max_turns must be a whole number"),
        ({"speed": 3}, r"formats.debate.speed is not a format key"),
    ],
)
def test_bad_formats_are_clear_errors_naming_the_key(spec, message):
    with pytest.raises(InvalidData, match=message):
        _fmt("debate", spec)


def test_formats_command_lists_builtins_and_overrides(cli, project_dir):
    (project_dir / ".rooms.yaml").write_text("formats:\n  standup: {min_agents: 3}\n")
    run = cli("roundtable", "formats", "--json")
    assert run.exit_code == 0
    by_name = {f["name"]: f for f in run.json()}
    assert len(by_name) == 16 and by_name["standup"]["min_agents"] == 3
    human = cli("roundtable", "formats")
    assert "standup (overridden)" in human.stdout and "watercooler" in human.stdout


def test_a_bad_range_in_the_config_stops_the_command_with_one_sentence(cli, project_dir):
    (project_dir / ".rooms.yaml").write_text("formats:\n  standup: {min_agents: 7}\n")
    run = cli("roundtable", "run", "standup")
    assert run.exit_code == 1
    assert run.stderr.strip() == "error: .rooms.yaml: formats.standup: min_agents (7) is greater than max_agents (6)"
    assert "Traceback" not in run.stderr


def test_unknown_format_lists_the_known_ones(cli, project_dir):
    run = cli("roundtable", "run", "karaoke", "--json")
    assert run.exit_code == 1
    err = run.err_json()["error"]
    assert err["code"] == "not_found" and "standup" in err["message"]


_values = st.one_of(st.integers(-3, 20), st.floats(-1, 3, allow_nan=False), st.text(max_size=5), st.booleans(), st.none())


@given(st.dictionaries(st.sampled_from(["min_agents", "max_agents", "min_turns", "max_turns", "temperature", "opens",
                                        "purpose", "bogus"]), _values))
def test_any_override_is_either_a_valid_format_or_a_clear_error(spec):
    try:
        fmt = _fmt("debate", spec)
    except InvalidData as err:
        assert str(err).startswith(".rooms.yaml: formats.debate")
    else:
        assert 2 <= fmt.min_agents <= fmt.max_agents and 1 <= fmt.min_turns <= fmt.max_turns
        assert 0 <= fmt.temperature <= 2 and fmt.opens in ("leader", "first", "random")
