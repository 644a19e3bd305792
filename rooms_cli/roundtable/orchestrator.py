"""Running one roundtable: turn by turn, one model call per turn, into a room transcript.

    result = run_roundtable_sync(project, config, RoundtableRequest("standup", topic="launch"))

Each turn: pick the speaker (speakers.py), build its prompt (voice, format, turn number, history,
recent lessons), call its model at the format's temperature, sanitize the reply (re-ask once when
nothing is left, then skip the turn), append it to the transcript and report it through `on_event`.
Afterwards the lessons are extracted (lessons.py) and appended to each participant's memories.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any  # OnEvent below is evaluated at run time

from rooms_cli.agents.definitions import Agent, list_agents, load_agent
from rooms_cli.core.errors import InvalidInput, ProviderError
from rooms_cli.core.text import count
from rooms_cli.models.base import Completion, Message
from rooms_cli.roundtable import lessons as lessons_mod
from rooms_cli.roundtable import speakers
from rooms_cli.roundtable.formats import Format, get_format
from rooms_cli.roundtable.sanitize import (
    DEFAULT_MAX_CHARS,
    ELLIPSIS,
    MIN_MAX_CHARS,
    cut_at_word,
    plain,
    sanitize,
)
from rooms_cli.store.ids import new_id, validate_name
from rooms_cli.store.paths import Project
from rooms_cli.store.rand import rng

if TYPE_CHECKING:
    from rooms_cli.models.base import Provider
    from rooms_cli.project.config import Config

HISTORY_TURNS = 16  # the prompt carries at most this many earlier turns
CUE_OPEN, CUE_OVER = " — you open.", " — over to you."
# a small model echoes the cue ("launch week — over to you."): the echo is not part of the turn
_CUE_ECHO = re.compile(r"\s*[—–-]+\s*(?:over to you|you open)\b[.!]?", re.IGNORECASE)
DEFAULT_TOPIC = "what matters most this week"
OnEvent = Callable[[str, dict[str, Any]], None]


@dataclass
class RoundtableRequest:
    """What to run; also the body of a queue item."""

    format: str
    topic: str | None = None
    participants: list[str] | None = None  # agent ids and `random:N`
    room: str | None = None
    turns: int | None = None
    max_chars: int = DEFAULT_MAX_CHARS
    pace: float = 0.0
    force: bool = False  # turns and participant counts outside the format's range

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.force:
            del data["force"]  # queue lines stay as earlier versions wrote them
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RoundtableRequest:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})

    def check(self) -> None:
        validate_name(self.format, "format")
        if self.room is not None:
            validate_name(self.room, "room id")
        if self.turns is not None and self.turns < 1:
            raise InvalidInput(f"--turns must be at least 1, got {self.turns}")
        if self.max_chars < MIN_MAX_CHARS:
            raise InvalidInput(f"--max-chars must be at least {MIN_MAX_CHARS}, got {self.max_chars}")
        if not 0 <= self.pace < float("inf"):
            raise InvalidInput(f"--pace must be a finite number of seconds, not negative, got {self.pace}")


@dataclass
class RoundtableResult:
    """A finished (or failed) roundtable: format, topic, room, participants, every turn, lessons learnt."""

    id: str
    format: str
    topic: str
    room: str
    participants: list[str]
    planned_turns: int
    turns: list[dict[str, Any]] = field(default_factory=list)  # the turns said: {turn, speaker, text, weights, opens?}
    skipped: list[dict[str, Any]] = field(default_factory=list)  # turns with nothing usable twice: {turn, speaker, why}
    lessons: dict[str, list[str]] = field(default_factory=dict)
    # why a participant learned fewer than 2 lessons ("*": why the roundtable learned none)
    lesson_problems: dict[str, str] = field(default_factory=dict)
    status: str = "done"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def talking_agents(project: Project, config: Config) -> dict[str, Agent]:
    """Agents that can take part: every agent whose model is not `external`."""
    return {a.id: a for a in list_agents(project) if not a.is_external(config.default_model)}


def system_prompt(project: Project, config: Config, agent: Agent, fmt: Format, others: list[str], n: int, total: int,
                  max_chars: int) -> str:
    """The speaker's system prompt: directive, voice, the format's rules, recent lessons (bounded)."""
    from rooms_cli.agents.memories import lessons_block

    voice = agent.voice or {}
    parts = [agent.directive.strip(), f"You are {agent.display_name} (id {agent.id})."]
    if voice:
        parts.append(" ".join(f"{k.capitalize()}: {voice[k]}." for k in ("tone", "quirk", "line") if voice.get(k)))
    parts.append(
        f"This is a {fmt.name} ({fmt.purpose}) with {', '.join(others)}. It is turn {n} of {total}. "
        f"Reply with what you say, in your own voice, at most {max_chars} characters: "
        f"no name prefix, no links, no lists."
    )
    block = lessons_block(project, agent.id, config)
    if block:
        parts.append(block)
    return "\n\n".join(parts)


def turn_messages(project: Project, config: Config, agent: Agent, fmt: Format, topic: str, history: list[dict[str, Any]],
                  names: dict[str, str], n: int, total: int, max_chars: int) -> list[Message]:
    """The messages of one turn (models/prompt.py: system first, then alternating): the system prompt,
    the recent history (the others' turns as `Name: text` in user messages, consecutive ones together;
    the speaker's own as its assistant messages, without a label it would copy), and the cue to speak."""
    from rooms_cli.models.prompt import asking, conversation

    others = [names[p] for p in names if p != agent.id]
    turns: list[tuple[str, str] | Message] = []
    for turn in history[-HISTORY_TURNS:]:
        if turn["speaker"] == agent.id:
            turns.append(("assistant", turn["text"]))
        else:
            turns.append(("user", f"{names.get(turn['speaker'], turn['speaker'])}: {turn['text']}"))
    turns.append(asking(cue_for(topic, history)))
    return conversation(system_prompt(project, config, agent, fmt, others, n, total, max_chars), turns)


def cue_for(topic: str, history: list[dict[str, Any]]) -> str:
    """The closing user message of a turn. The format is in the system prompt; the cue names only the
    topic, which is also what the offline model, reading the last message alone, keys its reply on."""
    return f"{topic}{CUE_OVER if history else CUE_OPEN}"


class _Providers:
    """One provider object per model string for the whole roundtable, closed at the end."""

    def __init__(self, config: Config, project: Project | None = None) -> None:
        self.config, self.project = config, project
        self.cache: dict[str, tuple[Provider, str]] = {}

    def get(self, agent: Agent) -> tuple[Provider, str]:
        from rooms_cli.models import provider_for

        key = agent.model_string(self.config.default_model)
        if key not in self.cache:
            self.cache[key] = provider_for(key, self.config)
            from rooms_cli.models import capabilities  # what its server was found to honour

            capabilities.adopt(self.project, *self.cache[key])
        return self.cache[key]

    async def close(self) -> None:
        for provider, _model in self.cache.values():
            await provider.aclose()


async def _speak(providers: _Providers, agent: Agent, messages: list[Message], fmt: Format, max_chars: int,
                 names: list[str], others: list[str], said: list[Any], cue: str) -> tuple[str, Completion, str]:
    """One model call, sanitized; one re-ask when nothing is left, the turn only reads back its
    instructions (the system prompt and `cue`), or says again an earlier turn or the speaker's own
    line from elsewhere (`said`: objects with `.speaker` and `.text`, oldest first). Returns (text,
    completion, why): ('', completion, why the turn is skipped) to skip.

    The call is bounded by the turn's cap (`max_chars` / 2 tokens, at least 64: the format's limit,
    whatever the agent's own `max_tokens`); a reply the limit cut ends with "…". Stop sequences
    ("\nAnalyst:" for every other participant) keep the model from writing the others' turns.
    The re-ask's instruction is never a turn: a reply that echoes it (SmolLM2 answered "That reply
    repeats an earlier turn word for word, no links.") counts as nothing new."""
    provider, model = providers.get(agent)
    stop = [f"\n{name}:" for name in others]
    earlier = {plain(t.text) for t in said}
    instruction = ""
    why = ""
    from rooms_cli.chat.hygiene import copied_from, cut_other_turns
    from rooms_cli.models.repetition import drop_echoes, drop_said, guarded

    system = messages[0].content if messages and messages[0].role == "system" else ""
    for attempt in range(2):
        completion = await guarded(
            provider, messages, model=model, temperature=fmt.temperature, max_tokens=max(64, max_chars // 2), stop=stop,
            agent=agent, purpose="roundtable",
        )
        raw = cut_other_turns(_CUE_ECHO.sub("", completion.text or ""), agent.id, names)[0]
        told = [] if completion.offline else [system, cue, instruction]
        unechoed, echoed = drop_echoes(raw, told)
        unechoed, restated = drop_said(unechoed, [] if completion.offline else [t.text for t in said if t.speaker == agent.id])
        text = sanitize(unechoed, max_chars, names)
        if text and (completion.cut or completion.finish_reason == "repetition") and not text.endswith(ELLIPSIS):
            text = cut_at_word(text, max_chars - len(ELLIPSIS)).removesuffix(ELLIPSIS) + ELLIPSIS
        copy = None if completion.offline or not text else copied_from(text, said, agent.id)
        why = ("only read back its instructions" if echoed and not text else "only said again what it said before"
               if restated and not text else "was empty once cleaned up" if not text
               else "repeats an earlier turn word for word" if plain(text) in earlier
               else _repeat_why(copy, agent.id) if copy is not None
               else "only echoed the instruction" if instruction and echoes(text, instruction) else "")
        if not why:
            return text, completion, ""
        if attempt == 0:
            from rooms_cli.models.prompt import PromptMessage

            instruction = f"That reply {why}. Say something new in one short sentence, no links."
            again = PromptMessage("user", instruction)
            # what the turn is about stays the cue: the offline model, reading one message, made its turn of
            # the instruction ("I'll take that reply repeats an earlier turn…")
            asked = messages[-1]
            again.answering = getattr(asked, "answering", None) or asked.content
            messages = [*messages, Message("assistant", completion.text or ""), again]
    return "", completion, why


def _offline(providers: _Providers, agent: Agent) -> bool:
    """Whether the agent answers through the offline model (a provider that cannot be made: not known
    yet, its turn will say why)."""
    try:
        return providers.get(agent)[0].offline
    except ProviderError:
        return True


def _repeat_why(original: Any, me: str) -> str:
    """Why a turn that says `original` again is not a turn."""
    where = getattr(original, "where", "")
    if original.speaker == me and where:
        return f"repeats what it said in {'room ' + where if not where.startswith('inbox:') else 'a reply to ' + where[6:]}"
    return "repeats its own earlier turn" if original.speaker == me else "repeats an earlier turn"


@dataclass
class _Turn:
    """An earlier turn as chat.hygiene.copied_from reads it."""

    speaker: str
    text: str


def echoes(text: str, instruction: str) -> bool:
    """True when `text` is mostly the words of `instruction` (a model reading it back as its turn)."""
    words = plain(text).split()
    told = set(plain(instruction).split())
    return bool(words) and sum(w in told for w in words) >= 0.6 * len(words)


async def run_roundtable(project: Project, config: Config, request: RoundtableRequest, *, roundtable_id: str | None = None,
                         on_event: OnEvent | None = None, heartbeat: Callable[[], None] | None = None) -> RoundtableResult:
    """Run one roundtable to the end (see the module docstring); raises ProviderError after recording it."""
    from rooms_cli.chat.rooms import create_room
    from rooms_cli.chat.transcript import append_message

    request.check()
    emit = on_event or (lambda kind, data: None)
    fmt = get_format(config, request.format)
    talking = talking_agents(project, config)
    leader = config.get("leader")
    chance = rng("roundtable", fmt.name, request.topic or "", ",".join(request.participants or []))
    participants = speakers.resolve_participants(request.participants, list(talking), fmt, chance, leader,
                                                 force=request.force)
    agents = {p: load_agent(project, p) for p in participants}
    names = {p: agents[p].display_name for p in participants}
    total = speakers.draw_turns(fmt, chance, request.turns, request.force)
    topic = (request.topic or "").strip() or DEFAULT_TOPIC
    rt_id = roundtable_id or new_id("rt")
    room = request.room or own_room(fmt.name, rt_id)
    create_room(project, room, agents=participants, exist_ok=request.room is not None)
    result = RoundtableResult(rt_id, fmt.name, topic, room, participants, total)
    meta = {"roundtable": rt_id}
    append_message(project, room, "rooms", f"{fmt.name} on “{topic}” with {', '.join(participants)} ({count(total, 'turn')})",
                   kind="roundtable", meta={**meta, "event": "start", "format": fmt.name, "participants": participants})
    emit("start", result.to_json())

    providers = _Providers(config, project)
    pace = rng("roundtable-pace", rt_id)
    spoken: list[str] = []
    history: list[dict[str, Any]] = []
    last: str | None = None
    sanitize_names = [*participants, *names.values()]
    try:
        # what the language-model speakers said lately elsewhere (agents/said.py): a turn saying it again is no turn
        from rooms_cli.agents.said import recent_lines

        lately = recent_lines(project, [p for p in participants if not _offline(providers, agents[p])])
        for n in range(1, total + 1):
            if n == 1:
                pick = speakers.Pick(speakers.first_speaker(fmt, participants, leader, chance), {})
            else:
                pick = speakers.select_next_speaker(
                    participants, last, spoken, lambda a, b: agents[a].affinity.get(b, 0.0), chance,
                    turns_left=total - n + 1,
                )
            messages = turn_messages(project, config, agents[pick.speaker], fmt, topic, history, names, n, total,
                                     request.max_chars)
            earlier: list[Any] = [*reversed(lately.get(pick.speaker, [])), *(_Turn(t["speaker"], t["text"]) for t in history)]
            try:
                text, completion, why = await _speak(providers, agents[pick.speaker], messages, fmt, request.max_chars,
                                                sanitize_names, [names[p] for p in participants if p != pick.speaker],
                                                earlier, cue_for(topic, history))
            except ProviderError as err:
                append_message(project, room, "rooms", f"turn {n}: {pick.speaker}'s model failed: {err.message}",
                               kind="system", meta={**meta, "turn": n})
                raise
            turn = {"turn": n, "speaker": pick.speaker, "text": text, "weights": pick.to_json()["weights"]}
            if n == 1:
                turn["opens"] = fmt.opens
            if not text:  # a skip event, never a stored (empty) turn
                result.skipped.append({"turn": n, "speaker": pick.speaker, "why": why})
                emit("skip", {**turn, "why": why})
            else:
                append_message(project, room, pick.speaker, text, kind="message", model=completion.model,
                               usage=completion.usage.to_json(), meta={**meta, "turn": n})
                history.append(turn)
                spoken.append(pick.speaker)
                last = pick.speaker
                emit("turn", turn)
                result.turns.append(turn)
            if heartbeat:
                heartbeat()
            if request.pace and n < total:
                await asyncio.sleep(pace.uniform(request.pace, request.pace * 8 / 3))
        learned = await extract_lessons(project, config, providers, fmt, topic, history, agents, names, rt_id)
        result.lessons, result.lesson_problems = learned.lessons, learned.problems
        emit("lessons", {"lessons": result.lessons, "problems": result.lesson_problems})
    except BaseException:
        result.status = "failed"
        raise
    finally:
        await providers.close()
        said = len(history)
        append_message(project, room, "rooms", f"{fmt.name} {result.status}: {count(said, 'turn')}",
                       kind="roundtable", meta={**meta, "event": "end", "status": result.status})
    return result


def own_room(format_name: str, roundtable_id: str) -> str:
    """The room a roundtable writes into when none is asked for."""
    return f"roundtable-{format_name}-{roundtable_id[-6:].lower()}"


async def extract_lessons(project: Project, config: Config, providers: _Providers, fmt: Format, topic: str,
                          history: list[dict[str, Any]], agents: dict[str, Agent], names: dict[str, str],
                          rt_id: str) -> lessons_mod.Lessons:
    """2–3 lessons per participant, appended to `.rooms/memories/<agent>.jsonl` (see lessons.py).

    A real model is asked for a structured summary (its schema where the provider honours one),
    once more when the reply yields no lesson; then nothing is learned, and the problems say why."""
    from rooms_cli.agents.memories import add_lessons
    from rooms_cli.core.text import persona_words
    from rooms_cli.models.limits import reply_limit

    participants = list(agents)
    if not history:
        return lessons_mod.Lessons()
    provider, model = providers.get(agents[history[0]["speaker"]])
    if provider.offline:
        interests = {p: persona_words(agents[p]) for p in participants}
        found = lessons_mod.extractive_lessons(topic, history, participants, interests, names)
    else:
        from rooms_cli.models.structured import SCHEMA, ask_structured

        schema = lessons_mod.summary_schema(participants)
        limit = reply_limit("lessons", provider_spec=provider.spec)

        def messages(structured: bool) -> list[Message]:
            return lessons_mod.extraction_messages(fmt.name, topic, history, participants, names, structured)

        found = lessons_mod.Lessons()
        try:
            got = await ask_structured(provider, messages, schema, model=model, temperature=0.2, purpose="lessons",
                                       max_tokens=limit)
            found = lessons_mod.read_summary(got.completion.text, participants, names, history)
            if not found.lessons:  # once more, the shape in words (the fallback to JSON in text)
                why = found.problems.get("*", "no usable lesson")
                if got.completion.cut:
                    why = f"it ran past the {limit}-token limit before it ended"
                honoured = got.path == SCHEMA  # the grammar held the first reply: it holds the second too
                retry = [*messages(honoured), Message("assistant", got.completion.text or "(nothing)"),
                         lessons_mod.retry_message(why, participants)]
                completion = await provider.acomplete(retry, model=model, temperature=0.2, purpose="lessons", max_tokens=limit,
                                                      schema=schema if honoured else None)
                found = lessons_mod.read_summary(completion.text, participants, names, history)
        except ProviderError as err:
            found = lessons_mod.Lessons(problems={"*": f"the summary call failed: {err.message}"})
    stored: dict[str, list[str]] = {}
    for agent_id, lessons in found.lessons.items():
        records = add_lessons(project, agent_id, lessons, rt_id)
        stored[agent_id] = [r["lesson"] for r in records]
    found.lessons = stored
    return found


def run_roundtable_sync(project: Project, config: Config, request: RoundtableRequest, **kwargs: Any) -> RoundtableResult:
    return asyncio.run(run_roundtable(project, config, request, **kwargs))
