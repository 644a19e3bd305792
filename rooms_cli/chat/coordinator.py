"""The coordinator: one turn of a room, from a person's message to the last reply it set off.

    result = run_message(project, config, "default", "alice", "@jam what now?", on_event=print)

A turn: record the message, decide who is eligible (activation.py), prompt them — in series for
open, direct and @everyone messages, concurrently from one transcript snapshot for @jam — then
follow cascades (an agent's reply that @-mentions another agent prompts it next) while the budget
lasts. Failures of a provider become a system line naming the agent and the reason; the turn goes
on. A room's turns are serialized by its floor lock (`floor`), held around the whole turn.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from functools import partial

from rooms_cli.chat import budget, sessions
from rooms_cli.chat.activation import Activation, activate
from rooms_cli.chat.addressing import Addressing, parse
from rooms_cli.chat.calling import Caller, known_names, read_reply
from rooms_cli.chat.context import read_snapshot
from rooms_cli.chat.hygiene import copied_from, strip_labels
from rooms_cli.chat.rooms import RoomState, admit_new_agents, load_room, update_room
from rooms_cli.chat.transcript import Message, append_message, make_message
from rooms_cli.core.errors import Conflict, InvalidInput, LockBusy, RoomsError
from rooms_cli.core.passes import could_still_be_pass, streaming_object
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.core.text import count
from rooms_cli.project.context import DEFAULT_ROOM
from rooms_cli.store import files, layout
from rooms_cli.store.rand import rng

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.agents.definitions import Agent
    from rooms_cli.chat.calling import Answer, Reading
    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project

FLOOR_TIMEOUT = 600.0  # seconds a second `rooms chat` waits for the floor before giving up (exit 3)

PASS_LINES = (
    "shuffles notes, finds nothing new",
    "nods along, nothing to add",
    "leans back and listens",
    "scribbles something, then crosses it out",
    "sips coffee, lets this one go by",
    "checks the notes again: nothing new there",
    "stays quiet on this one",
    "raises an eyebrow, says nothing",
)
FLAVOR_LINES = (
    "opens their mouth, closes it again: nothing worth saying that would not be made up",
    "shrugs: honestly has no take on this one",
    "looks around the room, then at the floor: still nothing",
    "taps the table twice and declines to invent an answer",
)

Event = Callable[[str, dict[str, "Any"]], None]


@dataclass
class Outcome:
    """What one prompted agent produced, before it is written."""

    agent: Agent
    trigger: Message
    mode: str
    kind: str  # message | pass | flavor | repeat | failed | external
    text: str = ""
    completion: Any = None  # rooms_cli.models.Completion
    meta: dict[str, Any] = field(default_factory=dict)  # finish_reason, cut, repeated, copy_of, trimmed


@dataclass
class _BatchLine:
    """A reply of the same batch as chat.hygiene.copied_from reads it."""

    speaker: str
    text: str
    id: str = ""


def append_records(project: Project, room: str, messages: list[Message]) -> None:
    """Append several records to a room's transcript in one locked write."""
    from rooms_cli.chat.rooms import transcript_path
    from rooms_cli.store import jsonl, schema

    path = transcript_path(project, room)
    jsonl.append_many(path, schema.checked("transcript", [m.to_json() for m in messages], project.relative(path)))


@dataclass
class TurnResult:
    """One turn of a room: the message, who was eligible, their replies, the budget left.

    Also the mentions queued for /continue and notes on agents skipped or sat out."""

    room: str
    message: Message | None
    mode: str
    eligible: list[str] = field(default_factory=list)
    replies: list[Message] = field(default_factory=list)
    remaining: int = 0
    total: int = 0
    queued: list[dict[str, Any]] = field(default_factory=list)
    exhausted: bool = False
    notes: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # agents whose provider failed
    answered: int = 0  # agents that replied, passed or were notified

    @property
    def unanswered(self) -> bool:
        """Agents were prompted and every one of them failed: the command exits 1."""
        return bool(self.failed) and not self.answered

    def to_json(self) -> dict[str, Any]:
        return {
            "room": self.room,
            "message": self.message.to_json() if self.message else None,
            "mode": self.mode,
            "eligible": self.eligible,
            "replies": [r.to_json() for r in self.replies],
            "budget": {"remaining": self.remaining, "total": self.total},
            "queued": self.queued,
            "exhausted": self.exhausted,
            "notes": self.notes,
            "failed": self.failed,
        }


