"""What a reply goes through before it is stored, so the transcript does not poison itself.

    clean = tidy_reply(text, me="ops", names=["ops", "architect", "alice", "Architect"])

In order:
1. Role tokens (`<|im_start|>assistant`, `<start_of_turn>model`, `[INST]`, `</s>`…) and leading
   speaker labels (`ops: architect: @everyone: hi` → `hi`; any known speaker's id or name, its own
   `@id:`, `assistant:`/`user:`/`system:`, `**Name:**`) are stripped. A leading `@other-agent: …`
   is kept: it is a mention (it cascades), not a label.
2. The reply is cut where the model starts writing another turn: a later line outside code fences
   that begins with a known speaker's label, a role token, or a role word alone on its line (`model`,
   what is left of Gemma's `<start_of_turn>model` once a server drops the special tokens): what the
   stop sequences do on the server, for every speaker rather than the four a server accepts.
3. Sentences, lines and clauses read back from the instructions it was given (the system prompt
   and the closing instruction) are taken out (models/repetition.drop_echoes: a model that echoes
   its instructions, "You are Boss. Answer in one short sentence.", also when it strings runs of
   them together), and so are those the agent said before, in this room or anywhere (`drop_said`:
   "We ship first." inside its next reply).
4. A reply that repeats itself is cut at the start of the repetition and flagged: a unit of 2–80
   characters looping four times or more (`salt_salt_salt_salt`), or a sentence or line of 10+
   characters said again, or the end of an earlier one said again (`I'm a chatbot. I'm a chatbot.`,
   `Tester, I'm not sure how to respond. I'm not sure how to respond.`), or a phrase of six words said three
   times (`you're ready for the one line, you're ready for the one line, …`). Cuts end with "…".
A reply cut by the token limit gets `mark_cut`: an unterminated code fence is closed and the text
ends with `…[cut at N tokens]`. `copied_from` finds an earlier message a reply says again
(models/repetition.says_again: a near copy, rapidfuzz ratio ≥ 90 on normalised text, 20+ characters;
a shorter one when it has the same words as the agent's own earlier message; one line held whole in
the other).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)
from rooms_cli.models.repetition import copied_from as copied_from  # re-exported: its home before models/
from rooms_cli.models.repetition import drop_echoes, drop_said, normal_words

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    pass

ROLE_WORDS = ("assistant", "user", "system", "model", "ai", "bot")
BROADCAST_WORDS = ("everyone", "channel", "jam")
ELLIPSIS = "…"
REPEAT_MIN_CHARS = 10
LOOP_WORDS = 6

# compiled on first use (re's cache), and only for a reply with a `<` or `[` (_may_hold_role_token): ~0.3 ms a chat
_ROLE_TOKEN = (
    r"(?i)<\|(?:im_start|im_end|start_header_id|end_header_id|eot_id|endoftext|assistant|user|system|end)\|>"
    r"(?:\s*(?:assistant|user|system)\b(?:<\|end_header_id\|>)?)?"
    r"|<(?:start_of_turn|end_of_turn)>(?:\s*(?:model|user)\b)?|\[/?INST\]|</?s>"
)
_LOOP = re.compile(r"(.{2,80}?)\1{3,}", re.DOTALL)
# a role word alone on its line: what is left of a turn marker once the server dropped its special tokens
_BARE_ROLE = re.compile(r"^[ \t]*(?:model|user|assistant|system)[ \t]*$", re.IGNORECASE | re.MULTILINE)

SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")  # where a sentence or line ends (the stream guard checks up to there)


@dataclass
class Tidy:
    """A reply after hygiene: its text and what was done to it."""

    text: str
    stripped: bool = False  # leading labels or role tokens were removed
    cut_turn: bool = False  # it went on to write another speaker's turn, cut there
    repeated: bool = False  # it repeated itself, cut at the repetition
    echoed: bool = False  # sentences read back from its prompt were taken out
    restated: bool = False  # sentences it had said before (anywhere) were taken out


def _label_pattern(me: str, names: list[str]) -> re.Pattern[str]:
    """A leading label: a known name or role word, bold or bracketed, then a colon."""
    words = sorted({n for n in [*names, me, *ROLE_WORDS] if n}, key=len, reverse=True)
    plain = "|".join(re.escape(w) for w in words)
    tagged = "|".join(re.escape(w) for w in sorted({me, *BROADCAST_WORDS}, key=len, reverse=True))
    return re.compile(
        rf"^\s*(?:\*\*|__)?[\[(]?(?:@(?:{tagged})|(?:{plain}))[\])]?(?:\*\*|__)?\s*(?:said)?\s*:(?:\*\*|__)?[ \t]*\n?",
        re.IGNORECASE,
    )


def _may_hold_role_token(text: str) -> bool:
    """Every role token has a `<` or a `[`: a reply without either is told apart without the pattern."""
    return "<" in text or "[" in text


def strip_labels(text: str, me: str, names: list[str]) -> tuple[str, bool]:

    """`text` without leading role tokens and speaker labels (repeatedly); True when any went."""
    label = _label_pattern(me, names)
    out = text
    while True:
        before = out
        out = out.lstrip()
        token = (re.match(_ROLE_TOKEN, out) if _may_hold_role_token(out) else None) or _BARE_ROLE.match(out)
        if token:
            out = out[token.end():]
        out = label.sub("", out, count=1)
        if out == before:
            break
    out = out.strip()
    return out, out != text.strip()


def cut_other_turns(text: str, me: str, names: list[str]) -> tuple[str, bool]:
    """`text` up to the first later line that starts another speaker's turn (or a role token)."""
    words = sorted({n for n in [*names, me, "assistant", "user", "system"] if n}, key=len, reverse=True)
    turn = re.compile(rf"^[ \t]*(?:\*\*)?(?:{'|'.join(re.escape(w) for w in words)})(?:\*\*)?[ \t]*:", re.IGNORECASE | re.MULTILINE)
    fences = _fenced(text)
    cuts = [m.start() for m in turn.finditer(text) if m.start() > 0 and not fences(m.start())]  # `user: alice` in YAML is content
    cuts += [m.start() for m in (re.search(_ROLE_TOKEN, text) if _may_hold_role_token(text) else None, _BARE_ROLE.search(text, 1))
             if m and m.start() > 0]
    if not cuts:
        return text, False
    return text[: min(cuts)].rstrip(), True


