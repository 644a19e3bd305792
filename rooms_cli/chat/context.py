"""What an agent is given when prompted in a room.

System: its directive, its voice, the newest deliberation (hand-off note) for it, its recent
lessons, the room's name and roster, what other parts add about the room (its board: see
`rooms_cli.registry.PROMPT_SECTIONS`), and the rule for `/pass`.
Messages: the transcript tail (at most `context_messages`, default 50), speakers named, trimmed
to fit its context window. Only the tail of the transcript is ever read, so the prompt (and the
cost of building it) does not grow with the transcript.
"""

from __future__ import annotations

from rooms_cli.models import Message
from rooms_cli.models.base import estimate_tokens

DEFAULT_MESSAGES = 50
SECTION_CHARS = 2000
REPLY_RESERVE = 0.25  # share of the context window kept free for the reply
SPOKEN = ("message",)

PASS_RULE = (
    "If you have nothing useful to add, reply with exactly `/pass` and nothing else; do not fabricate a "
    "contribution. Otherwise answer in one short message, in your own voice. You may @-mention another "
    "agent of the room to ask it something."
)
MUST_ANSWER = "You were addressed with @everyone: `/pass` is not accepted this time. Give one substantive line."


def tail_count(config) -> int:
    value = config.get("context_messages", DEFAULT_MESSAGES)
    return max(1, int(value))


def read_snapshot(project, room: str, config) -> list:
    """The transcript tail prompts are built from (spoken messages only, bounded)."""
    from rooms_cli.chat.transcript import tail

    count = tail_count(config)
    # read a little more than needed: pass/system lines in between are skipped
    return [m for m in tail(project, room, count * 2) if m.kind in SPOKEN][-count:]


def system_prompt(project, state, agent, agents: dict, *, must_answer: bool = False) -> str:
    from rooms_cli.chat.handoff import latest_deliberation
    from rooms_cli.config import load_config
    from rooms_cli.memories import lessons_block

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
    parts.append(MUST_ANSWER if must_answer else PASS_RULE)
    return "\n\n".join(parts)


def _room_sections(project, room: str) -> list[tuple[str, str]]:
    """What other parts add about the room (registry.PROMPT_SECTIONS, e.g. its board), each capped."""
    from rooms_cli.registry import PROMPT_SECTIONS, resolve

    sections = []
    for name, target in PROMPT_SECTIONS.items():
        section = resolve(target)  # a part that cannot be imported fails loudly
        try:
            text = section(project, room) or ""
        except Exception:  # optional context: unreadable data in another part must not stop a chat turn
            continue
        if text:
            sections.append((name, text if len(text) <= SECTION_CHARS else text[:SECTION_CHARS] + "\n…"))
    return sections


def clip(text: str, max_tokens: int) -> str:
    """`text` cut to about `max_tokens` tokens, saying how much was left out."""
    limit = max(16, max_tokens) * 4
    if len(text) <= limit:
        return text
    return text[:limit] + f" …[cut: {len(text) - limit} more characters]"


def build_prompt(project, state, agent, agents: dict, snapshot: list, trigger, *, must_answer: bool = False) -> list[Message]:
    """The messages for one call: system prompt, the tail that fits, and what to answer.

    Token counts are estimates (4 characters a token), so no single message may take more than a
    third of the budget: one oversized message must not push every later prompt past a server's
    real context.
    """
    system = system_prompt(project, state, agent, agents, must_answer=must_answer)
    budget = int(agent.context_window * (1 - REPLY_RESERVE)) - estimate_tokens(system)
    per_message = max(16, budget // 3)
    history: list[Message] = []
    for msg in reversed(snapshot):
        if msg.speaker == agent.id:
            item = Message("assistant", clip(msg.text, per_message))
        else:
            item = Message("user", f"{msg.speaker}: {clip(msg.text, per_message)}")
        cost = estimate_tokens(item.content) + 4
        if history and cost > budget:
            break
        budget -= cost
        history.append(item)
    history.reverse()
    if trigger is not None:
        # the message being answered comes last, as itself; who wrote it is said in the system prompt
        if snapshot and snapshot[-1].id == trigger.id and history:
            history.pop()
        history.append(Message("user", clip(trigger.text, per_message)))
        system += f"\n\nYou are answering {trigger.speaker}'s message (the last one)."
    if not history:
        history.append(Message("user", "(The room is quiet.)"))
    return [Message("system", system), *history]
