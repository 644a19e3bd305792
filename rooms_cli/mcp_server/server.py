"""`rooms mcp`: the tools of tools.py (the declared operations) served over stdio with the official MCP SDK's
low-level server (`mcp`, the extra `rooms-cli[mcp]`).

Each operation's declaration gives its input schema (`additionalProperties: false`), the title, the
description, the hints and the output schema. A call:

- an unknown tool, or an argument the tool does not have, is a JSON-RPC error -32602 (invalid
  params) naming it and the closest valid name — a typo (`too` for `to`) must not turn a direct
  message into a broadcast;
- a missing or ill-typed argument is a tool error (`isError`) with the code `usage` (exit code 2),
  so a model reads what to fix;
- the services are synchronous and take the same file locks as the CLI, so several servers can share
  a `.rooms/`. A quick tool (tools.py `quick`: it works on the project's files alone, like a claim, a
  send without wake, the board or the inbox) runs on the event loop: the hand-off to a worker thread
  and back costs two thread wake-ups, 0.3 ms on a small VM, as much as a claim's own work. So a
  session's quick calls run one at a time, in the order they came, and one waiting for a file lock
  (ROOMS_LOCK_TIMEOUT at most) holds up the session's others. Every other tool (a model, a process,
  the network, a wait) runs in a worker thread, so it holds up nothing; a blocking one (`wait`,
  `group_wait`…) sends `notifications/progress` every PROGRESS_S seconds while it runs, when the
  client gave a progressToken;
- a quick tool's call on a connection of the handshake era is answered by a middleware of the server
  (`QuickCalls`): the same checks, its result encoded once instead of parsed back, checked and encoded
  twice more by the SDK; every other call takes the SDK's own path;
- its result is an object, sent as `structuredContent` and as compact JSON text; a failure is a tool
  error whose text and structuredContent are the CLI's `--json` error document `{"error": {"code",
  "message", "exit_code"}}` — the same code and exit code as on the command line. An argument holding
  a lone surrogate (JSON can escape one; no UTF-8 file can hold it) is such an error, code `usage`.

Resources (`rooms://board`, `rooms://inbox/{agent}`, `rooms://room/{room}`) and prompts (`join_room`,
`work_the_board`) are in resources.py.
"""

from __future__ import annotations

import functools
import json
import time
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from rooms_cli import __version__
from rooms_cli.core.errors import RoomsError, UsageError, as_rooms_error
from rooms_cli.mcp_server.tools import TOOLS, Operation, Session
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # the names below are for mypy only
if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp.server.context import ServerRequestContext

    Ctx = ServerRequestContext[Any]

PROGRESS_S = 1.0

INSTRUCTIONS = (
    "rooms coordinates agents through plain files under .rooms/. You act as {me} in {root}. "
    "Board: task_next / task_claim take a task under a lease (keep the lease_id; a lost race is the "
    "error already_claimed: move on), task_done finishes it with a one-line summary. Messages: "
    "attention shows who else is here and what waits for you; send / reply / inbox talk to other "
    "agents; spawn starts a helper whose output arrives in your inbox (wait blocks until it is done). "
    "events returns what happened since a cursor. Lists return at most `limit` records and say how many remain."
)


def input_model(op: Operation) -> type[BaseModel]:
    """The pydantic model of `op`'s arguments (its declaration's, or its signature's after the session), no others allowed."""
    return create_model(f"{op.name}_arguments", __config__=ConfigDict(extra="forbid"), **op.arguments())


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema["additionalProperties"] = False
    return schema


def closest(name: str, choices: list[str]) -> str | None:
    """The valid name `name` was most likely meant to be (None when nothing is close)."""
    from rapidfuzz import fuzz, process

    found = process.extractOne(name, choices, scorer=fuzz.WRatio, score_cutoff=50)
    return found[0] if found else None


def invalid_params(message: str, **data: Any) -> MCPError:
    return MCPError(types.INVALID_PARAMS, message, data or None)


def _jsonable(value: Any) -> Any:
    from rooms_cli.core.jsonable import to_jsonable

    return to_jsonable(value)


