"""File reservations: "I am editing `src/auth/**`", said before the edit, held under a lease.

The ledger is one append-only event log, `.rooms/reservations/log.jsonl` (store/eventlog.py: each
event has a unique `eid` and an `hlc` stamp, git merges it with `merge=union`, every clone replays
it in one order). Events:

    reserve  {id, agent, patterns, exclusive, reason, expires_at}   a new reservation (its id is its lease id)
    renew    {id, expires_at}                                       the holder extends it, from now
    release  {id, by}                                               the holder gives it up
    expire   {id, expired_at}                                       `rooms tick` records a lapsed one

A reservation is active from its reserve until released or past `expires_at` (ROOMS_NOW drives the
clock). Like a board lease it frees itself when it lapses; the `expire` event only records it.

Rules (each write is one read-check-append under the log's lock, so 16 racers get one winner):
- an exclusive reservation conflicts with any active reservation of another agent whose patterns
  overlap (patterns.py decides overlap on the patterns themselves); a shared one only with another
  agent's exclusive one. A conflict is refused (exit 3) naming both reservations and a path both cover;
- an agent reserving patterns it already holds renews that reservation (and may widen it to exclusive);
- after a git merge two clones may each have granted an overlapping reservation: replay keeps the
  first (in log order) and marks the later one `lost` (not enforced, shown in `rooms files list`),
  as a lost claim race on the board.

A damaged ledger (issue 38) fails closed, never open: a line that is not a usable event (bad JSON, a
`reserve` whose `patterns` is not a list of patterns or holds one that leaves the project, `../**`)
is skipped with one warning naming the log and the event, like a bad line of every other log, so one
such line breaks neither `files list|check|reserve` nor the commit guard; a ledger that cannot be read
at all (not one line of it an event, an unreadable file, an unresolved merge) is an error naming the
file and `rooms doctor` for every command that reads it — the commit guard refuses the commit rather
than let it through unchecked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rooms_cli.core.errors import Conflict, InvalidInput, NotFound
from rooms_cli.core.text import count
from rooms_cli.reservations.patterns import covers, normalize, overlap
from rooms_cli.store import eventlog, jsonl, layout
from rooms_cli.store.clock import MAX_LEASE_S, add_seconds, in_force, iso, lease_limit, now, parse_duration
from rooms_cli.store.ids import new_id, validate_name
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

DEFAULT_TTL = "30m"


@dataclass
class Reservation:
    """One reservation as replayed: who holds which patterns, how, until when."""

    id: str
    agent: str
    patterns: list[str]
    exclusive: bool
    reason: str
    created_at: str
    expires_at: str
    released: str | None = None  # when it was released
    expiry_recorded: bool = False
    lost_to: str | None = None  # a merge found an earlier overlapping reservation: this one is not enforced
    renewed: int = 0
    claimed_until: str | None = None  # its events claimed a later end than the longest reservation allows

    def active(self, moment: str) -> bool:
        """In force at `moment`: held, not lost, not past its end — and not granted for a time more than
        the allowed skew after `moment` (by a writer whose clock ran ahead: it holds from then on)."""
        return (self.released is None and self.lost_to is None and self.expires_at > moment
                and in_force(self.created_at, moment))

    def expired(self, moment: str) -> bool:
        return self.released is None and self.expires_at <= moment

    def to_json(self, moment: str | None = None) -> dict[str, Any]:
        moment = moment or iso(now())
        data = {"id": self.id, "agent": self.agent, "patterns": list(self.patterns), "exclusive": self.exclusive,
                "reason": self.reason, "created_at": self.created_at, "expires_at": self.expires_at,
                "expired": self.expired(moment)}
        if self.released:
            data["released_at"] = self.released
        if self.lost_to:
            data["lost_to"] = self.lost_to
        return data


def log_path(project: Project) -> str:
    return layout.reservations_log(project)


def replay(events: list[dict[str, Any]], skipped: list[tuple[dict[str, Any], str]] | None = None) -> dict[str, Reservation]:
    """Every reservation by id, in log order; a later one overlapping an earlier one held at the same
    time by another agent (two clones, merged) is marked lost. `reserve` starts one; the handler
    `_LATER` names for any other kind changes it. An event that cannot be used (`unusable`; an event
    for no known reservation) is left out, and added to `skipped` with why."""
    found: dict[str, Reservation] = {}
    held: dict[str, Reservation] = {}  # not released, not recorded expired: the only possible rivals (cost ∝ those)
    before = ""  # the time of the record before this one: a reservation's bound counts from it or its own time
    for ev in eventlog.ordered(events):
        kind, rid = ev.get("ev"), ev.get("id")
        since, before = before, ev["ts"] if isinstance(ev.get("ts"), str) else before
        wrong = unusable(ev)
        if wrong is not None:
            if skipped is not None:
                skipped.append((ev, wrong))
            continue
        assert isinstance(rid, str)  # `unusable` refuses an event without one
        if kind == "reserve":
            r = _from_event(ev)
            if r is None or rid in found:
                continue
            _bound(r, r.expires_at, max(since, r.created_at))
            rival = _rival(held.values(), r, r.created_at)
            if rival is not None:
                r.lost_to = rival.id
            found[rid] = r
            held[rid] = r
        elif rid in found and isinstance(kind, str) and kind in _LATER:
            _LATER[kind](found[rid], ev, held)
            if kind == "renew":
                _bound(found[rid], found[rid].expires_at, max(since, ev["ts"] if isinstance(ev.get("ts"), str) else ""))
        elif skipped is not None and kind in _LATER:
            skipped.append((ev, f"its reservation {rid} is not in the ledger"))
    return found


def _bound(r: Reservation, claimed: str, since: str) -> None:
    """Hold `r` until at most MAX_LEASE_S after `since`: its event's own time, or the record before it
    when that is later (a reservation made after a quiet week holds for its ttl; one from a clock ahead
    is not in force before its time, `Reservation.active`); note what it claimed."""
    limit = lease_limit(since) if since else None
    if limit is not None and claimed > limit:
        r.expires_at, r.claimed_until = limit, claimed


def within_bound(r: Reservation) -> bool:
    """Whether `r` claimed no longer an end than the longest reservation allows (doctor names the others)."""
    return r.claimed_until is None


def unusable(ev: dict[str, Any]) -> str | None:
    """Why a ledger event cannot be used (its reader skips it; doctor names it), or None."""
    kind, rid = ev.get("ev"), ev.get("id")
    if not isinstance(rid, str) or not rid:
        return "it has no reservation id"
    if kind != "reserve":
        return None
    patterns = ev.get("patterns")
    if not (isinstance(patterns, list) and patterns and all(isinstance(p, str) for p in patterns)):
        return f"its 'patterns' must be a list of file patterns (it is {patterns!r})"
    if not isinstance(ev.get("agent"), str) or not isinstance(ev.get("expires_at"), str):
        return "its 'agent' and 'expires_at' must be text"
    for pattern in patterns:
        try:
            if normalize(pattern) != pattern:
                return f"its pattern {pattern!r} is not one rooms writes"
        except InvalidInput as exc:
            return exc.message
    return None


def _renewed(r: Reservation, ev: dict[str, Any], held: dict[str, Reservation]) -> None:
    if isinstance(ev.get("expires_at"), str):
        r.expires_at = max(r.expires_at, ev["expires_at"])
        r.exclusive = r.exclusive or bool(ev.get("exclusive"))
        r.renewed += 1


def _released(r: Reservation, ev: dict[str, Any], held: dict[str, Reservation]) -> None:
    if r.released is None:
        r.released = str(ev.get("ts", ""))
        held.pop(r.id, None)


def _expired(r: Reservation, ev: dict[str, Any], held: dict[str, Reservation]) -> None:
    r.expiry_recorded = True
    held.pop(r.id, None)


_LATER = {"renew": _renewed, "release": _released, "expire": _expired}


def _from_event(ev: dict[str, Any]) -> Reservation | None:
    patterns, agent, expires = ev.get("patterns"), ev.get("agent"), ev.get("expires_at")
    if not (isinstance(patterns, list) and patterns and all(isinstance(p, str) for p in patterns)
            and isinstance(agent, str) and isinstance(expires, str)):
        return None  # a hand-mangled line: doctor's concern, never a crash
    return Reservation(id=ev["id"], agent=agent, patterns=list(patterns), exclusive=bool(ev.get("exclusive", True)),
                       reason=str(ev.get("reason") or ""), created_at=str(ev.get("ts", "")), expires_at=expires)


def _clash(one: Reservation, other: Reservation) -> tuple[str, str, str] | None:
    """(pattern of one, pattern of other, a path both cover) when the two cannot both hold, else None."""
    if one.agent == other.agent or not (one.exclusive or other.exclusive):
        return None
    for a in one.patterns:
        for b in other.patterns:
            path = overlap(a, b)
            if path is not None:
                return a, b, path
    return None


def _rival(held: Iterable[Reservation], candidate: Reservation, moment: str) -> Reservation | None:
    for r in held:
        if r.active(moment) and _clash(candidate, r) is not None:
            return r
    return None


def load(project: Project) -> dict[str, Reservation]:
    """The ledger replayed; each event it cannot use skipped with a warning; InvalidData when the
    ledger cannot be read at all (see `read_events`)."""
    skipped: list[tuple[dict[str, Any], str]] = []
    found = replay(read_events(project), skipped)
    for ev, why in skipped:
        _warn_once(project, ev, why)
    return found


_warned: set[str] = set()


def _warn_once(project: Project, ev: dict[str, Any], why: str) -> None:
    from rooms_cli.core import terminal

    what = f"{project.relative(log_path(project))}: {ev.get('ev')!r} event {ev.get('eid', ev.get('id', '?'))} skipped: {why}"
    if what not in _warned:
        _warned.add(what)
        terminal.warn(what + " (rooms doctor lists it)")


_KINDS = ("reserve", "renew", "release", "expire")


def read_events(project: Project) -> list[dict[str, Any]]:
    """The ledger's records (bad lines skipped with a warning, as in every log). InvalidData (exit 1)
    naming the file and `rooms doctor` when it cannot be read at all — a directory, unreadable, an
    unresolved merge, or not one of its lines an event of the ledger (overwritten with garbage): a
    guard that read nothing there would let every commit through."""
    from rooms_cli.core.errors import InvalidData

    path = log_path(project)
    rel = project.relative(path)
    try:
        scan = jsonl.scan(path)
    except InvalidData as exc:
        raise InvalidData(f"the reservations ledger cannot be read ({exc.message}); run `rooms doctor`") from None
    for lineno, reason in scan.bad:
        jsonl.warn(path, lineno, reason)
    if (scan.bad or scan.torn) and not any(r.get("ev") in _KINDS for r in scan.records):
        raise InvalidData(f"the reservations ledger {rel} cannot be read: not one of its lines is a reservation event; "
                          "run `rooms doctor`, then restore it from git", data={"file": rel})
    return scan.records


def active_reservations(project: Project, moment: str | None = None) -> list[Reservation]:
    """The reservations in force now, oldest first."""
    moment = moment or iso(now())
    return [r for r in load(project).values() if r.active(moment)]


def _ttl_seconds(ttl: str | float | None) -> float:
    seconds = parse_duration(DEFAULT_TTL if ttl is None else ttl, maximum=MAX_LEASE_S)
    if seconds <= 0:
        raise InvalidInput(f"ttl must be longer than zero, not {ttl!r}")
    return seconds


def describe(r: Reservation) -> str:
    how = "exclusive" if r.exclusive else "shared"
    return f"{r.agent}'s {how} reservation {r.id} of {' '.join(r.patterns)} (until {r.expires_at})"


def reserve(project: Project, agent: str, patterns: list[str], *, ttl: str | float | None = None,
            exclusive: bool = True, reason: str = "") -> Reservation:
    """Reserve `patterns` for `agent`; renews the agent's own reservation of the same patterns.

    Refused with Conflict (exit 3) when another agent holds an overlapping reservation that cannot
    coexist with this one (either is exclusive), naming both and a path both cover."""
    validate_name(agent, "agent")
    wanted = list(dict.fromkeys(normalize(p) for p in patterns))
    if not wanted:
        raise InvalidInput("give at least one file pattern, e.g. rooms files reserve 'src/auth/**'")
    seconds = _ttl_seconds(ttl)
    path = log_path(project)
    with locked(path, what="the reservations log"):
        moment_dt = now()
        moment = iso(moment_dt)
        held = load(project)
        expires = iso(add_seconds(moment_dt, seconds))
        mine = next((r for r in held.values() if r.active(moment) and r.agent == agent
                     and sorted(r.patterns) == sorted(wanted)), None)
        candidate = Reservation(id=new_id("fr"), agent=agent, patterns=wanted, exclusive=exclusive, reason=reason,
                                created_at=moment, expires_at=expires)
        if mine is not None:
            candidate.exclusive = exclusive or mine.exclusive
        for r in held.values():
            if r is mine or not r.active(moment):
                continue
            clash = _clash(candidate, r)
            if clash is not None:
                theirs_mine, theirs, both = clash
                raise Conflict(f"{agent}'s {theirs_mine} overlaps {describe(r)} (both cover {both!r}); "
                               + ("wait for it, or ask them to release it" if r.exclusive
                                  else "reserve with --shared, or ask them to release it"),
                               code="reserved", data={"holder": r.to_json(moment), "path": both})
        if mine is not None:
            eventlog.append(path, [eventlog.event("ev", "renew", "e", id=mine.id, expires_at=expires,
                                                  exclusive=candidate.exclusive)], lock=False)
            mine.expires_at, mine.exclusive = max(mine.expires_at, expires), candidate.exclusive
            return mine
        eventlog.append(path, [eventlog.event("ev", "reserve", "e", id=candidate.id, agent=agent, patterns=wanted,
                                              exclusive=exclusive, reason=reason, expires_at=expires)], lock=False)
        return candidate


def release(project: Project, agent: str, patterns: list[str] | None = None, *, all_: bool = False) -> list[Reservation]:
    """Release `agent`'s active reservations: those holding any of `patterns` (or naming them by id),
    or every one with `all_`. Releasing what is not held is NotFound."""
    validate_name(agent, "agent")
    if not all_ and not patterns:
        raise InvalidInput("name the patterns (or reservation ids) to release, or give --all")
    wanted = set() if all_ else {p.strip() for p in patterns or []}
    normal = set() if all_ else {normalize(p) for p in wanted if not p.startswith("fr-")}
    path = log_path(project)
    with locked(path, what="the reservations log"):
        moment = iso(now())
        mine = [r for r in load(project).values() if r.agent == agent and r.active(moment)]
        chosen = mine if all_ else [r for r in mine if r.id in wanted or normal & set(r.patterns)]
        if not chosen:
            held = "; ".join(f"{r.id}: {' '.join(r.patterns)}" for r in mine) or "none"
            raise NotFound(f"{agent} holds no active reservation of {' '.join(sorted(wanted)) or 'anything'} "
                           f"(held: {held})")
        eventlog.append(path, [eventlog.event("ev", "release", "e", id=r.id, by=agent) for r in chosen], lock=False)
        for r in chosen:
            r.released = moment
    return chosen


@dataclass
class CheckResult:
    """What `rooms files check` found: for each path, the other agents' exclusive reservations covering it."""

    agent: str | None
    paths: list[str]
    blocked: dict[str, list[Reservation]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.blocked

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "ok": self.ok, "paths": self.paths,
                "blocked": [{"path": p, "reservations": [r.to_json() for r in rs]} for p, rs in self.blocked.items()]}

    def problem(self) -> Conflict | None:
        if self.ok:
            return None
        path, holders = next(iter(self.blocked.items()))
        more = f" (and {count(len(self.blocked) - 1, 'more path')})" if len(self.blocked) > 1 else ""
        return Conflict(f"{path} is reserved: {describe(holders[0])}{more}", code="reserved", data=self.to_json())


