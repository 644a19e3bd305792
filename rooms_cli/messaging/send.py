"""`rooms send`: a message to one agent, to everyone, or in reply to a message in your own inbox."""

from __future__ import annotations

from rooms_cli.core.errors import InvalidInput
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.messaging.inbox import InboxMessage, deliver, find_message
from rooms_cli.messaging.roster import known_names, recipients_for_everyone
from rooms_cli.messaging.status import mark_announced, touch
from rooms_cli.store.ids import validate_name
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config

MAX_TEXT = 100_000


@dataclass
class SendResult:
    """What a send did: the messages delivered, and what it answered."""

    sender: str
    kind: str  # direct or broadcast
    delivered: list[InboxMessage] = field(default_factory=list)
    reply_to: int | None = None  # the number of the answered message in the sender's inbox
    reply_to_id: str | None = None  # its id
    unknown: list[str] = field(default_factory=list)  # recipients no part of rooms has heard of yet
    woken: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.sender, "kind": self.kind, "reply_to": self.reply_to, "reply_to_id": self.reply_to_id,
            "to": [m.to for m in self.delivered],
            "delivered": [{"to": m.to, "n": m.n, "ref": m.ref or str(m.n), "id": m.id} for m in self.delivered],
            "unknown": self.unknown, "woken": self.woken,
        }


def send_message(
    project: Project, config: Config, sender: str, text: str, *, to: str | None = None, reply_to: str | int | None = None,
) -> SendResult:
    """Deliver `text` from `sender`: to `to`, to the sender of message `reply_to` in the sender's
    own inbox (its number, or any unique prefix of its id), or (neither given) to every other agent
    on the roster."""
    validate_name(sender, "sender")
    if not text or not text.strip():
        raise InvalidInput("the message is empty")
    if len(text) > MAX_TEXT:
        raise InvalidInput(f"the message is {len(text)} characters; the limit is {MAX_TEXT}")
    meta: dict[str, Any] = {}
    original = None
    if reply_to is not None:
        original = find_message(project, sender, reply_to)
        if to is not None and validate_name(to, "--to") != original.sender:
            raise InvalidInput(
                f"--reply-to {reply_to} answers {original.sender}, but --to says {to}; give one or the other"
            )
        to = original.sender
        meta = {"reply_to_id": original.id, "quote": original.text[:120]}
    if to is not None:
        validate_name(to, "recipient (--to)")
        if to == sender:
            raise InvalidInput(f"{sender} cannot send a message to itself")
        recipients, kind = [to], "direct"
    else:
        recipients, kind = recipients_for_everyone(project, config, sender), "broadcast"
        if not recipients:
            raise InvalidInput("there is no other agent to send to yet (rooms agents lists them)")
    known = known_names(project) if to is not None else set(recipients)
    number = original.n if original is not None else None
    result = SendResult(sender=sender, kind=kind, reply_to=number, reply_to_id=original.id if original else None,
                        unknown=[r for r in recipients if r not in known])
    from rooms_cli.messaging.wake import asleep_on_arrival

    for recipient in recipients:
        # a message that waits while wake is off never wakes its recipient later (messaging/wake.py)
        stamp = {"wake": False} if asleep_on_arrival(project, config, recipient) else {}
        result.delivered.append(deliver(project, recipient, sender, text, kind=kind, reply_to=number, meta=meta | stamp))
    mark_announced(project, sender)
    touch(project, sender)
    return result