floor_path = layout.floor_lock


@contextmanager
def floor(project: Project, room: str, *, wait: bool = True, on_wait: Callable[[str], None] | None = None,
          timeout: float = FLOOR_TIMEOUT) -> Iterator[None]:
    """Hold the room's floor (serializes turns). Busy: wait with a note, or LockBusy at once."""
    from rooms_cli.store.locks import locked, try_lock

    held = try_lock(floor_path(project, room))
    if held is not None:
        try:
            yield
        finally:
            held.release()
        return
    if not wait:
        raise LockBusy(f"room {room!r} is busy: another `rooms chat` holds the floor (run again, or drop --no-wait to wait)")
    if on_wait:
        on_wait(f"room {room!r} is busy: waiting for the other turn to finish…")
    with locked(floor_path(project, room), timeout=timeout, what=f"the floor of room {room!r}"):
        yield


def live_room(project: Project, room: str) -> RoomState:
    from rooms_cli.core.errors import NotFound

    try:
        state = load_room(project, room)
    except NotFound:
        raise NotFound(f"no room {room!r}; create it with `rooms room create {room}` or `rooms room join {room}`") from None
    if not state.live:
        raise Conflict(f"room {room!r} is {state.status}; bring it back with `rooms room join chat/{room}` "
                       f"(saved copy) or `rooms room join {room}`", code="room_stopped")
    return state


def roster_agents(project: Project, state: RoomState, notes: list[str]) -> dict[str, Any]:
    """Agent definitions of the roster; a definition that is gone is noted and left out."""
    from rooms_cli.agents.definitions import load_agent
    from rooms_cli.core.errors import NotFound

    agents = {}
    for agent_id in state.roster:
        try:
            agents[agent_id] = load_agent(project, agent_id)
        except NotFound:
            notes.append(f"{agent_id} is in the roster but has no definition in .rooms/agents/; skipped")
    return agents


def external_agents(config: Config, agents: dict[str, Any]) -> frozenset[str]:
    return frozenset(a for a, agent in agents.items() if agent.is_external(config.default_model))


def explain(project: Project, config: Config, room: str, text: str) -> dict[str, Any]:
    """Who would be prompted for `text` and why — no model call, nothing written."""
    from rooms_cli.agents.definitions import agent_ids

    state = live_room(project, room)
    notes: list[str] = []
    agents = roster_agents(project, state, notes)
    addressing = parse(text, state.roster, agent_ids(project))
    act = activate(state, agents, addressing, text, external_agents(config, agents))
    notes.extend(_mention_notes(addressing))
    if state.budget_remaining <= 0:
        notes.append("the budget is at zero: nobody would be prompted" +
                     (" (the direct mention would be queued for /continue)" if addressing.mode == "direct" else ""))
    return {"room": room, **act.to_json(), "addressing": addressing.to_json(),
            "budget": {"remaining": state.budget_remaining, "total": state.budget_total},
            "quiet": [a for a in state.roster if a in agents and agents[a].quiet], "notes": notes}


class EmptyRoom(InvalidInput):
    """A chat in a room whose roster is empty: nothing is posted."""


class UnknownMention(InvalidInput):
    """A person's @-mention that matches no agent and no person of the room: nothing is posted and
    nobody is prompted (it would have become an open message that spends the budget)."""

    def __init__(self, words: list[str], roster: list[str], known: list[str], room: str) -> None:
        from rooms_cli.chat.addressing import closest

        parts = []
        for word in words:
            near = closest(word, [*roster, *known])
            parts.append(f"@{word}" + (f" (closest: {', '.join(near)})" if near else ""))
        here = f" (in the room: {', '.join(roster)})" if not any(closest(w, [*roster, *known]) for w in words) else ""
        super().__init__(f"no agent matches {', '.join(parts)}, so nothing was posted and nobody was asked; "
                         f"fix the name and send again{here}", code="unknown_mention",
                         data={"mentions": list(words), "room": room})
        self.words = list(words)


