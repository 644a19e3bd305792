"""File reservations' operations, each declared once (operations/declare.py): `rooms files reserve|release|list|check`
(docs/reservations.md). Over MCP the lists are bounded (at most 100 patterns, 1 000 paths) and the reason is at most
500 characters.
"""

from __future__ import annotations

from rooms_cli.core.shapes import BOOL, RESERVATION, STR, envelope, record
from rooms_cli.operations.common import AS, DIR_JSON, LIMIT, SINCE, listed, positive_duration
from rooms_cli.operations.declare import REQUIRED, Mcp, McpArg, Param, operation

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.context import Context
    from rooms_cli.reservations.ledger import CheckResult, Reservation

PATTERNS = "Paths or globs relative to the project root: src/auth/**, *.md, docs/api.md."
CHECKED = record({"ok": BOOL, "paths": {"type": "array", "items": STR}, "blocked": {"type": "array"}})


@operation("files", "reserve", shared=AS, params=(
    Param("patterns", "strs", help=PATTERNS, show_default=False, mcp=McpArg(min_length=1, max_length=100)),
    Param("ttl", "duration", None, "How long it holds (default 30m); reserving the same patterns again renews it.", ("--ttl",),
          parse=positive_duration, metavar="DURATION", show_default=False,
          mcp=McpArg(help="How long it holds, e.g. 30m, 2h (default 30m).")),
    Param("shared_", "bool", False, "Others may hold shared reservations of these paths too (not exclusive ones).", ("--shared",),
          mcp=McpArg(name="shared", help="Let others hold shared reservations of these paths too.")),
    Param("reason", default="", help="What you are doing, shown to the others.", flags=("--reason",), mcp=McpArg(max_length=500)),
), mcp=Mcp("reserve_files", "Reserve files", RESERVATION, quick=True,
           description="Reserve files before editing them (exclusive unless shared). Refused with the error `reserved` "
                       "(exit code 3) naming the holder when another agent holds an overlapping reservation; reserving the "
                       "same patterns again renews yours."))
def reserve(ctx: Context, patterns: list[str], ttl: float | None, shared_: bool, reason: str) -> Reservation:
    """Reserve files before editing them; refused (exit 3) when another agent holds an overlapping one.

    Example: rooms files reserve 'src/auth/**' 'docs/auth.md' --as frontend --ttl 1h
    """
    from rooms_cli.reservations.ledger import reserve

    return reserve(ctx.project, ctx.me, patterns, ttl=ttl, exclusive=not shared_, reason=reason)


@operation("files", "release", shared=AS, params=(
    Param("patterns", "strs", None, "Patterns (or reservation ids) to release.", show_default=False,
          mcp=McpArg(help="Patterns (or reservation ids) to release; leave out with all=true.")),
    Param("all_", "bool", False, "Release every reservation you hold.", ("--all",), mcp=McpArg(name="all")),
), mcp=Mcp("release_files", "Release reserved files", envelope("released", RESERVATION), quick=True, listed_as="released",
           description="Release your reservations holding any of `patterns` (or with those ids), or all of them."))
def release(ctx: Context, patterns: list[str] | None, all_: bool) -> list[Reservation]:
    """Release your reservations: those holding PATTERN (or with that id), or --all.

    Example: rooms files release 'src/auth/**' --as frontend
    """
    from rooms_cli.core.errors import UsageError
    from rooms_cli.reservations.ledger import release

    if bool(patterns) == all_:
        raise UsageError("give the patterns (or reservation ids) to release, or --all, not both")
    return release(ctx.project, ctx.me, patterns, all_=all_)


@operation("files", "list", shared=DIR_JSON, params=(
    Param("agent", default=None, help="Only this agent's reservations.", flags=("--agent",), show_default=False,
          mcp=McpArg(help="Only this agent's.")),
    LIMIT, SINCE,
), mcp=Mcp("list_reservations", "List file reservations", envelope("reservations", RESERVATION), read_only=True, quick=True,
           description="The active file reservations, oldest first: agent, patterns, exclusive or shared, expiry."))
def list_reservations(ctx: Context, agent: str | None, limit: int | None, since: str | None) -> Any:
    """List the active reservations: agent, patterns, exclusive or shared, expiry.

    Example: rooms files list --json
    """
    from rooms_cli.reservations.ledger import active_reservations

    held = [r for r in active_reservations(ctx.project) if agent is None or r.agent == agent]
    return listed("reservations", held, limit, since, key=lambda r: r.id)


@operation("files", "check", shared=AS, params=(
    Param("paths", "strs", None, "Files to check (relative to here).", show_default=False,
          mcp=McpArg(default=REQUIRED, help="File paths relative to the project root.", min_length=1, max_length=1000)),
    Param("staged", "bool", False, "Check the paths staged for commit (what the pre-commit hook checks).", ("--staged",),
          mcp=False),
    Param("range_", default=None, help="Check the paths the commits A..B change (CI: what no hook saw).",
          flags=("--range",), metavar="A..B", show_default=False, mcp=False),
), mcp=Mcp("check_files", "Check files against reservations", CHECKED, read_only=True, quick=True,
           description="Whether another agent holds an exclusive reservation covering any of `paths`; `blocked` names "
                       "the holders (ok is false then). Your own reservations do not count."))
def check(ctx: Context, paths: list[str] | None, staged: bool, range_: str | None) -> CheckResult:
    """Exit 3 naming the holder when another agent holds an exclusive reservation of a PATH.

    With --as (or ROOMS_AGENT), your own reservations do not count. --staged checks what a commit
    would change, --range A..B what commits changed (for CI: cherry-picks, rebases and merges run no
    pre-commit hook).

    Example: rooms files check src/auth/login.py --as backend
    """
    from rooms_cli.core.errors import UsageError
    from rooms_cli.reservations import precommit
    from rooms_cli.reservations.ledger import check_paths

    if sum((bool(paths), staged, range_ is not None)) != 1:
        raise UsageError("give the paths to check, or --staged, or --range A..B (one of them)")
    if staged:
        paths = precommit.staged_paths(ctx.project)
    elif range_ is not None:
        paths = precommit.range_paths(ctx.project, range_)
    return check_paths(ctx.project, paths or [], agent=ctx.me)


OPERATIONS = (reserve, release, list_reservations, check)
