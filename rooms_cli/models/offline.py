"""The offline model: deterministic, no network, the default — the first model everyone meets.

It cannot read a prompt the way a language model does, so it works from the agent's persona
(tags, disposition, voice), the last message, and the one instruction it can read — whether the
prompt offers `/pass`:
- "chat": where the prompt offers a pass (chat's rule for an open message), it passes when the
  message shares no (stemmed) word with the agent's tags and disposition — the seed's relevance
  rule — unless the message is a greeting, which every agent answers. Where the prompt asks for an
  answer instead (the agent was addressed by name, in `@jam` or `@everyone`, or mentioned by another
  agent), it always answers in voice. Word overlap is too weak to tell a message "truly outside" an
  agent (it put "are we green on staging?" outside ops), and silence when asked by name is the one
  answer a new user cannot read, so an addressed agent never passes here;
- "answer" (and every other kind of call): always a reply in voice;
- "summary": an extractive summary (the sentences with the most frequent content words);
- "rank": a ranking of the labelled candidates (`A:`, `B:`…) found in the prompt.
A reply names what the message is about as a noun phrase (`subject`): the message's own phrase after
a determiner ("the auth middleware"), else its longest run of content words ("staging"), else "this",
so every sentence shape reads as English whatever was asked. The same inputs give the same text
(no seed needed); every transcript line it produces is marked offline.
"""

from __future__ import annotations

import hashlib
import re
import types
from collections.abc import Generator, Sequence

from rooms_cli.core.passes import PASS
from rooms_cli.core.text import persona_words, stem, summarize, tokens
from rooms_cli.models.base import Completion, Delta, Message, Provider, Usage
from rooms_cli.models.tokens import clip_to_tokens, estimate_tokens

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


def _pick(options: Sequence[str], *key: object) -> str:
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode()).digest()
    return options[int.from_bytes(digest[:4], "big") % len(options)]


def _number(*key: object, low: int = 2, high: int = 40) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode()).digest()
    return low + int.from_bytes(digest[:4], "big") % (high - low + 1)


_MENTION = re.compile(r"@[\w./-]+")
_EDGE = "\"'()[]{}`*_“”‘’«»,;:!?."
_DETERMINERS = frozenset("the our this that these those a an its their".split())
_PRONOUNS = frozenset("this that it".split())
# the word after one of these is a verb or a predicate, not a thing: "should we raise prices", "which is better"
_BEFORE_VERB = frozenset("we you they i it he she to is are was were be been am".split())
_OBJECTS = _DETERMINERS | frozenset("it them him her me us".split())  # a word right before one is a verb: "ship it"
_NEVER = frozenset("now later next soon today tomorrow tonight first last lately again enough".split())
_NOT_ALONE = frozenset(  # fine inside a phrase ("launch week"), never what a message is about on its own
    """monday tuesday wednesday thursday friday saturday sunday week month year best guess angle context
    something idea ideas thought thoughts way matter matters take takes view opinion everything anything
    nothing""".split()
)
_GREETINGS = frozenset("hello hi hey hiya howdy greetings morning afternoon evening welcome yo".split())


def _bare(word: str) -> str:
    return word.strip(_EDGE)


def _content(word: str, first: bool) -> bool:
    """A word a noun phrase may hold (a content word, text.tokens, not an adverb like "next"; as
    its first word, not filler like "week" or "angle")."""
    found = tokens(word)
    if not found or word.lower() in _DETERMINERS or found[-1] in _NEVER:
        return False
    return not (first and found[-1] in _NOT_ALONE)


def _phrase_after(words: list[str], at: int) -> list[str]:
    """The content words right after a determiner at `at` (at most four, up to the first punctuation)."""
    phrase: list[str] = []
    for word in words[at + 1 : at + 5]:
        bare = _bare(word)
        if not bare or not _content(bare, not phrase):
            break
        phrase.append(bare)
        if word[-1:] in _EDGE:
            break
    return phrase


