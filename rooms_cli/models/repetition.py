"""Replies that loop, found on the stream as the tokens arrive, and the call ended there; replies
that read back their prompt (`drop_echoes`).

    completion = await guarded(provider, messages, model=model, max_tokens=400, purpose="vote")
    completion.finish_reason == REPETITION   # the guard ended it; the text is kept up to the loop

A small model stuck in a loop runs to its token limit: "Lol, no, no, no, no…" ran 45 s and
"reparación reparación…" 92 s on a loaded machine. `loop_start` finds a loop anywhere in the text so
far, not only up to the last sentence end (a loop of words never ends a sentence):
- a unit of 2–80 characters with a letter in it, said four times in a row, 16 characters or more in
  all (`salt_salt_salt_salt`, `reparación reparación reparación reparación`);
- a run of one to six words said again and again: one word five times in a row (`no, no, no, no,
  no`), a phrase of two to six words four times (`we ship it, we ship it, …`), punctuation and case
  aside.
Where it starts is kept (the first time it was said); the rest is the loop. `RepetitionGuard` is the
`on_delta` that checks the text so far every `GUARD_EVERY` characters and raises `RepetitionStop`,
which unwinds the provider's read like a cancellation (the HTTP connection is closed); `guarded`
makes a call through it and returns what came before the loop.

What a reader would see as said again, whoever's reply it is (chat, roundtable turns, wake replies):
- `drop_echoes(text, instructions)`: the sentences, lines and clauses of a reply read back from the
  instructions it was given (its system prompt, the closing instruction, a roundtable's cue), not
  only word for word: a piece of three words or more that is a run of the instructions, or whose
  words are mostly (`ECHO_SHARE`) in runs of `ECHO_RUN` words copied from them ("In the chat room:
  analyst (Analyst), boss (Boss)…", "You push back on your gut feelings").
- `drop_said(text, lines)`: likewise the pieces of a reply that the same agent said before, anywhere
  (its recent lines: agents/said.py), with runs of `SAID_RUN` words ("We ship first." again inside
  "We are ready for Friday. Reporter: we ship first…").
- `says_again(text, earlier, own=…)`: a line said again: the same words, 90 % alike (rapidfuzz), or
  one held whole in the other (`HOLD_SHARE`: "You are a modeler…" inside "You are a modeler…に通客 You
  are a modeler…"). Against the agent's own lines (`own`) either way and however short; against
  another's only when the reply is 20 characters or more, or is held whole in theirs (it adds nothing).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.models.base import Completion, Delta, Message, Provider

GUARD_EVERY = 24  # characters streamed between two checks
REPETITION = "repetition"  # the finish_reason of a reply the guard ended
LOOP_MIN_CHARS = 16
WORD_TIMES = {1: 5, 2: 4, 3: 4, 4: 4, 5: 4, 6: 4}  # a run of N words said this many times in a row is a loop

ECHO_MIN_WORDS = 3  # "You are Archer (…": a cut-off start of its instructions is an echo too
ECHO_RUN = 4  # words: a run this long copied from the instructions is read back, not said
ECHO_SHARE = 0.6  # of a piece's words in such runs: the piece is read back
SAID_RUN = 5  # words: a run this long of the agent's own earlier line is that line again
COPY_RATIO = 90.0  # rapidfuzz ratio of two normalised lines: the same line
COPY_MIN_CHARS = 20  # shorter lines are the same only word for word (and then only the agent's own)
COPY_WORDS = 0.6  # share of words in common before the characters are compared
HOLD_MIN_CHARS = 12
HOLD_SHARE = 1 / 3  # a line held whole in another that is at most three times as long is that line again
_UNIT_LOOP = re.compile(r"(.{2,80}?)\1{3,}", re.DOTALL)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def loop_start(text: str) -> int | None:
    """Where the loop in `text` starts repeating (the end of its first time), or None."""
    found: list[int] = []
    for loop in _UNIT_LOOP.finditer(text):
        unit = loop.group(1)
        if any(c.isalpha() for c in unit) and len(loop.group(0)) >= LOOP_MIN_CHARS:
            found.append(loop.start() + len(unit))
            break
    words = [(m.start(), m.group().casefold()) for m in _WORD.finditer(text)]
    keys = [w for _, w in words]
    for size, times in WORD_TIMES.items():
        for i in range(len(keys) - size * times + 1):
            unit = keys[i:i + size]
            if all(keys[i + k * size:i + (k + 1) * size] == unit for k in range(1, times)):
                found.append(words[i + size][0])
                break
    return min(found) if found else None


def drop_echoes(text: str, instructions: str | Sequence[str]) -> tuple[str, bool]:
    """`text` without its pieces (sentences, lines, clauses ending in a colon) read back from
    `instructions` (one text or several: the system prompt, the closing instruction…); True when any
    went. A piece is read back when it has `ECHO_MIN_WORDS` words or more and is a run of an
    instruction's words, or `ECHO_SHARE` of its words lie in runs of `ECHO_RUN` words copied from them."""
    return Told([instructions] if isinstance(instructions, str) else instructions, ECHO_RUN).drop(text)


