"""The clock: UTC everywhere, ISO 8601 with `Z`, `ROOMS_NOW` overrides it; durations like `15m`."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta

from rooms_cli.core.errors import InvalidInput


def now() -> datetime:
    """The current time (UTC, aware), or `ROOMS_NOW` when set."""
    fixed = os.environ.get("ROOMS_NOW")
    if fixed:
        try:
            return parse_time(fixed)
        except InvalidInput as exc:
            raise InvalidInput(f"ROOMS_NOW: {exc}") from None
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """Format as `2026-11-21T13:01:52.123Z` (milliseconds, UTC)."""
    moment = moment.astimezone(UTC)
    m = moment
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}.{m.microsecond // 1000:03d}Z"


def now_iso() -> str:
    return iso(now())


LATEST = datetime(9000, 1, 1, tzinfo=UTC)  # no time rooms takes is later: adding any duration stays in range


def parse_time(text: str) -> datetime:
    """Parse an ISO 8601 time; a time without a zone is taken as UTC. A time from 9000 on is refused
    (`ROOMS_NOW=9999-12-31T23:00:00Z` made `--lease 2h` overflow the calendar)."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"invalid time {text!r}: expected ISO 8601 such as 2026-11-21T09:00:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    if moment >= LATEST:
        raise InvalidInput(f"invalid time {text!r}: rooms takes times before the year 9000")
    return moment


_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")

MAX_DURATION_S = 365 * 86400  # the longest duration any option or argument takes (a timeout, a catch-up window)
MAX_LEASE_S = 7 * 86400  # the longest a task lease or a file reservation may run (issue 38: expiry is bounded)


def parse_duration(text: str | float | int, *, maximum: float = MAX_DURATION_S) -> float:
    """Seconds from `90`, `90s`, `15m`, `1h30m`, `2d`, `250ms`. Refuses negatives and junk (InvalidInput),
    and anything longer than `maximum` (InvalidInput with the usage exit code, 2, naming the largest
    accepted value): every surface — options, MCP arguments, config — reads durations here, so
    `99999999d` or `1e308` is one sentence, never an overflow deep inside a command."""
    seconds = _duration_seconds(text)
    if seconds > maximum:
        from rooms_cli.core.errors import ExitCode

        raise InvalidInput(f"invalid duration {text!r}: the largest accepted is {describe_duration(maximum)}",
                           code="usage", exit_code=ExitCode.USAGE)
    return seconds


def _duration_seconds(text: str | float | int) -> float:
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if text < 0 or text != text or text == float("inf"):
            raise InvalidInput(f"invalid duration {text!r}: must be a finite number of seconds, not negative")
        return float(text)
    value = str(text).strip().lower()
    if not value:
        raise InvalidInput("invalid duration '': expected e.g. 90s, 15m, 1h")
    try:
        seconds = float(value)
    except ValueError:
        pos, total = 0, 0.0
        for match in _DURATION_RE.finditer(value):
            if match.start() != pos:
                break
            num, unit = float(match.group(1)), match.group(2)
            total += num * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
            pos = match.end()
        if pos != len(value) or pos == 0 or total == float("inf"):
            raise InvalidInput(f"invalid duration {text!r}: expected e.g. 90s, 15m, 1h30m") from None
        return total
    if seconds < 0 or seconds != seconds or seconds == float("inf"):
        raise InvalidInput(f"invalid duration {text!r}: must be a finite number of seconds, not negative")
    return seconds


def describe_duration(seconds: float) -> str:
    """A duration as people write it: `1s`, `0.5s`, `1m30s`, `2h`, `1d3h` (the inverse of parse_duration)."""
    if seconds < 60:
        return f"{seconds:g}s"
    whole = round(seconds)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if whole >= size:
            parts.append(f"{whole // size}{unit}")
            whole %= size
    return "".join(parts)


def add_seconds(moment: datetime, seconds: float) -> datetime:
    return moment + timedelta(seconds=seconds)


_limits: dict[str, str] = {}


def lease_limit(before: str) -> str | None:
    """The latest end (ISO) a lease or reservation may have when the record before it was written at
    `before` (ISO): MAX_LEASE_S later. Expiry is decided by one writer's clock; bounded so, a clock a
    year ahead holds a task for at most MAX_LEASE_S of the others' time, not a year. None when `before`
    is not a time."""
    limit = _limits.get(before)
    if limit is None:
        try:
            limit = iso(parse_time(before) + timedelta(seconds=MAX_LEASE_S))
        except (InvalidInput, OverflowError):
            return None
        _limits[before] = limit
    return limit


def in_force(since: str, moment: str) -> bool:
    """Whether a record written at `since` (ISO) is in force at `moment` (ISO): not stamped more than
    MAX_SKEW_S after it (a writer whose clock ran ahead granted it for a time that has not come)."""
    if since <= moment:
        return True
    try:
        return (parse_time(since) - parse_time(moment)).total_seconds() <= MAX_SKEW_S
    except InvalidInput:
        return True


