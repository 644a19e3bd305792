"""The offline model: deterministic, no network, the default.

It cannot read a prompt the way a language model does, so it works from the agent's persona
(tags, disposition, voice) and the last message:
- "chat": answers `/pass` when the message shares no word with the agent's tags and disposition;
  otherwise a short reply in the agent's voice that picks up the message's key words.
- "answer": always a reply in voice.
- "summary": an extractive summary (the sentences with the most frequent content words).
- "rank": a ranking of the labelled candidates (`A:`, `B:`…) found in the prompt.
The same inputs give the same text; every transcript line it produces is marked offline.
"""

from __future__ import annotations

import hashlib
import re
import types
from collections.abc import Generator
from typing import Any

from rooms_cli.core.passes import PASS
from rooms_cli.core.text import persona_words, stem, summarize, tokens
from rooms_cli.models.base import Completion, Delta, Message, Provider, Usage
from rooms_cli.models.tokens import clip_to_tokens, estimate_tokens


def _pick(options: list[str], *key: object) -> str:
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode()).digest()
    return options[int.from_bytes(digest[:4], "big") % len(options)]


def topic_phrase(text: str, width: int = 6) -> str:
    """The span of `text` (at most `width` words) richest in content words, trimmed of filler words."""
    clean = re.sub(r"@[\w./-]+", " ", text)
    clause = re.split(r"[?!.;:\n—–]| - ", clean.strip(), maxsplit=1)[0] or clean
    words = clause.split()
    if not words:
        return "this"
    content = [1 if tokens(w) else 0 for w in words]
    best, best_score = (0, min(width, len(words))), -1
    for start in range(len(words)):
        end = min(len(words), start + width)
        score = sum(content[start:end])
        if score > best_score:
            best, best_score = (start, end), score
    span = words[best[0] : best[1]]
    while span and not tokens(span[0]):
        span = span[1:]
    while span and not tokens(span[-1]):
        span = span[:-1]
    start = best[0] + (len(words[best[0] : best[1]]) - len(span) if span else 0)
    if span and start > 0 and words[start - 1].lower() in ("the", "our", "this", "a", "an"):
        span = [words[start - 1], *span]
    phrase = " ".join(span).strip(",\"'()[]") or "this"
    return phrase[0].lower() + phrase[1:] if len(phrase) > 1 and not phrase[:2].isupper() else phrase