def drop_said(text: str, lines: Sequence[str]) -> tuple[str, bool]:
    """`text` without its pieces the same agent said before (`lines`: its recent lines, anywhere); True
    when any went. As `drop_echoes`, with runs of `SAID_RUN` words: a speaker's own phrases recur."""
    return Told(lines, SAID_RUN).drop(text)


class Told:
    """Texts a reply is held against, piece by piece (instructions it was given, or lines it said):
    each as its normalised words, and every run of `run` words they hold."""

    def __init__(self, texts: Iterable[str], run: int) -> None:
        texts = [t for t in texts if t]
        self.texts = [f" {w} " for w in (normal_words(t) for t in texts) if w]
        self.lines = [t.splitlines() for t in texts]
        self.run = run
        self.runs: set[tuple[str, ...]] = set()
        for text in self.texts:
            words = text.split()
            self.runs.update(tuple(words[i:i + run]) for i in range(len(words) - run + 1))

    def drop(self, text: str) -> tuple[str, bool]:
        """`text` without the pieces `holds`; True when any went."""
        if not self.texts or not text:
            return text, False
        pieces = re.split(r"((?<=[.!?:…])[ \t]+|\n+)", text)
        held = [self.holds(piece) for piece in pieces]
        if not any(held):
            return text, False
        # a reply that reads back its instructions also reads back their short lines ("Output format:")
        kept = [p for p, h in zip(pieces, held, strict=True) if not h and not self.line_of(p)]
        return "".join(kept).strip(), True

    def line_of(self, piece: str) -> bool:
        """Whether `piece` is, word for word, a whole line of one of these texts (a heading such as
        "Boundaries:"), which only counts once the reply is known to read them back."""
        key = normal_words(piece)
        return bool(key) and any(key == normal_words(line) for text in self.lines for line in text)

    def holds(self, piece: str) -> bool:
        """Whether `piece` (a sentence or line of a reply) is in these texts: all of it, in one run,
        or `ECHO_SHARE` of its words in runs of `self.run` words."""
        words = normal_words(piece).split()
        if len(words) < ECHO_MIN_WORDS:
            return False
        key = f" {' '.join(words)} "
        if any(key in text for text in self.texts):
            return True
        covered = [False] * len(words)
        for i in range(len(words) - self.run + 1):
            if tuple(words[i:i + self.run]) in self.runs:
                covered[i:i + self.run] = [True] * self.run
        return sum(covered) >= ECHO_SHARE * len(words)


