"""The daily schedule (`.rooms.yaml` → `schedule:`) and what `rooms tick` already fired.

A slot: {name (a display name, any text; its id is derived: `Morning Standup` → `morning-standup`), hour_utc, minute (0), format, participants: [ids, "random:N"], probability (1.0), topic?}
or `cron: "M H dom mon dow"` (or `@daily`, `@hourly`…) instead of hour_utc/minute; `pace` (seconds, default 3: gaps of 3–8 s). Times are UTC: no daylight saving, ever.

A slot occurrence at time T is due while T ≤ now ≤ T + catch_up (default 1h). Its probability is
rolled once — `stable_random("schedule", name, day)`, so the same slot on the same date always rolls
the same number — and it is enqueued if the roll is below the probability. What fired is recorded in
`.rooms/schedule/fired.jsonl`, one appended line per occurrence ({"id": "sf-…", "ts", "slot": slot id,
"key", "at", "roll", "won", "queued"…}), read and appended under its lock, so repeated or concurrent
ticks fire an occurrence once; the first line for an occurrence (time/id order) counts. An
append-only log merges in git (two clones that both ticked: union, no conflict). The key
of an occurrence is its date (`2026-11-21`), or date and time for a cron
slot that matches several times that day (`2026-11-21T06:30`). When several occurrences of one slot are
due at once (a busy cron slot, a long catch_up), only the latest is rolled; the others are recorded as
superseded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from rooms_cli.core.errors import InvalidData
from rooms_cli.store import jsonl, layout
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id
from rooms_cli.store.paths import Project
from rooms_cli.store.rand import stable_random

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from rooms_cli.project.config import Config


DEFAULT_CATCH_UP = 3600.0
KEEP_DAYS = 8  # state older than this is pruned
SLOT_KEYS = ("name", "hour_utc", "minute", "cron", "format", "participants", "probability", "topic", "pace")
DEFAULT_PACE = 3.0  # scheduled roundtables keep the source's human-like 3–8 s gaps; the command line defaults to 0


def _fail(where: str, message: str) -> InvalidData:
    return InvalidData(f".rooms.yaml: {where} {message}")


# ---- cron ----------------------------------------------------------------------------------------

CRON_EXAMPLES = "'0 9 * * mon-fri', '@daily' or '*/15 9-17 * * *'"


@dataclass(frozen=True)
class Cron:
    """A standard 5-field cron expression (or @daily, @hourly, @weekly…), read by croniter, in UTC.

    croniter is imported only here, so a schedule without `cron:` slots (and every other command)
    never pays for it.
    """

    text: str

    @classmethod
    def parse(cls, text: object, where: str = "cron") -> Cron:
        from croniter import CroniterError, croniter

        expr = " ".join(str(text).split())
        # croniter also takes 6 and 7 fields (seconds, years); a crontab line has 5
        if not expr.startswith("@") and len(expr.split()) != 5:
            raise _fail(where, f"must have 5 fields (minute hour day-of-month month day-of-week) or be @daily, "
                               f"@hourly…, found {text!r}; e.g. {CRON_EXAMPLES}")
        try:
            croniter(expr, datetime(2000, 1, 1, tzinfo=UTC))
        except (CroniterError, ValueError, TypeError, KeyError) as exc:
            raise _fail(where, f"is not a cron expression ({text!r}: {exc}); e.g. {CRON_EXAMPLES}") from None
        return cls(expr)

    def times_after(self, moment: datetime) -> Iterator[datetime]:
        """The matching times strictly after `moment`, in order."""
        from croniter import CroniterBadDateError, croniter

        it = croniter(self.text, moment)
        while True:
            try:
                yield it.get_next(datetime)
            except CroniterBadDateError:  # a date that never comes, such as 30 February
                return

    def times_on(self, day: date) -> list[datetime]:
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        times: list[datetime] = []
        for moment in self.times_after(start - timedelta(seconds=1)):
            if moment.date() != day:
                return times
            times.append(moment)
        return times  # pragma: no cover - the generator never ends


# ---- slots --------------------------------------------------------------------------------------

def slot_id(name: str) -> str:
    """The id a slot's display name stands for: lowercase, runs of other characters as '-'.

    `Morning Standup` → `morning-standup`. A name that is already an id is its own id, so state and
    queue keys written before names could be display names still match.
    """
    import re

    return re.sub(r"[^a-z0-9._]+", "-", name.lower()).strip("-").lstrip("._")[:64]


@dataclass(frozen=True)
class Slot:
    """A slot of the daily schedule: a format to enqueue at a UTC time or cron, with its odds of running."""

    name: str  # display name, any text
    format: str
    participants: tuple[str, ...] = ()
    probability: float = 1.0
    topic: str | None = None
    pace: float = DEFAULT_PACE
    hour: int | None = None
    minute: int = 0
    cron: Cron | None = None

    @property
    def id(self) -> str:
        return slot_id(self.name)

    def times_on(self, day: date) -> list[datetime]:
        if self.cron is not None:
            return self.cron.times_on(day)
        return [datetime(day.year, day.month, day.day, self.hour or 0, self.minute, tzinfo=UTC)]

    @property
    def when(self) -> str:
        return f"cron {self.cron.text}" if self.cron else f"{self.hour:02d}:{self.minute:02d} UTC"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "id": self.id, "format": self.format, "participants": list(self.participants),
                "probability": self.probability, "topic": self.topic, "when": self.when}


def _whole(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _fail(where, f"must be a whole number from {low} to {high}, found {value!r}")
    return value


def parse_slot(index: int, spec: object, formats: dict[str, Any]) -> Slot:
    where = f"schedule[{index}]"
    if not isinstance(spec, dict):
        raise _fail(where, "must be a mapping such as {name: standup, hour_utc: 6, format: standup}")
    for key in spec:
        if key not in SLOT_KEYS:
            raise _fail(f"{where}.{key}", f"is not a slot key; use {', '.join(SLOT_KEYS)}")
    name = spec.get("name")
    if not isinstance(name, str) or not slot_id(name):
        raise _fail(f"{where}.name", f"must be text with a letter or digit, such as 'Morning Standup', found {name!r}")
    where = f"schedule[{index}] ({name})"
    fmt = spec.get("format")
    if fmt not in formats:
        raise _fail(f"{where}.format", f"names no format ({fmt!r}); known: {', '.join(formats)}")
    participants = spec.get("participants") or []
    if not isinstance(participants, list) or not all(isinstance(p, str) for p in participants):
        raise _fail(f"{where}.participants", "must be a list of agent ids and random:N")
    probability = spec.get("probability", 1.0)
    if isinstance(probability, bool) or not isinstance(probability, (int, float)) or not 0 <= probability <= 1:
        raise _fail(f"{where}.probability", f"must be a number from 0 to 1, found {probability!r}")
    topic = spec.get("topic")
    if topic is not None and not isinstance(topic, str):
        raise _fail(f"{where}.topic", "must be text")
    pace = spec.get("pace", DEFAULT_PACE)
    if isinstance(pace, bool) or not isinstance(pace, (int, float)) or pace < 0:
        raise _fail(f"{where}.pace", f"must be a number of seconds ≥ 0, found {pace!r}")
    if "cron" in spec:
        if "hour_utc" in spec or "minute" in spec:
            raise _fail(where, "has both cron and hour_utc/minute; use one")
        cron = Cron.parse(spec["cron"], f"{where}.cron")
        return Slot(str(name), str(fmt), tuple(participants), float(probability), topic, float(pace), cron=cron)
    if "hour_utc" not in spec:
        raise _fail(where, "needs hour_utc (0–23) or cron")
    hour = _whole(spec["hour_utc"], f"{where}.hour_utc", 0, 23)
    minute = _whole(spec.get("minute", 0), f"{where}.minute", 0, 59)
    return Slot(str(name), str(fmt), tuple(participants), float(probability), topic, float(pace), hour=hour,
                minute=minute)


def load_slots(config: Config) -> list[Slot]:
    """The validated slots of `.rooms.yaml` (ids, derived from the names, unique)."""
    from rooms_cli.roundtable.formats import load_formats

    specs = config.get("schedule") or []
    formats = load_formats(config) if specs else {}
    slots = [parse_slot(i, spec, formats) for i, spec in enumerate(specs)]
    seen: dict[str, str] = {}
    for slot in slots:
        if slot.id in seen:
            raise _fail("schedule", f"has two slots named {seen[slot.id]!r} and {slot.name!r} (both id {slot.id!r}); "
                                    "names must differ in more than case and punctuation")
        seen[slot.id] = slot.name
    return slots


def catch_up_seconds(config: Config) -> float:
    from rooms_cli.core.errors import InvalidInput
    from rooms_cli.store.clock import parse_duration

    try:
        return parse_duration(config.get("catch_up", DEFAULT_CATCH_UP))
    except InvalidInput as exc:
        raise InvalidData(f".rooms.yaml: catch_up: {exc}") from None


# ---- occurrences and rolls ----------------------------------------------------------------------

@dataclass(frozen=True)
class Occurrence:
    """A slot at one of its times, with the state key its firing is recorded under."""

    slot: Slot
    at: datetime
    key: str  # the state key: the date, or date and time when the slot fires several times that day

    @property
    def roll(self) -> float:
        return stable_random("schedule", self.slot.id, self.key)

    @property
    def wins(self) -> bool:
        return self.roll < self.slot.probability  # 0 never wins, 1 always does


def occurrences_on(slot: Slot, day: date) -> list[Occurrence]:
    times = slot.times_on(day)
    several = len(times) > 1
    return [Occurrence(slot, t, t.strftime("%Y-%m-%dT%H:%M") if several else t.strftime("%Y-%m-%d")) for t in times]


def due_occurrences(slots: list[Slot], moment: datetime, catch_up: float) -> list[Occurrence]:
    """Occurrences with at ≤ moment ≤ at + catch_up, oldest first."""
    earliest = moment - timedelta(seconds=catch_up)
    due: list[Occurrence] = []
    day = earliest.date()
    while day <= moment.date():
        for slot in slots:
            due.extend(o for o in occurrences_on(slot, day) if earliest <= o.at <= moment)
        day += timedelta(days=1)
    return sorted(due, key=lambda o: (o.at, o.slot.id))


def next_fire(slot: Slot, moment: datetime) -> datetime | None:
    """The first occurrence strictly after `moment` (within a year)."""
    day = moment.date()
    for _ in range(367):
        for occ in occurrences_on(slot, day):
            if occ.at > moment:
                return occ.at
        day += timedelta(days=1)
    return None


# ---- state --------------------------------------------------------------------------------------

@dataclass
class ScheduleState:
    """What ticks already fired, by slot and key, and which entries this tick added."""

    fired: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # slot id -> key -> {roll, won, queued, at, error}
    new: list[tuple[str, str]] = field(default_factory=list)  # (slot id, key) recorded since it was read

    def has(self, occ: Occurrence) -> bool:
        return occ.key in self.fired.get(occ.slot.id, {})

    def get(self, occ: Occurrence) -> dict[str, Any] | None:
        return self.fired.get(occ.slot.id, {}).get(occ.key)

    def record(self, occ: Occurrence, entry: dict[str, Any]) -> None:
        self.fired.setdefault(occ.slot.id, {})[occ.key] = entry
        self.new.append((occ.slot.id, occ.key))

    def prune(self, moment: datetime) -> None:
        cutoff = (moment - timedelta(days=KEEP_DAYS)).strftime("%Y-%m-%d")
        for name in list(self.fired):
            self.fired[name] = {k: v for k, v in self.fired[name].items() if k[:10] >= cutoff}
            if not self.fired[name]:
                del self.fired[name]

    def to_json(self) -> dict[str, Any]:
        return {"fired": self.fired}


def state_path(project: Project) -> str:
    """The log of fired occurrences (also the lock ticks take)."""
    return layout.schedule_fired_log(project)


def read_state(project: Project) -> ScheduleState:
    """What fired, by slot and occurrence key: the first record of each occurrence in the one order."""
    fired: dict[str, dict[str, dict[str, Any]]] = {}
    for record in jsonl.read_ordered(state_path(project)):
        slot, key = record.get("slot"), record.get("key")
        if isinstance(slot, str) and isinstance(key, str) and key not in fired.get(slot, {}):
            entry = {k: v for k, v in record.items() if k not in ("id", "ts", "hlc", "slot", "key")}
            fired.setdefault(slot, {})[key] = entry
    return ScheduleState(fired=fired)


def write_state(project: Project, state: ScheduleState) -> None:
    """Append what was recorded since `state` was read (the caller holds the log's lock)."""
    records = [{"id": new_id("sf"), "ts": now_iso(), "slot": slot, "key": key, **state.fired[slot][key]}
               for slot, key in state.new if key in state.fired.get(slot, {})]
    jsonl.append_many(state_path(project), records, lock=False)
    state.new.clear()


def today_status(project: Project, config: Config, moment: datetime) -> list[dict[str, Any]]:
    """Every slot with today's occurrences (won, lost, error, due, missed, upcoming) and its next fire time.

    An occurrence that queued a roundtable carries `run`: its status (pending, running, done, retrying,
    failed), attempts, retry_after and error.
    """
    from rooms_cli.roundtable.queue import list_items
    from rooms_cli.store.clock import iso

    catch = catch_up_seconds(config)
    state = read_state(project)
    runs = {item.id: item for item in list_items(project) if item.by == "schedule"}
    rows = []
    for slot in load_slots(config):
        today = []
        for occ in occurrences_on(slot, moment.date()):
            entry = state.get(occ)
            if entry is not None:
                status = ("superseded" if entry.get("superseded_by") else "error" if entry.get("error")
                          else "won" if entry.get("won") else "lost")
            elif occ.at > moment:
                status = "upcoming"
            elif (moment - occ.at).total_seconds() <= catch:
                status = "due"
            else:
                status = "missed"
            row = {"at": iso(occ.at), "key": occ.key, "status": status, **({"entry": entry} if entry else {})}
            item = runs.get((entry or {}).get("queued", ""))
            if item is not None:  # what became of the roundtable it queued: ran, retrying, failed
                row["run"] = {"status": "retrying" if item.status == "pending" and item.not_before else item.status,
                              "attempts": item.attempts, "retry_after": item.not_before, "error": item.error,
                              "room": item.room}
            today.append(row)
        nxt = next_fire(slot, moment)
        rows.append({**slot.to_json(), "today": today, "next": iso(nxt) if nxt else None})
    return rows