def _runs(words: list[str]) -> list[list[str]]:
    """Runs of consecutive content words; a word after "we"/"to"/"is"… or right before "it"/"the"… is
    a verb or a predicate and breaks the run."""
    runs: list[list[str]] = [[]]
    for i, word in enumerate(words):
        bare = _bare(word)
        before = _bare(words[i - 1]).lower() if i else ""
        after = _bare(words[i + 1]).lower() if i + 1 < len(words) else ""
        asked = i == 1 or (i > 1 and words[i - 2][-1:] in _EDGE)  # "Is Postgres …": a question's subject follows its verb
        verb = (before in _BEFORE_VERB and not asked and not _named(bare)) or (after in _OBJECTS and word[-1:] not in _EDGE)
        if bare and not verb and _content(bare, not runs[-1]):
            bare = bare if i and words[i - 1][-1:] not in _EDGE else _sentence_start(bare)
            if runs[-1] and _named(runs[-1][-1]) != _named(bare):  # "Postgres" | "fast": a name stands alone
                runs.append([])
            runs[-1].append(bare)
        elif runs[-1]:
            runs.append([])
        if word[-1:] in _EDGE and runs[-1]:
            runs.append([])
    return [run for run in runs if run]


def _sentence_start(word: str) -> str:
    """A word that opens a sentence, lowered unless it looks like a name or acronym ("API", "iOS")."""
    return word if word[1:] != word[1:].lower() else word.lower()


def _article(word: str) -> str:
    """ "a" or "an" before `word`, by how it is said ("an api", "a user", "an hour", "an 8")."""
    lowered = word.lower()
    vowel = lowered[:1] in ("a", "e", "i", "o") or lowered.startswith(("hour", "honest", "8", "11", "18")) \
        or (lowered[:1] == "u" and not lowered.startswith(("us", "uni", "ut", "ur")))
    return "an" if vowel else "a"


def _named(word: str) -> bool:
    """A name ("Postgres"), not a word or an acronym."""
    return word[:1].isupper() and word[1:].islower()


def _with_article(run: list[str]) -> str:
    """A bare run as a noun phrase: plural, -ing and proper heads stand alone ("staging", "rate limits",
    "Postgres"), others take "the" ("the launch week")."""
    head = run[-1]
    lowered = head.lower()
    if lowered.endswith("ing") or (lowered.endswith("s") and not lowered.endswith("ss")) or head[:1].isupper():
        return " ".join(run)
    return "the " + " ".join(run)


def subject(text: str) -> str:
    """What `text` is about, as a noun phrase any sentence shape can take: the phrase after its first
    determiner ("the auth middleware", "our api"), a trailing "this"/"that" ("what's your angle on this?"),
    else its longest run of content words with an article where English wants one ("the build",
    "staging"), else "this"."""
    words: list[str] = []
    for word in _MENTION.sub(" ", text).split():
        if not words or word.lower() != words[-1].lower():  # "ship ship": one word said twice is said once
            words.append(word)
    for i, word in enumerate(words):
        lowered = _bare(word).lower()
        if lowered not in _DETERMINERS:
            continue
        phrase = _phrase_after(words, i)
        if phrase:
            return f"{_article(phrase[0]) if lowered in ('a', 'an') else lowered} {' '.join(phrase)}"
        if lowered in _PRONOUNS and (i + 1 == len(words) or word[-1:] in _EDGE):
            return lowered
    runs = _runs(words)
    if not runs:
        return "this"
    best = max(runs, key=lambda run: (len(run), sum(map(len, run))))
    return _with_article(best[:4])


def is_greeting(text: str) -> bool:
    """True when `text` opens with a greeting ("hello everyone", "good morning", "hi @ops")."""
    words = [_bare(w).lower() for w in _MENTION.sub(" ", text).split()]
    words = [w for w in words if w]
    if not words:
        return False
    return words[0] in _GREETINGS or (words[0] == "good" and len(words) > 1 and words[1] in ("morning", "afternoon", "evening"))