# --- the hybrid logical clock ---------------------------------------------------------------------------
#
# Every record appended to a log gets `hlc`: "<ISO time, ms>-<counter>-<node>", e.g.
# "2026-11-25T10:46:55.123Z-0000-3f9a1c". The time is the wall clock unless a stamp this process issued or
# saw in the log being appended is later (a clone whose clock is behind still stamps after what it saw);
# the counter orders stamps of one millisecond (it never passes 9999: the time moves on a millisecond
# instead, so stamps stay sortable as strings); the node (random per process) tells apart two writers
# that hit the same time and counter. So stamps compare as plain strings, and a stamp of a record
# written after this clone saw record R sorts after R's — unless R's stamp is more than MAX_SKEW_S ahead of
# this clock: a writer whose clock ran far ahead (or a hand edit, `9999-12-31T…`) would otherwise drag every
# later stamp of every clone to its time (and past the calendar's end). Such a stamp is ordered by readers
# like any other but not followed; `rooms doctor` names it (`future_stamp`).

MAX_SKEW_S = 3600  # how far ahead of this clock a stamp may be and still be followed

_HLC_WIDTH = 24  # len("2026-11-25T10:46:55.123Z")
_hlc_last: tuple[int, int] = (0, -1)  # (ms, counter) of the last stamp this process issued or saw
_hlc_node = ""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
HLC_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z-\d{4}-[0-9a-z]{1,16}")


def _hlc_parts(stamp: str) -> tuple[int, int] | None:
    if not HLC_RE.fullmatch(stamp):
        return None
    try:
        moment = datetime.fromisoformat(stamp[: _HLC_WIDTH - 1] + "+00:00")
    except ValueError:
        return None
    return (int((moment - _EPOCH).total_seconds() * 1000 + 0.5), int(stamp[_HLC_WIDTH + 1 : _HLC_WIDTH + 5]))


def hlc_see(stamp: str | None) -> None:
    """Remember a stamp read from a log: every stamp issued afterwards sorts after it — unless it is more
    than MAX_SKEW_S ahead of this clock (`future_stamp`): then it is not followed."""
    global _hlc_last
    parts = _hlc_parts(stamp) if stamp else None
    if parts is not None and parts > _hlc_last and parts[0] <= _wall_ms() + MAX_SKEW_S * 1000:
        _hlc_last = parts


def _wall_ms() -> int:
    return int((now() - _EPOCH).total_seconds() * 1000 + 0.5)


def stamp_time(stamp: object) -> datetime | None:
    """The time a stamp (`hlc`) says, or None when it is not one."""
    parts = _hlc_parts(stamp) if isinstance(stamp, str) else None
    return None if parts is None else _EPOCH + timedelta(milliseconds=parts[0])


def future_stamp(stamp: object, moment: datetime | None = None) -> float | None:
    """How many seconds a stamp is ahead of `moment` (default: now) when that is more than MAX_SKEW_S —
    a stamp this clock does not follow — else None."""
    at = stamp_time(stamp)
    if at is None:
        return None
    ahead = (at - (moment or now())).total_seconds()
    return ahead if ahead > MAX_SKEW_S else None


def forget() -> None:
    """Forget every stamp issued or seen, as a new process starts (for tests that run many commands in one)."""
    global _hlc_last
    _hlc_last = (0, -1)


def _next(last: tuple[int, int]) -> tuple[int, int]:
    ms, counter = last
    return (ms, counter + 1) if counter < 9999 else (ms + 1, 0)


_LATEST_MS = int((LATEST - _EPOCH).total_seconds() * 1000)


def hlc_stamp(after: str = "") -> str:
    """A new stamp, later than every stamp this process issued or saw (hlc_see) and not before the clock.

    `after` is the latest stamp of the log being appended to: the new stamp sorts after it even when it
    is one this clock does not follow (`future_stamp`), so a log's own records keep the order they were
    written in (a roundtable queue's claim after its enqueue, a task's release after its claim) whatever
    clock wrote them. Such a stamp drags only that log's stamps, not this process's clock; a stamp from
    the year 9000 on is not a time rooms takes and is never followed."""
    global _hlc_last, _hlc_node
    if not _hlc_node:
        _hlc_node = os.urandom(3).hex()
    wall = _wall_ms()
    ms, counter = (wall, 0) if wall > _hlc_last[0] else _next(_hlc_last)
    _hlc_last = (ms, counter)
    floor = _hlc_parts(after) if after else None
    if floor is not None and floor >= (ms, counter) and floor[0] < _LATEST_MS:
        ms, counter = _next(floor)  # beyond the skew: this log only
    return f"{iso(_EPOCH + timedelta(milliseconds=ms))}-{counter:04d}-{_hlc_node}"