def room_people(project: Project, config: Config, room: str, speaker: str) -> set[str]:
    """The people a message may @-mention without naming an agent: the speaker, `user:` of
    .rooms.yaml, whoever spoke lately in the room, and whoever has an inbox (`rooms send --to`)."""
    from rooms_cli.chat.transcript import tail

    people = {speaker.lower()}
    if config.user:
        people.add(str(config.user).lower())
    people.update(m.speaker.lower() for m in tail(project, room, 200) if m.kind == "message")
    people.update(os.path.basename(p)[: -len(".jsonl")].lower() for p in files.matching(layout.inbox_dir(project), "*.jsonl"))
    return people


class NotInRoom(InvalidInput):
    """A message addressed only to agents that exist but are not in the room: nothing is posted, and
    nobody else is prompted in their place. Interactive mode offers to invite them."""

    def __init__(self, agents: list[str], room: str) -> None:
        names = ", ".join(agents)
        verb = "is" if len(agents) == 1 else "are"
        invite = " && ".join(f"rooms room invite {a} --room {room}" for a in agents)
        super().__init__(f"{names} {verb} not in room {room!r}, so nobody was asked and nothing was posted; "
                         f"invite {'it' if len(agents) == 1 else 'them'} first ({invite}, or /invite) and send again",
                         code="not_in_room", data={"agents": list(agents), "room": room})
        self.agents = list(agents)


def nobody_prompted(act: Activation) -> str:
    """Why an activation left nobody to prompt, in one note."""
    if not act.filtered:
        return "nobody was prompted: no agent in this room has a definition"
    reasons = "; ".join(f"{agent}: {why}" for agent, why in act.filtered.items())
    return f"nobody was prompted ({reasons})"


def _mention_notes(addressing: Addressing) -> list[str]:
    notes = [f"no agent matches @{word}" for word in addressing.unmatched]
    notes += [f"{agent} is not in this room (invite it with /invite {agent})" for agent in addressing.outside]
    return notes