# Sentence shapes by temperament; {np} is what the message is about (`subject`: a noun phrase, so any
# shape reads as English), {n}/{m} deterministic numbers, {tag} one of the agent's tags (only the
# shapes of agents that have tags use it).
_SHAPES = {
    "direct": [
        "Bottom line on {np}: who owns it, and by when?",
        "Let's decide on {np} today and stop circling. I want a date.",
        "Keep it short — what is actually blocking {np}?",
        "Fine. Ship {np} when it's ready, and I want that to be this sprint.",
        "Two things on {np}: an owner and a deadline. Everything else is noise.",
    ],
    "data": [
        "Before we commit on {np}: {n}% of last month's cases say otherwise.",
        "I pulled the numbers on {np} — {n} of {m} sessions touch it. That's the baseline.",
        "Careful. We have {n} data points on {np}; that's an anecdote, not a trend.",
        "If we change {np}, I want a metric and {n} days to judge it.",
        "The numbers on {np} moved {n}% week over week. Signal or noise? I'd wait one more cycle.",
    ],
    "energy": [
        "Let's just try something on {np} in the next few days and see what happens.",
        "We could have a rough cut of {np} live by Friday. Why wait?",
        "Every day we debate {np} is a day nobody uses it. Ship the small version.",
        "I'll take {np} — give me two days and a feature flag.",
        "Run {np} as an experiment: half the users get it, we read the results Monday.",
    ],
    "story": [
        "What's the story {np} tells the people who use it?",
        "Picture a user meeting {np} for the first time — what do they feel?",
        "Treat {np} as a promise, not a feature. Let's write that promise down first.",
        "I keep thinking about the person on the other end of {np}.",
        "If we can't explain {np} in one sentence, nobody else will get it either.",
    ],
    "lateral": [
        "Hear me out — what if we did the opposite on {np}?",
        "Wild thought: drop {np} entirely and see who notices.",
        "What if {np} were the product, not the side quest?",
        "Nobody's said it yet: we could partner on {np} instead of building it.",
        "Flip it — make {np} something users brag about.",
    ],
    "careful": [
        "Show me the failing case for {np} first.",
        "What happens to {np} when two of these run at once?",
        "I'd want a test around {np} before anyone touches it.",
        "The edge case worries me: {np} under load, or half-written.",
    ],
    "generic": [
        "On {np}, I'd start small and write down the next step.",
        "My read on {np}: name an owner and the first step, then we talk.",
    ],
    "tagged": [
        "From the {tag} side, {np} needs a clear next step.",
        "My read on {np}: {tag} is where it gets hard.",
        "On {np}, I'd start with the {tag} part and keep it small.",
        "I can take the {tag} angle on {np}, if nobody else has it.",
    ],
}
# A greeting is answered with one, in the same temperament, naming the agent ({name}; {tag} as above).
_HELLOS = {
    "direct": ["Morning. {name} here — what are we deciding today?", "Hi. {name} here; give me the one thing that's blocking you."],
    "data": ["Hello. {name} here, with numbers ready when you want them.", "Hi from {name}. Happy to look at the data first."],
    "energy": ["Hey! {name} here, ready to ship something — what's first?", "Hi all! {name} wants something live today."],
    "story": ["Hello — {name} here, glad everyone made it. Who are we building for?", "Hi from {name}. What story are we telling this week?"],
    "lateral": ["Hi! {name} here, with a strange idea for later.", "Hey, {name} here. What's the question nobody has asked yet?"],
    "careful": ["Hello. {name} here — before anything new: is everything green?", "Hi from {name}. Tell me what changed since yesterday."],
    "generic": ["Hi — {name} here; point me at whatever needs doing.", "Hello from {name}. What are we working on?"],
    "tagged": ["Hi — {name} here, on {tag}; point me at whatever needs it.", "Hello from {name}. Anything on the {tag} side I can take?"],
}
# Said after the shape by an agent with tags, every other time: two agents of one temperament answering
# the same message would otherwise often say nearly the same thing (chat drops a near copy as a repeat).
_TAILS = ["I'll check the {tag} side of it.", "The {tag} side is what I'd watch.", "Happy to own the {tag} part.",
          "I'll bring the {tag} view."]
# Reactions to the previous speaker: (about someone, to "you"), each a whole sentence.
_AGREE = [("{name} is right.", "You're right."), ("Good point, {name}.", "Good point."),
          ("Agree with {name}.", "Agree with you."), ("That matches what {name} said.", "That matches what you said.")]
_DISAGREE = [("I don't buy that, {name}.", "I don't buy that."), ("Respectfully, {name}, no.", "Respectfully, no."),
             ("{name}, that skips a step.", "That skips a step."), ("Not so fast, {name}.", "Not so fast.")]
_TEMPERAMENTS = (
    ("direct", ("direct", "results", "impatient", "decisive")),
    ("data", ("data", "measured", "numbers", "evidence", "cautious")),
    ("energy", ("high-energy", "energy", "action", "growth")),
    ("story", ("emotional", "narrative", "story", "empathetic")),
    ("lateral", ("intuitive", "lateral", "bold", "contrarian")),
    ("careful", ("skeptical", "precise", "meticulous")),
)


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
            match = re.match(r"\s*\[?([A-Za-z][\w.-]{0,30})\]?(?::| said:)\s", msg.content)  # a name, not "Two things on X:"
            name = match.group(1) if match else None
        if name and name.lower() != me.lower():
            return name
    return None