_DETERMINERS = frozenset("the a an our this that your my their its".split())
_NOT_FOCUS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday today tomorrow week month now best guess
    angle context anyone something idea ideas thought thoughts way""".split()
)


def _focus(text: str) -> str:
    """The thing a message is about, for "the X" phrasing: the head of its first noun phrase
    ("the auth middleware" -> middleware), else its longest content word."""
    words = re.sub(r"@[\w./-]+", " ", text).split()
    for i, word in enumerate(words):
        if word.lower() in _DETERMINERS:
            head = None
            for nxt in words[i + 1 : i + 5]:
                toks = tokens(nxt)
                if not toks or toks[-1] in _NOT_FOCUS:
                    break
                head = toks[-1]
                if re.search(r"[?!.,;:]$", nxt):
                    break
            if head:
                return head
    candidates = [w for w in tokens(" ".join(words)) if w not in _NOT_FOCUS]
    return max(candidates, key=len) if candidates else "plan"


def _number(*key: object, low: int = 2, high: int = 40) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode()).digest()
    return low + int.from_bytes(digest[:4], "big") % (high - low + 1)


# Sentence shapes by temperament; {topic} is a phrase from the message, {focus} its key word,
# {n}/{m} deterministic numbers, {tag} one of the agent's tags.
_SHAPES = {
    "direct": [
        "Bottom line on {topic}: who owns it, and by when?",
        "Let's decide on the {focus} today and stop circling. I want a date.",
        "Keep it short — what is actually blocking {topic}?",
        "Fine. The {focus} ships when it's ready, and I want that to be this sprint.",
        "Two things on the {focus}: an owner and a deadline. Everything else is noise.",
    ],
    "data": [
        "Before we commit to {topic}: {n}% of last month's cases say otherwise.",
        "I pulled the numbers on the {focus} — {n} of {m} sessions hit it. That's the baseline.",
        "Careful. We have {n} data points on the {focus}; that's an anecdote, not a trend.",
        "If we change the {focus}, I want a metric and a {n}-day window to judge it.",
        "The {focus} moved {n}% week over week. Signal or noise? I'd wait one more cycle.",
    ],
    "energy": [
        "Let's just try {topic} this week and see what happens.",
        "We could have a rough {focus} live by Friday. Why wait?",
        "Every day we debate the {focus} is a day nobody uses it. Ship the small version.",
        "I'll take {topic} — give me two days and a feature flag.",
        "Run it as an experiment: half the users get the new {focus}, we read it Monday.",
    ],
    "story": [
        "What's the story {topic} tells the people who use it?",
        "Picture a user meeting the {focus} for the first time — what do they feel?",
        "The {focus} isn't a feature, it's a promise. Let's write that promise down first.",
        "I keep thinking about the person on the other end of {topic}.",
        "If we can't explain the {focus} in one sentence, the audience won't either.",
    ],
    "lateral": [
        "Hear me out — what if we did the opposite of {topic}?",
        "Wild thought: drop the {focus} entirely and see who notices.",
        "What if the {focus} were the product, not the side quest?",
        "Nobody's said it yet: we could partner on the {focus} instead of building it.",
        "Flip it — make the {focus} something users brag about.",
    ],
    "careful": [
        "Show me the failing case for {topic} first.",
        "What happens to the {focus} when two of these run at once?",
        "I'd want a test around the {focus} before anyone touches it.",
        "The edge case worries me: the {focus} under load, or half-written.",
    ],
    "generic": [
        "From the {tag} side, {topic} needs a clear next step.",
        "My read on the {focus}: {tag} is where it gets hard.",
        "On {topic}, I'd start with the {tag} part and keep it small.",
        "I can take the {tag} angle on the {focus}, if nobody else has it.",
    ],
}
_TEMPERAMENTS = (
    ("direct", ("direct", "results", "impatient", "decisive")),
    ("data", ("data", "measured", "numbers", "evidence", "cautious")),
    ("energy", ("high-energy", "energy", "action", "growth")),
    ("story", ("emotional", "narrative", "story", "empathetic")),
    ("lateral", ("intuitive", "lateral", "bold", "contrarian")),
    ("careful", ("skeptical", "precise", "meticulous")),
)
_AGREE = ["{name} is right.", "Building on {name}'s point:", "Agree with {name}.", "Yes, and"]
_DISAGREE = ["I don't buy that, {name}.", "Respectfully, {name}, no.", "{name}, that skips a step.", "Pushing back on {name}:"]


def temperament(agent: Any) -> str:
    """The agent's temperament, read from its voice tone first, then quirk, then disposition."""
    voice = getattr(agent, "voice", {}) or {}
    for text in (voice.get("tone", ""), voice.get("quirk", ""), getattr(agent, "disposition", "") or ""):
        lowered = text.lower()
        for name, keys in _TEMPERAMENTS:
            if any(k in lowered for k in keys):
                return name
    return "generic"


def _previous_speaker(messages: list[Message], me: str) -> str | None:
    """The display name of the last other speaker in the conversation, if one is recognisable."""
    for msg in reversed(messages[:-1] if messages else []):
        if msg.role == "system":
            continue
        name = msg.name
        if not name:
            match = re.match(r"\s*\[?([A-Za-z][\w .-]{0,30}?)\]?\s*(?::| said:)\s", msg.content)
            name = match.group(1) if match else None
        if name and name.lower() != me.lower():
            return name
    return None


def reply_in_voice(agent: Any, message: str, salt: object = "", previous: str | None = None) -> str:
    """A short deterministic reply in the agent's voice about `message`."""
    agent_id = getattr(agent, "id", "agent")
    key = (agent_id, message, salt)
    tags = getattr(agent, "tags", []) or ["this"]
    shape = _pick(_SHAPES[temperament(agent)], *key, "shape")
    text = shape.format(
        topic=topic_phrase(message), focus=_focus(message), n=_number(*key, "n"), m=_number(*key, "m", low=41, high=120),
        tag=_pick(list(tags), *key, "tag"),
    )
    if previous:
        affinity = (getattr(agent, "affinity", {}) or {}).get(previous.lower(), 0.0)
        pool = _DISAGREE if affinity < 0 else _AGREE
        if affinity != 0 or _pick(["yes", "no", "no"], *key, "react") == "yes":
            lead = _pick(pool, *key, "lead").format(name=previous)
            text = f"{lead} {text[0].lower() + text[1:] if lead.endswith(('and', ':')) else text}"
    voice = getattr(agent, "voice", {}) or {}
    if voice.get("line") and voice["line"] not in text and _pick(["yes", "no", "no"], *key, "line") == "yes":
        text = f"{voice['line']} {text}"
    return text[0].upper() + text[1:]


