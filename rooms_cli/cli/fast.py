"""The `rooms` console script: the commands agents run in loops are parsed here, without typer.

Importing typer and its click costs a `rooms` process ~35 ms — more than claiming a task does — and
worker scripts and coding-agent sessions call `rooms task next`, `rooms send` or `rooms board --json`
hundreds of times an hour. So `main()` first looks at the command line itself. When it is one of the
commands in `COMMANDS`, written in a form this parser reads without doubt (the words of the command,
then only options it declares, `--opt value` or `--opt=value`, and exactly the positional arguments the
command takes), it converts the values with the same parsers typer uses (cli/values.py) and calls the
same body the typer command calls (cli/hot.py). Anything else goes to typer untouched: help, shell
completion, an unknown, repeated or misspelt option, a value that starts with `-`, a missing argument
or option, `--`… so every message, help text and exit code the user sees there is still typer's.

`tests/test_fast_path.py` holds this table to the typer commands: the same options, flags, environment
variables and arguments, the same body defaults, and on generated command lines either the same parsed
values or a hand-over to typer.
"""

from __future__ import annotations

import os
import sys

FLAG, VALUE, MANY = "flag", "value", "many"  # an option's kind: on/off, one value, repeatable


class Option:
    """One option of a fast command: its parameter, kind, value parser (cli/values.py) and variable."""

    __slots__ = ("param", "kind", "parser", "envvar")

    def __init__(self, param: str, kind: str = VALUE, parser=None, envvar: str | None = None):
        self.param, self.kind, self.parser, self.envvar = param, kind, parser, envvar


class Command:
    """A fast command: its body (a function of cli/hot.py), positional parameters, options (the shared
    ones it takes included) and the options it requires."""

    __slots__ = ("body", "args", "options", "required", "nonblank")

    def __init__(self, body: str, shared: tuple[str, ...], args: tuple[str, ...] = (),
                 options: dict[str, Option] | None = None, required: tuple[str, ...] = (), nonblank: tuple[str, ...] = ()):
        self.body, self.args, self.required, self.nonblank = body, args, required, nonblank
        self.options = {flag: option for flag, option in SHARED.items() if option.param in shared}
        self.options.update(options or {})


def _statuses():
    from rooms_cli.cli.hot import statuses

    return statuses()


def _done_parser():
    from rooms_cli.cli.values import count_value

    return count_value("--done")


def _last_parser():
    from rooms_cli.cli.values import count_value

    return count_value("--last")


def _lease_parser():
    from rooms_cli.cli.values import duration_value

    return duration_value("--lease", positive=True)


def _timeout_parser():
    from rooms_cli.cli.values import duration_value

    return duration_value("--timeout")


def _status_parser():
    from rooms_cli.cli.values import choice_value

    return choice_value("--status", _statuses)


# the options @shared adds (cli/shared.py), as typer declares them in cli/options.py
SHARED = {"--as": Option("as_"), "--room": Option("room"), "-r": Option("room"), "--dir": Option("dir"),
          "--json": Option("json_", FLAG)}
_LEASE = Option("lease", parser=_lease_parser)
_LEASE_ID = Option("lease_id", envvar="ROOMS_LEASE")
_SYNC = Option("sync", FLAG)
_BOARD = ("as_", "room", "dir", "json_")

# the command's words -> how to run it; each is `rooms <words>` in cli/board_cmd.py, messaging_cmd.py or chat_cmd.py
COMMANDS: dict[tuple[str, ...], Command] = {
    ("board",): Command("board", ("room", "dir", "json_"), options={
        "--lane": Option("lane"), "--status": Option("status", parser=_status_parser), "--format": Option("format"),
        "--done": Option("done", parser=_done_parser), "--all": Option("all_", FLAG)}),
    ("task", "next"): Command("task_next", _BOARD, options={"--lease": _LEASE, "--sync": _SYNC}),
    ("task", "claim"): Command("task_claim", _BOARD, args=("task_id",), options={
        "--lease": _LEASE, "--lease-id": _LEASE_ID, "--sync": _SYNC}),
    ("task", "renew"): Command("task_renew", _BOARD, args=("task_id",), options={
        "--lease-id": _LEASE_ID, "--lease": _LEASE, "--sync": _SYNC}),
    ("task", "release"): Command("task_release", _BOARD, args=("task_id",), options={"--lease-id": _LEASE_ID, "--sync": _SYNC}),
    ("task", "done"): Command("task_done", _BOARD, args=("task_id",), required=("summary",), options={
        "--summary": Option("summary"), "--artifact": Option("artifact", MANY), "--next": Option("next_"),
        "--result-ref": Option("result_ref"), "--lease-id": _LEASE_ID, "--sync": _SYNC}),
    ("send",): Command("send", ("as_", "dir", "json_"), args=("message",), options={
        "--to": Option("to"), "--reply-to": Option("reply_to"), "--wake": Option("wake", FLAG)}),
    # with its message only: chat mode, a message on stdin and a blank message are typer's
    ("chat",): Command("chat", _BOARD, args=("message",), nonblank=("message",), options={
        "--explain": Option("explain", FLAG), "--dry-run": Option("explain", FLAG), "--no-wait": Option("no_wait", FLAG)}),
    ("attention",): Command("attention", ("as_", "dir", "json_"), options={"--peek": Option("peek", FLAG)}),
    # Claude Code runs these on every prompt and every stop of a session (examples/claude-code/)
    ("hook", "claude-code", "stop"): Command("claude_stop", ("as_", "dir"), options={
        "--timeout": Option("timeout", parser=_timeout_parser)}),
    ("hook", "claude-code", "prompt"): Command("claude_prompt", ("as_", "dir")),
    ("hook", "claude-code", "session-start"): Command("claude_session_start", ("as_", "dir")),
    # a coding agent's client spawns it for every session and waits for its tool list
    ("mcp",): Command("mcp", ("as_", "dir")),
    # cron and `--sync` loops run it on every tick
    ("sync",): Command("sync", ("dir", "json_"), options={"--remote": Option("remote")}),
    ("inbox",): Command("inbox", ("as_", "dir", "json_"), options={
        "--unread": Option("unread", FLAG), "--peek": Option("peek", FLAG), "--last": Option("last", parser=_last_parser),
        "--all": Option("all_", FLAG)}),
}