class Turn:
    """The state of one turn: providers, the budget as this turn sees it, cascades, what happened."""

    def __init__(self, project: Project, config: Config, state: RoomState, agents: dict[str, Any], result: TurnResult,
                 on_event: Event | None) -> None:
        self.project, self.config, self.state, self.agents = project, config, state, agents
        self.room = state.id
        self.result = result
        self.on_event = on_event or (lambda kind, data: None)
        self.remaining = state.budget_remaining
        self.cascade: list[tuple[str, Message]] = []
        self.caller = Caller(project, config, state, agents)
        self.used_lines: set[str] = set()
        self.spent = False
        self.lately: dict[str, list[Any]] | None = None  # agents/said.py, read on the first reply that needs it

    # --- events and records -------------------------------------------------------------
    def emit(self, kind: str, **data: Any) -> None:
        self.on_event(kind, data)

    def record(self, speaker: str, text: str, kind: str, **extra: Any) -> Message:
        msg = append_message(self.project, self.room, speaker, text, kind=kind, **extra)
        self.result.replies.append(msg)
        self.emit(kind, record=msg)
        return msg

    def _line(self, pool: tuple[str, ...], *key: object) -> str:
        choices = [line for line in pool if line not in self.used_lines] or list(pool)
        line = rng("chat-line", *key).choice(choices)
        self.used_lines.add(line)
        return line

    def exhaust(self) -> None:
        """The budget is at zero: record `budget_exhausted` once (not again on later turns at zero)."""
        if self.result.exhausted:
            return
        self.result.exhausted = True
        if self.state.budget_remaining > 0 or self.spent:
            self.record("rooms", budget.EXHAUSTED_TEXT, "budget_exhausted")
        else:
            self.emit("exhausted", text=budget.EXHAUSTED_TEXT)

    # --- calling agents -----------------------------------------------------------------
    def offline_only(self) -> bool:
        """Does every agent this turn may call (the roster, cascades included) answer through the
        offline model, or outside rooms (never called)?"""
        from rooms_cli.models import parse_model

        providers = self.config.providers()
        for agent in self.agents.values():
            name = parse_model(agent.model_string(self.config.default_model))[0]
            if providers.get(name, {}).get("type") not in ("offline", "external"):
                return False
        return True

    async def close(self) -> None:
        await self.caller.close()

    async def call(self, agent: Agent, trigger: Message, snapshot: list[Any], *, must_answer: bool, stream: bool,
                   mode: str = "open") -> tuple[tuple[Answer, Reading] | None, str | None]:
        """One model call, read: (Reading, None), or (None, the reason) when the provider fails.

        Only an open message offers a pass in its prompt: an agent a person (or another agent) asked
        by name is told to answer; a pass it gives anyway is still read as one."""
        offer_pass = mode == "open" and not must_answer
        structured = [False]
        names = known_names(self.agents, snapshot, trigger)
        on_delta = _PassFilter(lambda piece: self.emit("delta", agent=agent.id, text=piece), structured,
                               lambda held: strip_labels(held, agent.id, names)[0]) if stream else None
        try:
            if on_delta is not None:
                provider, _model = self.caller.provider(agent)
                from rooms_cli.models.structured import honours_schemas

                structured[0] = honours_schemas(provider) and offer_pass
            answer = await self.caller.ask(agent, trigger, snapshot, must_answer=must_answer, offer_pass=offer_pass,
                                           on_delta=on_delta)
        except Exception as exc:  # (a cancelled call is a BaseException: it goes through)  # any provider failure: visible, named, and the turn goes on
            self.emit("failed", agent=agent.id)
            return None, exc.message if isinstance(exc, RoomsError) else f"{type(exc).__name__}: {exc}"
        own = [m.text for m in (*self.said_elsewhere(agent.id), *snapshot) if m.speaker == agent.id] if not answer.completion.offline else []
        reading = read_reply(agent, answer, names, own)
        if on_delta is not None and reading.kind == "message":
            on_delta.finish(reading.text)
        return (answer, reading), None

    async def produce(self, agent_id: str, trigger: Message, *, mode: str, snapshot: list[Any] | None = None,
                      stream: bool = True) -> Outcome:
        """Prompt one agent about `trigger` (asking again once on @everyone); nothing is written yet."""
        agent = self.agents[agent_id]
        if agent.is_external(self.config.default_model):
            return Outcome(agent, trigger, mode, "external")
        if snapshot is None:
            snapshot = read_snapshot(self.project, self.room, self.config)
        self.emit("start", agent=agent.id, mode=mode)
        got, error = await self.call(agent, trigger, snapshot, must_answer=False, stream=stream, mode=mode)
        if got is not None and got[1].kind == "pass" and mode == "everyone":
            self.emit("retry", agent=agent.id)
            got, error = await self.call(agent, trigger, snapshot, must_answer=True, stream=stream, mode=mode)
            if got is not None and got[1].kind == "pass":
                return Outcome(agent, trigger, mode, "flavor", self._line(FLAVOR_LINES, agent.id, trigger.id, "flavor"))
        if got is None:
            return Outcome(agent, trigger, mode, "failed", error or "no answer")
        answer, reading = got
        if reading.kind == "pass":
            return Outcome(agent, trigger, mode, "pass", self._line(PASS_LINES, agent.id, trigger.id, "pass"), answer.completion)
        if reading.kind == "echo":  # its instructions read back: stored as a repeat, costs nothing
            return Outcome(agent, trigger, mode, "repeat", "repeats its instructions; not counted", answer.completion,
                           {**reading.meta, "echo": True})
        if reading.kind == "restated":  # only lines it said before, here or elsewhere: likewise
            return Outcome(agent, trigger, mode, "repeat", "repeats what it said before; not counted", answer.completion,
                           {**reading.meta, "self": True})
        # a copy of another's message, or of its own recent one here or anywhere else (a small model says
        # its line again and again, in every room, even as its answer to a hex dump): kept out of later
        # prompts, costs nothing. The offline model's replies are templates, alike by design: only a
        # language model's are held to its own.
        mine = not answer.completion.offline
        earlier = [*self.said_elsewhere(agent.id), *snapshot] if mine else [m for m in snapshot if m.speaker != agent.id]
        original = copied_from(reading.text, earlier, agent.id if mine else None)
        if original is not None:
            return self.repeat(agent, trigger, mode, answer.completion, reading.meta, original)
        return Outcome(agent, trigger, mode, "message", reading.text, answer.completion, reading.meta)

    def repeat(self, agent: Agent, trigger: Message, mode: str, completion: Any, meta: dict[str, Any], original: Any) -> Outcome:
        """The `repeat` outcome of a reply that says `original` (a message, or a line said elsewhere) again."""
        own = original.speaker == agent.id
        where = getattr(original, "where", self.room)
        whose = "its own earlier message" if own else f"{original.speaker}'s message"
        if where != self.room:
            whose += " in " + (f"room {where}" if not where.startswith("inbox:") else "a reply to " + where.removeprefix("inbox:"))
        extra = {"copy_of": original.id, **({"self": True} if own else {}), **({"copy_in": where} if where != self.room else {})}
        return Outcome(agent, trigger, mode, "repeat", f"repeats {whose}; not counted", completion, {**meta, **extra})

    def said_elsewhere(self, agent_id: str) -> list[Any]:
        """What `agent_id` said lately in other rooms and as a woken agent (agents/said.py), oldest first;
        read once a turn, for the whole roster."""
        if self.lately is None:
            from rooms_cli.agents.said import recent_lines

            self.lately = recent_lines(self.project, self.agents)
        return [line for line in reversed(self.lately.get(agent_id, [])) if line.where != self.room]

    def same_batch_copies(self, outcomes: list[Outcome]) -> list[Outcome]:
        """`outcomes` with each language model's message that says an earlier one of the same batch again
        made a `repeat` (replies asked together, @jam or @everyone, never saw each other)."""
        out: list[Outcome] = []
        for o in outcomes:
            if o.kind == "message" and o.completion is not None and not o.completion.offline:
                said = [_BatchLine(e.agent.id, e.text) for e in out if e.kind == "message" and e.agent.id != o.agent.id]
                original = copied_from(o.text, said, o.agent.id)
                if original is not None:
                    o = Outcome(o.agent, o.trigger, o.mode, "repeat", f"repeats {original.speaker}'s message; not counted",
                                o.completion, {**o.meta, "copy_of_batch": original.speaker})
            out.append(o)
        return out

    async def ask(self, agent_id: str, trigger: Message, *, mode: str) -> None:
        self.settle([await self.produce(agent_id, trigger, mode=mode)])

    def settle(self, outcomes: list[Outcome]) -> list[Message]:
        """Write what the agents said: one budget charge and one transcript append for the lot
        (an @jam's eight replies cost two writes, not sixteen), then sessions and cascades."""
        outcomes = self.same_batch_copies(outcomes)
        substantive = [o for o in outcomes if o.kind == "message"]
        if substantive:
            self.remaining = update_room(self.project, self.room, lambda s: budget.spend(s, len(substantive))).budget_remaining
            self.spent = True
        drafts: list[Message] = []
        for o in outcomes:
            if o.kind == "failed":
                self.result.failed.append(o.agent.id)
            else:
                self.result.answered += 1
            answering = {"answering": o.trigger.id}
            if o.kind == "external":
                drafts.append(self.notify_external(o.agent, o.trigger))
            elif o.kind == "failed":
                drafts.append(make_message(self.room, "rooms", f"{o.agent.id} failed to answer: {o.text}", "system",
                                           meta={"agent": o.agent.id, "error": True}))
            elif o.kind in ("pass", "flavor"):
                drafts.append(make_message(self.room, o.agent.id, o.text, o.kind, meta=answering))
            elif o.kind == "repeat":  # copied another's message: kept out of later prompts, costs nothing
                drafts.append(make_message(self.room, o.agent.id, o.text, "repeat", meta={**answering, **o.meta}))
            else:
                c = o.completion
                drafts.append(make_message(self.room, o.agent.id, o.text, "message", model="offline" if c.offline else c.model,
                                           usage=c.usage.to_json(), meta={**answering, "mode": o.mode, **o.meta}))
        if substantive and self.remaining <= 0 and not self.result.exhausted:
            self.result.exhausted = True
            drafts.append(make_message(self.room, "rooms", budget.EXHAUSTED_TEXT, "budget_exhausted"))
        append_records(self.project, self.room, drafts)
        for msg in drafts:
            self.result.replies.append(msg)
            self.emit(msg.kind, record=msg)
        for o, msg in zip(outcomes, drafts, strict=False):
            if o.kind != "message":
                continue
            sessions.record_turn(self.project, self.room, o.agent.id, answered=o.trigger.id, reply=o.text,
                                 usage=msg.usage, finish_reason=o.meta.get("finish_reason"))
            self.suggest_handoff(o.agent, msg.usage or {})
            for target in parse(o.text, self.state.roster, [], from_person=False).targets:
                if target != o.agent.id and target in self.agents:
                    self.cascade.append((target, msg))
        return drafts

    def suggest_handoff(self, agent: Agent, usage: dict[str, Any]) -> None:
        """Suggest a hand-off once the last call's prompt and reply pass the threshold of the window
        (the server's, else the agent's): that is how full the agent's context is now."""
        summary = sessions.summarize_session(self.project, self.room, agent.id)
        threshold = float(self.config.get("context_threshold", sessions.DEFAULT_THRESHOLD))
        window = self.caller.windows.get(agent.model_string(self.config.default_model)) or agent.context_window
        used = sessions.context_used(usage)
        if sessions.needs_handoff(summary, used, window, threshold):
            sessions.mark_suggested(self.project, self.room, agent.id)
            self.record("rooms", f"{agent.id}'s last prompt and reply took {used} of {window} tokens of context "
                                 f"in this room; consider /handoff {agent.id}", "handoff_suggested",
                        meta={"agent": agent.id, "tokens": used})

    def notify_external(self, agent: Agent, trigger: Message) -> Message:
        """An external agent is not called: it is told through its inbox (the line is returned, unwritten)."""
        from rooms_cli.messaging.inbox import deliver

        deliver(self.project, to=agent.id, sender=trigger.speaker, kind="direct",
                text=f"[room {self.room}] {trigger.speaker}: {trigger.text}",
                meta={"room": self.room, "message": trigger.id})
        return make_message(self.room, "rooms", f"{agent.id} answers outside rooms: notified through its inbox "
                            f"(reply with `rooms chat --as {agent.id} --room {self.room} …`)", "system", meta={"agent": agent.id})

    # --- the modes ------------------------------------------------------------------------
    async def series(self, eligible: list[str], trigger: Message, mode: str) -> None:
        for index, agent_id in enumerate(eligible):
            if self.remaining <= 0:
                self.exhaust()
                if mode == "direct":
                    self.queue(eligible[index:], trigger)
                return
            await self.ask(agent_id, trigger, mode=mode)

    async def jam(self, eligible: list[str], trigger: Message) -> None:
        """Every eligible agent at once, from one snapshot; at most as many as the budget has turns."""
        if self.remaining <= 0:
            self.exhaust()
            return
        snapshot = read_snapshot(self.project, self.room, self.config)
        chosen = eligible[: self.remaining]
        if len(chosen) < len(eligible):
            self.result.notes.append(f"@jam: only {count(len(chosen), 'turn')} left, so {', '.join(eligible[len(chosen):])} sat out")

        for agent_id in chosen:  # learn each model's window once, before the calls go out together
            if not self.agents[agent_id].is_external(self.config.default_model):
                await self.caller.window(self.agents[agent_id])

        async def one(agent_id: str) -> Outcome:
            outcome = await self.produce(agent_id, trigger, mode="jam", snapshot=snapshot, stream=False)
            if outcome.kind == "message":  # shown as it arrives; written with the others below
                self.emit("draft", agent=agent_id, text=outcome.text)
            return outcome

        import asyncio  # only @jam runs calls at once

        self.settle(list(await asyncio.gather(*(one(agent_id) for agent_id in chosen))))

    async def cascades(self) -> None:
        while self.cascade:
            agent_id, trigger = self.cascade.pop(0)
            if self.remaining <= 0:
                self.exhaust()
                self.queue([agent_id], trigger)
                continue
            await self.ask(agent_id, trigger, mode="cascade")

    def queue(self, agent_ids: list[str], trigger: Message) -> None:
        entry = {"id": trigger.id, "speaker": trigger.speaker, "text": trigger.text, "ts": trigger.ts, "agents": list(agent_ids)}
        update_room(self.project, self.room, lambda s: budget.add_queued(s, entry))
        self.emit("queued", agents=list(agent_ids), message=trigger.id)


