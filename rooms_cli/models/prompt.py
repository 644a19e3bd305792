"""The one prompt builder every model call goes through: system first, then strictly alternating roles.

    messages = conversation(system, [("user", "topic"), ("assistant", "my turn"), ("user", "theirs")])
    sent = for_server(messages, system_role=False)   # a chat template with no system role

Every caller (chat, roundtable turns, lessons, hand-off notes, group members, votes, ballots, spawn,
`send --wake`) builds its messages with `conversation`, and `Provider.acomplete` passes whatever it
is given through `for_server` once more before anything is sent, so no server ever sees another
shape. The shape is the one every chat template accepts, the strict ones included (Gemma's and
Mistral's raise "Conversation roles must alternate user/assistant/user/assistant/..."):

- at most one system message, first (several are joined by a blank line);
- then user, assistant, user, …, always ending with user: consecutive messages of one role are
  merged (a blank line between), empty ones dropped;
- a conversation that would start with the assistant gets `OPENING` as its first user message
  (the agent's own earlier words are kept, in order);
- where the server's template has no system role (llama.cpp's `/props`:
  `chat_template_caps.supports_system_role`, or a template that never mentions "system"), the
  system text opens the first user message instead, as Gemma's own template does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)


@dataclass
class Message:
    """One chat message sent to a provider: role (system, user or assistant), content, optional name."""

    role: str  # system | user | assistant
    content: str
    name: str | None = None

    def to_json(self) -> dict[str, str]:
        data = {"role": self.role, "content": self.content}
        if self.name:
            data["name"] = self.name
        return data


OPENING = "(The conversation so far.)"  # the first user message of a conversation the agent opened


class PromptMessage(Message):
    """A prompt message that also carries the text being answered on its own (`answering`), which the
    offline model reads (it has no language model to find it in a message packed with others)."""

    answering: str | None = None


def asking(text: str, answering: str | None = None) -> PromptMessage:
    """The user message that closes a prompt, `answering` being what the offline model keys on."""
    message = PromptMessage("user", text)
    message.answering = text if answering is None else answering
    return message


def conversation(system: str, turns: Iterable[tuple[str, str] | Message]) -> list[Message]:
    """The messages of one call: `system`, then `turns` ((role, text) or messages, in order) made to alternate."""
    return alternate([Message("system", system), *(t if isinstance(t, Message) else Message(*t) for t in turns)])


def alternate(messages: Sequence[Message]) -> list[Message]:
    """`messages` in the one accepted shape (see the module docstring); the same list when it
    already is (a message's own attributes, such as what the offline model reads, are kept)."""
    if alternates(messages):
        return list(messages)
    system = "\n\n".join(m.content.strip() for m in messages if m.role == "system" and m.content.strip())
    turns: list[Message] = []
    for m in messages:
        text = m.content.strip()
        if m.role == "system" or not text:
            continue
        role = "assistant" if m.role == "assistant" else "user"
        if not turns and role == "assistant":
            turns.append(Message("user", OPENING))
        if turns and turns[-1].role == role:
            merged = Message(role, f"{turns[-1].content}\n\n{text}")
            _keep_extras(m, merged)
            turns[-1] = merged
        else:
            turns.append(m if m.content == text and m.role == role else _copy(m, role, text))
    if not turns or turns[-1].role != "user":
        turns.append(Message("user", "(Go on.)" if turns else OPENING))
    return [Message("system", system), *turns] if system else turns


def _copy(m: Message, role: str, text: str) -> Message:
    out = Message(role, text, m.name)
    _keep_extras(m, out)
    return out


def _keep_extras(source: Message, target: Message) -> None:
    """What a subclass carries beyond role and content (chat's `answering`) goes with the text."""
    for key, value in vars(source).items():
        if key not in ("role", "content", "name"):
            setattr(target, key, value)


def alternates(messages: Sequence[Message]) -> bool:
    """True when `messages` are: an optional system message first, then user, assistant, …, user,
    none of them empty."""
    rest = list(messages[1:]) if messages and messages[0].role == "system" else list(messages)
    if not rest or any(not m.content.strip() for m in messages):
        return False
    return rest[-1].role == "user" and all(m.role == ("user", "assistant")[i % 2] for i, m in enumerate(rest))


def fold_system(messages: Sequence[Message]) -> list[Message]:
    """The system message moved to the head of the first user message (a template without a system role)."""
    if not messages or messages[0].role != "system":
        return list(messages)
    system, rest = messages[0], list(messages[1:])
    if not rest:
        return [Message("user", system.content)]
    first = _copy(rest[0], rest[0].role, f"{system.content}\n\n{rest[0].content}")
    return [first, *rest[1:]]


def for_server(messages: Sequence[Message], *, system_role: bool = True) -> list[Message]:
    """What is sent: `alternate(messages)`, its system text folded into the first user message when
    the server's template has no system role."""
    shaped = alternate(messages)
    return shaped if system_role else fold_system(shaped)


def template_has_system_role(props: object) -> bool:
    """Whether a llama.cpp server's chat template takes a system message, from its `/props`: the
    template's own capabilities when the server reports them, else whether the template mentions
    a system role at all; True when it says nothing (not llama.cpp, or an older one)."""
    if not isinstance(props, dict):
        return True
    caps = props.get("chat_template_caps")
    if isinstance(caps, dict) and isinstance(caps.get("supports_system_role"), bool):
        return bool(caps["supports_system_role"])
    template = props.get("chat_template")
    if isinstance(template, str) and template.strip():
        return "system" in template
    return True


def roles(messages: Sequence[Message]) -> str:
    """The roles in order as letters (S system, U user, A assistant): what tests and the bench compare."""
    return "".join({"system": "S", "user": "U", "assistant": "A"}.get(m.role, "?") for m in messages)


__all__ = ["OPENING", "Message", "PromptMessage", "alternate", "asking", "alternates", "conversation", "fold_system", "for_server", "roles",
           "template_has_system_role"]
