"""Help texts and human output read right (issue 45, items 5, 6, 8, 9): no Python function as a metavar,
no flag or command broken across lines, counts that agree, no raw JSON for a person, and bad values on
the command line are usage errors (exit 2) through one mechanism, the value parsers."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from conftest import REPO

from rooms_cli.core.text import count


def _every_help_path() -> list[str]:
    """Every command and group of the app ("", "task", "task add", …)."""
    import typer

    from rooms_cli.cli.app import app

    paths: list[str] = []

    def walk(cmd, prefix):
        paths.append(" ".join(prefix))
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            walk(sub, (*prefix, name))

    walk(typer.main.get_command(app), ())
    return paths


HELP_PATHS = _every_help_path()


def _help(cli, path: str, width: int) -> str:
    run = cli(*path.split(), "--help", env={"COLUMNS": str(width)})
    assert run.exit_code == 0, (path, run.stderr)
    return run.stdout


@pytest.mark.parametrize("width", [64, 80, 100])
def test_no_help_breaks_a_flag_at_its_hyphen_or_strands_a_lone_dash(cli, width):
    broken = []
    for path in HELP_PATHS:
        lines = _help(cli, path, width).splitlines()
        for above, below in zip(lines, lines[1:], strict=False):
            if re.search(r"\w-$", above.rstrip()) or re.match(r"\s*-(\s|$)", below):
                broken.append(f"rooms {path} --help: {above.strip()[-30:]!r} / {below.strip()[:30]!r}")
            assert "\u2011" not in above and "\u00a0" not in above, "the marks are turned back before printing"
    assert broken == []


def test_the_install_line_of_schedule_crontab_stays_whole_at_80_columns(cli):
    text = " ".join(_help(cli, "schedule crontab", 80).split())
    assert "(crontab -l 2>/dev/null; rooms schedule crontab) | crontab -" in text
    assert "--output-format bullets" in " ".join(_help(cli, "group broadcast", 80).split())


def test_no_option_shows_a_python_function_as_its_metavar(cli):
    """typer shows a value parser by its function's name (`--last <parse>`); each one says what it reads."""
    shown = {}
    for path in HELP_PATHS:
        for metavar in re.findall(r"(?m)^\s+(?:-\w, )?--[\w-]+ (<[^>]+>|[A-Z][\w|.-]*)", _help(cli, path, 100)):
            shown.setdefault(metavar, []).append(path)
    functions = {m: p for m, p in shown.items() if re.fullmatch(r"<(parse|lambda|_\w*|\w+_value|factory)>", m)}
    assert functions == {}
    typed = {m: p for m, p in shown.items() if m.startswith("<")}  # typer's `--dir <str>`: a type, not what to give
    assert typed == {}
    for path, option, metavar in (("inbox", "--last", "N"), ("board", "--done", "N"), ("board", "--status", "STATUS"),
                                  ("init", "--example", "SET"), ("task list", "--lane", "LANE"),
                                  ("board", "--dir", "DIR"), ("task done", "--lease-id", "LEASE_ID")):
        assert re.search(rf"{option} {metavar}\b", _help(cli, path, 100)), (path, option)


def test_group_dissolve_says_the_log_is_kept_with_a_dissolved_event(cli):
    text = " ".join(_help(cli, "group dissolve", 80).split())
    assert "log is kept" in text and "`dissolved` event" in text and "delete" not in text


