"""The fast path (rooms_cli/cli/fast.py) keeps typer's command-line contract for every declared operation.

Both parsers are derived from one declaration per operation (rooms_cli/operations/), and both hand
their values to the same `invoke` (cli/dispatch.py). For every operation, the typer command built from
the declaration has the declared options, flags, environment variables, arguments, required options and
defaults; on generated command lines (a sample drawn across the operations) the fast parser either
hands the line to typer or gives exactly the values typer gives (or the same error); and, on a few
lines run as real processes, both print the same thing and exit the same way.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, checkout_path, command_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooms_cli.cli import fast
from rooms_cli.cli.mcp_cmd import mcp
from rooms_cli.core.errors import RoomsError
from rooms_cli.operations import every

DECLARED = {op.name: op for op in (*every(), mcp)}  # every command the fast path reads (reply's and roundtable_list's
SHARED_DEFAULTS = {"as_": None, "room": None, "dir": None, "json_": False}  # twins are their commands' tools)


def click_command(name: str):
    """The click command `rooms NAME` runs: a leaf, or a group that runs one itself (`rooms status`)."""
    import typer

    from rooms_cli.cli.app import app

    found = command_tree().get(name)
    if found is None:
        found = typer.main.get_command(app)
        for word in name.split():
            found = found.commands[word]
    return found


def test_every_typer_command_is_what_its_operation_declares():
    for name, op in DECLARED.items():
        click = click_command(name)
        options = {p.name: p for p in click.params if p.param_type_name == "option"}
        arguments = [p.name for p in click.params if p.param_type_name == "argument"]
        assert [p.name for p in op.arguments()] == arguments, name
        by_param: dict[str, set[str]] = {}
        for flag, param in op.options().items():
            by_param.setdefault(param.name, set()).add(flag)
        assert by_param == {n: set(p.opts) | set(p.secondary_opts) for n, p in options.items()}, name
        for flag, param in op.options().items():
            declared = options[param.name]
            assert (param.kind == "bool") == bool(declared.is_flag), (name, flag)
            assert (param.kind == "strs") == bool(declared.multiple), (name, flag)
            assert param.envvar == declared.envvar, (name, flag)
            assert (param.parse is not None) == (type(declared.type).__name__ == "FuncParamType"), (name, flag)
        assert {p.name for p in op.params if p.cli and p.required and p.flags} == {p.name for p in options.values() if p.required}
        own = {p.name: p.default for p in click.params if p.name not in op.shared and not p.required}
        assert {n: op.defaults()[n] for n in own} == own, name  # the declaration holds the defaults
        # one value each (a list argument: every value); an optional one (chat's message) is always given on the fast path
        assert [p.nargs for p in click.params if p.param_type_name == "argument"] == \
            [-1 if p.kind == "strs" else 1 for p in op.arguments()], name


# --- adding an option is one edit -----------------------------------------------------------------------


def test_a_new_option_declared_once_reaches_typer_the_fast_path_the_mcp_tool_and_the_body(monkeypatch):
    """A toy operation with an option nobody has: declared once, beside its body, it is in typer's help,
    parsed by the fast path with its parser and default, in the MCP tool's schema under its MCP name, and
    the body gets its value from all three (typer, the fast path, an MCP call)."""
    from typer.testing import CliRunner

    from rooms_cli import operations
    from rooms_cli.cli.app import RoomsGroup
    from rooms_cli.cli.dispatch import declared_command
    from rooms_cli.cli.views import renders
    from rooms_cli.mcp_server.server import input_schema
    from rooms_cli.mcp_server.tools import Session, declared_arguments, tool_of
    from rooms_cli.operations.declare import Mcp, McpArg, Param, operation
    from rooms_cli.operations.values import duration_value

    @operation("toy", shared=("as_", "room", "dir", "json_"), params=(
        Param("colour", default="blue", help="The colour of the toy.", flags=("--colour", "-c"), mcp=McpArg(name="color")),
        Param("wait", "duration", None, "How long to wait.", ("--wait",), parse=duration_value, metavar="DURATION",
              show_default=False),
    ), mcp=Mcp("toy", "Play with a toy", {"type": "object"}, description="Play with a toy."))
    def toy(ctx, colour, wait):
        """Play with a toy."""
        return {"as": ctx.as_, "colour": colour, "wait": wait}

    seen = []
    renders(toy)(lambda run, result, values: seen.append(result))

    import typer

    app = typer.Typer(cls=RoomsGroup, rich_markup_mode=None)
    app.command("toy")(declared_command(toy))
    app.command("other")(lambda: None)
    help_text = CliRunner().invoke(app, ["toy", "--help"], env={"COLUMNS": "120"}).output
    assert "-c, --colour" in help_text and "The colour of the toy." in help_text and "[default: blue]" in help_text
    assert "--wait DURATION" in help_text and "How long to wait." in help_text
    assert CliRunner().invoke(app, ["toy", "-c", "red", "--wait", "2m", "--as", "me"]).exit_code == 0
    assert seen.pop() == {"as": "me", "colour": "red", "wait": 120.0}

    monkeypatch.setattr(operations, "PARTS", {**operations.PARTS, lambda: (toy,): ("toy",)})
    found = fast.parse(["toy", "--wait", "1m", "--as", "me"], {})
    assert found is not None and found[0] is toy
    assert fast.convert(*found) == {"colour": "blue", "wait": 60.0, "as_": "me"}
    assert fast.parse(["toy", "--colour"], {}) is None  # a missing value: typer says so

    from pydantic import ConfigDict, create_model

    schema = input_schema(create_model("toy_arguments", __config__=ConfigDict(extra="forbid"), **declared_arguments(toy)))
    assert set(schema["properties"]) == {"color", "wait", "room"}
    assert schema["properties"]["color"] == {"default": "blue", "description": "The colour of the toy.", "type": "string"}
    assert schema["additionalProperties"] is False
    session = Session(project=None, config=None, me="bot", default_room="default")  # type: ignore[arg-type]
    assert tool_of(toy).fn(session, color="green", wait="1m", room=None) == {"as": "bot", "colour": "green", "wait": 60.0}


def test_a_body_that_does_not_take_a_declared_parameter_fails_at_import():
    """The declaration and the body are held together when the module is imported, not when a call comes."""
    from rooms_cli.operations.declare import Param, operation

    with pytest.raises(TypeError, match="takes \\(colour\\) after the context; the declaration gives \\(colour, size\\)"):
        @operation("toy", params=(Param("colour"), Param("size", default=1, flags=("--size",))))
        def toy(ctx, colour):
            """Play."""


def test_every_declared_parameter_reaches_the_body_from_the_command_line_and_from_mcp():
    """Each surface gives the body every parameter it takes: one the command line does not take has its
    default there, one the tool does not take its MCP default; so no surface can leave one out."""
    from rooms_cli.mcp_server.tools import TOOLS, call_values
    from rooms_cli.operations.declare import REQUIRED, McpArg

    def sample(param):  # a value of the kind the tool takes
        arg = param.mcp if isinstance(param.mcp, McpArg) else McpArg()
        if arg.choices:
            return arg.choices[0]
        return {"strs": ["x"], "optional_strs": ["x"], "int": 1, "float": 1.0, "bool": True, "duration": "1m",
                "int_or_str": 1}.get(arg.kind or param.kind, "x")

    for name, op in DECLARED.items():
        given = {p.name: sample(p) for p in op.params if p.cli and p.required}
        assert list(op.body_values(given)) == [p.name for p in op.params if not p.view], name
    for tool in TOOLS.values():
        op = tool.declared
        if op is None:
            continue
        required = {p.mcp_name: sample(p) for p in op.params if p.mcp_name and p.mcp_default is REQUIRED}
        assert list(call_values(op, required)) == [p.name for p in op.params if not p.view], tool.name


# --- generated command lines: the fast parse agrees with typer's, or leaves the line to it -------------

VALUES = ["x", "a b", "", "15m", "0", "abc", "todo", "pending", "md", "t-1", "-x", "--json", "-", "--", "a=b"]
OTHERS = ["-h", "--help", "--bogus", "--", "-", "-rdefault", "--json=1", "--no-json", "-x"]


def tokens(command) -> st.SearchStrategy[list[str]]:
    """Command lines of well-formed pieces (an option and its value, a flag, `--opt=value`) and, less
    often, pieces the fast parser must hand over (help, unknown options, `--`, a value starting with -)."""
    options = command.options()
    flags = sorted(options)
    valued = [f for f in flags if options[f].kind != "bool"]
    switches = [f for f in flags if options[f].kind == "bool"]
    value = st.sampled_from(VALUES)
    longs = [f for f in valued if f.startswith("--")]
    piece = st.one_of(
        *([st.tuples(st.sampled_from(valued), value).map(list)] if valued else []),
        *([st.builds(lambda f, v: [f"{f}={v}"], st.sampled_from(longs), value)] if longs else []),
        *([st.sampled_from(switches).map(lambda f: [f])] if switches else []),
    )
    noise = st.sampled_from(OTHERS + VALUES).map(lambda t: [t])
    pieces = st.lists(st.one_of(piece, piece, piece, noise), max_size=5)
    return pieces.map(lambda ps: [t for p in ps for t in p])


def typer_parse(name: str, args: list[str]):
    """typer's parameters for `args`, or the exception it raises (usage error, help, our parser's error)."""
    click = click_command(name)
    try:
        return click.make_context(name.split()[-1], list(args)).params
    except BaseException as exc:  # noqa: BLE001 - click exits for --help and fails on usage errors
        return exc


def check_agreement(name: str, args: list[str], environ: dict) -> bool:
    """True when the fast path took the line (and agreed with typer)."""
    words = name.split()
    found = fast.parse([*words, *args], environ)
    if found is None:
        return False
    op, given_values = found
    assert op is DECLARED[name]
    theirs = typer_parse(name, args)
    try:
        ours = fast.convert(op, given_values)
    except RoomsError as exc:
        assert isinstance(theirs, RoomsError), (args, theirs)
        assert (type(exc), exc.message) == (type(theirs), theirs.message)
        return True
    assert isinstance(theirs, dict), (args, theirs)
    expected = {**SHARED_DEFAULTS, **ours}
    for param, value in theirs.items():
        if isinstance(value, tuple | list) or isinstance(expected[param], tuple | list):
            assert list(value or []) == list(expected[param] or []), (args, param)
        else:
            assert value == expected[param], (args, param)
    return True


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_on_generated_command_lines_the_fast_parse_agrees_with_typer_or_hands_over(data, monkeypatch):
    """A sample across every declared operation: each example draws the operation, then a command line."""
    name = data.draw(st.sampled_from(sorted(DECLARED)), label="operation")
    lease = data.draw(st.sampled_from([None, "", "l-1"]), label="ROOMS_LEASE")
    if lease is None:
        monkeypatch.delenv("ROOMS_LEASE", raising=False)
    else:
        monkeypatch.setenv("ROOMS_LEASE", lease)
    args = data.draw(tokens(DECLARED[name]), label="args")
    for _ in DECLARED[name].arguments():
        if data.draw(st.booleans(), label="with an argument"):
            args.insert(data.draw(st.integers(0, len(args)), label="at"), "t-1")
    if name == "task done" and data.draw(st.booleans(), label="with --summary"):
        args += ["--summary", "did it"]
    check_agreement(name, args, dict(os.environ))


COMMON = [
    ("board", ["--json"]),
    ("board", ["--lane", "dev", "--status", "todo", "--format", "md", "-r", "default"]),
    ("task next", ["--as", "dev", "--json"]),
    ("task next", ["--as=dev", "--lease", "15m"]),
    ("task claim", ["t-1", "--as", "dev", "--json"]),
    ("task renew", ["t-1", "--lease-id", "l-1", "--lease", "1h"]),
    ("task release", ["t-1", "--json"]),
    ("task done", ["t-1", "--summary", "spec written", "--artifact", "file:a", "--artifact", "msg:b", "--next", "review",
                   "--result-ref", "file:a", "--json"]),
    ("send", ["--to", "dev", "hello there", "--as", "alice", "--json"]),
    ("send", ["--reply-to", "3", "yes", "--wake"]),
    ("inbox", ["--unread", "--peek", "--as", "dev", "--json"]),
    ("chat", ["@dev how is the deploy going?"]),
    ("chat", ["--explain", "what next?", "-r", "default", "--as", "alice", "--json"]),
    ("chat", ["/who", "--no-wait"]),
    ("attention", ["--as", "dev", "--peek", "--json"]),
    ("hook claude-code stop", ["--timeout", "9m", "--as", "dev"]),
    ("hook claude-code prompt", []),
    ("hook claude-code session-start", ["--dir", "."]),
    ("task list", ["--holder", "dev", "--status", "doing", "--json"]),
    ("transcript", ["-n", "20", "--json", "--room", "default"]),
    ("transcript", ["--ids"]),
    ("watch", ["--all", "--json", "--timeout", "60"]),
    ("watch", ["-r", "a", "--room", "b", "--inbox", "dev", "--board", "--since", "2026-01-01T00:00:00Z"]),
    ("sync", ["--remote", "origin", "--json"]),
    ("board", ["--status", "nonsense"]),  # the parser's error, the same as typer's
    ("task next", ["--lease", "0"]),
]


@pytest.mark.parametrize(("name", "args"), COMMON)
def test_the_command_lines_agents_write_take_the_fast_path(name, args):
    assert check_agreement(name, args, {})


@pytest.mark.parametrize("argv", [
    ["task", "next", "--help"], ["board", "-h"], ["send"], ["task", "done", "t-1"], ["task", "claim"],
    ["send", "a", "b"], ["board", "--json", "--json=1"], ["task", "next", "--lease"], ["send", "--to", "-x", "hi"],
    ["board", "--lane", "a", "--lane", "b"], ["send", "--", "-hi"], ["task"], [], ["--version"], ["transcript", "-n", "0"],
    ["transcript", "--last", "ten"], ["watch", "--last", "-1"], ["task", "list", "--holder"],
    ["chat"], ["chat", "  "], ["chat", "--explain"], ["chat", "-x"],
])
def test_lines_it_does_not_read_without_doubt_go_to_typer(argv):
    assert fast.parse(argv, {}) is None


def test_shell_completion_always_goes_to_typer():
    assert fast.parse(["board", "--json"], {"_ROOMS_COMPLETE": "complete_bash"}) is None


# --- both paths as real processes ---------------------------------------------------------------------

TYPER_MAIN = "import sys; sys.argv = ['rooms', *sys.argv[1:]]; from rooms_cli.cli.app import main; main()"
FAST_MAIN = "import sys; sys.argv = ['rooms', *sys.argv[1:]]; from rooms_cli.cli.fast import main; main()"


@pytest.fixture(scope="module")
def board_project(tmp_path_factory):
    from rooms_cli.board import tasks
    from rooms_cli.messaging.send import send_message
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    root = tmp_path_factory.mktemp("fastpath") / "origin"
    root.mkdir()
    initialize(root, "dev")
    project = open_project(root)
    ids = [tasks.add_task(project, "default", f"task {n}", lane="dev", done="done", by="alice").id for n in range(3)]
    from rooms_cli.project.config import load_config

    send_message(project, load_config(project), "alice", "hello dev", to="dev")
    return root, ids


def run_both(root: Path, tmp_path: Path, args: list[str], env: dict | None = None, input: str | None = None):
    """The same command line through typer and through the fast path, each on its own copy of the project."""
    results = []
    for which, code in (("typer", TYPER_MAIN), ("fast", FAST_MAIN)):
        copy = tmp_path / which
        shutil.copytree(root, copy, symlinks=True)
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("ROOMS_")}
        full_env.update(PYTHONPATH=checkout_path(), ROOMS_DIR=str(copy), NO_COLOR="1", ROOMS_SEED="fast", **(env or {}))
        proc = subprocess.run([sys.executable, "-c", code, *args], env=full_env, capture_output=True, text=True, timeout=60,
                              input=input)
        results.append((proc.returncode, *(normal(text, copy) for text in (proc.stdout, proc.stderr))))
    return results


def normal(text: str, root: Path) -> str:
    """Output with the copy's path, the times of now (`board` says when it was read) and the wording of a
    pass (`* reviewer sips coffee *`, drawn per message id) left out."""
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "<time>", text.replace(str(root), "<root>"))
    text = re.sub(r"(?m)^  \* (\S+) .* \*$", r"  * \1 passes *", text)
    text = re.sub(r'"kind": "pass", "text": "[^"]*"', '"kind": "pass", "text": "<pass>"', text)
    return re.sub(r"\bm-[0-9A-Z]{26}\b", "<message id>", text)  # new messages (ids of old ones are the same)


@pytest.mark.parametrize("args", [
    ["board"],
    ["inbox", "--as", "dev", "--json", "--peek"],
    ["task", "claim", "t-nope", "--as", "dev", "--json"],
    ["task", "next", "--as", "dev", "--lease", "soon"],
    ["chat", "@dev how is the deploy going?", "--as", "alice"],
    ["chat", "/who"],
    ["transcript", "--room", "nosuch"],
    ["watch", "--json", "--timeout", "0", "--last", "3", "--all"],
])
def test_both_paths_print_the_same_and_exit_the_same(board_project, tmp_path, args):
    root, _ = board_project
    typer_result, fast_result = run_both(root, tmp_path, args)
    assert fast_result == typer_result


@pytest.mark.parametrize(("args", "env"), [
    (["board", "--json"], {"ROOMS_LOCK_TIMEOUT": "forever"}),
    (["task", "next", "--as", "dev", "--json"], {"ROOMS_LOCK_TIMEOUT": "-1"}),
])
def test_both_paths_refuse_a_bad_environment_alike(board_project, tmp_path, args, env):
    root, _ = board_project
    typer_result, fast_result = run_both(root, tmp_path, args, env)
    assert fast_result == typer_result
    assert fast_result[0] != 0


HOOK = {"session_id": "s-1", "transcript_path": "/dev/null", "cwd": "<root>", "permission_mode": "default"}


@pytest.mark.parametrize(("args", "event"), [
    (["hook", "claude-code", "stop", "--as", "dev", "--timeout", "1"], {"hook_event_name": "Stop", "stop_hook_active": False}),
    (["hook", "claude-code", "prompt"], {"hook_event_name": "Stop"}),  # the wrong event: a note, nothing else
])
def test_both_paths_answer_a_claude_code_hook_alike(board_project, tmp_path, args, event):
    root, _ = board_project
    payload = json.dumps({**HOOK, **event})
    typer_result, fast_result = run_both(root, tmp_path, args, input=payload)
    assert fast_result == typer_result
    assert fast_result[0] == 0


def test_both_paths_refuse_an_undecodable_argument_alike(board_project, tmp_path):
    root, _ = board_project
    bad = os.fsdecode(b"caf\xe9")
    typer_result, fast_result = run_both(root, tmp_path, ["send", "--to", "dev", bad, "--as", "alice", "--json"])
    assert fast_result == typer_result
    assert fast_result[0] == 2


def test_a_claim_through_either_path_writes_the_same_task_state(board_project, tmp_path):
    root, ids = board_project
    (typer_code, typer_out, _), (fast_code, fast_out, _) = run_both(root, tmp_path, ["task", "claim", ids[0], "--as", "dev", "--json"])
    assert typer_code == fast_code == 0
    mine, theirs = json.loads(fast_out), json.loads(typer_out)
    for claim in (mine, theirs):
        for key in ("expires_at", "lease_id"):
            claim.pop(key)
        claim["task"].pop("lease"), claim["task"].pop("updated_at"), claim.pop("lease")
    assert mine == theirs


def test_the_installed_console_script_is_the_fast_entry_point():
    import tomllib

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["rooms"] == "rooms_cli.cli.fast:main"
    assert (REPO / "rooms_cli" / "__main__.py").read_text().startswith("from rooms_cli.cli.fast import main")
