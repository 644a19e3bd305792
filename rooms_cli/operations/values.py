"""Values an operation parses itself: durations, times, finite numbers, choices, comma-separated lists, names, text.

Each factory returns a parser for one option (or argument). A bad value is a usage error (exit 2) in one
sentence naming the option: `error: --timeout: invalid duration 'abc': …`, `error: --lane: invalid lane
'bad name!': …`, `error: TITLE: the title is empty` (a JSON error under --json), never an exit 1 from deep
inside the command. typer calls these parsers (cli/options.py), and so do the fast path (cli/fast.py) and
the MCP server for an argument it takes as the command line does (an error there names the argument),
which is why this module imports none of them. Each parser's `__name__` is the metavar `--help` shows for
its option when the declaration names none (typer would show the function's name, `<parse>`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from datetime import datetime
    from typing import Any


def _bad(option: str, message: str) -> Exception:
    from rooms_cli.core.errors import UsageError

    return UsageError(f"{option}: {message}")


def duration_value(option: str, *, positive: bool = False, maximum: float | None = None) -> Callable[[Any], float | None]:
    """A parser for a duration option (`90`, `90s`, `15m`, `1h30m`) giving seconds; `positive`: > 0;
    at most `maximum` seconds (default: the longest any duration may be, store/clock.MAX_DURATION_S)."""

    def parse(value: Any) -> float | None:
        if value is None or isinstance(value, (int, float)):
            return value
        from rooms_cli.core.errors import InvalidInput
        from rooms_cli.store.clock import MAX_DURATION_S, parse_duration

        try:
            seconds = parse_duration(value, maximum=MAX_DURATION_S if maximum is None else maximum)
        except InvalidInput as exc:
            raise _bad(option, exc.message) from None
        if positive and seconds <= 0:
            raise _bad(option, f"must be longer than zero, not {value!r}")
        return seconds

    parse.__name__ = "DURATION"
    return parse


def time_value(option: str) -> Callable[[Any], datetime | None]:
    """A parser for an ISO 8601 time option, giving an aware datetime."""

    def parse(value: Any) -> datetime | None:
        if value is None or not isinstance(value, str):
            return value  # a datetime already
        from rooms_cli.core.errors import InvalidInput
        from rooms_cli.store.clock import parse_time

        try:
            return parse_time(value)
        except InvalidInput as exc:
            raise _bad(option, exc.message) from None

    parse.__name__ = "ISO"
    return parse


def finite_number(option: str, minimum: float | None = None) -> Callable[[Any], float | None]:
    """A parser for a number option that must be finite (NaN and infinity are not JSON) and ≥ `minimum`."""

    def parse(value: Any) -> float | None:
        if value is None:
            return None
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise _bad(option, f"{value!r} is not a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise _bad(option, f"must be a finite number, not {value!r}")
        if minimum is not None and number < minimum:
            raise _bad(option, f"must be at least {minimum:g}, not {value!r}")
        return number

    parse.__name__ = "NUMBER"
    return parse


def choice_value(option: str, choices: Callable[[], Iterable[str]]) -> Callable[[Any], str | None]:
    """A parser for an option that takes one of `choices()` (called only when the option is given)."""

    def parse(value: Any) -> str | None:
        if value is None:
            return None
        allowed = list(choices())
        if value not in allowed:
            raise _bad(option, f"must be one of {', '.join(allowed)}, not {value!r}")
        return str(value)

    parse.__name__ = "CHOICE"
    return parse


def count_value(option: str) -> Callable[[Any], int | None]:
    """A parser for a whole number ≥ 0 (`--done 20`)."""

    def parse(value: Any) -> int | None:
        if value is None or isinstance(value, int):
            return value
        text = str(value).strip()
        if not text.isdigit():
            raise _bad(option, f"must be a whole number, 0 or more, not {value!r}")
        return int(text)

    parse.__name__ = "N"
    return parse


def name_value(option: str, what: str = "name") -> Callable[[Any], str | None]:
    """A parser for an option that names something strictly (`--lane`, `--to`, `--as`, `--room`): a value
    that cannot be a name (store/ids.py) is a usage error naming the option."""

    def parse(value: Any) -> str | None:
        if value is None:
            return None
        from rooms_cli.core.errors import InvalidInput
        from rooms_cli.store.ids import validate_name

        try:
            return validate_name(value, what)
        except InvalidInput as exc:
            raise _bad(option, exc.message) from None

    parse.__name__ = "NAME"
    return parse


def text_value(option: str, what: str = "text") -> Callable[[Any], Any]:
    """A parser for required text (`task add TITLE`, `send MESSAGE`, `--summary`): blank is a usage error,
    as chat's empty message is."""

    def parse(value: Any) -> Any:
        if value is None or not isinstance(value, str):
            return value
        if not value.strip():
            raise _bad(option, f"the {what} is empty")
        return value

    parse.__name__ = "TEXT"
    return parse


def comma_list(option: str) -> Callable[[Any], list[str] | None]:
    """A parser for a comma-separated list (`--profiles a,b,c`), giving its non-blank items; a list
    (an MCP tool's argument) is taken as it is."""

    def parse(value: Any) -> list[str] | None:
        if value is None or isinstance(value, list):
            return value
        return [item.strip() for item in str(value).split(",") if item.strip()] or None

    return parse