def _fenced(text: str) -> Callable[[int], bool]:
    """`inside(pos)`: True for a position inside a ``` code block."""
    spans = []
    start = None
    for match in re.finditer(r"(?m)^[ \t]*```", text):
        if start is None:
            start = match.start()
        else:
            spans.append((start, match.end()))
            start = None
    if start is not None:
        spans.append((start, len(text)))
    return lambda pos: any(a <= pos < b for a, b in spans)


def cut_repetition(text: str) -> tuple[str, bool]:
    """`text` cut at the start of a repetition (kept: the first time it was said), ending in "…"."""
    cut = len(text)
    for loop in _LOOP.finditer(text):
        unit = loop.group(1)
        if any(c.isalpha() for c in unit) and len(loop.group(0)) >= 20:
            cut = min(cut, loop.start() + len(unit))
            break
    seen: set[str] = set()
    pos = 0
    in_fence = False
    for piece in re.split(r"((?<=[.!?])\s+|\n+)", text):
        start, pos = pos, pos + len(piece)
        if start >= cut:
            break
        if piece.lstrip().startswith("```"):
            in_fence = not in_fence
        key = normal_words(piece)
        if in_fence or len(key) < REPEAT_MIN_CHARS:
            continue
        if key in seen or any(earlier.endswith(" " + key) for earlier in seen):  # `Tester, I'm not sure.` then `I'm not sure.`
            cut = min(cut, start)
            break
        seen.add(key)
    cut = min(cut, _phrase_loop(text))
    if cut >= len(text):
        return text, False
    return close_fences(text[:cut].rstrip(" \t\n,;:-_.…") + ELLIPSIS), True


def _phrase_loop(text: str) -> int:
    """Where a phrase of `LOOP_WORDS` words is said for the second time, when it is said three
    times, two of them on one line (items of a list, one a line, may all start alike), outside
    code; else len."""
    fenced = _fenced(text)
    words = [m for m in re.finditer(r"[\w']+", text) if not fenced(m.start())]
    lowered = [m.group().lower() for m in words]
    places: dict[tuple[str, ...], list[int]] = {}
    for i in range(len(words) - LOOP_WORDS + 1):
        key = tuple(lowered[i:i + LOOP_WORDS])
        seen = places.setdefault(key, [])
        if seen and i < seen[-1] + LOOP_WORDS:
            continue  # overlapping: the character loop above is for that
        seen.append(i)
        if len(seen) >= 3:
            lines = [text.count("\n", 0, words[j].start()) for j in seen]
            if len(set(lines)) < len(lines):
                return words[seen[1]].start()
    return len(text)


def close_fences(text: str) -> str:
    """`text` with an unterminated ``` code fence closed."""
    fences = [line for line in text.split("\n") if line.lstrip().startswith("```")]
    return text + "\n```" if len(fences) % 2 else text


def mark_cut(text: str, limit: int | None) -> str:
    """A reply the token limit cut: fences closed, then `…[cut at N tokens]`."""
    body = text.rstrip()
    closed = close_fences(body)
    where = f"[cut at {limit} tokens]" if limit else "[cut]"
    return f"{closed}\n{ELLIPSIS}{where}" if closed != body else f"{body}{ELLIPSIS}{where}"


def tidy_reply(text: str, me: str, names: list[str], instructions: str | Sequence[str] = "",
               said: Sequence[str] = ()) -> Tidy:
    """Hygiene in order (labels, other turns, echoes of `instructions`, what it `said` before,
    repetition); see the module docstring."""
    out, stripped = strip_labels(text, me, names)
    out, cut_turn = cut_other_turns(out, me, names)
    out, echoed = drop_echoes(out, instructions)
    out, restated = drop_said(out, said)
    out, repeated = cut_repetition(out)
    return Tidy(out.strip(), stripped, cut_turn, repeated, echoed, restated)
