"""Light start-up: a command imports only the heavy modules it uses (docs/performance.md).

Each command runs as a real process (stdout a pipe, as scripts and coding agents run it) and reports
the modules it imported when it exits; a heavy module on a path that does not need it fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import checkout_path

# the modules worth guarding: each costs 10–60 ms to import
HEAVY = ("pydantic", "rich", "yaml", "httpx", "anyio", "h11", "filelock", "asyncio", "frontmatter", "rapidfuzz",
         "watchfiles", "sqlite3")  # sqlite3: only `rooms search` reads its index (~3 ms)

# the report is written at exit, however the command leaves: the console script ends a command that started
# no thread with os._exit (cli/fast.py `leave`), which runs no atexit hook, so that exit is reported too
REPORT = """
import atexit, json, os, runpy, sys
def report():
    with open(os.environ["IMPORTS_REPORT"], "w") as out:
        out.write(json.dumps(sorted(sys.modules)))
atexit.register(report)
_exit = os._exit
def leave(code):
    report()
    _exit(code)
os._exit = leave
sys.argv = ["rooms", *sys.argv[1:]]
runpy.run_module("rooms_cli", run_name="__main__")
"""



@pytest.fixture(scope="module")
def project(tmp_path_factory):
    from rooms_cli.board import tasks
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    root = tmp_path_factory.mktemp("imports")
    initialize(root, "dev")
    project = open_project(root)
    ids = [tasks.add_task(project, "default", f"task {n}", lane="dev", done="done", by="alice").id for n in range(3)]
    return root, ids


def imported(root: Path, tmp_path: Path, *args: str, env: dict | None = None, input: str = "") -> set[str]:
    report = tmp_path / "imports.json"
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ROOMS_")}
    full_env.update(PYTHONPATH=checkout_path(), ROOMS_DIR=str(root), IMPORTS_REPORT=str(report), **(env or {}))
    proc = subprocess.run([sys.executable, "-c", REPORT, *args], env=full_env, capture_output=True, text=True, timeout=60,
                          input=input)
    assert proc.returncode == 0, proc.stderr
    return {name.split(".")[0] for name in json.loads(report.read_text())}


def heavy(modules: set[str]) -> set[str]:
    return modules & set(HEAVY)


def test_help_imports_no_heavy_module(project, tmp_path):
    root, _ = project
    assert heavy(imported(root, tmp_path, "--help")) == set()


def test_the_root_help_imports_neither_typer_nor_any_command_module(project, tmp_path):
    """`rooms --help` is written from the declarations and cli/help.py (help text needs no operation body)."""
    root, _ = project
    modules = imported(root, tmp_path, "--help")
    assert "typer" not in modules and "inspect" not in modules


@pytest.mark.parametrize("columns", [40, 60, 80, 120])
def test_the_root_help_without_typer_is_typer_s_own_page(columns):
    """The fast path's page (cli/help.py) is the one typer writes from the same texts, at any terminal width."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOMS_")}
    env.update(PYTHONPATH=checkout_path(), COLUMNS=str(columns))

    def page(module: str) -> subprocess.CompletedProcess[str]:
        code = f"import sys; sys.argv = ['rooms', '--help']; from rooms_cli.cli.{module} import main; main()"
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)

    ours, typers = page("fast"), page("app")
    assert (ours.returncode, ours.stdout) == (typers.returncode, typers.stdout)
    assert ours.stdout.startswith("Usage: rooms [OPTIONS] COMMAND [ARGS]...")


def test_search_imports_sqlite3_and_nothing_else_heavy(project, tmp_path):
    root, _ = project
    assert heavy(imported(root, tmp_path, "search", "task", "--json")) == {"sqlite3"}


def test_task_claim_imports_no_heavy_module(project, tmp_path):
    root, ids = project
    assert heavy(imported(root, tmp_path, "task", "claim", ids[0], "--as", "dev", "--json")) == set()


def test_task_next_imports_no_heavy_module(project, tmp_path):
    root, _ = project
    assert heavy(imported(root, tmp_path, "task", "next", "--as", "dev", "--json")) == set()


def test_board_json_imports_no_heavy_module(project, tmp_path):
    root, _ = project
    assert heavy(imported(root, tmp_path, "board", "--json")) == set()


def test_board_table_piped_does_not_need_pydantic_or_yaml(project, tmp_path):
    """Piped, the table still renders through rich; nothing else heavy."""
    root, _ = project
    assert heavy(imported(root, tmp_path, "board")) <= {"rich"}


def test_send_imports_no_heavy_module_but_yaml(project, tmp_path):
    """A send reads the config and the recipient's definition (is it an LLM agent with wake off?)."""
    root, _ = project
    assert heavy(imported(root, tmp_path, "send", "--to", "dev", "hello", "--as", "alice", "--json")) <= {"yaml"}


def _age(root: Path) -> None:
    """Make the project's YAML files older than the cache's racy window (as a checkout's files are)."""
    old = os.stat(root).st_mtime - 3600
    for path in [root / ".rooms.yaml", *(root / ".rooms" / "agents").glob("*.md")]:
        os.utime(path, (old, old))


