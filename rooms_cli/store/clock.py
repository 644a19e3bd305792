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


def parse_time(text: str) -> datetime:
    """Parse an ISO 8601 time; a time without a zone is taken as UTC."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"invalid time {text!r}: expected ISO 8601 such as 2026-11-21T09:00:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")


def parse_duration(text: str | float | int) -> float:
    """Seconds from `90`, `90s`, `15m`, `1h30m`, `2d`, `250ms`. Refuses negatives and junk."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if text < 0:
            raise InvalidInput(f"invalid duration {text!r}: must not be negative")
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
        if pos != len(value) or pos == 0:
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


# --- the hybrid logical clock ---------------------------------------------------------------------------
#
# Every record appended to a log gets `hlc`: "<ISO time, ms>-<counter>-<node>", e.g.
# "2026-11-25T10:46:55.123Z-0000-3f9a1c". The time is the wall clock unless a stamp this process issued or
# saw in the log being appended is later (a clone whose clock is behind still stamps after what it saw);
# the counter orders stamps of one millisecond (it never passes 9999: the time moves on a millisecond
# instead, so stamps stay sortable as strings); the node (random per process) tells apart two writers
# that hit the same time and counter. So stamps compare as plain strings, and a stamp of a record
# written after this clone saw record R sorts after R's.

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
    """Remember a stamp read from a log: every stamp issued afterwards sorts after it."""
    global _hlc_last
    parts = _hlc_parts(stamp) if stamp else None
    if parts is not None and parts > _hlc_last:
        _hlc_last = parts


def hlc_stamp() -> str:
    """A new stamp, later than every stamp this process issued or saw (hlc_see) and not before the clock."""
    global _hlc_last, _hlc_node
    if not _hlc_node:
        _hlc_node = os.urandom(3).hex()
    wall = int((now() - _EPOCH).total_seconds() * 1000 + 0.5)
    last_ms, last_counter = _hlc_last
    if wall > last_ms:
        ms, counter = wall, 0
    elif last_counter < 9999:
        ms, counter = last_ms, last_counter + 1
    else:
        ms, counter = last_ms + 1, 0
    _hlc_last = (ms, counter)
    return f"{iso(_EPOCH + timedelta(milliseconds=ms))}-{counter:04d}-{_hlc_node}"
