"""What both command-line paths (typer's in cli/app.py, the fast one in cli/fast.py) do around a command:
refuse text that is not UTF-8 before anything runs, and turn a failure into one line and its exit code."""

from __future__ import annotations

import os
import sys


def failed(exc: BaseException, as_json: bool) -> int:
    """Say why a command failed (one line, or a JSON error) and give its exit code; ROOMS_DEBUG=1 re-raises.

    Both paths end here: typer's (cli/app.py, RoomsGroup.invoke) and the fast one (cli/fast.py)."""
    from rooms_cli.errors import ExitCode, RoomsError, as_rooms_error

    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, BrokenPipeError):  # output piped into `head`: not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return 0
    if os.environ.get("ROOMS_DEBUG"):
        raise exc
    from rooms_cli.cli.output import print_error

    err = as_rooms_error(exc)
    print_error(err, as_json)
    return err.exit_code if isinstance(exc, RoomsError) else ExitCode.ERROR


# environment variables rooms reads as text (API keys are checked where they are read: models/http.py)
_TEXT_ENV = ("USER", "USERNAME", "OLLAMA_HOST", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


def undecodable_input(args: list[str]) -> str | None:
    """The sentence refusing an argument or environment value that is not UTF-8, else None.

    Checked before any command runs, so nothing is written: a non-UTF-8 byte would otherwise
    fail half-way through a write (UnicodeEncodeError) or be stored as something else.
    """
    from rooms_cli import terminal

    for i, arg in enumerate(args):
        if terminal.undecodable(arg):
            before = args[i - 1] if i else ""
            name = f"the value of {before}" if before.startswith("-") and "=" not in before else "argument"
            return f"{name} '{terminal.safe(arg)}' is not valid UTF-8; rooms takes text in UTF-8"
    for key, value in os.environ.items():
        if (key.startswith("ROOMS_") or key in _TEXT_ENV) and terminal.undecodable(value):
            return f"environment variable {key}='{terminal.safe(value)}' is not valid UTF-8; fix or unset it"
    return None