def parse(argv: list[str], environ=os.environ) -> tuple[Command, dict] | None:
    """The fast command `argv` runs and its raw values by parameter, or None: typer's to parse.

    Values are as given (strings, True for a flag, a list for a repeatable option); `convert` parses them."""
    if "_ROOMS_COMPLETE" in environ:  # shell completion is typer's
        return None
    words = next((words for words in COMMANDS if tuple(argv[:len(words)]) == words), None)
    if words is None:
        return None
    command, rest = COMMANDS[words], argv[len(words):]
    given: dict = {}
    positional: list[str] = []
    i = 0
    while i < len(rest):
        token = rest[i]
        i += 1
        if token == "-":  # click reads "-" as an argument; rare enough to leave to it
            return None
        if not token.startswith("-"):
            positional.append(token)
            continue
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        option = command.options.get(name)
        if option is None:  # -h, --help, --, an unknown or combined option: typer says what it is
            return None
        if option.kind == FLAG:
            if equals:
                return None
            given[option.param] = True
            continue
        if not equals:
            if i == len(rest) or rest[i].startswith("-"):  # a missing value, or one typer may read otherwise
                return None
            value = rest[i]
            i += 1
        if option.kind == MANY:
            given.setdefault(option.param, []).append(value)
        elif option.param in given:  # given twice: typer's rule applies
            return None
        else:
            given[option.param] = value
    if len(positional) != len(command.args):
        return None
    given.update(zip(command.args, positional, strict=True))
    for option in command.options.values():
        if option.envvar and option.param not in given and environ.get(option.envvar):
            given[option.param] = environ[option.envvar]
    if any(param not in given for param in command.required) or any(not given[p].strip() for p in command.nonblank):
        return None
    return command, given


def convert(command: Command, given: dict) -> dict:
    """The parameters of the body: each value through its option's parser (a bad one: UsageError, exit 2)."""
    values = dict(given)
    parsers = {option.param: option.parser for option in command.options.values() if option.parser is not None}
    for param in given:  # in command-line order, as click converts them (the first bad value is named)
        if param in parsers:
            values[param] = parsers[param]()(values[param])
    return values


def run(command: Command, given: dict, argv: list[str]) -> int:
    """Run a parsed fast command as typer would run it; the exit code."""
    from rooms_cli.cli import hot
    from rooms_cli.cli.guard import begin, failed, undecodable_input
    from rooms_cli.cli.shared import SHARED_OPTIONS, Run
    from rooms_cli.errors import UsageError
    from rooms_cli.store.locks import default_timeout

    as_json = "--json" in argv  # as the root group decides it for typer's path (cli/app.py)
    begin()
    try:
        refusal = undecodable_input(argv)
        if refusal is not None:
            raise UsageError(refusal)
        default_timeout()  # the root callback's check
        values = convert(command, given)
        shared = {name: values.pop(name) for name in SHARED_OPTIONS if name in values}
        getattr(hot, command.body)(Run(**shared), **values)
        sys.stdout.flush()
    except (Exception, KeyboardInterrupt) as exc:
        return failed(exc, as_json)
    return 0


def main() -> None:
    """Console-script entry point: a fast command runs here, anything else through typer (cli/app.py)."""
    argv = sys.argv[1:]
    if argv == ["--version"]:  # the same line typer's --version prints, without loading typer (~60 ms)
        from rooms_cli import __version__

        print(f"rooms {__version__}")
        return
    found = parse(argv)
    if found is None:
        from rooms_cli.cli.app import main as typer_main

        typer_main()
        return
    from rooms_cli.cli.deferred import defer_inspect

    defer_inspect()  # dataclasses imports inspect and our records never use it (~6 ms)
    sys.exit(run(*found, argv))