def _finish(project: Project, room: str, result: TurnResult) -> TurnResult:
    state = load_room(project, room)
    result.remaining, result.total, result.queued = state.budget_remaining, state.budget_total, state.queued
    return result


def run_message(project: Project, config: Config, room: str, speaker: str, text: str, on_event: Event | None = None) -> TurnResult:
    """Post `text` as `speaker` and run the turn it sets off. Hold the floor around it.

    A `speaker` that is an agent id (an external agent answering through the CLI) is not a person:
    its text is data, so only the agents it @-mentions are prompted, as in a cascade.
    """
    from rooms_cli.agents.definitions import agent_ids

    state = live_room(project, room)
    result = TurnResult(room=room, message=None, mode="open")
    joined = admit_new_agents(project, room) if room == DEFAULT_ROOM else []
    if joined:
        state = live_room(project, room)
        result.notes.append(f"{', '.join(joined)} joined the room (defined after it was made)")
    if not state.roster:
        if not agent_ids(project):
            raise EmptyRoom("this project has no agents yet, so nobody can answer; make one first: "
                            "rooms agent new helper (or rooms init --example dev)", code="empty_room")
        raise EmptyRoom(f"room {room!r} has no agents, so nobody can answer; invite one first: "
                        f"rooms room invite AGENT --room {room} (or /invite AGENT)", code="empty_room")
    agents = roster_agents(project, state, result.notes)
    known = agent_ids(project)
    from_person = speaker not in known
    addressing = parse(text, state.roster, known, from_person=from_person)
    if from_person and addressing.mode == "open" and addressing.outside:
        raise NotInRoom(addressing.outside, room)
    if from_person and addressing.unmatched:
        people = room_people(project, config, room, speaker)
        addressing.unmatched = [w for w in addressing.unmatched if w.lower().rsplit("/", 1)[-1] not in people]
        if addressing.unmatched:
            raise UnknownMention(addressing.unmatched, state.roster, known, room)
    if not from_person:
        addressing.targets = [t for t in addressing.targets if t != speaker]
        addressing.mode = "direct" if addressing.targets else "open"
    result.mode = addressing.mode
    result.notes.extend(_mention_notes(addressing))
    meta: dict[str, Any] = {"mode": addressing.mode}
    if addressing.targets:
        meta["mentions"] = addressing.targets
    if not from_person:
        meta["agent"] = True
    message = result.message = append_message(project, room, speaker, text, kind="message", meta=meta)
    act: Activation = activate(state, agents, addressing, text, external_agents(config, agents))
    if not from_person and addressing.mode == "open":
        act.eligible = []
        result.notes.append(f"{speaker} is an agent: its message prompts only the agents it @-mentions")
    result.eligible = act.eligible
    if not act.eligible and (from_person or addressing.mode != "open"):
        result.notes.append(nobody_prompted(act))
    turn = Turn(project, config, state, agents, result, on_event)
    for note in result.notes:
        turn.emit("note", text=note)

    async def go() -> None:
        try:
            if addressing.mode == "jam":
                await turn.jam(act.eligible, message)
            else:
                await turn.series(act.eligible, message, addressing.mode)
            await turn.cascades()
        finally:
            await turn.close()

    _run(go(), loop=addressing.mode == "jam" or not turn.offline_only())
    return _finish(project, room, result)