def should_pass(agent: Any, message: str) -> bool:
    """True when the message shares no (stemmed) word with the agent's tags and disposition."""
    mine = persona_words(agent)
    if not mine:
        return False
    return not ({stem(w) for w in tokens(message)} & mine)


def rank_labels(agent: Any, prompt: str) -> str:
    """The prompt's labels in an order fixed by agent and prompt, never the order they were shown in:
    the rank reducer reads that order as no information (groups/rank.py), which made the offline
    panel's ranking a coin toss per broadcast."""
    labels = re.findall(r"(?m)^\s*\[?([A-Z]\d*)[\]:.)]", prompt)
    labels = list(dict.fromkeys(labels))
    if not labels:
        return ""
    agent_id = getattr(agent, "id", "agent")
    order = sorted(labels, key=lambda lab: hashlib.sha256(f"{agent_id}\x1f{lab}\x1f{prompt}".encode()).digest())
    if len(order) > 1 and order == labels:
        order.reverse()
    return ", ".join(order)


def vote_in_voice(agent: Any, prompt: str) -> str:
    """One of the options the prompt lists after "one of:" (picked per agent and prompt), with a reason."""
    match = re.search(r"one of:?\s*([^.\n]+)", prompt)
    options = [o.strip() for o in re.split(r",|\|", match.group(1)) if o.strip()] if match else []
    if not options:
        return reply_in_voice(agent, prompt)
    agent_id = getattr(agent, "id", "agent")
    choice = min(options, key=lambda o: hashlib.sha256(f"{agent_id}\x1f{o}\x1f{prompt}".encode()).digest())
    return f"{choice}. {reply_in_voice(agent, prompt)}" if agent is not None else choice


def _last_user(messages: list[Message]) -> str:
    """The text being answered: a chat prompt packs it with other lines into its last user
    message and also hands it over alone (chat/context.py, `answering`)."""
    for msg in reversed(messages):
        if msg.role == "user":
            return getattr(msg, "answering", None) or msg.content
    return ""


def _display(agent: Any) -> str:
    return str(getattr(agent, "display_name", None) or getattr(agent, "id", ""))


@types.coroutine
def _let_others_run() -> Generator[None, None, None]:
    """What `asyncio.sleep(0)` does (a bare yield: other tasks of an @jam run between deltas),
    without importing asyncio: a single offline reply is driven without an event loop."""
    yield


class OfflineProvider(Provider):
    type = "offline"
    offline = True

    async def _acomplete(
        self, messages: list[Message], *, model: str, temperature: float | None, max_tokens: int | None,
        stop: list[str], schema: dict[str, Any] | None, on_delta: Delta | None, agent: Any, purpose: str,
    ) -> Completion:
        last = _last_user(messages)
        if purpose == "summary":
            text = summarize("\n".join(m.content for m in messages if m.role != "system"))
        elif purpose == "rank":
            text = rank_labels(agent, last)
        elif purpose == "vote":
            text = vote_in_voice(agent, last)
        elif purpose == "chat" and agent is not None and should_pass(agent, last):
            text = PASS
        elif agent is not None:
            text = reply_in_voice(agent, last, salt=len(messages), previous=_previous_speaker(messages, _display(agent)))
        else:
            text = f"(offline) {summarize(last, 200) or 'Noted.'}"
        finish = "stop"
        if max_tokens:
            clipped = clip_to_tokens(text, max_tokens)
            if clipped != text:
                text, finish = clipped, "length"
        if on_delta:
            for piece in re.findall(r"\S+\s*", text):
                on_delta(piece)
                await _let_others_run()
        return Completion(
            text=text,
            usage=Usage(input_tokens=sum(estimate_tokens(m.content) + 4 for m in messages), output_tokens=estimate_tokens(text)),
            finish_reason=finish,
        )
