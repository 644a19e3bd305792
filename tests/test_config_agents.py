"""Config (.rooms.yaml) and agent definitions: validation is one clear line with the documented exit code."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.agents.definitions import Agent, create_agent, load_agent, parse_agent, render_agent
from rooms_cli.core.errors import InvalidData
from rooms_cli.project.config import load_config


def write_config(project_dir, text):
    (project_dir / ".rooms.yaml").write_text(text)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("default_model: [a, b]\n", "'default_model' must be"),
        ("providers: 5\n", "'providers' must be"),
        ("providers: {x: {type: magic}}\n", "providers.x.type"),
        ("providers: {x: {type: command, command: 'claude -p'}}\n", "not a shell string"),
        ("providers: {x: {type: openai, api_key: sk-123}}\n", "api_key_env"),
        ("providers: {x: {type: openai, timeout: -1}}\n", "providers.x.timeout"),
        ("wake: maybe\n", "'wake' must be true or false"),
        ("context_threshold: 3\n", "context_threshold"),
        ("runner: 'claude -p'\n", "'runner' must be"),
        ("- just\n- a list\n", "mapping of settings"),
        ("user: [unclosed\n", "not valid YAML at line"),
    ],
)
def test_bad_config_is_one_clear_error_naming_the_key(project_dir, cli, text, needle):
    write_config(project_dir, text)
    before = {p: p.read_bytes() for p in project_dir.rglob("*") if p.is_file()}
    run = cli("config", "show")
    assert run.exit_code == 1
    assert needle in run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    after = {p: p.read_bytes() for p in project_dir.rglob("*") if p.is_file()}
    assert before == after


def test_unknown_config_keys_warn_and_are_ignored(project_dir, cli):
    write_config(project_dir, "colour: blue\ndefault_model: offline\n")
    run = cli("config", "show", "--json")
    assert run.exit_code == 0
    assert "unknown key 'colour'" in run.stderr
    assert run.json()["default_model"] == "offline"


def test_config_show_masks_secrets_and_lists_builtin_providers(project_dir, cli):
    write_config(project_dir, "providers:\n  corp: {type: openai, base_url: 'http://x/v1', headers: {Authorization: Bearer-abc}}\n")
    data = cli("config", "show", "--json").json()
    assert data["providers"]["corp"]["headers"]["Authorization"] == "****"
    assert {"offline", "openai", "ollama", "anthropic", "external"} <= set(data["providers"])


def test_the_packaged_config_example_is_the_documented_one_and_valid():
    from pathlib import Path

    from rooms_cli.project.config import validate
    from rooms_cli.project.init import config_example_text

    repo_copy = Path(__file__).resolve().parent.parent / ".rooms.yaml.example"
    assert config_example_text() == repo_copy.read_text()
    import yaml

    validate(yaml.safe_load(config_example_text()), ".rooms.yaml.example")


AGENT_OK = "---\nid: x\ntags: [a, b]\n---\nYou are x.\n"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("---\ntags: 5\n---\nhi\n", "field 'tags'"),
        ("---\nquiet: yes please\n---\nhi\n", "field 'quiet'"),
        ("---\ntemperature: 7\n---\nhi\n", "field 'temperature'"),
        ("---\ncontext_window: lots\n---\nhi\n", "field 'context_window'"),
        ("---\nmax_tokens: -5\n---\nhi\n", "field 'max_tokens'"),
        ("---\nmax_tokens: true\n---\nhi\n", "field 'max_tokens'"),
        ("---\nvoice: {mood: sad}\n---\nhi\n", "field 'voice'"),
        ("---\naffinity: {boss: 4}\n---\nhi\n", "affinity.boss"),
        ("---\nid: Bad/Id\n---\nhi\n", "field 'id'"),
        ("---\ntags: [a]\n---\n\n", "directive"),
        ("---\ntags: [a\n---\nhi\n", "not valid YAML"),
        ("---\nmodel: nowhere:x\n---\nhi\n", "unknown provider 'nowhere'"),
    ],
)
def test_bad_agent_files_name_file_and_field(project_dir, cli, text, needle):
    (project_dir / ".rooms" / "agents" / "broken.md").write_text(text)
    run = cli("agent", "list")
    assert run.exit_code == 1
    assert "broken.md" in run.stderr and needle in run.stderr
    assert "Traceback" not in run.stderr


def test_agent_new_writes_a_definition_that_reads_back(project, cli):
    run = cli("agent", "new", "critic", "--tags", "review,tests", "--disposition", "blunt", "--json")
    assert run.exit_code == 0, run.stderr
    agent = load_agent(project, "critic")
    assert agent.tags == ["review", "tests"] and agent.disposition == "blunt"
    again = cli("agent", "new", "critic")
    assert again.exit_code == 3 and "already exists" in again.stderr


def test_agent_show_is_whois(project_dir, cli):
    data = cli("agent", "show", "researcher", "--json").json()
    assert data["effective_model"] == "offline"
    assert data["rooms"] == ["default"]
    assert data["path"] == ".rooms/agents/researcher.md"
    assert "board" in data["capabilities"]


def test_unknown_agent_lists_the_known_ones(project_dir, cli):
    run = cli("agent", "show", "nobody")
    assert run.exit_code == 1 and "known agents:" in run.stderr and "researcher" in run.stderr


words = st.text(alphabet="abcdefghij -", min_size=1, max_size=12).map(str.strip).filter(bool)


@settings(max_examples=60, deadline=None)
@given(
    tags=st.lists(st.text(alphabet="abcxyz-", min_size=1, max_size=8), max_size=4),
    disposition=st.text(max_size=40).filter(lambda s: "\r" not in s and "\x85" not in s),
    directive=st.text(min_size=1, max_size=200).filter(lambda s: s.strip() and "---" not in s and "\r" not in s),
    quiet=st.booleans(),
    temperature=st.none() | st.floats(min_value=0, max_value=2),
    max_tokens=st.none() | st.integers(min_value=1, max_value=100_000),
)
def test_agent_files_round_trip(tags, disposition, directive, quiet, temperature, max_tokens):
    agent = Agent(id="a1", directive=directive.strip(), tags=tags, disposition=disposition, quiet=quiet,
                  temperature=temperature, max_tokens=max_tokens)
    back = parse_agent(render_agent(agent), "a1.md", "a1")
    assert back.tags == tags and back.disposition == disposition and back.quiet == quiet
    assert back.directive == directive.strip()
    assert back.temperature == temperature and back.max_tokens == max_tokens


def test_create_agent_never_writes_what_it_cannot_read(project):
    with pytest.raises(InvalidData):
        create_agent(project, Agent(id="empty", directive="   "))
    assert not (Path(project.dir) / "agents" / "empty.md").exists()


def test_config_types_are_checked_when_loaded(project_dir, project):
    write_config(project_dir, "max_spawn_depth: three\n")
    with pytest.raises(InvalidData, match="max_spawn_depth"):
        load_config(project)