def encode(data: Any) -> str:
    """`data` (records through their to_json) as compact JSON text for a model to read (no blanks after
    `,` and `:`: a board of 60 tasks is 8% shorter). Not pydantic's serialiser, though it is twice as fast:
    it writes a dataclass field by field, never through its record's to_json. A text holding a lone
    surrogate (only a hand-edited file can hold one: tool arguments refuse them) has no UTF-8 form, so
    then the whole text is written in ASCII, escapes and all."""
    from rooms_cli.core.jsonable import encode_record

    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=encode_record)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(data, separators=(",", ":"), default=encode_record)
    return text


def ok_result(data: Any) -> dict[str, Any]:
    """The result as JSON text and as the same data parsed back: the encoder and the C decoder walk a
    board of 60 tasks in a fraction of the time the Python walk (jsonable.to_jsonable) took.

    It is the CallToolResult's wire form (a dict, which the SDK takes from a handler as it is), not the
    model: building the model and dumping it again walked the result twice more before the SDK checks
    it against the protocol's surface (a board of 60 tasks is 27 KB, twice)."""
    text = encode(data)
    data = json.loads(text)
    if not isinstance(data, dict):  # every operation returns an object; a bare value would break the output schema
        raise TypeError(f"a tool returned {type(data).__name__}, not an object")
    # what CallToolResult(...).model_dump(by_alias=True, mode="json", exclude_none=True) gives; the SDK's
    # per-version surface drops what an older protocol version does not have (resultType)
    return {"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": False,
            "resultType": "complete"}


def encoded_result(data: Any) -> dict[str, Any]:
    """ok_result's wire dict for a handshake-era answer, with the JSON encoded once: the text, and
    structuredContent as the same text (transport.Encoded, spliced into the answer's line)."""
    from rooms_cli.mcp_server.transport import Encoded

    text = encode(data)
    if not text.startswith("{"):  # every operation returns an object; a bare value would break the output schema
        raise TypeError(f"a tool returned {type(data).__name__}, not an object")
    return {"content": [{"type": "text", "text": text}], "structuredContent": Encoded(text), "isError": False}


def argument_names(op: Operation, arguments: list[str]) -> dict[str, str]:
    """The tool argument each CLI flag an error message may name stands for: every argument under its own
    name as a flag (`--lease` -> lease), and for a declared operation every flag of a parameter the tool
    takes -> the tool's name for it (`--reply-to` -> n, `--next` -> next_step; operations/declare.py `mcp_names`)."""
    names = {"--" + argument.replace("_", "-"): argument for argument in arguments}
    if op.declared is not None:
        names.update(op.declared.mcp_names())
    return names


def speak_arguments(message: str, names: dict[str, str]) -> str:
    """`message` with the CLI flags it names (`--lease`) as the tool's argument names (`argument 'lease'`), where the tool has them."""
    import re

    def name(match: re.Match[str]) -> str:
        argument = names.get(match.group(0))
        return match.group(0) if argument is None else f"argument {argument!r}"

    return re.sub(r"(?<![\w-])--[a-z][a-z-]*", name, message)


def error_result(err: RoomsError, names: dict[str, str] | None = None) -> types.CallToolResult:
    """The CLI's --json error document, with its exit code, as an MCP tool error (flags named as the tool's
    arguments: `argument_names`)."""
    err = err.fold()
    if names:
        err.message = speak_arguments(err.message, names)
    doc = err.to_json()
    doc["error"]["exit_code"] = err.exit_code
    if doc["error"].get("data") is not None:
        doc["error"]["data"] = _jsonable(doc["error"]["data"])
    return types.CallToolResult(content=[types.TextContent(type="text", text=encode(doc))],
                                structured_content=doc, is_error=True)


def _unicode(value: Any) -> bool:
    """Whether every text in `value` (an argument: text, a number, a list, an object) is valid Unicode.
    JSON may escape a lone surrogate (\\ud800), which no UTF-8 file can hold."""
    if isinstance(value, str):
        if value.isascii():
            return True
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, list):
        return all(_unicode(item) for item in value)
    if isinstance(value, dict):
        return all(_unicode(key) and _unicode(item) for key, item in value.items())
    return True


