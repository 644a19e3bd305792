"""One model call for a chat reply: what is sent, and how the reply is read back.

Sent (see docs/chat.md, "What an agent is given"):
- `max_tokens` from `rooms_cli.models.limits.reply_limit` (the agent's `max_tokens:`, else the
  provider's, else the default for the kind of call: "chat", or "answer" on the @everyone re-ask),
  at most half the context window;
- a temperature: the agent's, else `CHAT_TEMPERATURE` (servers' own defaults differ);
- stop sequences `\\n<name>:` for the speakers most likely to be impersonated (the speaker being
  answered, then the latest other speakers, then the roster), at most `MAX_STOPS` (servers such as
  OpenAI's accept four); every other speaker's turn is cut after the fact (hygiene.py);
- where the provider honours a JSON schema and the message is open (the only mode whose prompt
  offers a pass), `PASS_SCHEMA` (`{"speak", "message"}`);
- a prompt fitted to the context window the server reports (else the agent's `context_window`),
  counted with the server's tokenizer when the conservative estimate says it might not fit. When
  the server still refuses it as too long (ContextOverflow), it is built once more with half the
  budget and only the last `TIGHT_MESSAGES` other messages, each clipped hard.

Every reply is streamed through a `RepetitionGuard` (models/repetition.py; also where nothing is
shown live, an @jam): once the text so far loops (a word or phrase said again and again, checked
on the tokens as they come, not only at sentence ends) or says a whole sentence again
(`hygiene.cut_repetition`, the detector the stored reply goes through), the call is ended there
(the connection closed) instead of running on to the token limit; the reply is kept up to the
repetition and recorded as cut (`finish_reason` "repetition"). A small model stuck in a loop took
~35 s to reach 400 tokens on a loaded machine, "Lol, no, no, no…" 45 s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rooms_cli.chat import hygiene
from rooms_cli.chat.context import PER_MESSAGE, build_prompt, system_prompt
from rooms_cli.core.passes import PASS_SCHEMA, is_pass, read_structured, streaming_object
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.models.repetition import REPETITION, RepetitionGuard, RepetitionStop, stopped_completion

if TYPE_CHECKING:
    from rooms_cli.agents.definitions import Agent
    from rooms_cli.chat import transcript
    from rooms_cli.chat.rooms import RoomState
    from rooms_cli.models.base import Completion, Delta, Provider
    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project

CHAT_TEMPERATURE = 0.7
MAX_STOPS = 4
TIGHT_MESSAGES = 3
TIGHT_SHRINK = 0.5


def chat_guard(sink: Delta | None, structured: bool) -> RepetitionGuard:
    """The stream guard of a chat call: a loop anywhere in the text so far (models/repetition.py), or a
    whole sentence or line said again (`hygiene.cut_repetition`, the check the stored reply goes
    through; a sentence half arrived could look like an earlier one); a structured reply is checked on
    its message."""

    def sentences_repeat(said: str) -> bool:
        ends = [m.end() for m in hygiene.SENTENCE_END.finditer(said)]
        return bool(ends) and hygiene.cut_repetition(said[:ends[-1]])[1]

    return RepetitionGuard(sink, view=(lambda text: streaming_object(text)[1]) if structured else None, also=sentences_repeat)


@dataclass
class Answer:
    """A completion and how it was asked for."""

    completion: Completion
    limit: int
    structured: bool
    retried: bool = False  # the prompt was refused as too long once and rebuilt tight
    system: str = ""  # the system prompt it was given (a reply that reads it back is an echo)


@dataclass
class Reading:
    """What a reply says once read: a message (cleaned), or a pass; flags for the record."""

    kind: str  # message | pass | echo (nothing but its prompt read back)
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


def stop_sequences(me: str, trigger_speaker: str | None, snapshot: list[Any], roster: list[str]) -> list[str]:
    names: list[str] = []
    for name in [trigger_speaker, *(m.speaker for m in reversed(snapshot)), *roster]:
        if name and name != me and name not in names:
            names.append(name)
    return [f"\n{name}:" for name in names[:MAX_STOPS]]


def known_names(agents: dict[str, Any], snapshot: list[Any], trigger: transcript.Message | None) -> list[str]:
    """Every name a reply might wrongly start with or go on to speak as: roster ids, display names,
    and the people of the snapshot."""
    names = set(agents)
    names.update(a.display_name for a in agents.values())
    names.update(m.speaker for m in snapshot)
    if trigger is not None:
        names.add(trigger.speaker)
    return sorted(n for n in names if n)


class Caller:
    """Model calls of one turn: a provider per model string, the windows learned, tokens counted."""

    def __init__(self, project: Project, config: Config, state: RoomState, agents: dict[str, Any]) -> None:
        self.project, self.config, self.state, self.agents = project, config, state, agents
        self.providers: dict[str, tuple[Provider, str]] = {}
        self.windows: dict[str, int] = {}

    def provider(self, agent: Agent) -> tuple[Provider, str]:
        from rooms_cli.models import provider_for

        model_string = agent.model_string(self.config.default_model)
        if model_string not in self.providers:
            self.providers[model_string] = provider_for(model_string, self.config)
        return self.providers[model_string]

    async def close(self) -> None:
        for provider, _model in self.providers.values():
            await provider.aclose()


    async def window(self, agent: Agent) -> int:
        """The agent's context window: what its server reports, else its `context_window`."""
        provider, model = self.provider(agent)
        key = agent.model_string(self.config.default_model)
        if key not in self.windows:
            try:
                learned = await provider.context_window(model)
            except Exception:  # a hint: the agent's own setting still holds
                learned = None
            self.windows[key] = learned or 0
        return self.windows[key] or agent.context_window

    async def _counter(self, provider: Provider, model: str, texts: list[str]) -> Callable[[str], int]:
        """`count(text)` from the server's tokenizer (the provider caches counts per process)."""
        from rooms_cli.models.tokens import estimate_tokens

        counts: dict[str, int] = {}
        for text in texts:
            if text not in counts:
                try:
                    counts[text] = int(await provider.count_tokens(model, text))
                except Exception:  # no tokenizer reachable: the estimate
                    counts[text] = estimate_tokens(text)
        return lambda text: counts.get(text) or estimate_tokens(text)

    async def ask(self, agent: Agent, trigger: transcript.Message, snapshot: list[Any], *, must_answer: bool,
                  offer_pass: bool = True, on_delta: Delta | None = None) -> Answer:
        """Call the agent's model about `trigger`; ProviderError (ContextOverflow after the retry) on failure.

        `offer_pass`: the prompt says how to pass (open messages); asked directly, an agent is told to
        answer (a pass is still read as one)."""
        from rooms_cli.core.errors import ContextOverflow
        from rooms_cli.models.limits import reply_limit
        from rooms_cli.models.tokens import estimate_tokens

        provider, model = self.provider(agent)
        purpose = "answer" if must_answer else "chat"
        limit = reply_limit(purpose, agent=agent, provider_spec=provider.spec)
        from rooms_cli.models.structured import honours_schemas

        # the schema where the server honours it (structured.py: a server found to answer in text is
        # not sent it again); the prompt leaves the shape to it only where a grammar holds it (a forced
        # tool call may not be made: llama.cpp's /v1/messages): otherwise it says how to pass in words
        send_schema = honours_schemas(provider) and offer_pass and not must_answer
        structured = send_schema and provider.enforced
        window = await self.window(agent)
        limit = min(limit, max(16, window // 2))  # a limit past half the window would leave no room for the prompt
        system = system_prompt(self.project, self.state, agent, self.agents, must_answer=must_answer, structured=structured,
                               offer_pass=offer_pass)
        texts = [system, *(m.text for m in snapshot), trigger.text]
        count: Callable[[str], int] = estimate_tokens
        if sum(estimate_tokens(t) + PER_MESSAGE for t in texts) > (window - limit) * 0.9:
            count = await self._counter(provider, model, texts)  # might not fit by the estimate: ask the server
        stops = stop_sequences(agent.id, trigger.speaker, snapshot, self.state.roster)  # JSON cannot hold them: harmless there
        temperature = agent.temperature if agent.temperature is not None else CHAT_TEMPERATURE
        retried = False
        for tight in (False, True):
            guard = chat_guard(on_delta, structured)
            messages = build_prompt(self.project, self.state, agent, self.agents, snapshot, trigger, must_answer=must_answer,
                                    window=window, reply_tokens=limit, count=count, structured=structured, system=system,
                                    shrink=TIGHT_SHRINK if tight else 1.0, keep_last=TIGHT_MESSAGES if tight else None,
                                    offer_pass=offer_pass)
            try:
                completion = await provider.acomplete(
                    messages, model=model, temperature=temperature, max_tokens=limit, stop=stops,
                    schema=PASS_SCHEMA if send_schema else None, on_delta=guard, agent=agent, purpose=purpose,
                )
            except RepetitionStop:
                completion = stopped_completion(provider, model, messages, guard.text, send_schema)
            except ContextOverflow as exc:
                if tight:
                    exc.message = (f"{exc.message} (even trimmed to the last {TIGHT_MESSAGES} messages; raise the model's "
                                   f"context on the server, or lower max_tokens: / context_window: in .rooms/agents/{agent.id}.md)")
                    exc.args = (exc.message,)
                    raise
                retried = True
                continue
            if send_schema:
                from rooms_cli.models.structured import verify

                verify(provider, completion, PASS_SCHEMA)
            return Answer(completion, limit, send_schema, retried, system)
        raise AssertionError("unreachable")


def read_reply(agent: Agent, answer: Answer, names: list[str]) -> Reading:
    """A completion read as a message or a pass: structured `{speak, message}` where it was asked
    for (text that is not the object is read as text), labels stripped, other turns and repetition
    cut, a reply cut by the limit marked (hygiene.py). `cut` in the record: stopped by the token limit
    or by the repetition guard (on the stream or on the stored text)."""
    completion = answer.completion
    text = completion.text
    meta: dict[str, Any] = {}
    if completion.finish_reason:
        meta["finish_reason"] = completion.finish_reason
    if answer.structured:
        read = read_structured(text)
        if read is not None:
            speak, text = read
            if not speak:
                return Reading("pass", "", meta)
    # the offline model says its persona's lines by design (its wording is its own): only a language
    # model's reply is held to not reading back its prompt
    tidy = hygiene.tidy_reply(text, agent.id, names, "" if completion.offline else answer.system)
    if tidy.echoed and not tidy.text:
        return Reading("echo", "", meta)  # nothing but its instructions read back
    if not tidy.text or is_pass(tidy.text):
        return Reading("pass", "", meta)
    text = tidy.text
    if tidy.repeated:
        meta["repeated"] = True
    elif completion.cut and not tidy.cut_turn:
        text = hygiene.mark_cut(text, answer.limit)
    if completion.cut or tidy.repeated or completion.finish_reason == REPETITION:
        meta["cut"] = True
    if answer.retried:
        meta["trimmed"] = True
    return Reading("message", text, meta)
