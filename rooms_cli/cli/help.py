"""`rooms --help` (and `rooms` alone) without typer: the root's page, from the declarations and GROUPS.

Importing typer costs a process more than the rest of a hot command does, and the root's page is a list
of names with one line each. Every top-level command is a declared operation, whose help is its body's
docstring (rooms_cli/operations/, and cli/mcp_cmd.py and cli/top_cmd.py, the two that start an adapter),
or a group of commands, whose help is in GROUPS (its typer.Typer is made with it: cli/options.py
`commands`). So the page is made here from data, laid out as click lays out typer's: the usage line, the
wrapped help, the options and the commands as definition lists (click's shortening of each command's
first paragraph). tests/test_startup_imports.py holds it to typer's own page at several widths.
"""

from __future__ import annotations

import os
import sys
import textwrap

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = ("Coordinate LLM agents, people and coding-agent sessions from the shell. "
        "Everything lives in plain files under .rooms/.\n\n"
        "Example: rooms init --example roundtable && rooms chat '@jam what should we build next?'")
VERSION_HELP = "Print the version and exit."

# the help of each group of commands (`rooms task …`), in the order `rooms --help` lists them
GROUPS = {
    "config": ("Project configuration (.rooms.yaml).\n\nExample: rooms config show --json"),
    "agent": ("Agent definitions (.rooms/agents/<id>.md).\n\nExample: rooms agent new researcher --tags search,api"),
    "models": ("Model providers (.rooms.yaml providers:).\n\nExample: rooms models test ollama:llama3.2"),
    "room": ("Chat rooms: roster, budget, mutes, save and rehydrate.\n\nExample: rooms room create sync --agent researcher --agent architect"),
    "task": ("Tasks of a room's board: add, claim under a lease, finish with a record.\n\n" "Example: rooms task add 'Write the auth spec' --lane researcher --done 'specs/auth.md exists'"),
    "roundtable": ("Conversations among a few agents, turn by turn, in a format.\n\n" "Example: rooms roundtable run standup --topic 'launch week'"),
    "schedule": ("The daily schedule of roundtables (.rooms.yaml → schedule:) and the cron line that runs it.\n\n" "Example: rooms schedule && rooms schedule crontab"),
    "memory": ("Lessons agents learned in conversations (.rooms/memories/<agent>.jsonl).\n\nExample: rooms memory list analyst"),
    "group": ("Groups: one prompt to many members, one reduced result.\n\nExample: rooms group ask --profiles analyst,analyst,wildcard --objective 'ship Friday? YES or NO' --reducer majority_vote"),
    "status": ("Show the project at a glance: your unread messages and claims (lease time left), each lane's open / doing / "
               "blocked tasks, live groups, active rooms, the other agents' status lines. Nothing is marked read.\n\n"
               "`rooms status TEXT` sets your own status line, as `rooms status set TEXT` does.\n\n"
               "Example: rooms status --json"),
    "hook": ("Hooks for coding-agent hosts.\n\nExample: rooms hook claude-code stop < hook.json"),
    "files": ("File reservations: glob patterns an agent is editing, exclusive or shared, under a lease.\n\n" "Example: rooms files reserve 'src/auth/**' --as frontend --ttl 1h --reason 'login form'"),
}
# the commands that are operations, in the order `rooms --help` lists them (before the groups)
COMMANDS = ("init", "demo", "tick", "doctor", "chat", "transcript", "board", "send", "inbox", "agents", "spawn", "wait",
            "attention", "watch", "search", "mcp", "sync", "top")
# the root's options: typer's --version callback (cli/app.py), its two completion options, and help
OPTIONS = (("--version", VERSION_HELP), ("--install-completion", "Install completion for the current shell."),
           ("--show-completion", "Show completion for the current shell, to copy it or customize the installation."),
           ("-h, --help", "Show this message and exit."))


def _helps() -> Iterator[tuple[str, str]]:
    """Every top-level command and its help text, in the listing's order."""
    from rooms_cli.cli.mcp_cmd import mcp
    from rooms_cli.cli.top_cmd import top
    from rooms_cli.operations import every

    declared = {op.words[0]: op for op in (*every(), mcp, top) if len(op.words) == 1}
    for name in COMMANDS:
        yield name, declared[name].help or ""
    yield from GROUPS.items()


def short_help(text: str, limit: int) -> str:
    """The first paragraph of `text` in at most `limit` characters: up to its first sentence's end, else
    cut at a word with "..." (click's make_default_short_help)."""
    words = text.split("\n\n", 1)[0].split()
    total = 0
    for i, word in enumerate(words):
        total += len(word) + (i > 0)
        if total > limit:
            break
        if word.endswith("."):
            return " ".join(words[:i + 1])
        if total == limit and i != len(words) - 1:
            break
    else:
        return " ".join(words)
    total += 3
    while i > 0:
        total -= len(words[i]) + 1
        if total <= limit:
            break
        i -= 1
    return " ".join(words[:i]) + "..."


def _wrap(text: str, width: int, indent: str = "") -> list[str]:
    """`text` re-wrapped paragraph by paragraph (blank lines between them), each line indented."""
    wrapper = textwrap.TextWrapper(width, initial_indent=indent, subsequent_indent=indent, replace_whitespace=False)
    lines: list[str] = []
    for paragraph in text.split("\n\n"):
        if lines:
            lines.append("")
        lines += wrapper.wrap(" ".join(line.strip() for line in paragraph.splitlines()))
    return lines


def _definitions(rows: list[tuple[str, str]], width: int) -> list[str]:
    """Rows of (term, text) as a definition list under a heading: terms in a column of up to 30, texts wrapped beside."""
    first = min(max(len(term) for term, _ in rows), 30) + 2
    out = []
    for term, text in rows:
        lines = _wrap(text, max(width - first - 2, 10))
        if len(term) <= first - 2:
            out.append(f"  {term}{' ' * (first - len(term))}{lines[0]}")
        else:
            out += [f"  {term}", f"{' ' * (first + 2)}{lines[0]}"]
        out += [f"{' ' * (first + 2)}{line}" if line else "" for line in lines[1:]]
    return out


def _columns() -> int:
    """The terminal's width as shutil.get_terminal_size gives it (COLUMNS, else the terminal, else 80),
    without importing shutil (it brings zlib, bz2 and lzma: ~1.5 ms)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 80
    except (AttributeError, ValueError, OSError):
        return 80


def root_page(width: int | None = None) -> str:
    """`rooms --help`: usage, help, options and commands, at the terminal's width as click takes it."""
    if width is None:
        width = max(min(_columns(), 80) - 2, 50)
    commands = list(_helps())
    limit = width - 6 - max(len(name) for name, _ in commands)
    lines = ["Usage: rooms [OPTIONS] COMMAND [ARGS]...", "", *_wrap(ROOT, width, "  "), "", "Options:",
             *_definitions(list(OPTIONS), width), "", "Commands:",
             *_definitions([(name, short_help(text, limit)) for name, text in commands], width)]
    return "\n".join(lines) + "\n"
