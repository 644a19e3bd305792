"""Memory extraction: after a roundtable, 2–3 lessons per participant (as the roundtable source says).

With a real model: one call (purpose "lessons") asking for a JSON object `{"<agent id>": ["lesson",
"lesson", "lesson"], …}`, held to `summary_schema` where the provider honours a schema; a reply that
yields no lesson is asked for once more, then the roundtable learns nothing. Lessons come ONLY from
that structured summary: a reply without the JSON object gives none (never quotes of turns picked
from prose), and each lesson is checked (`check_lessons`): a transcript line ("ops: …"), a copy of
a turn, a splice of turns (most of its words in runs of three taken from the turns), a degenerate
repetition ("salt_salt_salt", "I'm a chatbot. I'm a chatbot."), a fragment of
fewer than three words or a duplicate is rejected. At most 3 are kept per participant; one with
fewer than 2 is reported (`problems`), never padded.

Offline (no language model): extractive and deterministic — each participant keeps the others' two
most telling turns, attributed ("On launch, Analyst said: …"), checked the same way except for
the copy rule (quoting is what extractive means).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from rooms_cli.models.base import Message

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

LESSONS_MIN, LESSONS_MAX = 2, 3
MIN_WORDS = 3
# Short lessons: SmolLM2 wrote long ones and its summary of four participants ran to the 500-token
# limit mid-object, so nothing could be read. 15 words (~100 characters, ~25 tokens) each keeps 4 × 3
# lessons well inside the limit; the schema's maxLength holds a grammar-constrained server to it.
MAX_LESSON_WORDS = 15
MIN_LESSON_CHARS, MAX_LESSON_CHARS = 20, 100

EXTRACT_INSTRUCTIONS = (
    "You summarise a team conversation into lessons. For each participant write exactly {lo} or {hi} "
    "lessons: short sentences of at most {words} words each, in your own words (decisions, facts, concerns "
    "raised by others) that this participant should remember for future work. Do not copy lines of the "
    "conversation. "
    "Reply with JSON only: an object with one key per participant id ({ids}), each a list of {lo} or {hi} "
    "lessons.{example}"
)


def summary_schema(participants: Sequence[str]) -> dict[str, Any]:
    """The JSON Schema of the summary: each participant id -> 2 to 3 lessons (strings)."""
    # a lesson is a sentence: the length bounds keep a grammar-held model from answering with a name
    lesson = {"type": "string", "minLength": MIN_LESSON_CHARS, "maxLength": MAX_LESSON_CHARS}
    lessons = {"type": "array", "items": lesson, "minItems": LESSONS_MIN, "maxItems": LESSONS_MAX}
    return {"type": "object", "properties": {p: lessons for p in participants}, "required": list(participants),
            "additionalProperties": False}


def extraction_messages(fmt_name: str, topic: str, turns: Sequence[dict[str, Any]], participants: Sequence[str],
                        names: dict[str, str] | None = None, structured: bool = False) -> list[Message]:
    """The summary call: the instructions (ids, 2–3 lessons each, JSON) and the conversation.

    Without a schema the instructions show the shape; with one they do not (the grammar holds the
    shape, and a small model copies any example it is shown)."""
    names = names or {}
    lines = "\n".join(f"- {names.get(t['speaker'], t['speaker'])}: {t['text']}" for t in turns)
    example = "" if structured else "\n{" + ", ".join(f'"{p}": ["<lesson>", "<lesson>"]' for p in participants) + "}"
    return [
        Message("system", EXTRACT_INSTRUCTIONS.format(lo=LESSONS_MIN, hi=LESSONS_MAX, example=example, ids=", ".join(participants),
                                                      words=MAX_LESSON_WORDS)),
        Message("user", f"Format: {fmt_name}. Topic: {topic}.\n\nConversation:\n{lines}"),
    ]


def retry_message(reason: str, participants: Sequence[str]) -> Message:
    return Message("user", f"That summary could not be used: {reason}. Reply again with the JSON object only: "
                           f"each of {', '.join(participants)} as a key, {LESSONS_MIN} or {LESSONS_MAX} lessons each, "
                           f"each lesson at most {MAX_LESSON_WORDS} words.")


@dataclass
class Lessons:
    """What an extraction gave: lessons per participant, and why a participant got fewer than
    LESSONS_MIN (key "*": why there are none at all)."""

    lessons: dict[str, list[str]] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.lessons.values())


def read_summary(text: str, participants: Sequence[str], names: dict[str, str] | None = None,
                 turns: Sequence[dict[str, Any]] = ()) -> Lessons:
    """The lessons of a model's summary: only from its JSON object; checked by `check_lessons`."""
    raw = _summary_object(text or "", participants, names)
    if raw is None:
        reason = "the reply was empty" if not (text or "").strip() else "the reply held no JSON object of lessons per participant"
        return Lessons(problems={"*": reason})
    return check_lessons(raw, participants, names, turns)