def _react(agent: Any, previous: str, key: tuple[object, ...]) -> str | None:
    """A sentence reacting to the previous speaker by affinity (sometimes, when neutral), or None.
    Said to "you" it is in the second person: "You're right.", never "You is right."."""
    affinity = (getattr(agent, "affinity", {}) or {}).get(previous.lower(), 0.0)
    if affinity == 0 and _pick(["yes", "no", "no"], *key, "react") == "no":
        return None
    pool = _DISAGREE if affinity < 0 else _AGREE
    about, to_you = pool[_number(*key, "lead", low=0, high=len(pool) - 1)]
    lead = to_you if previous.lower() == "you" else about.format(name=previous)
    return lead[0].upper() + lead[1:]  # "Boss is right." for the id boss


_DOUBLED = re.compile(r"\b(\w+) \1\b", re.IGNORECASE)


def _spread(options: list[str], words: dict[str, Any], agent_id: str, seat: str, *key: object, said: tuple[str, ...] = ()) -> str:
    """One of `options` for this message, filled with `words` and shifted by the agent's seat: agents of
    one temperament whose seats differ never pick the same one for the same message (the example sets'
    pairs — architect and ops, researcher and reviewer, engineer and qa — are seated apart under these
    names). A shape that would say a word twice where it meets the subject ("Ship ship deadlines"), or that
    the agent already said (`said`: its earlier replies in the prompt), gives way to the next."""
    start = _number(*key, low=0, high=len(options) - 1) + _number(agent_id, seat, low=0, high=len(options) - 1)
    filled = [options[(start + i) % len(options)].format(**words) for i in range(len(options))]
    fresh = [text for text in filled if not _DOUBLED.search(text)] or filled
    return next((text for text in fresh if not any(text in earlier for earlier in said)), fresh[0])


def reply_in_voice(agent: Any, message: str, salt: object = "", previous: str | None = None, said: tuple[str, ...] = ()) -> str:
    """A short deterministic reply in the agent's voice about `message`: a greeting back when it greets,
    else a sentence shape of the agent's temperament about `subject(message)` (and, every other time, a
    word about one of its tags). `previous`: the last other speaker, whom it may react to; `said`: what the
    agent said before in this conversation, which it does not say again."""
    agent_id = str(getattr(agent, "id", "agent"))
    key: tuple[object, ...] = (agent_id, message, salt)
    tags = [str(t) for t in getattr(agent, "tags", []) or [] if str(t).strip()]
    kind = temperament(agent)
    greeting = is_greeting(message)
    pool = _HELLOS if greeting else _SHAPES
    shapes = pool["tagged"] if kind == "generic" and tags else pool[kind]
    words = {"np": subject(message), "n": _number(*key, "n"), "m": _number(*key, "m", low=41, high=120),
             "tag": _pick(tags, *key, "tag") if tags else "", "name": _display(agent)}
    # a greeting may be said again (a second "hello" gets the same hello); a reply is not
    text = _spread(shapes, words, agent_id, "slot" if greeting else "spread", message, salt, said=() if greeting else said)
    if greeting:
        return text
    if tags and kind != "generic" and _pick(["yes", "no"], *key, "tail") == "yes":
        text = f"{text} {_pick(_TAILS, *key, 'tail-text').format(**words)}"
    lead = _react(agent, previous, key) if previous else None
    if lead:
        text = f"{lead} {text}"
    voice = getattr(agent, "voice", {}) or {}
    if voice.get("line") and voice["line"] not in text and _pick(["yes", "no", "no"], *key, "line") == "yes":
        text = f"{voice['line']} {text}"
    return text[0].upper() + text[1:]


def should_pass(agent: Any, message: str) -> bool:
    """The seed's relevance rule for an open message: True when it shares no (stemmed) word with the
    agent's tags and disposition — unless it is a greeting, which deserves an answer."""
    if is_greeting(message):
        return False
    mine = persona_words(agent)
    return bool(mine) and not ({stem(w) for w in tokens(message)} & mine)


def offers_pass(messages: list[Message]) -> bool:
    """True when the prompt offers `/pass` (chat's rule for open messages is in its system message);
    a prompt that asks for an answer — the agent was addressed — does not mention it, or refuses it."""
    system = "\n".join(m.content for m in messages if m.role == "system")
    return PASS in system and "not accepted" not in system


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
        elif purpose == "chat" and agent is not None and offers_pass(messages) and should_pass(agent, last):
            text = PASS
        elif agent is not None:
            text = reply_in_voice(agent, last, salt=len(messages), previous=_previous_speaker(messages, _display(agent)),
                                  said=tuple(m.content for m in messages if m.role == "assistant"))
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