def normal_words(text: str) -> str:
    """Lower-case words, single spaces: what two texts must share to be the same words."""
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def says_again(text: str, earlier: str, *, own: bool) -> bool:
    """Whether `text` says `earlier` again (see the module docstring); `own`: `earlier` is the same agent's."""
    mine, theirs = normal_words(text), normal_words(earlier)
    if not mine or not theirs:
        return False
    if mine == theirs:
        return own or len(mine) >= COPY_MIN_CHARS
    if _held(mine, theirs) or (own and _held(theirs, mine)):
        return True
    if min(len(mine), len(theirs)) < COPY_MIN_CHARS:
        return False
    # a near copy shares most of its words: most pairs are ruled out without the fuzzy matcher (and
    # without importing it, which a turn otherwise never needs)
    words, other = Counter(mine.split()), Counter(theirs.split())
    if 2 * sum((words & other).values()) / (sum(words.values()) + sum(other.values())) < COPY_WORDS:
        return False
    from rapidfuzz import fuzz

    return bool(fuzz.ratio(mine, theirs) >= COPY_RATIO)


def copied_from(text: str, earlier: Sequence[Any], me: str | None = None) -> Any:
    """The earlier line (an object with `.text`, and `.speaker` when it has one) that `text` says again,
    newest (last) first, or None: `says_again`, with `own` for the lines whose speaker is `me`."""
    for line in reversed(earlier):
        if says_again(text, line.text, own=me is not None and getattr(line, "speaker", None) == me):
            return line
    return None


def _held(part: str, whole: str) -> bool:
    """`part` (normalised) held whole in `whole`, long enough and a large enough share of it to be that line again."""
    words = part.count(" ") + 1
    return (words >= ECHO_MIN_WORDS and len(part) >= HOLD_MIN_CHARS and words >= HOLD_SHARE * (whole.count(" ") + 1)
            and f" {part} " in f" {whole} ")


class RepetitionStop(BaseException):
    """Raised from the stream when the reply started repeating: a BaseException, so no provider
    turns it into an error, and the read unwinds like a cancellation (the connection is closed)."""


class RepetitionGuard:
    """An `on_delta` that passes each piece on (to `sink`, when given), keeps the text so far, and
    ends the call (`RepetitionStop`) once `loop_start` finds a loop in it, or `also(text)` says the
    text repeats itself (chat's sentence-level check). `view(text)` picks what is checked (chat: the
    message of a structured reply)."""

    def __init__(self, sink: Delta | None = None, *, view: Callable[[str], str | None] | None = None,
                 also: Callable[[str], bool] | None = None) -> None:
        self.sink, self.view, self.also = sink, view, also
        self.text = ""
        self.checked = 0
        self.tripped = False

    def __call__(self, piece: str) -> None:
        self.text += piece
        if self.sink is not None:
            self.sink(piece)
        if len(self.text) - self.checked < GUARD_EVERY:
            return
        self.checked = len(self.text)
        said = self.view(self.text) if self.view is not None else self.text
        if said and (loop_start(said) is not None or (self.also is not None and self.also(said))):
            self.tripped = True
            raise RepetitionStop


def stopped_completion(provider: Provider, model: str, messages: list[Message], text: str, structured: bool = False) -> Completion:
    """The completion of a call the guard ended: the text streamed so far (masked and cut at stop
    strings already), usage estimated (the server's count never came)."""
    from rooms_cli.models.base import Completion, Usage
    from rooms_cli.models.tokens import estimate_tokens

    usage = Usage(sum(estimate_tokens(m.content) for m in messages), estimate_tokens(text))
    name = getattr(provider, "name", "")
    model = model or str(provider.spec.get("model") or "")
    return Completion(text=text, usage=usage, model=f"{name}:{model}" if model and model != name else name,
                      offline=provider.offline, finish_reason=REPETITION, structured=structured)


async def guarded(provider: Provider, messages: list[Message], *, on_delta: Delta | None = None, **kwargs: Any) -> Completion:
    """`provider.acomplete(messages, **kwargs)` streamed through a RepetitionGuard: a reply that
    loops ends at the loop, `finish_reason` REPETITION, its text up to where the loop began."""
    guard = RepetitionGuard(on_delta)
    try:
        return await provider.acomplete(messages, on_delta=guard, **kwargs)
    except RepetitionStop:
        text = guard.text
        at = loop_start(text)
        return stopped_completion(provider, str(kwargs.get("model") or ""), messages,
                                  text[:at].rstrip() if at is not None else text, bool(kwargs.get("schema")))