def usage_message(name: str, exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "arguments"
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{name}: argument {where}: {first['msg'].removeprefix('Value error, ')}{more}"


def describe(op: Operation) -> types.Tool:
    """`op` as tools/list shows it: its input schema derived from its declaration, with its title and hints."""
    return types.Tool(
        name=op.name, title=op.title, description=op.description,
        input_schema=input_schema(input_model(op)), output_schema=op.returns,
        annotations=types.ToolAnnotations(title=op.title, read_only_hint=op.read_only,
                                          destructive_hint=op.destructive, idempotent_hint=op.idempotent,
                                          open_world_hint=False),
    )


def source_key() -> str:
    """What the tool listing is derived from: the versions of Python, pydantic and the SDK's types, and the
    identity (size, mtime…) of every module of rooms_cli (the tools' signatures, docstrings and shapes)."""
    import sys
    from pathlib import Path

    import pydantic

    from rooms_cli.store import cache, files

    package = Path(__file__).resolve().parent.parent  # rooms_cli/
    sources = sorted(f"{path}:{cache.identity(path)}" for path in files.every_file(package) if path.endswith(".py"))
    return json.dumps([sys.version, pydantic.VERSION, types.__file__, cache.identity(types.__file__), __version__, sources])


LISTING_VERSION = 1


def listing(project: Project) -> list[types.Tool]:
    """Every tool as tools/list shows it. Deriving the input schemas (a pydantic model per tool) costs
    more than the rest of a server's start, so the listing is kept in `.rooms/run/mcp-tools.json` under
    source_key() and derived again when any of that changed (or the copy is missing or damaged)."""
    from rooms_cli.store import cache, layout

    path, key = layout.mcp_tools_file(project), source_key()
    kept = cache.load(path, LISTING_VERSION)
    if kept is not None and kept.get("key") == key:
        try:
            return [types.Tool.model_validate(tool) for tool in kept["tools"]]
        except (KeyError, TypeError, ValidationError):
            pass
    tools = [describe(op) for op in TOOLS.values()]
    cache.save(path, {"version": LISTING_VERSION, "key": key,
                      "tools": [t.model_dump(mode="json", by_alias=True, exclude_unset=True) for t in tools]})
    return tools


class Tools:
    """The operations as MCP tools for one session: listing, argument checks, calls."""

    def __init__(self, session: Session):
        self.session = session
        self.listed = listing(session.project)
        self._models: dict[str, type[BaseModel]] = {}

    def model(self, name: str) -> type[BaseModel]:
        """The arguments' model of tool `name`, built on its first call (~2 ms each, 49 tools)."""
        if name not in self._models:
            self._models[name] = input_model(TOOLS[name])
        return self._models[name]

    def arguments(self, name: str, arguments: dict[str, Any] | None) -> BaseModel:
        """The validated arguments of a call; an unknown tool or argument is invalid params (MCPError)."""
        if name not in TOOLS:
            guess = closest(name, list(TOOLS))
            hint = f"; did you mean {guess!r}?" if guess else "; tools/list names them"
            raise invalid_params(f"no tool {name!r}{hint}", tool=name, did_you_mean=guess)
        model = self.model(name)
        arguments = arguments or {}
        valid = list(model.model_fields)
        for argument in arguments:
            if argument not in model.model_fields:
                guess = closest(argument, valid)
                hint = f"did you mean {guess!r}?" if guess else "it takes " + (", ".join(valid) or "no arguments")
                raise invalid_params(f"{name} has no argument {argument!r}; {hint}", tool=name, argument=argument,
                                     did_you_mean=guess, valid=valid)
            if not _unicode(arguments[argument]):
                raise UsageError(f"{name}: argument {argument!r} is not valid Unicode (it holds a lone surrogate, "
                                 "such as an escaped \\ud800); rooms takes text in UTF-8")
        return model.model_validate(arguments)

    def validated(self, name: str, given: dict[str, Any] | None) -> BaseModel | types.CallToolResult:
        """`arguments`, with a bad value as the tool error (code usage) a model reads and mends; an
        unknown tool or argument is raised (MCPError), as the SDK answers it."""
        try:
            return self.arguments(name, given)
        except ValidationError as exc:
            return error_result(UsageError(usage_message(name, exc)))
        except UsageError as exc:
            return error_result(exc)

    async def call(self, ctx: Any, params: types.CallToolRequestParams) -> Any:  # a CallToolResult or its wire dict
        """The SDK's tools/call handler: every call QuickCalls leaves to the SDK."""
        import anyio
        import anyio.to_thread

        arguments = self.validated(params.name, params.arguments)
        if isinstance(arguments, types.CallToolResult):
            return arguments
        op = TOOLS[params.name]
        run = functools.partial(op.fn, self.session, **dict(arguments))
        try:
            if op.long:
                data = await self._with_progress(ctx, run, getattr(arguments, "timeout_seconds", None))
            elif op.runs_inline(self.session, arguments):
                data = _one_operation(run)  # quick: a trip to a worker thread and back would cost more than its work
            else:
                data = await anyio.to_thread.run_sync(run)
            return ok_result(data)
        except Exception as exc:  # never let a tool's failure reach (and stop) the server
            return self.failed(op, exc)

    def failed(self, op: Operation, exc: Exception) -> types.CallToolResult:
        return error_result(as_rooms_error(exc), argument_names(op, list(self.model(op.name).model_fields)))

    def quick_answer(self, name: str, given: Any, version: str) -> dict[str, Any] | None:
        """The wire result (protocol `version`) of a call of tool `name` with arguments `given`, made here,
        when it is quick; None for any other call (the SDK's handler, `call`, then takes it). A failure
        to validate is the same error `call` gives (MCPError raised, or a tool error)."""
        op = TOOLS[name]
        arguments = self.validated(name, given)
        if isinstance(arguments, types.CallToolResult):
            return _wire(arguments, version)
        if op.long or not op.runs_inline(self.session, arguments):
            return None
        try:
            return encoded_result(_one_operation(functools.partial(op.fn, self.session, **dict(arguments))))
        except Exception as exc:  # never let a tool's failure reach (and stop) the server
            return _wire(self.failed(op, exc), version)

    @staticmethod
    async def _with_progress(ctx: Ctx, run: Callable[[], Any], total: float | None) -> Any:
        """Run `run` in a thread, reporting the seconds elapsed every PROGRESS_S while it runs."""
        import anyio
        import anyio.to_thread

        outcome: dict[str, Any] = {}
        started = time.monotonic()

        async def work() -> None:
            try:
                outcome["value"] = await anyio.to_thread.run_sync(run)
            except Exception as exc:  # carried out of the task group as it is
                outcome["error"] = exc
            tg.cancel_scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(work)
            while True:
                elapsed = round(time.monotonic() - started, 1)
                await ctx.session.report_progress(elapsed, total, f"waiting ({elapsed:g}s)")
                await anyio.sleep(PROGRESS_S)
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]