def continue_room(project: Project, config: Config, room: str, speaker: str, on_event: Event | None = None) -> TurnResult:
    """Reset the budget from the roster and replay the queued mentions (hold the floor around it)."""
    live_room(project, room)
    state = update_room(project, room, budget.refill)
    result = TurnResult(room=room, message=None, mode="continue")
    agents = roster_agents(project, state, result.notes)
    result.message = append_message(project, room, speaker, f"/continue (budget reset to {state.budget_total})",
                                    kind="continue", meta={"queued": len(state.queued)})
    turn = Turn(project, config, state, agents, result, on_event)

    async def go() -> None:
        try:
            for entry in list(state.queued):
                trigger = Message(id=entry["id"], ts=entry.get("ts", ""), room=room, speaker=entry.get("speaker", "?"),
                                  kind="message", text=entry.get("text", ""))
                for agent_id in entry.get("agents", []):
                    if agent_id not in agents:
                        result.notes.append(f"queued mention of {agent_id} dropped: it is no longer in the room")
                        update_room(project, room, partial(budget.drop_queued, message_id=entry["id"], agent=agent_id))
                        continue
                    if turn.remaining <= 0:
                        turn.exhaust()
                        return
                    result.eligible.append(agent_id)
                    await turn.ask(agent_id, trigger, mode="direct")
                    update_room(project, room, partial(budget.drop_queued, message_id=entry["id"], agent=agent_id))
            await turn.cascades()
        finally:
            await turn.close()

    _run(go(), loop=not turn.offline_only())
    return _finish(project, room, result)


