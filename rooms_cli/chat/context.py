"""What an agent is given when prompted in a room.

System: its directive, its voice, the newest deliberation (hand-off note) for it, its recent
lessons, the room's name and roster, what other parts add about the room (its board: see
`rooms_cli/across/prompt_sections.py`), and the rule for `/pass`.
Messages: the transcript tail (at most `context_messages`, default 50), speakers named, trimmed
to fit its context window. Only the tail of the transcript is ever read, so the prompt (and the
cost of building it) does not grow with the transcript.
"""

from __future__ import annotations

from rooms_cli.core.errors import RoomsError
from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)
from rooms_cli.models import Message
from rooms_cli.models.prompt import PromptMessage
from rooms_cli.models.tokens import estimate_tokens

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.agents.definitions import Agent
    from rooms_cli.chat import transcript
    from rooms_cli.chat.rooms import RoomState
    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project

DEFAULT_MESSAGES = 50
SECTION_CHARS = 2000
REPLY_RESERVE = 0.25  # share of the context window kept free for the reply when no limit is given
PER_MESSAGE = 8  # tokens a chat template adds around each message (role markers), counted generously
SPOKEN = ("message",)

PASS_RULE = (
    "If you have nothing useful to add, reply with exactly `/pass` and nothing else; do not fabricate a "
    "contribution. Otherwise answer in one short message, in your own voice. You may @-mention another "
    "agent of the room to ask it something."
)
# The reply's shape ({"speak", "message"}) is forced by the schema sent with the call (the server's
# grammar): the prompt describes the decision in plain words only. Told about JSON, SmolLM2 talked
# about JSON ("This is a JSON object that contains…") instead of answering.
PASS_RULE_STRUCTURED = (
    "First decide whether to speak. Speak only if you have something useful to add, and then say it in one "
    "short message, in your own voice. Otherwise pass; do not fabricate a contribution. You may @-mention "
    "another agent of the room to ask it something."
)
ANSWER_RULE = ("You were asked directly: answer in one short message, in your own voice. You may @-mention another "
               "agent of the room to ask it something.")
MUST_ANSWER = "You were addressed with @everyone: `/pass` is not accepted this time. Give one substantive line."


def tail_count(config: Config) -> int:
    value = config.get("context_messages", DEFAULT_MESSAGES)
    return max(1, int(value))


def read_snapshot(project: Project, room: str, config: Config) -> list[Any]:
    """The transcript tail prompts are built from (spoken messages only, bounded)."""
    from rooms_cli.chat.transcript import tail

    count = tail_count(config)
    # read a little more than needed: pass/system lines in between are skipped
    return [m for m in tail(project, room, count * 2) if m.kind in SPOKEN][-count:]


def system_prompt(project: Project, state: RoomState, agent: Agent, agents: dict[str, Any], *, must_answer: bool = False, structured: bool = False,
                  offer_pass: bool = True) -> str:
    from rooms_cli.agents.memories import lessons_block
    from rooms_cli.chat.handoff import latest_deliberation
    from rooms_cli.project.config import load_config

    parts = [agent.directive.strip()]
    voice = agent.voice or {}
    if voice:
        bits = [f"tone: {voice['tone']}" if voice.get("tone") else "", f"quirk: {voice['quirk']}" if voice.get("quirk") else "",
                f"a line you might use: \"{voice['line']}\"" if voice.get("line") else ""]
        parts.append("Your voice — " + "; ".join(b for b in bits if b) + ".")
    note = latest_deliberation(project, agent.id)
    if note is not None:
        parts.append(f"Hand-off note from your earlier self (room {note.room}, {note.created}):\n{note.text}")
    lessons = lessons_block(project, agent.id, load_config(project))  # capped by memory.max_per_prompt
    if lessons:
        parts.append(lessons)
    roster = ", ".join(f"{a} ({agents[a].display_name})" if a in agents else a for a in state.roster)
    parts.append(f"You are {agent.id} in the chat room '{state.id}'. In the room: {roster}. "
                 "Messages from others are shown as `name: text`.")
    for name, text in _room_sections(project, state.id):
        parts.append(f"The room's {name}:\n{text}")
    if must_answer:
        parts.append(MUST_ANSWER)
    else:
        parts.append((PASS_RULE_STRUCTURED if structured else PASS_RULE) if offer_pass else ANSWER_RULE)
    return "\n\n".join(parts)