def test_send_and_chat_parse_no_yaml_once_the_files_were_parsed(project, tmp_path):
    """Parsed config and agent definitions are kept in .rooms/run/parsed.json (store/parsed.py)."""
    root, _ = project
    _age(root)
    send = ("send", "--to", "dev", "hello", "--as", "alice", "--json")
    imported(root, tmp_path, *send)  # parses and keeps
    assert heavy(imported(root, tmp_path, *send)) == set()
    imported(root, tmp_path, "chat", "@ops how is the deploy going?")
    assert heavy(imported(root, tmp_path, "chat", "@ops how is the deploy going?")) == set()


def test_yaml_is_read_only_when_no_flag_or_variable_names_who_acts(project, tmp_path):
    root, ids = project
    assert "yaml" not in imported(root, tmp_path, "task", "show", ids[1], "--json", env={"ROOMS_AGENT": "dev"})


def test_chat_on_the_offline_model_imports_no_network_client(project, tmp_path):
    root, _ = project
    modules = imported(root, tmp_path, "chat", "@ops how is the deploy going?")
    assert heavy(modules) & {"httpx", "anyio", "h11", "pydantic"} == set()


def imported_modules(root: Path, tmp_path: Path, *args: str) -> set[str]:
    """Every module (full dotted names) a `rooms ARGS` process imported."""
    imported(root, tmp_path, *args)
    return set(json.loads((tmp_path / "imports.json").read_text()))


