"""Text that reaches a person's terminal, and text that came from one.

`safe(text)` is applied to everything `rooms` prints for a person (the rich consoles in
`cli/output.py`, every error and warning line): stored text is kept exactly as given and `--json`
prints it exactly, but a control character must never drive the terminal (`\\e]0;title\\a` retitles
the window, `\\e[2J` clears it, a bidi override reorders what follows). Each one is shown as a
visible escape (`\\x1b`, `\\u202e`); newlines and tabs pass.

`undecodable(text)` tells a str decoded with surrogateescape (an argument, stdin or an
environment value that was not UTF-8) from a real one, so it can be refused in one sentence
rather than fail later with UnicodeEncodeError half-way through a write.

A leaf module (no imports of the package): the store and every part may use it.
"""

from __future__ import annotations

import re
import sys

# C0 controls but \t and \n, DEL, C1 controls, lone surrogates (undecodable bytes), and the Unicode
# bidi and invisible-formatting controls that can make text read differently from what it is.
# Patterns as text, compiled on first use (re keeps them): every command imports this module, and
# compiling them at import cost ~0.7 ms in those that print only JSON (`rooms task next --json`).
_UNSAFE = "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u200e\u200f\u202a-\u202e\u2066-\u2069]"


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte itself
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: str) -> str:
    """`text` with every control character that could drive a terminal shown as an escape."""
    if text.isascii() and (text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable()):
        return text  # printable ASCII, tabs and newlines: nothing to escape, and no pattern to compile (~0.3 ms)
    if not re.search(_UNSAFE, text):
        return text
    return re.sub(_UNSAFE, _visible, text)


def undecodable(text: str) -> bool:
    """True when `text` holds bytes that were not UTF-8 (decoded with surrogateescape): a lone surrogate,
    the one thing strict UTF-8 cannot encode. Every command checks its arguments with this, so it
    compiles no pattern (a surrogate range costs ~0.2 ms to compile)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False



def warn(text: str) -> None:
    """One `warning: …` line on stderr, terminal-safe (text may quote a file's content)."""
    print(f"warning: {safe(text)}", file=sys.stderr)


def read_stdin(what: str) -> str:
    """All of stdin as text; one sentence (InvalidInput, naming `what`) when it is not UTF-8."""
    from rooms_cli.core.errors import InvalidInput

    stream = getattr(sys.stdin, "buffer", None)
    try:
        text = stream.read().decode("utf-8") if stream is not None else sys.stdin.read()
    except UnicodeDecodeError as exc:
        text = exc.object.decode("utf-8", "surrogateescape")
    if undecodable(text):
        raise InvalidInput(f"{what} on stdin is not valid UTF-8; rooms takes text in UTF-8")
    return text