def _room_sections(project: Project, room: str) -> list[tuple[str, str]]:
    """What other parts add about the room (rooms_cli/across/prompt_sections.py, e.g. its board), each capped."""
    from rooms_cli.across.prompt_sections import ROOM_SECTIONS

    sections = []
    for name, load in ROOM_SECTIONS.items():
        section = load()  # a part that cannot be imported fails loudly
        try:
            text = section(project, room) or ""
        except (RoomsError, OSError):  # optional context: unreadable data in another part must not stop a chat turn

            continue
        if text:
            sections.append((name, text if len(text) <= SECTION_CHARS else text[:SECTION_CHARS] + "\n…"))
    return sections


def clip(text: str, max_tokens: int, tokens: int | None = None) -> str:
    """`text` cut to about `max_tokens` tokens (`tokens`: its count, when known), saying how much was
    left out. Cut in proportion to the count, so a hex dump (many tokens a character) is cut harder
    than prose."""
    tokens = estimate_tokens(text) if tokens is None else tokens
    if tokens <= max_tokens:
        return text
    keep = max(1, int(len(text) * max(16, max_tokens) / max(1, tokens) * 0.9))
    if keep >= len(text):
        return text
    return text[:keep] + f" …[clipped: {len(text) - keep} more characters]"


@dataclass
class Line:
    """One spoken message as a prompt shows it."""

    speaker: str
    text: str


def arrange(system: str, me: str, lines: list[Line], answering: int | None, instruction: str = "") -> list[Message]:
    """The messages of one call, in the shape every chat template accepts.

    System first, then strictly alternating user/assistant messages, beginning and ending with
    user. Other speakers' messages are `speaker: text` paragraphs, consecutive ones packed into one
    user message; the agent's own messages (speaker `me`) are assistant messages (consecutive ones
    merged; own messages before anyone else spoke are dropped: a conversation starts with user).
    `lines[answering]`, the message being answered, appears once: last, in the final user message,
    after the replies it already had (under a heading), then `instruction`.
    """
    before = lines if answering is None else lines[:answering]
    turns: list[tuple[str, list[str]]] = []
    for line in before:
        role = "assistant" if line.speaker == me else "user"
        text = line.text if role == "assistant" else f"{line.speaker}: {line.text}"
        if not turns and role == "assistant":
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].append(text)
        else:
            turns.append((role, [text]))
    final: list[str] = turns.pop()[1] if turns and turns[-1][0] == "user" else []
    trigger = None
    if answering is not None:
        trigger = lines[answering]
        after = lines[answering + 1:]
        if after:
            final.append(f"Replies so far to {trigger.speaker}'s message below:\n\n" +
                         "\n\n".join(f"{line.speaker}{' (you)' if line.speaker == me else ''}: {line.text}" for line in after))
        final.append(f"{trigger.speaker}: {trigger.text}")
    if not final:
        final.append("(The room is quiet.)")
    if instruction:
        final.append(instruction)
    last = PromptMessage("user", "\n\n".join(final))
    last.answering = trigger.text if trigger is not None else None
    return [Message("system", system), *(Message(role, "\n\n".join(texts)) for role, texts in turns), last]