def _one_operation(run: Any) -> Any:
    """`run()`, a quick call, as one operation (store/paths.one_operation: each folder's symlink check once).
    Not a tool that runs a while (a wait, a model): its checks are made whole every time, as a CLI
    command's are, since a symlink may be planted while it runs."""
    from rooms_cli.store.paths import one_operation

    with one_operation():
        return run()


def _wire(result: types.CallToolResult, version: str) -> dict[str, Any]:
    """A tool error as the SDK puts it on the wire in `version` (dumped, then sieved by the version's surface)."""
    from mcp_types import methods

    return methods.serialize_server_result("tools/call", version, result.model_dump(by_alias=True, mode="json", exclude_none=True))


class QuickCalls:
    """The server's middleware (`Server.middleware`, inside the SDK's OpenTelemetry span) that answers
    the call of a quick tool itself, on a connection of the handshake era (initialize, then requests).

    The SDK's path for a call checks the request against the protocol's surface, validates its params
    into a model, calls the handler, then checks the result against the surface again and dumps it: for
    a board of 60 tasks, the 27 KB result is parsed back, checked and encoded twice more (~0.8 ms, a third
    of the call). Here the request gets the same surface check (`validate_client_request`, ~6 µs), the
    arguments the same model as `Tools.call`, and the result is encoded once (`encoded_result`). A call
    goes the SDK's way whenever anything is not plain: the 2026-07-28 era (its results carry resultType
    and the server's stamp), a connection not initialized yet, a version whose result surface would
    change this result, a request the surface refuses (the SDK words that error), an unknown tool, and
    every tool that is not quick (tools.py `quick`). The dispatcher still owns the request: its id, its
    cancellation, its answer's envelope."""

    def __init__(self, tools: Tools) -> None:
        self.tools = tools
        self.versions: dict[str, bool] = {}  # protocol version -> whether a call is answered here

    def serves(self, version: str) -> bool:
        """Whether `version` is of the handshake era and its result surface keeps a tool result as it is."""
        if version not in self.versions:
            from mcp_types import methods
            from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

            sample = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}, "isError": False}
            try:
                kept = methods.serialize_server_result("tools/call", version, dict(sample)) == sample
            except (KeyError, ValidationError):
                kept = False
            self.versions[version] = version in HANDSHAKE_PROTOCOL_VERSIONS and kept
        return self.versions[version]

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params
        name = params.get("name") if ctx.method == "tools/call" and params is not None else None
        if isinstance(name, str) and name in TOOLS and TOOLS[name].quick is not False \
                and self.serves(ctx.protocol_version) and ctx.session.client_params is not None:
            from mcp_types import methods

            try:
                methods.validate_client_request("tools/call", ctx.protocol_version, params)
            except (KeyError, ValidationError):
                return await call_next(ctx)
            answer = self.tools.quick_answer(name, params.get("arguments"), ctx.protocol_version)
            if answer is not None:
                return answer
        return await call_next(ctx)


