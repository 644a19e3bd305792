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
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rooms_cli.models.base import Completion, Delta, Message, Provider

GUARD_EVERY = 24  # characters streamed between two checks
REPETITION = "repetition"  # the finish_reason of a reply the guard ended
LOOP_MIN_CHARS = 16
WORD_TIMES = {1: 5, 2: 4, 3: 4, 4: 4, 5: 4, 6: 4}  # a run of N words said this many times in a row is a loop

ECHO_MIN_WORDS = 3  # "You are Archer (…": a cut-off start of its instructions is an echo too
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


def drop_echoes(text: str, prompt: str) -> tuple[str, bool]:
    """`text` without its sentences and lines (of ECHO_MIN_WORDS words or more) read back from
    `prompt` (the system prompt: "You are a model. Answer in one short sentence."); True when any went."""
    told = normal_words(prompt)
    if not told or not text:
        return text, False
    kept, dropped = [], False
    for piece in re.split(r"((?<=[.!?])[ \t]+|\n+)", text):
        key = normal_words(piece)
        if len(key.split()) >= ECHO_MIN_WORDS and key in told:
            dropped = True
            continue
        kept.append(piece)
    return ("".join(kept).strip(), True) if dropped else (text, False)


def normal_words(text: str) -> str:
    """Lower-case words, single spaces: what two texts must share to be the same words."""
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


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
