"""What both command-line paths (typer's in cli/app.py, the fast one in cli/fast.py) do around a command:
refuse text that is not UTF-8 before anything runs, keep a failure to print apart from a failure of the
command, and turn a failure into one line and its exit code.

A completed write is never reported as a failure: when printing the result fails after the command
wrote (`rooms task next --json > /dev/full` after the claim), the error says what was done — `claimed
t-… lease l-… but could not print it (…)` — with exit 5 (`not_printed`), so a script knows not to run
it again (a retry would duplicate the message or strand the lease). A closed stdout (`>&-`) is the
caller's way to discard the output: a command that wrote what it was asked exits 0.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy reads the name
if TYPE_CHECKING:
    from typing import Any


class Quiet(Exception):
    """The command has said all it had to (a gathered result, printed, that timed out): exit with `code`."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class OutputFailed(Exception):
    """Printing to stdout failed (a full disk behind `> file`, a closed descriptor, a pipe whose reader left)."""

    def __init__(self, cause: OSError):
        super().__init__(str(cause))
        self.cause = cause


class _Stdout:
    """sys.stdout as a command sees it: a write or flush that fails raises OutputFailed, so a failure to
    print is told apart from a failure of the command's own files (those name their file)."""

    def __init__(self, stream: Any):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            written: int = self._stream.write(text)
            return written

        except OSError as exc:
            raise OutputFailed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise OutputFailed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _ClosedStdout:
    """Stands in for a stdout that was closed (`>&-`; Python leaves sys.stdout None): writing fails."""

    encoding = "utf-8"
    errors = "strict"

    def write(self, text: str) -> int:
        import errno

        raise OutputFailed(OSError(errno.EBADF, "standard output is closed"))

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def begin() -> None:
    """Before a command runs (both paths): forget what an earlier command of this process wrote or did,
    and guard stdout. A closed stdout or stderr gets /dev/null on its descriptor first, so no file the
    command opens can take descriptor 1 or 2 (and receive a child's output)."""
    from rooms_cli.cli import output
    from rooms_cli.store import changes

    changes.WRITTEN.clear()
    output.DONE.clear()
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is None:
            try:
                os.fstat(fd)
            except OSError:
                null = os.open(os.devnull, os.O_WRONLY)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
            setattr(sys, name, _ClosedStdout() if fd == 1 else open(os.devnull, "w"))  # noqa: SIM115
    if not isinstance(sys.stdout, (_Stdout, _ClosedStdout)):
        sys.stdout = _Stdout(sys.stdout)


def _discard_stdout() -> None:
    """/dev/null onto descriptor 1, so what is still buffered is dropped at exit instead of failing again
    (Python would print "Exception ignored" and exit 120). Only when stdout is descriptor 1: in-process
    callers (typer's CliRunner, a test) print into memory and keep their descriptor."""
    try:
        if sys.stdout.fileno() != 1:
            return
    except (AttributeError, OSError, ValueError):
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass


def not_printed(exc: OutputFailed, as_json: bool) -> int:
    """The exit code (and the sentence) when printing failed: 0 for a reader that left (`| head`) or a
    closed stdout after a completed write; 5 with what was done when the write completed; 1 when
    nothing was written (a read whose result could not be printed)."""
    import errno

    from rooms_cli.cli import output
    from rooms_cli.core.errors import NotPrinted, StorageError
    from rooms_cli.store import changes

    _discard_stdout()
    cause = exc.cause
    written = list(changes.WRITTEN)
    done = "; ".join(output.DONE) or (
        "wrote " + ", ".join(f".rooms/{w}" for w in written[:3]) + (f" and {len(written) - 3} more" if len(written) > 3 else "")
        if written else "")
    if isinstance(cause, BrokenPipeError):
        return 0  # output piped into `head`: not an error of ours
    closed = isinstance(sys.stdout, _ClosedStdout)
    if closed and done:
        return 0
    reason = "standard output is closed" if closed else f"standard output: {cause.strerror or cause}"
    if cause.errno == errno.ENOSPC and not closed:
        reason = "standard output: the disk is full"
    if not done:
        err: StorageError | NotPrinted = StorageError(f"could not print the output ({reason})", data={"errno": errno.errorcode.get(cause.errno or 0, "")})
    else:
        err = NotPrinted(f"{done} but could not print it ({reason}); it is done: do not run the command again",
                         data={"done": done, "written": [f".rooms/{w}" for w in written]})
    from rooms_cli.cli.output import print_error

    print_error(err, as_json)
    return err.exit_code


def failed(exc: BaseException, as_json: bool) -> int:
    """Say why a command failed (one line, or a JSON error) and give its exit code; ROOMS_DEBUG=1 re-raises.

    Both paths end here: typer's (cli/app.py, RoomsGroup.invoke) and the fast one (cli/fast.py)."""
    from rooms_cli.core.errors import ExitCode, RoomsError, as_rooms_error

    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, Quiet):
        return exc.code
    if isinstance(exc, OutputFailed):
        return not_printed(exc, as_json)
    if isinstance(exc, BrokenPipeError):  # output piped into `head`: not an error of ours
        _discard_stdout()
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
    from rooms_cli.core import terminal

    for i, arg in enumerate(args):
        if terminal.undecodable(arg):
            before = args[i - 1] if i else ""
            name = f"the value of {before}" if before.startswith("-") and "=" not in before else "argument"
            return f"{name} '{terminal.safe(arg)}' is not valid UTF-8; rooms takes text in UTF-8"
    for key, value in os.environ.items():
        if (key.startswith("ROOMS_") or key in _TEXT_ENV) and terminal.undecodable(value):
            return f"environment variable {key}='{terminal.safe(value)}' is not valid UTF-8; fix or unset it"
    return None