def check_paths(project: Project, paths: list[str], agent: str | None = None) -> CheckResult:
    """Which of `paths` (relative to the project root) another agent holds exclusively (any agent's when `agent` is None).

    Each path must name a file of the project: one that is absolute or climbs out (`/etc/passwd`,
    `../../x`) is refused (InvalidInput naming it), on every surface — the CLI, MCP, the hooks."""
    for path in paths:
        _project_relative(path)
    moment = iso(now())
    held = [r for r in active_reservations(project, moment) if r.exclusive and r.agent != agent]
    result = CheckResult(agent=agent, paths=list(paths))
    for path in paths:
        hits = [r for r in held if any(covers(p, path) for p in r.patterns)]
        if hits:
            result.blocked[path] = hits
    return result


def _project_relative(path: str) -> None:
    parts = path.split("/")
    if not path or path.startswith("/") or ".." in parts or "\0" in path:
        raise InvalidInput(f"{path!r} is not a path inside the project; give it relative to the project root "
                           "(e.g. src/auth/login.py)")


def lapsed_unrecorded(project: Project, moment: str | None = None) -> list[Reservation]:
    """Reservations past their expiry that no release or recorded expiry closed (tick records them; doctor flags them)."""
    return unrecorded_lapses(load(project), moment or iso(now()))


