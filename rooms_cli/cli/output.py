"""Rendering: rich on a terminal (NO_COLOR respected, plain when piped), JSON documents, errors.

Every command prints through here. Under `--json` a command prints exactly one JSON document on
stdout (or JSON lines for streams); errors are `{"error": {"code", "message"}}` on stderr.

Human output is terminal-safe in one place: both consoles pass every piece of text they render
through `terminal.safe` (a control character in a reply, a status or a title is shown as `\x1b`,
never obeyed by the terminal), and so do the piped paths of `write` and `note`, `warn`,
`error_line` and `print_error`. `--json` is exact.
"""

from __future__ import annotations

import json
import os
import sys

from rooms_cli import terminal
from rooms_cli.jsonable import dumps

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

_console = None
_err_console = None
_console_class = None
DONE: list[str] = []  # what the running command has done, said if printing its result fails (cli/guard.py)


def done(sentence: str) -> None:
    """Record what the command has done (a write that completed: "claimed t-… lease l-…") before it
    prints: should printing fail, the error says it was done and exits 5, never "internal error"."""
    DONE.append(sentence)


def _safe_console(**kwargs):
    """A rich Console whose text segments are terminal-safe (its own styling escapes are not text)."""
    global _console_class
    if _console_class is None:
        from rich.console import Console
        from rich.segment import Segment

        class SafeConsole(Console):
            def render_str(self, text, **kwargs):
                # strings (table cells) are made safe before layout, so columns keep their widths
                return super().render_str(terminal.safe(text), **kwargs)

            def render(self, renderable, options=None):
                # and every text segment after it: Text built by a command is covered too
                for segment in super().render(renderable, options):
                    if segment.control or not segment.text:
                        yield segment
                    else:
                        yield Segment(terminal.safe(segment.text), segment.style, segment.control)

        _console_class = SafeConsole
    # agent text is data: no console markup (`[red]`, `[/x]`) and no emoji codes (`:smile:`)
    return _console_class(markup=False, emoji=False, **kwargs)


def console():
    """The stdout console: colour only on a terminal, no wrapping or truncation when piped."""
    global _console
    if _console is None:
        tty = sys.stdout.isatty()
        _console = _safe_console(
            highlight=False,
            soft_wrap=not tty,
            no_color=bool(os.environ.get("NO_COLOR")) or not tty,
            width=None if tty else 200,
        )
    return _console


def err_console():
    global _err_console
    if _err_console is None:
        _err_console = _safe_console(stderr=True, highlight=False, soft_wrap=True, no_color=bool(os.environ.get("NO_COLOR")))
    return _err_console


def reset() -> None:
    """Forget cached consoles (tests swap stdout between invocations)."""
    global _console, _err_console
    _console = _err_console = None


def print_json(data: Any) -> None:
    """Print one JSON document on stdout: indented on a terminal, compact when piped (the C encoder
    only runs without indent, which matters for boards of thousands of tasks)."""
    sys.stdout.write(dumps(data, indent=2 if sys.stdout.isatty() else None) + "\n")
    sys.stdout.flush()


def print_json_line(data: Any) -> None:
    """Print one JSON object as a line (streams)."""
    sys.stdout.write(dumps(data) + "\n")
    sys.stdout.flush()


def write(text: str, style: str | None = None, end: str = "\n") -> None:
    """Human output on stdout (rich markup is NOT interpreted: agent text is data). Through rich on a
    terminal; piped, the text as it is, without importing rich (~25 ms: scripts and agents pipe)."""
    if not sys.stdout.isatty():
        sys.stdout.write(terminal.safe(text) + end)
        sys.stdout.flush()
        return
    from rich.text import Text

    console().print(Text(text, style=style or ""), end=end)


def say(text: str = "", style: str | None = None) -> None:
    """One line of human output."""
    write(text, style)


def note(text: str) -> None:
    """A side remark on stderr (never pollutes --json stdout); dim on a terminal."""
    if not sys.stderr.isatty():
        sys.stderr.write(terminal.safe(text) + "\n")
        sys.stderr.flush()
        return
    from rich.text import Text

    err_console().print(Text(text, style="dim"))


def warn(text: str) -> None:
    terminal.warn(text)


def error_line(text: str) -> None:
    """One line on stderr that is an error but not the command's end (a failed step of several)."""
    print("error: " + terminal.safe(" ".join(text.split())), file=sys.stderr)


def print_error(err, as_json: bool) -> None:
    """Print a RoomsError as one sentence (or a JSON error on stderr).

    A message that spans lines (a parser's error quoted whole) is folded onto one line, so that an
    error is always exactly one line a script can read.
    """
    err.fold()
    from rooms_cli.child_env import mask_text

    err.message = mask_text(err.message)  # an error that names configuration never shows its credentials
    if as_json:
        sys.stderr.write(json.dumps(err.to_json(), ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"error: {terminal.safe(err.message)}\n")
    sys.stderr.flush()
