"""The `rooms` console script: the commands agents run in loops are parsed here, without typer.

Importing typer and its click costs a `rooms` process ~35 ms — more than claiming a task does — and
worker scripts and coding-agent sessions call `rooms task next`, `rooms send` or `rooms board --json`
hundreds of times an hour. So `main()` first looks at the command line itself. When it runs one of the
declared operations (rooms_cli/operations/), written in a form this parser reads without doubt (the
words of the command, then only options it declares, `--opt value` or `--opt=value`, and exactly the
positional arguments the command takes), it converts the values with the same parsers typer uses
(operations/values.py) and runs the operation as the typer command does (cli/dispatch.py `invoke`). Anything else goes to typer
untouched: help, shell completion, an unknown, repeated or misspelt option, a value that starts with
`-`, a number typer would refuse, a missing argument or option, `--`… so every message, help text and
exit code the user sees there is still typer's.

The options, flags, kinds, environment variables and defaults are the operation's declaration, the
same one typer's command is derived from; `tests/test_fast_path.py` checks that on generated command
lines the two parse to the same values or this one hands the line over.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, NoReturn

    from rooms_cli.operations.declare import Operation, Param


def _operations(word: str) -> dict[tuple[str, ...], Operation]:
    """The declared operations of `rooms <word> …`, by their words (only that part's module is imported)."""
    if word == "mcp":  # the two commands that start another adapter are declared in the CLI
        from rooms_cli.cli.mcp_cmd import mcp

        return {mcp.words: mcp}
    if word == "top":
        from rooms_cli.cli.top_cmd import top

        return {top.words: top}
    from rooms_cli.operations import of_command

    return {op.words: op for op in of_command(word)}


class _HandOver(Exception):
    """The line is typer's to read."""


def _number(param: Param, value: str) -> int:
    """An int option's value as click converts it (int(), then its lower bound); else typer's."""
    try:
        number = int(value)
    except ValueError:
        raise _HandOver from None
    if param.min is not None and number < param.min:
        raise _HandOver
    return number


def _options(op: Operation, rest: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The options given after the command's words, by parameter, and the positional arguments."""
    options = op.options()
    given: dict[str, Any] = {}
    positional: list[str] = []
    tokens = iter(rest)
    for token in tokens:
        if token == "-":  # click reads "-" as an argument; rare enough to leave to it
            raise _HandOver
        if not token.startswith("-"):
            positional.append(token)
            continue
        flag, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        param = options.get(flag)
        if param is None:  # -h, --help, --, an unknown or combined option: typer says what it is
            raise _HandOver
        if param.kind == "bool":
            if equals:
                raise _HandOver
            given[param.name] = True
            continue
        if not equals:
            value = next(tokens, "-")
            if value.startswith("-"):  # a missing value, or one typer may read otherwise
                raise _HandOver
        if param.kind == "strs":
            given.setdefault(param.name, []).append(value)
        elif param.name in given:  # given twice: typer's rule applies
            raise _HandOver
        else:
            given[param.name] = _number(param, value) if param.kind == "int" and param.parse is None else value
    return given, positional


def parse(argv: list[str], environ: Mapping[str, str] = os.environ) -> tuple[Operation, dict[str, Any]] | None:
    """The operation `argv` runs and its raw values by parameter, or None: typer's to parse.

    Values are as given (strings, True for a flag, a list for a repeatable option, an int for a plain
    number); `convert` parses them."""
    if "_ROOMS_COMPLETE" in environ or not argv:  # shell completion is typer's
        return None
    operations = _operations(argv[0])
    # the longest words first: `rooms status set …` is status set, not the overview `rooms status` given more words
    op = next((operations[words] for words in sorted(operations, key=len, reverse=True) if tuple(argv[:len(words)]) == words), None)
    if op is None:
        return None
    try:
        given, positional = _options(op, argv[len(op.words):])
    except _HandOver:
        return None
    arguments = op.arguments()
    if [p.kind for p in arguments] == ["strs"]:  # one argument taking every positional value (files reserve PATTERN…)
        if positional:
            given[arguments[0].name] = positional
    elif len(positional) != len(arguments) or any(p.kind == "strs" for p in arguments):
        return None
    else:
        given.update(zip((p.name for p in arguments), positional, strict=True))
    for param in op.options().values():
        if param.envvar and param.name not in given and environ.get(param.envvar):
            given[param.name] = environ[param.envvar]
    if any(p.required and p.name not in given for p in op.params) or any(not given[n].strip() for n in op.nonblank):
        return None
    return op, given


def convert(op: Operation, given: dict[str, Any]) -> dict[str, Any]:
    """Every parameter's value: each given one through its option's parser (a bad one: UsageError, exit
    2), in command-line order as click converts them (the first bad value is named); the declared
    defaults for the rest."""
    values = {**op.defaults(), **given}
    params = {p.name: p for p in op.cli_params()}
    for name in given:  # given: a declared parameter (the parse read only declared flags and arguments)
        parser = params[name].parser()
        if parser is not None:
            values[name] = parser(values[name])
    return values


def run(op: Operation, given: dict[str, Any], argv: list[str]) -> int:
    """Run a parsed operation as typer would run it; the exit code."""
    from rooms_cli.cli.dispatch import invoke
    from rooms_cli.cli.guard import begin, failed, undecodable_input
    from rooms_cli.cli.shared import Run
    from rooms_cli.core.errors import UsageError
    from rooms_cli.store.locks import default_timeout

    as_json = "--json" in argv  # as the root group decides it for typer's path (cli/app.py)
    begin()
    try:
        refusal = undecodable_input(argv)
        if refusal is not None:
            raise UsageError(refusal)
        default_timeout()  # the root callback's check
        values = convert(op, given)
        shared = {name: values.pop(name) for name in op.shared if name in values}
        invoke(op, Run(**shared), values)
        sys.stdout.flush()
    except (Exception, KeyboardInterrupt) as exc:
        return failed(exc, as_json)
    return 0


def main() -> None:
    """Console-script entry point: a declared operation runs here, anything else through typer (cli/app.py)."""
    argv = sys.argv[1:]
    if argv == ["--version"]:  # the same line typer's --version prints, without loading typer (~60 ms)
        from rooms_cli import __version__

        print(f"rooms {__version__}")
        return
    if argv in ([], ["--help"], ["-h"]) and os.path.basename(sys.argv[0]) == "rooms" and "_ROOMS_COMPLETE" not in os.environ:  # the root's page, as typer's (cli/help.py)
        from rooms_cli.cli.help import root_page

        (sys.stdout if argv else sys.stderr).write(root_page())
        sys.exit(0 if argv else 2)  # `rooms` alone is a usage error, as typer says it
    found = parse(argv)
    if found is None:
        from rooms_cli.cli.app import main as typer_main

        typer_main()
        return
    leave(run(*found, argv))


def leave(code: int) -> NoReturn:
    """End the process with `code`; one that has nothing left to do at exit ends without tearing down.

    Python's shutdown frees each of the ~130 modules a command imported, one object at a time: ~3.5 ms,
    a tenth of a claim, for memory the kernel takes back at once. So when nothing can be waiting for the
    shutdown (`threading` was never imported: no thread to join, and none of the atexit hooks of
    logging, concurrent.futures or subprocess; `weakref` never imported: no finalizer, no temporary
    directory to remove; rooms registers no atexit hook of its own, test_architecture checks), stdout
    and stderr are flushed and the process ends with os._exit. Files rooms writes are closed where they
    are written (atomic writes fsync and close before the rename), so nothing buffered is left behind.
    A flush that fails (a reader gone from the pipe) takes the ordinary exit, which reports it as before."""
    if "threading" not in sys.modules and "weakref" not in sys.modules:
        from rooms_cli.cli.guard import OutputFailed

        try:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    stream.flush()
        except (OSError, ValueError, OutputFailed):  # the ordinary exit below reports it as it always has
            sys.exit(code)
        os._exit(code)
    sys.exit(code)