def unrecorded_lapses(found: dict[str, Reservation], moment: str) -> list[Reservation]:
    """`lapsed_unrecorded` of a ledger already replayed."""
    return [r for r in found.values() if r.expired(moment) and not r.expiry_recorded and r.lost_to is None]


def record_expiries(project: Project, dry_run: bool = False) -> list[Reservation]:
    """Append `expire` for each lapsed, unrecorded reservation (under the lock, re-checked); return them."""
    path = log_path(project)
    if not os.path.exists(path):
        return []
    with locked(path, what="the reservations log"):
        moment = iso(now())
        lapsed = lapsed_unrecorded(project, moment)
        if lapsed and not dry_run:
            eventlog.append(path, [eventlog.event("ev", "expire", "e", id=r.id, agent=r.agent, expired_at=r.expires_at)
                                   for r in lapsed], lock=False)
    return lapsed


def project_paths(project: Project, paths: list[str], cwd: str | None = None) -> list[str]:
    """`paths` as given on a command line (relative to `cwd`, or absolute) as paths relative to the project root.

    A path outside the project is refused (InvalidInput naming it)."""
    import os
    from pathlib import Path

    root, here = Path(project.root).resolve(), Path(cwd or os.getcwd())
    found = []
    for given in paths:
        full = (here / given).resolve()
        try:
            found.append(full.relative_to(root).as_posix())
        except ValueError:
            raise InvalidInput(f"{given} is outside the project ({root}); reservations cover files of the project") from None
    return found