def _run(coro: Coroutine[Any, Any, None], *, loop: bool) -> None:
    """Run a turn. Network calls and an @jam's parallel calls need an event loop (asyncio, ~15 ms to
    import); a turn whose calls all go to the offline model awaits nothing but bare yields, so it is
    stepped through here without one (docs/performance.md)."""
    if loop:
        import asyncio

        asyncio.run(coro)
        return
    try:
        while True:
            if coro.send(None) is not None:  # a future: only an event loop can wait for it
                coro.throw(RuntimeError("this turn awaits I/O, so it needs an event loop"))
    except StopIteration:  # the turn is done
        return


class _PassFilter:
    """Streams deltas, but holds them back while the reply could still be a pass (then shows it
    without leading speaker labels). A structured reply (`{"speak", "message"}`, when `structured[0]`)
    shows only its message, once it says it speaks."""

    def __init__(self, sink: Callable[[str], None], structured: list[bool], tidy: Callable[[str], str] = str.lstrip) -> None:
        self.sink = sink
        self.structured = structured
        self.tidy = tidy
        self.held = ""
        self.open = False
        self.shown = 0  # characters of a structured reply's message already shown

    def __call__(self, piece: str) -> None:
        if self.open:
            self.sink(piece)
            return
        self.held += piece
        if self.structured[0] and self.held.lstrip().startswith("{"):
            self._object()
        elif not could_still_be_pass(self.held):
            self.open = True
            shown = self.tidy(self.held)  # labels go; the space before the next piece stays ("own" "the")
            self.sink(shown + self.held[len(self.held.rstrip()):] if shown else shown)

    def finish(self, text: str) -> None:
        """The reply is in and is a message: show what was held back (`text`, as it will be stored)."""
        if self.open:
            return
        self.open = True
        rest = text[self.shown:] if self.shown else text
        if rest:
            self.sink(rest)

    def _object(self) -> None:
        speak, message = streaming_object(self.held)
        if speak is False or message is None or (not self.shown and could_still_be_pass(message)):
            return
        if len(message) > self.shown:
            self.sink(message[self.shown:])
            self.shown = len(message)