def _imports_typing_at_run_time(module: str) -> bool:
    """Whether `module`'s source imports typing outside an `if TYPE_CHECKING:` block (a function's import counts)."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(module)
    tree = ast.parse(Path(spec.origin).read_text("utf-8"))
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
               for n in ast.walk(node)}
    return any(id(node) not in skipped and (isinstance(node, ast.Import) and any(a.name == "typing" for a in node.names)
                                           or isinstance(node, ast.ImportFrom) and node.module == "typing")
               for node in ast.walk(tree))


@pytest.mark.parametrize("args", [("chat", "@ops how is the deploy going?"), ("task", "next", "--as", "dev", "--json"),
                                  ("inbox", "--as", "dev", "--json"), ("board", "--json")])
def test_chat_and_the_hot_commands_import_typing_nowhere_in_our_code(project, tmp_path, args):
    """`typing` costs a process ~2.5 ms of CPU: the names only mypy reads are imported under TYPE_CHECKING.
    (Checked in our sources: an editable install's finder imports typing itself.)"""
    root, _ = project
    ours = sorted(m for m in imported_modules(root, tmp_path, *args) if m.startswith("rooms_cli"))
    assert [m for m in ours if _imports_typing_at_run_time(m)] == []


def test_a_task_record_that_cites_nothing_does_not_import_the_reference_forms(project, tmp_path):
    from rooms_cli.board import claims, tasks
    from rooms_cli.store.paths import open_project

    root, _ = project
    board = open_project(root)
    # a task of its own: the module's tasks are claimed by the `task next` tests, in whatever order they run
    task_id = tasks.add_task(board, "default", "cite nothing", lane="dev", done="done", by="alice").id
    claim = claims.claim_task(board, "default", task_id, agent="dev")
    modules = imported_modules(root, tmp_path, "task", "done", task_id, "--lease-id", claim.lease.lease_id, "--summary",
                               "did it", "--as", "dev", "--json")
    assert "rooms_cli.board.done" in modules or "rooms_cli.board.records" in modules  # the done ran
    assert "rooms_cli.board.references" not in modules


def test_chat_naming_an_agent_exactly_does_not_import_the_fuzzy_matcher(project, tmp_path):
    root, _ = project
    assert "rapidfuzz" not in imported(root, tmp_path, "chat", "@ops how is the deploy going?")


@pytest.mark.parametrize("args", [
    ("watch", "--json", "--all", "--timeout", "0"),
    ("watch", "--timeout", "0"),
    ("chat", "@ops how is the deploy going?"),
])
def test_watch_and_chat_import_neither_dataclasses_nor_inspect(project, tmp_path, args):
    """The standard library's dataclasses imports inspect (~6 ms) to write docstrings ours never lack:
    the watch sources and the chat and model records are declared with rooms_cli/core/records.py (issue 27)."""
    root, _ = project
    assert imported(root, tmp_path, *args) & {"dataclasses", "inspect"} == set()


# --- the lazy command tree keeps the command-line contract --------------------------------------------

def _commands_section(group) -> str:
    import typer

    ctx = typer.Context(group, info_name="rooms", terminal_width=100, max_content_width=100)
    formatter = ctx.make_formatter()
    group.format_commands(ctx, formatter)
    return formatter.getvalue()


def test_help_lists_every_command_exactly_as_typers_full_conversion_would():
    """The root lists its commands from their help texts alone; each group, converted when run, lists its
    own as typer's conversion of the whole tree does."""
    import typer
    import typer.main

    from rooms_cli.cli.app import app, commands

    lazy = typer.main.get_command(app)
    whole = typer.Typer(rich_markup_mode=None, add_completion=False)
    for name, entry in commands().items():
        whole.add_typer(entry, name=name) if isinstance(entry, typer.Typer) else whole.command(name)(entry)
    eager = typer.main.get_group(whole)  # typer converts every command and sub-app
    assert list(lazy.commands) == list(eager.commands)
    assert _commands_section(lazy) == _commands_section(eager)
    assert not lazy.commands.built, "listing the commands converted some"

    def compare(lazy_group, eager_group, path):
        assert list(lazy_group.commands) == list(eager_group.commands), path
        assert _commands_section(lazy_group) == _commands_section(eager_group), path
        for name, command in eager_group.commands.items():
            if hasattr(command, "commands"):
                compare(lazy_group.commands[name], command, f"{path} {name}")

    compare(lazy, eager, "rooms")


def test_running_one_command_converts_only_that_command(project, monkeypatch):
    import typer.main
    from typer.testing import CliRunner

    from rooms_cli.cli.app import app

    root, _ = project
    group = typer.main.get_command(app)
    monkeypatch.setattr("typer.testing._get_command", lambda _app: group)  # run this very group
    result = CliRunner().invoke(app, ["board", "--json"], env={"ROOMS_DIR": str(root)})
    assert result.exit_code == 0, result.output
    assert list(group.commands.built) == ["board"]


def test_shell_completion_still_completes_commands_and_subcommands(project):
    root, _ = project
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOMS_")}
    env.update(PYTHONPATH=checkout_path(), ROOMS_DIR=str(root), _ROOMS_COMPLETE="complete_bash", COMP_WORDS="rooms ta", COMP_CWORD="1")
    run = [sys.executable, "-c", "import sys; sys.argv = ['rooms']; from rooms_cli.cli.app import main; main()"]
    assert subprocess.run(run, env=env, capture_output=True, text=True).stdout.split() == ["task"]
    env.update(COMP_WORDS="rooms task cl", COMP_CWORD="2")
    assert subprocess.run(run, env=env, capture_output=True, text=True).stdout.split() == ["claim"]


def test_chat_piped_renders_without_rich(project, tmp_path):
    """rich only renders for a terminal: piped, the replies are written as plain text."""
    root, _ = project
    assert "rich" not in imported(root, tmp_path, "chat", "@ops how is the deploy going?")


def test_chat_on_the_offline_model_runs_without_an_event_loop(project, tmp_path):
    """asyncio is for @jam's parallel calls and network models; one offline responder needs neither."""
    root, _ = project
    assert "asyncio" not in imported(root, tmp_path, "chat", "@ops how is the deploy going?")
    assert "asyncio" not in imported(root, tmp_path, "chat", "how is the deploy going?")  # open mode, in turn


def test_jam_still_calls_its_agents_at_once_through_an_event_loop(project, tmp_path):
    root, _ = project
    assert "asyncio" in imported(root, tmp_path, "chat", "@jam how is the deploy going?")


# --- the fast path (cli/fast.py): the commands agents loop on never import typer or click -------------

@pytest.mark.parametrize("args", [
    ("task", "next", "--as", "dev", "--json"),
    ("board", "--json"),
    ("send", "--to", "dev", "hello", "--as", "alice", "--json"),
    ("inbox", "--as", "dev", "--json", "--peek"),
    ("chat", "@ops how is the deploy going?"),
    ("attention", "--as", "dev", "--peek"),
    ("hook", "claude-code", "prompt", "--as", "dev"),
    ("task", "list", "--json"),
    ("transcript", "--json", "-n", "5"),
    ("watch", "--json", "--timeout", "0"),
])
def test_the_commands_agents_loop_on_import_neither_typer_nor_click(project, tmp_path, args):
    payload = '{"hook_event_name": "UserPromptSubmit", "prompt": "go on", "session_id": "s"}'
    modules = imported(project[0], tmp_path, *args, input=payload if "hook" in args else "")
    assert modules & {"typer", "click"} == set()


def test_a_fast_claim_and_finish_import_neither_typer_nor_click(project, tmp_path):
    from rooms_cli.board import tasks
    from rooms_cli.store.paths import open_project

    root, _ids = project
    # a task of its own: another test's `task next` may hold the others (a claim is a lease's, not the agent's)
    fresh = tasks.add_task(open_project(root), "default", "claim and finish", lane="dev", done="done", by="alice").id
    assert "typer" not in imported(root, tmp_path, "task", "claim", fresh, "--as", "dev", "--json")
    modules = imported(root, tmp_path, "task", "done", fresh, "--summary", "did it", "--as", "dev", "--json")
    assert modules & {"typer", "click"} == set()


def test_a_line_the_fast_path_does_not_read_still_runs_through_typer(project, tmp_path):
    assert "typer" in imported(project[0], tmp_path, "board", "--json", "--room=default", "--room", "default")