def fit(lines: list[Line], answering: int | None, budget: int, count: Callable[[str], int], *, keep_last: int | None = None) -> tuple[list[Line], int | None]:
    """The lines that fit `budget` tokens (`count(text) -> int`), newest first, oldest dropped.

    The message being answered is always kept (clipped to half the budget at most); any other
    message is clipped to a third of it, so one oversized message cannot crowd out the rest.
    `keep_last`: keep at most that many other messages (the tight retry after an overflow)."""
    per_message = max(16, budget // 3)
    chosen: dict[int, Line] = {}
    if answering is not None:
        trigger = lines[answering]
        cap = max(16, budget // 2)
        text = clip(trigger.text, cap, count(trigger.text))
        chosen[answering] = Line(trigger.speaker, text)
        budget -= min(cap, count(text)) + PER_MESSAGE
    others = [i for i in reversed(range(len(lines))) if i != answering]
    if keep_last is not None:
        others = others[:keep_last]
    for i in others:
        line = lines[i]
        text = clip(line.text, per_message, count(line.text))
        cost = min(per_message, count(text)) + PER_MESSAGE
        if cost > budget:
            break
        budget -= cost
        chosen[i] = Line(line.speaker, text)
    order = sorted(chosen)
    return [chosen[i] for i in order], (order.index(answering) if answering is not None else None)


def instruction_for(agent_id: str, *, must_answer: bool, structured: bool, offer_pass: bool = True) -> str:
    """The short reminder closing the prompt of an open message: how to answer, and how to pass.
    None where no pass is offered (the system prompt says to answer): SmolLM2 echoed a closing
    "(Answer … in one short message.)" as "message". No placeholder text either: it copied
    "your one short message" as its answer. Structured, no word about JSON: the schema gives the shape."""
    if must_answer or not offer_pass:
        return ""
    if structured:
        return f"(Answer as {agent_id}: speak if you have something useful to add; otherwise pass.)"
    return f"(Answer as {agent_id} in one short message. If you have nothing useful to add, reply with just: /pass)"


def snapshot_lines(snapshot: list[Any], trigger: transcript.Message | None) -> tuple[list[Line], int | None]:
    """The snapshot as prompt lines, and where the message being answered is (appended when the
    snapshot does not hold it: a queued mention replayed, a trigger older than the tail)."""
    lines = [Line(m.speaker, m.text) for m in snapshot]
    if trigger is None:
        return lines, None
    for i, m in enumerate(snapshot):
        if m.id == trigger.id:
            return lines, i
    return [*lines, Line(trigger.speaker, trigger.text)], len(lines)


def build_prompt(project: Project, state: RoomState, agent: Agent, agents: dict[str, Any], snapshot: list[Any],
                 trigger: transcript.Message | None, *, must_answer: bool = False, window: int | None = None,
                 reply_tokens: int = 0, count: Callable[[str], int] | None = None, structured: bool = False,
                 keep_last: int | None = None, shrink: float = 1.0, system: str | None = None,
                 offer_pass: bool = True) -> list[Message]:
    """The messages for one call: system prompt, the tail that fits, and what to answer (`arrange`).

    The budget is the context window (`window`: the server's, else the agent's `context_window`)
    minus the reply's limit and the system prompt, less a tenth for the count's error; `count`
    gives a text's tokens (the server's tokenizer, else the conservative estimate). `shrink` and
    `keep_last` make the tight prompt tried once after a server refused one as too long.
    """
    count = count or estimate_tokens
    if system is None:
        system = system_prompt(project, state, agent, agents, must_answer=must_answer, structured=structured,
                               offer_pass=offer_pass)
    instruction = instruction_for(agent.id, must_answer=must_answer, structured=structured, offer_pass=offer_pass)
    window = window or agent.context_window
    room = window - (reply_tokens or int(window * REPLY_RESERVE))
    budget = int((room * 0.9 - count(system) - count(instruction) - 3 * PER_MESSAGE) * shrink)
    lines, answering = snapshot_lines(snapshot, trigger)
    lines, answering = fit(lines, answering, max(32, budget), count, keep_last=keep_last)
    return arrange(system, agent.id, lines, answering, instruction)