# --- exit codes: bad values are usage errors ------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (("task", "add", ""), "TITLE: the title is empty"),
    (("task", "add", "x", "--lane", "bad name!", "--done", "y"), "--lane: invalid lane 'bad name!'"),
    (("task", "add", "x", "--lane", "ops", "--done", " "), "--done: the definition of done is empty"),
    (("chat", ""), "the message is empty"),
    (("send", "", "--to", "ops"), "MESSAGE: the message is empty"),
    (("send", "hi", "--to", "bad name!"), "--to: invalid recipient"),
    (("board", "--lane", "bad name!"), "--lane: invalid lane"),
    (("board", "--room", ""), "--room: invalid room id ''"),
    (("inbox", "--as", "Bad Name"), "--as: invalid identity"),
    (("spawn", "  "), "PROMPT: the spawn prompt is empty"),
    (("task", "done", "t-1", "--summary", ""), "--summary: the summary is empty"),
    (("task", "list", "--holder", "x/y"), "--holder: invalid holder"),
    (("group", "reply", "g", "", "--as", "a"), "TEXT: the reply is empty"),
    (("transcript", "--room", "../x"), "--room: invalid room id"),  # a plain typer command: cli/options.py
])
def test_a_bad_value_on_the_command_line_exits_2_naming_it(project, cli, args, words):
    run = cli(*args)
    assert run.exit_code == 2, (args, run.exit_code, run.stderr)
    assert words in run.stderr and "Traceback" not in run.stderr


def _declared_operations():
    from rooms_cli.operations.declare import Operation

    found = {}
    package = importlib.import_module("rooms_cli.operations")
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"rooms_cli.operations.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Operation):
                found[value.name] = value
    return list(found.values())


def _checked_params():
    """(operation, parameter, bad value) for every declared value parsed as a name or as required text."""
    cases = []
    for op in _declared_operations():
        for param in op.cli_params():
            parser = param.parser()
            if parser is not None and parser.__name__ in ("NAME", "TEXT"):
                cases.append(pytest.param(op, param, "bad name!" if parser.__name__ == "NAME" else "  ",
                                          id=f"{op.name} {param.flags[0] if param.flags else param.name.upper()}"))
    return cases


@pytest.mark.parametrize("op, param, bad", _checked_params())
def test_every_declared_name_or_text_value_is_checked_on_both_paths(project, cli, op, param, bad):
    """The fast path (cli/fast.py) and typer read the same declaration: a bad value is exit 2 naming it."""
    from rooms_cli.cli import fast

    # the bad option first: click checks values in the order they are given
    argv: list[str] = [*op.words] + ([] if param.argument else [param.flags[0], bad])
    for other in op.cli_params():
        value = bad if other.name == param.name else ("ops" if other.parser() and other.parser().__name__ == "NAME" else "todo")
        if (other.name == param.name and other.argument) or (other.name != param.name and other.required and other.kind != "bool"):
            argv += [value] if other.argument else [other.flags[0], value]
    run = cli(*argv)
    label = param.flags[0] if param.flags else param.name.upper()
    assert run.exit_code == 2 and f"{label}: " in run.stderr, (argv, run.stderr)
    from rooms_cli.core.errors import UsageError

    read = fast.parse(argv)
    if read is not None:  # None: the fast path hands the line to typer, tested above
        with pytest.raises(UsageError, match=re.escape(f"{label}: ")):
            fast.convert(*read)


# --- counts and human output --------------------------------------------------------------------------

@pytest.mark.parametrize("n, noun, said", [
    (1, "turn", "1 turn"), (2, "turn", "2 turns"), (0, "error", "0 errors"), (1, "existing file", "1 existing file"),
    (3, "match", "3 matches"), (2, "reply", "2 replies"), (2, "day", "2 days"), (1, "inbox", "1 inbox"),
    (2, "inbox", "2 inboxes"), (2, "person", "2 people"),
])
def test_count_agrees_with_its_number(n, noun, said):
    assert count(n, noun, "people" if noun == "person" else None) == said


COUNTED = ("turn", "error", "warning", "line", "file", "message", "agent", "task", "lesson", "spawn", "member", "event",
           "attempt", "time", "inbox", "token", "byte", "reply", "character", "path", "conflict", "broadcast")