def _summary_object(text: str, participants: Sequence[str], names: dict[str, str] | None) -> dict[str, Any] | None:
    lookup = _lookup(participants, names)
    from rooms_cli.models.structured import json_values

    for value in json_values(text, "{"):
        if isinstance(value, dict) and isinstance(value.get("lessons"), dict):
            value = value["lessons"]
        if isinstance(value, dict) and any(_who(k, lookup) for k in value):
            return value
    return None


def _lookup(participants: Sequence[str], names: dict[str, str] | None) -> dict[str, str]:
    lookup = {p.casefold(): p for p in participants}
    for agent_id, display in (names or {}).items():
        if agent_id in participants:
            lookup.setdefault(display.casefold(), agent_id)
    return lookup


def _who(key: object, lookup: dict[str, str]) -> str | None:
    return lookup.get(str(key).strip().strip("@").casefold())


def check_lessons(raw: dict[str, Any], participants: Sequence[str], names: dict[str, str] | None = None,
                  turns: Sequence[dict[str, Any]] | None = ()) -> Lessons:
    """The usable lessons of `raw` ({participant: [lessons]}), at most LESSONS_MAX each, and the problems.

    `turns`: the conversation, whose copies are rejected (None: copies allowed, the offline way)."""
    lookup = _lookup(participants, names)
    speakers = {p.casefold() for p in participants} | {n.casefold() for n in (names or {}).values()}
    said = [_plain(t["text"]) for t in (turns or ())]
    out = Lessons()
    rejected: dict[str, Counter[str]] = {}
    given: dict[str, list[Any]] = {}
    for key, value in raw.items():
        who = _who(key, lookup)
        if who is not None:
            given.setdefault(who, []).extend(value if isinstance(value, list) else [value])
    for who in participants:
        kept: list[str] = []
        for item in given.get(who, []):
            lesson = " ".join(str(item).split()).strip(" \"'") if isinstance(item, str) else ""
            why = _rejection(lesson, speakers, said if turns is not None else None, kept)
            if why:
                rejected.setdefault(who, Counter())[why] += 1
            elif len(kept) < LESSONS_MAX:
                kept.append(lesson)
        if kept:
            out.lessons[who] = kept
        if len(kept) < LESSONS_MIN:
            noun = "lesson" if len(kept) == 1 else "lessons"
            note = f"{len(kept)} {noun} (asked for {LESSONS_MIN}–{LESSONS_MAX})"
            if who not in given:
                note += ": the summary left it out"
            elif rejected.get(who):
                note += ": rejected " + ", ".join(f"{n} as {why}" for why, n in rejected[who].items())
            out.problems[who] = note
    if not out.lessons:
        out.problems["*"] = "no usable lesson in the summary"
    return out


