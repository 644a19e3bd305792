"""Saved transcripts: `.rooms/chat/<room>/<save-id>.md`, frontmatter `class: transcript`, rehydratable.

    ---
    class: transcript
    room: architecture-sync
    saved: 2026-11-21T13:00:00.000Z
    boundary: r7k2q9x4
    roster: [architect, researcher]
    links:
      participants: ['[[agents/architect]]', '[[agents/researcher]]', '[[people/alice]]']
    ---

    <!-- rooms:r7k2q9x4 {"id": "m-…", "kind": "message", "speaker": "alice", "ts": "…"} -->
    **alice** at 2026-11-21T12:59:58.000Z

    the message text, verbatim
    <!-- /rooms:r7k2q9x4 -->

Each message sits between two marker lines carrying a boundary, like MIME multipart: the boundary
is chosen at save time so that it occurs in no message, so any text — markdown, `**`, blank lines,
lines that look like headers or like our own markers — reads back exactly. The marker holds the
record's fields as JSON (with `<`, `>` and `&` escaped, so nothing can close the HTML comment); the
`**name** at <ts>` line after it is for people reading the file in a pull request.
"""

from __future__ import annotations

import json

from rooms_cli.chat.transcript import Message
from rooms_cli.core.errors import InvalidData
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
FIELDS = ("id", "ts", "speaker", "kind", "model", "usage", "meta")


@dataclass
class SavedTranscript:
    """A saved transcript read back: its room, when it was saved, roster, participants and messages."""

    room: str
    saved: str
    roster: list[str] = field(default_factory=list)
    participants: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    path: str | None = None  # the file it was read from (the newest, when saves were merged)


def _marker_json(data: dict[str, Any]) -> str:
    text = json.dumps(data, ensure_ascii=True, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def choose_boundary(texts: list[str]) -> str:
    """A boundary that occurs in none of `texts` (random; retried on the rare collision)."""
    from rooms_cli.store.rand import rng

    chooser = rng("saved-transcript-boundary")
    while True:
        candidate = "".join(chooser.choice(_ALPHABET) for _ in range(12))
        if not any(candidate in t for t in texts):
            return candidate


def encode(saved: SavedTranscript) -> str:
    """The markdown document for `saved` (see the module docstring)."""
    import yaml

    texts = [m.text for m in saved.messages] + [_marker_json(m.to_json()) + m.speaker + m.ts for m in saved.messages]
    boundary = choose_boundary(texts)
    front = {
        "class": "transcript",
        "room": saved.room,
        "saved": saved.saved,
        "boundary": boundary,
        "roster": list(saved.roster),
        "links": {"participants": list(saved.participants)},
    }
    out = ["---\n", yaml.safe_dump(front, sort_keys=False, allow_unicode=True), "---\n"]
    for msg in saved.messages:
        data = {k: v for k, v in msg.to_json().items() if k in FIELDS}
        out.append(f"\n<!-- rooms:{boundary} {_marker_json(data)} -->\n")
        out.append(f"**{msg.speaker}** at {msg.ts}\n\n")
        out.append(msg.text)
        out.append(f"\n<!-- /rooms:{boundary} -->\n")
    return "".join(out)


def decode(text: str, where: str) -> SavedTranscript:
    """Parse a saved transcript; any damage is an InvalidData error naming `where`, and git conflict
    markers (a save two clones edited, merged without rooms' layout) the store's one MergeConflict."""
    import yaml

    from rooms_cli.store import conflicts

    conflicts.check_text(where, text)
    if not text.startswith("---\n"):
        raise InvalidData(f"{where}: a saved transcript starts with a --- frontmatter block")
    end = text.find("\n---\n", 3)
    if end < 0:
        raise InvalidData(f"{where}: the frontmatter block is not closed with ---")
    try:
        front = yaml.safe_load(text[4 : end + 1]) or {}
    except yaml.YAMLError as exc:
        raise InvalidData(f"{where}: the frontmatter is not valid YAML: {exc}") from None
    if not isinstance(front, dict) or front.get("class") != "transcript":
        raise InvalidData(f"{where}: not a saved transcript (expected class: transcript)")
    boundary = front.get("boundary")
    if not isinstance(boundary, str) or not boundary:
        raise InvalidData(f"{where}: field 'boundary' is missing")
    links = front.get("links") or {}
    saved = SavedTranscript(
        room=str(front.get("room", "")), saved=str(front.get("saved", "")),
        roster=[str(a) for a in front.get("roster") or []],
        participants=[str(p) for p in (links.get("participants") if isinstance(links, dict) else None) or []],
    )
    opener, closer = f"\n<!-- rooms:{boundary} ", f"\n<!-- /rooms:{boundary} -->\n"
    pos = end + 4
    while True:
        start = text.find(opener, pos)
        if start < 0:
            break
        head_end = text.find(" -->\n", start + len(opener))
        if head_end < 0:
            raise InvalidData(f"{where}: a message marker is not closed")
        try:
            data = json.loads(text[start + len(opener) : head_end])
        except json.JSONDecodeError:
            raise InvalidData(f"{where}: a message marker does not hold valid JSON") from None
        header_line_end = text.find("\n\n", head_end + 5)
        if header_line_end < 0:
            raise InvalidData(f"{where}: a message has no `**name** at <ts>` line")
        body_start = header_line_end + 2
        body_end = text.find(closer, body_start)
        if body_end < 0:
            raise InvalidData(f"{where}: message {data.get('id', '?')} is not closed by its end marker")
        body = text[body_start:body_end]
        data["text"] = body
        data["room"] = saved.room
        saved.messages.append(Message.from_json(data))
        pos = body_end + len(closer) - 1
    return saved