# counts that are never 1 where they are said (a merge found two or more; a limit's overrun; a format's bounds)
ALWAYS_MANY = {"len(hits) messages", "len(spawns) spawns", "len(flying) broadcasts", "len(created) clones",
               "len(text) characters", "len(heads) branches", "total turns", "window tokens", "limit tokens",
               "n_prompt tokens", "n_ctx tokens", "fmt.max_agents agents", "fmt.min_agents agents", "fmt.max_turns turns",
               "LESSONS_MAX lessons", "MAX_LESSON_WORDS words", "TIGHT_MESSAGES messages", "MAX_PATTERN characters",
               "max_chars characters", "retries times",
               # the model providers' own errors and prompt text (docs/providers.md): a stream cut after a count of
               # characters, a prompt clipped by many; left to the providers' owners
               "progress[0] characters", "len(text) - keep more", "limit tokens]"}


def test_every_message_that_counts_something_goes_through_count():
    """A number followed by a plural noun in an f-string is a message that says "1 turns" one day."""
    found = []
    for path in sorted((REPO / "rooms_cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.JoinedStr):
                continue
            for before, value, after in zip([None, *node.values], node.values, [*node.values[1:], None], strict=False):
                if not (isinstance(value, ast.FormattedValue) and isinstance(after, ast.Constant)):
                    continue
                noun = re.match(r" (?:more |existing |unread |file )?([a-z]+?)(?:e?s)\b", str(after.value))
                ratio = isinstance(before, ast.Constant) and str(before.value).endswith("/")
                said = f"{ast.unparse(value.value)} {str(after.value).split()[0].strip(',;:.)') if str(after.value).split() else ''}"
                if noun and noun.group(1) in COUNTED and not ratio and said not in ALWAYS_MANY:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {said}")
    assert found == []
    hedged = [f"{p.name}:{node.lineno}" for p in (REPO / "rooms_cli").rglob("*.py") for node in ast.walk(ast.parse(p.read_text()))
              if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.search(r"[a-z]\(s\)", node.value)]
    assert hedged == [], "a count says its noun once, in agreement: core.text.count, not 'message(s)'"


def test_init_twice_keeps_one_existing_file_in_the_singular(tmp_path, cli):
    assert cli("init", str(tmp_path)).exit_code == 0
    assert "(kept 1 existing file)." in cli("init", str(tmp_path)).stdout  # .rooms.yaml


def test_a_jam_short_of_budget_says_1_turn_left(tmp_path, cli, monkeypatch):
    target = tmp_path / "dev"
    cli("init", str(target), "--example", "dev")
    monkeypatch.setenv("ROOMS_DIR", str(target))
    for text in ("@ops one", "@ops two", "@ops three", "@ops four", "@ops five", "@ops six", "@ops seven"):
        cli("chat", text)
    notes = cli("chat", "@jam what now?", "--json").json()["notes"]
    assert any(note.startswith("@jam: only 1 turn left, so ") for note in notes), notes


def test_task_done_and_task_show_print_no_json_to_a_person(project, cli, tmp_path):
    (Path(project.root) / "notes.md").write_text("x")
    task = cli("task", "add", "Write spec", "--lane", "ops", "--done", "spec exists", "--json").json()["id"]
    assert cli("task", "claim", task, "--as", "ops").exit_code == 0
    done = cli("task", "done", task, "--as", "ops", "--summary", "spec written", "--artifact", "file:notes.md",
               "--next", "review it")
    assert done.exit_code == 0 and "{" not in done.stdout
    assert "  summary: spec written" in done.stdout and "  artifacts: file:notes.md" in done.stdout
    shown = cli("task", "show", task).stdout
    assert "{" not in shown and "  next: review it" in shown


def test_a_reply_refused_for_a_model_member_names_the_model(project, cli):
    assert cli("group", "spawn", "g", "--profile", "ops").exit_code == 0
    assert cli("group", "broadcast", "g", "--objective", "x", "--output-format", "y", "--tool-guidance", "z",
               "--boundaries", "w").exit_code == 0
    run = cli("group", "reply", "g", "hi", "--as", "ops")
    assert run.exit_code == 1
    assert "member 'ops' (agent ops) runs on a model (offline);" in run.stderr
