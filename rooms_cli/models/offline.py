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

import asyncio
import hashlib
import re
from collections import Counter

from rooms_cli.models.base import Completion, Message, Provider, Usage, estimate_tokens

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just let me more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves anyone anybody everyone someone thing things got get
    think know like want need really also still even ever much many lot yes yeah ok okay hey hi hello
    please thanks thank one two new via vs etc whats what's who's it's that's we're i'm don't can't""".split()
)
TOKEN_RE = re.compile(r"[a-z0-9][a-z0-9'_-]*")


def tokens(text: str) -> list[str]:
    """Lowercase content words of `text` (stopwords and 1-2 letter words dropped)."""
    out = []
    for tok in TOKEN_RE.findall(text.lower()):
        tok = tok.strip("'_-")
        for part in re.split(r"[-_]", tok):
            if len(part) > 2 and part not in STOPWORDS:
                out.append(part)
    return out


def stem(word: str) -> str:
    """A crude stem so 'limits' meets 'limit' and 'testing' meets 'tests'."""
    for suffix in ("ings", "ing", "ers", "er", "ies", "es", "ed", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)][:6]
    return word[:6]


def persona_words(agent) -> set[str]:
    words = []
    for tag in getattr(agent, "tags", []) or []:
        words.extend(tokens(tag))
    words.extend(tokens(getattr(agent, "disposition", "") or ""))
    return {stem(w) for w in words}


def _pick(options: list[str], *key: object) -> str:
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode()).digest()
    return options[int.from_bytes(digest[:4], "big") % len(options)]


_OPENERS = [
    "On {topic}: {take}",
    "{take}",
    "Quick thought on {topic} — {take}",
    "Re {topic}: {take}",
]
_TAKES = [
    "from where I sit, {angle}.",
    "I'd start with {angle}.",
    "the part I'd push on is {angle}.",
    "we should be explicit about {angle}.",
    "my read: {angle}.",
]
_ANGLES_BY_TONE = {
    "direct": ["who owns it and by when", "the one thing that blocks shipping", "a date we can commit to"],
    "measured": ["what the data actually shows", "a baseline before we change anything", "the error bars on that claim"],
    "data": ["what the numbers say — call it 3 of 5 cases", "a measurement first, opinions second", "the 80th percentile, not the average"],
    "high-energy": ["trying it today and measuring tomorrow", "a scrappy version we can ship this week", "the fastest experiment that tells us something"],
    "emotional": ["the story a user would tell about it", "why anyone should care", "the narrative, not just the feature list"],
    "intuitive": ["the option nobody has put on the table yet", "flipping the assumption entirely", "a bolder version of the same idea"],
}
_DEFAULT_ANGLES = ["the trade-off we are making", "what would change our mind", "the smallest next step", "the risk we have not named"]


def _angles(agent) -> list[str]:
    voice = getattr(agent, "voice", {}) or {}
    tone = " ".join([voice.get("tone", ""), getattr(agent, "disposition", "") or ""]).lower()
    for key, angles in _ANGLES_BY_TONE.items():
        if key in tone:
            return angles
    tags = getattr(agent, "tags", []) or []
    if tags:
        return [f"the {tag} side of it" for tag in tags[:3]] + _DEFAULT_ANGLES[:2]
    return _DEFAULT_ANGLES


def _last_user(messages: list[Message]) -> str:
    for msg in reversed(messages):
        if msg.role == "user":
            return msg.content
    return ""


def topic_of(text: str, limit: int = 3) -> str:
    words = tokens(text)
    if not words:
        return "this"
    counts = Counter(words)
    ranked = sorted(dict.fromkeys(words), key=lambda w: (-counts[w], words.index(w)))
    return " ".join(ranked[:limit])


def reply_in_voice(agent, message: str, salt: object = "") -> str:
    """A short deterministic reply in the agent's voice about `message`."""
    agent_id = getattr(agent, "id", "agent")
    topic = topic_of(message)
    angle = _pick(_angles(agent), agent_id, message, salt, "angle")
    take = _pick(_TAKES, agent_id, message, salt, "take").format(angle=angle)
    text = _pick(_OPENERS, agent_id, message, salt, "open").format(topic=topic, take=take)
    text = text[0].upper() + text[1:]
    voice = getattr(agent, "voice", {}) or {}
    if voice.get("line") and _pick(["yes", "no"], agent_id, message, salt, "line") == "yes":
        text = f"{voice['line']} {text}"
    return text


def should_pass(agent, message: str) -> bool:
    """True when the message shares no (stemmed) word with the agent's tags and disposition."""
    mine = persona_words(agent)
    if not mine:
        return False
    return not ({stem(w) for w in tokens(message)} & mine)


def summarize(text: str, max_chars: int = 600) -> str:
    """Extractive summary: the sentences richest in the text's most frequent content words, in order."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s.strip()) > 3]
    if not sentences:
        return ""
    freq = Counter(tokens(text))
    scored = sorted(
        range(len(sentences)),
        key=lambda i: (-sum(freq[w] for w in set(tokens(sentences[i]))) / (1 + len(tokens(sentences[i])) ** 0.5), i),
    )
    chosen: list[int] = []
    size = 0
    for idx in scored:
        if size + len(sentences[idx]) > max_chars and chosen:
            continue
        chosen.append(idx)
        size += len(sentences[idx]) + 1
        if size >= max_chars:
            break
    return " ".join(sentences[i] for i in sorted(chosen))[:max_chars].strip()


def rank_labels(agent, prompt: str) -> str:
    labels = re.findall(r"(?m)^\s*\[?([A-Z])[\]:.)]", prompt)
    labels = list(dict.fromkeys(labels))
    if not labels:
        return ""
    agent_id = getattr(agent, "id", "agent")
    order = sorted(labels, key=lambda lab: hashlib.sha256(f"{agent_id}\x1f{lab}\x1f{prompt}".encode()).digest())
    return ", ".join(order)


class OfflineProvider(Provider):
    type = "offline"
    offline = True

    async def _acomplete(self, messages, *, model, temperature, max_tokens, on_delta, agent, purpose) -> Completion:
        last = _last_user(messages)
        if purpose == "summary":
            text = summarize("\n".join(m.content for m in messages if m.role != "system"))
        elif purpose == "rank":
            text = rank_labels(agent, last)
        elif purpose == "chat" and agent is not None and should_pass(agent, last):
            text = "/pass"
        elif agent is not None:
            text = reply_in_voice(agent, last, salt=len(messages))
        else:
            text = f"(offline) {summarize(last, 200) or 'Noted.'}"
        if max_tokens:
            text = text[: max(1, max_tokens) * 4]
        if on_delta:
            for piece in re.findall(r"\S+\s*", text):
                on_delta(piece)
                await asyncio.sleep(0)
        prompt_chars = sum(len(m.content) for m in messages)
        return Completion(
            text=text,
            usage=Usage(input_tokens=estimate_tokens("x" * prompt_chars), output_tokens=estimate_tokens(text)),
            finish_reason="stop",
        )
