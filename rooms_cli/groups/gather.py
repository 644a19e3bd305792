"""Gathering a broadcast: wait-all and wait-any.

There is no daemon, so the process that waits is the one that runs the model-backed members: it
calls their models concurrently (asyncio) and records each reply in the group log as it lands.
External members reply from any shell with `rooms group reply`; the waiter polls the log for
them (backing off from 20 ms to 250 ms while nothing happens). A member that is a group is gathered
as a sub-broadcast, and its reduced result is that member's reply.

Only one process gathers a broadcast at a time (the `<name>.gather` lock); a second waiter follows
the log and returns the recorded result. Nothing is lost if a waiter dies: the broadcast stays in
flight and the next `wait` picks up where it stopped (replies already recorded are kept).

wait-any cancels losers hard: in-flight model calls are cancelled at once (which closes their
HTTP connections), external members get a `group:<name>/cancel:<id>` envelope, and any reply that
arrives afterwards is recorded as dropped and never reduced.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass

from rooms_cli.core.errors import Conflict, NotFound, RoomsError, TimedOut
from rooms_cli.groups import broadcasts, log, presets, rank, reducers
from rooms_cli.groups.model import CANCELLED, ERROR, OK, TIMEOUT, Broadcast, GroupResult, MemberResult
from rooms_cli.store.locks import try_lock
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.agents.definitions import Agent
    from rooms_cli.groups.model import Member
    from rooms_cli.models.base import Completion, Message, Provider
    from rooms_cli.project.config import Config

PENDING, DROPPED = "pending", "dropped"
POLL_MIN, POLL_MAX = 0.02, 0.25
# the temperature of a member's answer when its agent sets none; votes and ballots are judgements,
# asked at most at JUDGE_TEMPERATURE so that a reply reads as one of the options
ANSWER_TEMPERATURE, JUDGE_TEMPERATURE = 0.7, 0.2

# wait-any with cancel_losers=False: losers still running after the result; see drain()
_background: set[asyncio.Task[Any]] = set()


@dataclass
class Outcome:
    """A model-backed or sub-group member's answer as the gatherer got it, before it is recorded.

    Text, status, seconds taken, when it landed (event-loop time, for arrival order), whether the
    max_tokens limit cut it."""

    handle: str
    text: str
    status: str
    elapsed_s: float
    done_at: float
    source: str
    cut: bool = False


def call_temperature(purpose: str, own: float | None) -> float:
    """A member's answer at its agent's temperature (ANSWER_TEMPERATURE when unset); a vote or a
    ballot at most at JUDGE_TEMPERATURE."""
    if purpose == "group":
        return ANSWER_TEMPERATURE if own is None else own
    return JUDGE_TEMPERATURE if own is None else min(own, JUDGE_TEMPERATURE)


def member_messages(agent: Agent, group: str | None, handle: str, fields: dict[str, str],
                    instruction: str = "") -> list[Message]:
    """What a model-backed member reads: its directive and the three constraints as the system
    message, the objective (and, for a vote, how to answer) as the user message.

    `group` is None for an ephemeral group: its generated name means nothing to a model."""
    from rooms_cli.models import Message

    where = f"of group {group!r}" if group else "of a group"
    system = (
        f"{agent.directive}\n\nYou are member {handle!r} {where}; answer the objective.\n"
        f"Output format: {fields.get('output_format', '').strip()}\n"
        f"Tool guidance: {fields.get('tool_guidance', '').strip()}\n"
        f"Boundaries: {fields.get('boundaries', '').strip()}"
    )
    objective = fields.get("objective", "").strip()
    return [Message("system", system), Message("user", f"{objective}\n\n{instruction}" if instruction else objective)]


def _no_ballot(found: rank.Ballots) -> str:
    """Why no candidate could be placed ahead, in words."""
    parts = []
    if found.uninformative:
        parts.append(f"{len(found.uninformative)} repeated the order shown (no information)")
    if found.unparsed:
        parts.append(f"{len(found.unparsed)} could not be read")
    if found.errors:
        parts.append(f"{len(found.errors)} failed")
    return "no ballot ranked the replies" + (f": {', '.join(parts)}" if parts else "")


def reduced_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


async def drain() -> None:
    """Wait for losers left running by `wait_any(cancel_losers=False)`; their replies are recorded as dropped."""
    while _background:
        await asyncio.gather(*list(_background), return_exceptions=True)


async def stored_result(project: Project, config: Config, name: str, b: Broadcast, reducer: str | None) -> GroupResult:
    """The result recorded for a closed broadcast; re-reduced (not recorded) when another reducer is asked for."""
    if b.status == "cancelled":
        raise Conflict(f"broadcast {b.id} of group {name!r} was cancelled; there is no result", code="broadcast_cancelled")
    result = GroupResult.from_json(b.result or {"broadcast_id": b.id})
    if not reducer or reducer == result.metadata.get("reducer"):
        return result
    fn = reducers.resolve(reducer, config, project.root)
    if fn is None:
        run = _Gathering(project, config, name, b, any_=False, cancel_losers=True, by="rooms",
                         ephemeral=log.load(project, name).ephemeral)
        try:
            reduction = await run._rank(result.by_member, result.order)
        finally:
            await run._close_providers()
    else:
        reduction = reducers.apply(fn, reducer, result.by_member, result.order, b.fields)
    result.reduced = reduction.value
    result.metadata = {**result.metadata, "reducer": reducer, **reduction.metadata}
    return result


async def gather(project: Project, config: Config, name: str, *, any_: bool = False, timeout: float | None = None,
                 reducer: str | None = None, cancel_losers: bool = True, by: str = "rooms", bid: str | None = None) -> GroupResult:
    """Gather the broadcast in flight (or `bid`) of group `name` and reduce it.

    Nothing in flight: the latest recorded result is returned. wait-all returns when every member
    replied or at `timeout` (then the rest are marked `timeout` and `metadata.timed_out` is true).
    """
    d = presets.defaults(config)
    reducer_name = reducer or d.default_reducer
    fn = reducers.resolve(reducer_name, config, project.root)
    timeout = d.broadcast_timeout if timeout is None else timeout
    group = log.load(project, name)
    b = group.broadcast(bid) if bid else (group.in_flight or (group.broadcasts[-1] if group.broadcasts else None))
    if b is None:
        raise NotFound(f"group {name!r} has had no broadcast yet; send one with rooms group broadcast {name} …")
    if not b.in_flight:
        return await stored_result(project, config, name, b, reducer)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    lock = try_lock(log.gather_lock_path(project, name))
    while lock is None:  # another process is gathering: follow the log
        current = log.load(project, name).require(b.id)
        if not current.in_flight:
            return await stored_result(project, config, name, current, reducer)
        if loop.time() >= deadline:
            raise TimedOut(f"another process is gathering broadcast {b.id} of {name!r}; no result within {timeout:g}s")
        await asyncio.sleep(0.1)
        lock = try_lock(log.gather_lock_path(project, name))
    try:
        current = log.load(project, name).require(b.id)
        if not current.in_flight:
            return await stored_result(project, config, name, current, reducer)
        run = _Gathering(project, config, name, current, any_=any_, cancel_losers=cancel_losers, by=by,
                         ephemeral=group.ephemeral)
        return await run.run(deadline, reducer_name, fn)
    finally:
        lock.release()


class _Gathering:
    """One gather of one broadcast, in this process."""

    def __init__(self, project: Project, config: Config, name: str, b: Broadcast, *, any_: bool, cancel_losers: bool, by: str,
                 ephemeral: bool = False) -> None:
        self.project, self.config, self.name, self.b = project, config, name, b
        self.any_, self.cancel_losers, self.by, self.ephemeral = any_, cancel_losers, by, ephemeral
        self.options: list[str] = []  # the declared options when the members vote (majority_vote)
        self.paths: dict[str, str] = {}  # handle -> how its vote or ballot was asked and read (structured.py)
        self.providers: dict[str, Provider] = {}
        self.tasks: dict[asyncio.Task[Any], str] = {}
        self.agents: dict[str, Agent] = {}
        self._size = -1

    # -- members ---------------------------------------------------------------------------
    def _provider(self, agent: Agent) -> tuple[Provider, str]:
        from rooms_cli.models import get_provider, parse_model

        pname, model = parse_model(agent.model_string(self.config.default_model))
        if pname not in self.providers:
            self.providers[pname] = get_provider(pname, self.config)
        return self.providers[pname], model

    async def _complete(self, handle: str, messages: list[Message], purpose: str) -> Completion:
        """One model call of a member (`_call_args`), its stream stopped once it loops (models/repetition.py)."""
        from rooms_cli.models.repetition import guarded

        provider = self._provider(self.agents[handle])[0]
        return await guarded(provider, messages, **self._call_args(handle, purpose))

    async def _answer(self, handle: str) -> Completion:
        """A member's answer to the broadcast. With declared options it votes: asked in the vote's
        shape (structured.ask_structured: the schema where honoured and verified), read tolerantly,
        and asked once more with the shape in words when its vote cannot be read; how it was asked
        goes in `self.paths`."""
        from rooms_cli.groups import votes
        from rooms_cli.models.base import Message
        from rooms_cli.models.structured import ask_structured

        agent = self.agents[handle]
        if not self.options:
            return await self._complete(handle, member_messages(agent, self._prompt_name, handle, self.b.fields), "group")
        options = self.options
        provider, model = self._provider(agent)

        def messages(structured: bool) -> list[Message]:
            return member_messages(agent, self._prompt_name, handle, self.b.fields, votes.vote_instruction(options, structured))

        got = await ask_structured(provider, messages, votes.vote_schema(options), **self._call_args(handle, "vote"))
        self.paths[handle] = got.path
        asked = [*self.b.fields.values(), votes.vote_instruction(options, False)]
        vote, why = votes.read_vote(got.completion.text, options, asked)
        if vote is None:
            retry = [*messages(False), Message("assistant", got.completion.text or "(nothing)"),
                     Message("user", f"That vote could not be read ({why}). {votes.vote_instruction(options, False)}")]
            return await self._complete(handle, retry, "vote")
        return got.completion

    def _call_args(self, handle: str, purpose: str) -> dict[str, Any]:
        """What every call of a member passes to `acomplete` for `purpose`: model, bounded max_tokens
        (models.limits.reply_limit), temperature (votes and ballots at most JUDGE_TEMPERATURE)."""
        from rooms_cli.models.limits import reply_limit

        agent = self.agents[handle]
        provider, model = self._provider(agent)
        return {"model": model, "temperature": call_temperature(purpose, agent.temperature), "agent": agent,
                "purpose": purpose, "max_tokens": reply_limit(purpose, agent=agent, provider_spec=provider.spec)}

    @property
    def _prompt_name(self) -> str | None:
        return None if self.ephemeral else self.name

    async def _call(self, handle: str) -> Outcome:
        loop = asyncio.get_running_loop()
        start = loop.time()
        cut = False
        try:
            completion = await self._answer(handle)
            text, status, cut = completion.text.strip(), OK, completion.cut
        except RoomsError as exc:
            text, status = exc.message, ERROR
        except Exception as exc:  # a provider bug must not take the other members down
            text, status = f"{type(exc).__name__}: {exc}", ERROR
        end = loop.time()
        return Outcome(handle, text, status, end - start, end, "model", cut)

    async def _sub(self, handle: str, sub_name: str, deadline: float) -> Outcome:
        loop = asyncio.get_running_loop()
        start = loop.time()
        sub_bid = self.b.sub.get(handle)
        try:
            if not sub_bid:
                raise NotFound(f"broadcast {self.b.id} has no sub-broadcast for member {handle!r}")
            result = await gather(self.project, self.config, sub_name, bid=sub_bid, timeout=max(0.0, deadline - loop.time()), by=self.by)
            text = reduced_text(result.reduced)
            status = OK if result.metadata.get("replied") else ERROR
        except RoomsError as exc:
            text, status = exc.message, ERROR
        end = loop.time()
        return Outcome(handle, text, status, end - start, end, "group")

    def load_agents(self) -> None:
        """The agents of the model-backed members (the ones that can rank)."""
        from rooms_cli.agents.definitions import load_agent

        for m in self.b.members:
            if m.sub_group:
                continue
            try:
                agent = load_agent(self.project, m.profile)
            except RoomsError:
                continue
            if not agent.is_external(self.config.default_model):
                self.agents[m.handle] = agent

    def _start(self, deadline: float) -> None:
        from rooms_cli.agents.definitions import load_agent

        for m in self.b.pending():
            if m.sub_group:
                self.tasks[asyncio.create_task(self._sub(m.handle, m.sub_group, deadline))] = m.handle
                continue
            try:
                agent = load_agent(self.project, m.profile)
            except RoomsError as exc:
                broadcasts.record_reply(self.project, self.name, self.b.id, m.handle, exc.message, status=ERROR, elapsed_s=0.0, source="model")
                continue
            if agent.is_external(self.config.default_model):
                continue  # replies through `rooms group reply`
            self.agents[m.handle] = agent
            self.tasks[asyncio.create_task(self._call(m.handle))] = m.handle

    def _reload(self) -> Broadcast:
        path = log.log_path(self.project, self.name)
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            raise Conflict(f"group {self.name!r} was dissolved while gathering", code="broadcast_cancelled") from None
        if size != self._size:
            self._size = size
            group = log.load_optional(self.project, self.name)
            if group is None:
                raise Conflict(f"group {self.name!r} was dissolved while gathering", code="broadcast_cancelled")
            self.b = group.require(self.b.id)
        return self.b

    def _first_ok(self, b: Broadcast) -> str | None:
        return next((h for h, r in b.replies.items() if r.status == OK), None)

    # -- the loop --------------------------------------------------------------------------
    async def run(self, deadline: float, reducer_name: str, fn: reducers.Reducer | None) -> GroupResult:
        from rooms_cli.groups.votes import declared_options

        self.background = False
        self.options = declared_options(self.b.fields) if fn is reducers.majority_vote else []
        try:
            return await self._run(deadline, reducer_name, fn)
        finally:
            if not self.background:
                await self._close_providers()

    async def _run(self, deadline: float, reducer_name: str, fn: reducers.Reducer | None) -> GroupResult:
        loop = asyncio.get_running_loop()
        started = loop.time()
        self._start(deadline)
        late: list[Outcome] = []
        winner, timed_out, poll = None, False, POLL_MIN
        try:
            while True:
                b = self._reload()
                if b.status == "cancelled":
                    raise Conflict(f"broadcast {b.id} of group {self.name!r} was cancelled", code="broadcast_cancelled")
                if self.any_ and (winner := self._first_ok(b)):
                    break
                if not b.pending():
                    break
                remaining = deadline - loop.time()
                if remaining <= 0:
                    timed_out = True
                    break
                if self.tasks:
                    done, _ = await asyncio.wait(self.tasks, timeout=min(poll, remaining), return_when=asyncio.FIRST_COMPLETED)
                else:
                    await asyncio.sleep(min(poll, remaining))
                    done = set()
                poll = POLL_MIN if done else min(poll * 1.5, POLL_MAX)
                got_ok = False
                for outcome in sorted((t.result() for t in done), key=lambda o: o.done_at):
                    self.tasks = {t: h for t, h in self.tasks.items() if h != outcome.handle}
                    if self.any_ and got_ok:
                        late.append(outcome)  # finished in the same instant, after the winner
                        continue
                    broadcasts.record_reply(self.project, self.name, self.b.id, outcome.handle, outcome.text,
                                            status=outcome.status, elapsed_s=outcome.elapsed_s, source=outcome.source,
                                            cut=outcome.cut)
                    got_ok = got_ok or outcome.status == OK
        finally:
            if self.any_ and not self.cancel_losers and self.tasks and winner:
                self.background = True
            else:
                await self._cancel_tasks()
        losers = [m for m in self.b.pending()]
        try:
            result = await self._result(reducer_name, fn, winner, timed_out, late, loop.time() - started)
            self._record(result, late)
        except BaseException:
            self.background = False
            await self._cancel_tasks()
            raise
        if self.background:
            task = asyncio.create_task(self._finish_in_background(list(self.tasks)))
            _background.add(task)
            task.add_done_callback(_background.discard)
        if timed_out or (self.any_ and self.cancel_losers):
            reason = "the gather timed out" if timed_out else f"another member answered first ({winner})"
            self._tell_losers(losers, reason)
        return result

    async def _cancel_tasks(self) -> None:
        tasks = list(self.tasks)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _close_providers(self) -> None:
        for provider in self.providers.values():
            await provider.aclose()


    async def _finish_in_background(self, tasks: list[asyncio.Task[Any]]) -> None:
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, Outcome):
                broadcasts.record_reply(self.project, self.name, self.b.id, outcome.handle, outcome.text,
                                        status=outcome.status, elapsed_s=outcome.elapsed_s, source=outcome.source,
                                        cut=outcome.cut)
        await self._close_providers()

    def _tell_losers(self, losers: list[Member], reason: str) -> None:
        group = log.load_optional(self.project, self.name)
        if group is None:
            return
        broadcasts.notify_cancel(self.project, self.config, group, self.b, [m.handle for m in losers if not m.sub_group], reason)
        for m in losers:
            sub_bid = self.b.sub.get(m.handle)
            if not (m.sub_group and sub_bid and log.exists(self.project, m.sub_group)):
                continue
            for sub_name, sb in broadcasts.close_cancelled(self.project, m.sub_group, sub_bid, self.by, reason):
                broadcasts.notify_cancel(self.project, self.config, log.load(self.project, sub_name), sb, [x.handle for x in sb.pending()], reason)

    # -- the result ------------------------------------------------------------------------
    async def _result(self, reducer_name: str, fn: reducers.Reducer | None, winner: str | None, timed_out: bool, late: list[Outcome], elapsed: float) -> GroupResult:
        b = self._reload()
        late_by = {o.handle: o for o in late}
        by_member: dict[str, MemberResult] = {}
        for m in b.members:
            r = b.replies.get(m.handle)
            if r is not None:
                status = DROPPED if (self.any_ and winner and m.handle != winner and r.status == OK) else r.status
                by_member[m.handle] = MemberResult(r.text, status, r.elapsed_s, r.cut)
            elif m.handle in late_by:
                o = late_by[m.handle]
                by_member[m.handle] = MemberResult(o.text, DROPPED, o.elapsed_s, o.cut)
            elif timed_out:
                by_member[m.handle] = MemberResult("", TIMEOUT, 0.0)
            else:
                by_member[m.handle] = MemberResult("", CANCELLED if self.cancel_losers else PENDING, 0.0)
        if self.any_ and winner:
            order = [winner]
        else:
            order = [h for h in b.replies if by_member.get(h) and by_member[h].status in (OK, ERROR)]
        if fn is None:
            reduction = await self._rank(by_member, order)
        else:
            reduction = reducers.apply(fn, reducer_name, by_member, order, b.fields)
        metadata = {
            "reducer": reducer_name, "elapsed_s": round(elapsed, 3),
            "replied": sum(1 for r in by_member.values() if r.status == OK), "members": len(by_member),
            "mode": "any" if self.any_ else "all", "timed_out": timed_out,
        }
        metadata.update(reduction.metadata)
        if self.paths:  # how each vote or ballot was asked and read (schema, fallback, text)
            metadata["structured_paths"] = dict(sorted(self.paths.items()))
        if self.any_ and winner:
            metadata["winner_handle"] = winner
        return GroupResult(broadcast_id=b.id, by_member=by_member, reduced=reduction.value, metadata=metadata, order=order)

    async def _rank(self, by_member: dict[str, MemberResult], order: list[str]) -> reducers.Reduction:
        """Ballots from the model-backed members (rank.py), each asked in the ballot's shape
        (structured.ask_structured), reduced by average rank; every ballot not counted is reported."""
        from rooms_cli.models.structured import ask_structured

        candidates = [h for h in order if by_member[h].status == OK]
        labels = rank.assign_labels(self.b.id, candidates)
        self.load_agents()  # members answered by an earlier (killed) waiter rank too
        rankers = [h for h in candidates if h in self.agents]

        async def ask(handle: str, messages: Callable[[bool], list[Message]], schema: dict[str, Any]) -> tuple[str, str]:
            directive = self.agents[handle].directive
            got = await ask_structured(self._provider(self.agents[handle])[0],
                                       lambda structured: rank.ranking_messages(directive, messages(structured)),
                                       schema, **self._call_args(handle, "rank"))
            return got.completion.text.strip(), got.path

        found = rank.Ballots()
        if len(candidates) > 1 and rankers:
            found = await rank.collect_ballots(ask, self.b.id, rankers, labels, by_member, self.b.fields.get("objective", ""))
        self.paths.update(found.paths)
        reduction = reducers.rank_from_ballots(labels, found.ballots, by_member, order)
        reduction.metadata["unparsed"] = found.unparsed
        if found.uninformative:
            reduction.metadata["uninformative"] = found.uninformative
        if found.errors:
            reduction.metadata["ballot_errors"] = found.errors
        if reduction.value is None and len(candidates) > 1:
            reduction.metadata["no_result"] = _no_ballot(found)
        return reduction

    def _record(self, result: GroupResult, late: list[Outcome]) -> None:
        with log.locked_groups(self.project, self.name):
            current = log.load(self.project, self.name).require(self.b.id)
            if current.status == "cancelled":
                raise Conflict(f"broadcast {self.b.id} of group {self.name!r} was cancelled", code="broadcast_cancelled")
            events = [] if not current.in_flight else [log.event("gathered", id=self.b.id, result=result.to_json())]
            events += [log.event("dropped", id=self.b.id, handle=o.handle, text=o.text, reason="finished after the winner")
                       for o in late]
            log.append(self.project, self.name, *events)