def _plain(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def _copied(plain: str, turn: str) -> bool:
    """Whether a lesson (its plain words) copies a turn: it is a long enough part of the turn, or holds a
    whole turn of two words or more ("Launcher over. I had to…" opening with the turn "Launcher – over.")."""
    if len(plain) >= 20 and plain in turn:
        return True
    return len(turn.split()) >= 2 and f" {turn} " in f" {plain} "


SPLICE_WORDS = 3  # runs of this many words taken from the turns
SPLICE_SHARE = 0.8  # a lesson whose words are this much covered by such runs is a splice


def _spliced(plain: str, said: list[str]) -> bool:
    """Whether a lesson is glued together from runs of words of the turns ("We ship Friday the numbers
    tell a different story"): most of its words lie in runs of SPLICE_WORDS found in some turn."""
    words = plain.split()
    if len(words) < 2 * SPLICE_WORDS:
        return False
    runs = {tuple(turn.split()[i:i + SPLICE_WORDS]) for turn in said for i in range(len(turn.split()) - SPLICE_WORDS + 1)}
    covered = [False] * len(words)
    for i in range(len(words) - SPLICE_WORDS + 1):
        if tuple(words[i:i + SPLICE_WORDS]) in runs:
            covered[i:i + SPLICE_WORDS] = [True] * SPLICE_WORDS
    return sum(covered) >= SPLICE_SHARE * len(words)


_REPEAT_RE = re.compile(r"(\b[^\W\d_]\w*?)(?:[\W_]{0,3}\1\b){2,}", re.IGNORECASE)


def _rejection(lesson: str, speakers: set[str], said: list[str] | None, kept: list[str]) -> str:
    """Why `lesson` is not a lesson ('' when it is one)."""
    words = lesson.split()
    if len(words) < MIN_WORDS:
        return "too short"
    if re.search(r"[<>{}\[\]]", lesson) or len(re.findall(r"[^\W\d_]", lesson)) < 0.6 * len(lesson.replace(" ", "")):
        return "not a sentence"  # a placeholder copied from the instructions, JSON debris
    label = re.match(r"^\s*[\[*_]*([\w .'-]{1,40}?)[\]*_]*\s*:\s", lesson)
    if label and label.group(1).strip().casefold() in speakers | {"assistant", "user", "system"}:
        return "a transcript line"
    if _REPEAT_RE.search(lesson) or (len(words) >= 6 and len({w.casefold() for w in words}) < len(words) / 2):
        return "a repetition"
    plain = _plain(lesson)
    if said is not None and any(_copied(plain, turn) for turn in said):
        return "a copy of a turn"
    if said is not None and _spliced(plain, said):
        return "a splice of turns"
    if plain in {_plain(k) for k in kept}:
        return "a duplicate"
    return ""


def extractive_lessons(
    topic: str, turns: Sequence[dict[str, Any]], participants: Sequence[str], interests: dict[str, set[str]] | None = None,
    names: dict[str, str] | None = None,
) -> Lessons:
    """Per participant, the others' LESSONS_MIN most telling turns, attributed (deterministic, no model)."""
    from rooms_cli.core.text import stem, tokens

    freq = Counter(stem(w) for t in turns for w in tokens(t["text"]))
    raw: dict[str, list[str]] = {}
    for agent in participants:
        mine = interests.get(agent, set()) if interests else set()

        def score(turn: dict[str, Any], mine: set[str] = mine) -> float:
            words = {stem(w) for w in tokens(turn["text"])}
            weight: float = sum(freq[w] for w in words) / (1 + len(words)) ** 0.5 + 2.0 * len(words & mine)
            return weight

        others = [t for t in turns if t["speaker"] != agent and t["text"]]
        picked: list[str] = []
        for turn in sorted(others, key=lambda t: (-score(t), t["turn"])):
            who = (names or {}).get(turn["speaker"], turn["speaker"])
            lesson = f"On {topic}, {who} said: {turn['text']}"
            if lesson not in picked:
                picked.append(lesson)
            if len(picked) >= LESSONS_MIN:
                break
        raw[agent] = picked
    return check_lessons(raw, participants, names, turns=None)
