"""File reservations' operations, each declared once (operations/declare.py): `rooms files reserve|release|list|check`.

As in operations/board.py, each declaration gives the typer command (files_cmd.py) and the MCP
tool's input schema (mcp_server/tools.py); typer parses them (not on the fast path: cli/fast.py).
Over MCP the lists are bounded (at most 100 patterns, 1 000 paths) and the reason is at most 500 characters.
"""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run
from rooms_cli.core.shapes import BOOL, RESERVATION, STR, envelope, record
from rooms_cli.operations.declare import REQUIRED, Mcp, McpArg, Param, operation
from rooms_cli.operations.hot import AS, LIMIT, SINCE
from rooms_cli.operations.values import duration_value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from rooms_cli.operations.declare import Parser
    from rooms_cli.reservations.ledger import Reservation

PATTERNS = "Paths or globs relative to the project root: src/auth/**, *.md, docs/api.md."
CHECKED = record({"ok": BOOL, "paths": {"type": "array", "items": STR}, "blocked": {"type": "array"}})


def _positive_duration(flag: str) -> Parser:
    from rooms_cli.store.clock import MAX_LEASE_S

    return duration_value(flag, positive=True, maximum=MAX_LEASE_S)


@operation("files", "reserve", shared=AS, params=(
    Param("patterns", "strs", help=PATTERNS, show_default=False, mcp=McpArg(min_length=1, max_length=100)),
    Param("ttl", "duration", None, "How long it holds (default 30m); reserving the same patterns again renews it.", ("--ttl",),
          parse=_positive_duration, metavar="DURATION", show_default=False,
          mcp=McpArg(help="How long it holds, e.g. 30m, 2h (default 30m).")),
    Param("shared_", "bool", False, "Others may hold shared reservations of these paths too (not exclusive ones).", ("--shared",),
          mcp=McpArg(name="shared", help="Let others hold shared reservations of these paths too.")),
    Param("reason", default="", help="What you are doing, shown to the others.", flags=("--reason",), mcp=McpArg(max_length=500)),
), mcp=Mcp("reserve_files", "Reserve files", RESERVATION))
def reserve(run: Run, patterns: list[str], ttl: float | None, shared_: bool, reason: str) -> None:
    """Reserve files before editing them; refused (exit 3) when another agent holds an overlapping one.

    Example: rooms files reserve 'src/auth/**' 'docs/auth.md' --as frontend --ttl 1h
    """
    from rooms_cli.reservations.ledger import reserve

    r = reserve(run.project, run.me, patterns, ttl=ttl, exclusive=not shared_, reason=reason)
    run.emit(r, f"reserved {' '.join(r.patterns)} for {r.agent} ({'exclusive' if r.exclusive else 'shared'}) "
                f"until {r.expires_at}  [{r.id}]")


@operation("files", "release", shared=AS, params=(
    Param("patterns", "strs", None, "Patterns (or reservation ids) to release.", show_default=False,
          mcp=McpArg(help="Patterns (or reservation ids) to release; leave out with all=true.")),
    Param("all_", "bool", False, "Release every reservation you hold.", ("--all",), mcp=McpArg(name="all")),
), mcp=Mcp("release_files", "Release reserved files", envelope("released", RESERVATION)))
def release(run: Run, patterns: list[str] | None, all_: bool) -> None:
    """Release your reservations: those holding PATTERN (or with that id), or --all.

    Example: rooms files release 'src/auth/**' --as frontend
    """
    from rooms_cli.core.errors import UsageError
    from rooms_cli.reservations.ledger import release

    if bool(patterns) == all_:
        raise UsageError("give the patterns (or reservation ids) to release, or --all, not both")
    released = release(run.project, run.me, patterns, all_=all_)
    run.emit(released, "\n".join(f"released {r.id} ({' '.join(r.patterns)})" for r in released))


@operation("files", "list", shared=("dir", "json_"), params=(
    Param("agent", default=None, help="Only this agent's reservations.", flags=("--agent",), show_default=False,
          mcp=McpArg(help="Only this agent's.")),
    LIMIT, SINCE,
), mcp=Mcp("list_reservations", "List file reservations", envelope("reservations", RESERVATION), read_only=True))
def list_reservations(run: Run, agent: str | None) -> None:
    """List the active reservations: agent, patterns, exclusive or shared, expiry.

    Example: rooms files list --json
    """
    from rooms_cli.reservations.ledger import active_reservations

    held = [r for r in active_reservations(run.project) if agent is None or r.agent == agent]
    run.emit(held, lambda: _show(held))


def _show(held: list[Reservation]) -> None:
    for r in held:
        output.say(_line(r))
    if not held:
        output.say("no active reservations")


def _line(r: Reservation) -> str:
    how = "exclusive" if r.exclusive else "shared"
    extra = f" — {r.reason}" if r.reason else ""
    lost = f" [LOST to {r.lost_to}: not enforced]" if r.lost_to else ""
    return f"{r.id}  {r.agent:<12} {how:<9} until {r.expires_at}  {' '.join(r.patterns)}{extra}{lost}"


@operation("files", "check", shared=AS, params=(
    Param("paths", "strs", None, "Files to check (relative to here).", show_default=False,
          mcp=McpArg(default=REQUIRED, help="File paths relative to the project root.", min_length=1, max_length=1000)),
    Param("staged", "bool", False, "Check the paths staged for commit (what the pre-commit hook checks).", ("--staged",),
          mcp=False),
    Param("range_", default=None, help="Check the paths the commits A..B change (CI: what no hook saw).",
          flags=("--range",), metavar="A..B", show_default=False, mcp=False),
), mcp=Mcp("check_files", "Check files against reservations", CHECKED, read_only=True))
def check(run: Run, paths: list[str] | None, staged: bool, range_: str | None) -> None:
    """Exit 3 naming the holder when another agent holds an exclusive reservation of a PATH.

    With --as (or ROOMS_AGENT), your own reservations do not count. --staged checks what a commit
    would change, --range A..B what commits changed (for CI: cherry-picks, rebases and merges run no
    pre-commit hook).

    Example: rooms files check src/auth/login.py --as backend
    """
    from rooms_cli.core.errors import UsageError
    from rooms_cli.reservations import precommit
    from rooms_cli.reservations.ledger import check_paths, project_paths

    if sum((bool(paths), staged, range_ is not None)) != 1:
        raise UsageError("give the paths to check, or --staged, or --range A..B (one of them)")
    if staged:
        paths = precommit.staged_paths(run.project)
    elif range_ is not None:
        paths = precommit.range_paths(run.project, range_)
    else:
        paths = project_paths(run.project, paths or [])
    result = check_paths(run.project, paths, agent=run.me)
    problem = result.problem()
    if problem is not None:
        raise problem
    run.emit(result, f"free: {' '.join(result.paths)}")


# every operation declared here: typer registers them (files_cmd.py), MCP serves their tools (tools.py)
OPERATIONS = (reserve, release, list_reservations, check)