def build_server(session: Session) -> Server:
    """A low-level server offering every operation of tools.py, and the resources and prompts of
    resources.py, to `session`."""
    import anyio.to_thread

    from rooms_cli.mcp_server import resources

    tools = Tools(session)

    async def list_tools(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools.listed)

    async def list_resources(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=resources.list_resources(session))

    async def list_templates(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=resources.list_templates())

    async def read_resource(ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            mime, text = await anyio.to_thread.run_sync(resources.read_resource, session, uri)
        except RoomsError as exc:
            code = resources.RESOURCE_NOT_FOUND if exc.code == "not_found" else types.INVALID_PARAMS
            raise MCPError(code, f"{uri}: {exc.fold().message}", {"uri": uri, "code": exc.code}) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)])

    async def list_prompts(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=resources.list_prompts())

    async def get_prompt(ctx: Ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        try:
            return resources.get_prompt(session, params.name, params.arguments)
        except RoomsError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.fold().message) from None

    server = Server("rooms", version=__version__,
                    instructions=INSTRUCTIONS.format(me=session.me, root=session.project.root),
                    on_list_tools=list_tools, on_call_tool=tools.call, on_list_resources=list_resources,
                    on_list_resource_templates=list_templates, on_read_resource=read_resource,
                    on_list_prompts=list_prompts, on_get_prompt=get_prompt)
    server.middleware.append(QuickCalls(tools))  # innermost: the SDK's OpenTelemetry span still wraps each call
    return server


def serve(dir: str | None, as_: str | None) -> None:
    """Run the stdio server for the project at `dir` (or found upwards), acting as `as_` (or ROOMS_AGENT…)."""
    import anyio

    from rooms_cli.mcp_server.transport import stdio
    from rooms_cli.project.context import Context

    ctx = Context.open(dir, as_=as_)
    session = Session(project=ctx.project, config=ctx.config, me=ctx.me, default_room=ctx.room)
    server = build_server(session)

    async def main() -> None:
        async with stdio() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
