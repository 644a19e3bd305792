"""One declaration per operation: its words, its parameters, its body, its MCP tool.

An operation is declared once, as plain data beside the function that does it:

    @operation("task", "claim", shared=AS_ROOM, params=(TASK_ID, LEASE, LEASE_ID, SYNC),
               mcp=Mcp("task_claim", "Claim a task", CLAIM, description="..."))
    def task_claim(ctx: Context, task_id: str, lease: float | None, lease_id: str | None, sync: bool) -> Claim:
        '''Atomically move a task todo → doing under a lease... (the command's help)'''
        return claim_task(ctx.project, ctx.room, task_id, ...)

The body takes the Context (project/context.py: project, identity, room, config) and every parameter
by name, and returns its result as data: a record with `to_json`, a dict, a list, or None. It prints
nothing. The three adapters derive everything else from the declaration:

- the command line (cli/): the fast path's parse (cli/fast.py) and the typer command (cli/shared.py
  `declared_command`) read the same flags, kinds, environment variables, defaults and value parsers;
  the CLI prints the result as `--json` or renders it for a person (cli/views.py);
- the MCP server (mcp_server/tools.py): the tool's input schema comes from the same parameters (an
  `McpArg` where the tool differs, `mcp=False` / `cli=False` where only one side has a parameter), its
  values go through the same parsers, and the result is the tool's JSON;
- `rooms top` (tui/) calls `Operation.call(ctx, **values)`.

Each side gives the body every parameter: one it does not take has its declared default (an McpArg's
default over MCP). A `view=True` parameter only changes how the CLI shows the result (`board --format md`):
the CLI view takes it, not the body. The body's parameters are checked against the declaration when the
module is imported, so adding an option is one `Param` and one parameter of the body, in one file.

This module imports nothing: the fast path imports it on every command (no typing, dataclasses,
inspect or typer: docs/performance.md).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.project.context import Context

    Parser = Callable[[Any], Any]  # a value parser of operations/values.py
    Body = Callable[..., Any]  # an operation's function: (ctx, **values) -> its result
    Quick = Callable[[Context, dict[str, Any]], bool]  # whether a call with these values is quick


class _Required:
    """The default of a parameter that must be given."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()

# what a value is: how typer annotates it, how MCP types it, how the fast path reads it (a duration is
# seconds on the command line, through its parser, and a string checked by the same parser over MCP)
KINDS = ("str", "int", "float", "bool", "strs", "datetime", "duration")


class _Same:
    def __repr__(self) -> str:
        return "SAME"


SAME = _Same()  # an McpArg field left as the command line has it


class McpArg:
    """How the MCP tool takes a parameter where it differs from the command line: its name, its
    description, its default, its kind, bounds on a number, and the strings it may be (an enum);
    `min_length`/`max_length` bound a list's items or a string's characters. Its kind may also be
    "int_or_str", a number or a string (a message's number or its id over MCP; a string on the command line),
    or "optional_strs", a list of strings any of which may be null (group_spawn's handles: one per profile, null
    for the default)."""

    __slots__ = ("name", "help", "default", "kind", "ge", "le", "choices", "min_length", "max_length")

    def __init__(self, name: str | None = None, help: str | None = None, default: object = SAME, kind: str | None = None,
                 ge: float | None = None, le: float | None = None, choices: tuple[str, ...] | None = None,
                 min_length: int | None = None, max_length: int | None = None) -> None:
        self.name, self.help, self.default, self.kind, self.ge, self.le = name, help, default, kind, ge, le
        self.choices = choices
        self.min_length, self.max_length = min_length, max_length


class Param:
    """One argument (no flags) or option of an operation.

    `parse` makes the value parser of operations/values.py from the option's first flag (`duration_value`);
    `complete` names the tab completion (agents, rooms); `min` is click's lower bound of an int;
    `cli=False`: only the MCP tool takes it; `mcp=False`: only the command line; an `McpArg`: the
    MCP tool takes it otherwise; `view=True`: it changes how the CLI shows the result, so the CLI's
    view takes it, not the body (and the MCP tool does not)."""

    __slots__ = ("name", "kind", "default", "help", "flags", "envvar", "parse", "metavar", "show_default", "complete",
                 "min", "cli", "mcp", "view")

    def __init__(self, name: str, kind: str = "str", default: object = REQUIRED, help: str | None = None,
                 flags: tuple[str, ...] = (), *, envvar: str | None = None, parse: Callable[[str], Parser] | None = None,
                 metavar: str | None = None, show_default: bool = True, complete: str | None = None, min: int | None = None,
                 cli: bool = True, mcp: bool | McpArg = True, view: bool = False) -> None:
        if kind not in KINDS:
            raise ValueError(f"{name}: kind {kind!r} is not one of {', '.join(KINDS)}")
        self.name, self.kind, self.default, self.help, self.flags = name, kind, default, help, flags
        self.envvar, self.parse, self.metavar, self.show_default = envvar, parse, metavar, show_default
        self.complete, self.min, self.cli, self.view = complete, min, cli, view
        self.mcp: bool | McpArg = False if view else mcp

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def argument(self) -> bool:
        """A positional argument (it has no flags)."""
        return not self.flags

    def parser(self) -> Parser | None:
        """The value parser for this option (operations/values.py), or None."""
        return None if self.parse is None else self.parse(self.flags[0] if self.flags else self.name.upper())

    @property
    def mcp_name(self) -> str | None:
        """The name the MCP tool takes it by (None: the tool does not take it)."""
        if self.mcp is False:
            return None
        return (self.mcp.name if isinstance(self.mcp, McpArg) else None) or self.name

    @property
    def mcp_default(self) -> object:
        """Its default over MCP: the McpArg's where it says one, else the command line's."""
        if isinstance(self.mcp, McpArg) and self.mcp.default is not SAME:
            return self.mcp.default
        return self.default

    def replace(self, **changes: Any) -> Param:
        """This parameter with some fields changed (the same option declared with another help text)."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        name, kind, default, help, flags = (fields.pop(k) for k in ("name", "kind", "default", "help", "flags"))
        return Param(name, kind, default, help, flags, **fields)


class Mcp:
    """The MCP tool of an operation: its name, title, the JSON Schema of its result, its description
    (a model reads it; the command's help is written for a person), and its hints.

    `quick`: the call works on the project's files alone (no model, process, network or wait but for a
    file lock), so the server runs it on its event loop; a function of (ctx, values) when some values
    make it slow. A tool's result is an object: `empty` is the result when the body returns None, and
    `listed_as` the name a list result is returned under (in the list envelope). `problem_fails`: a
    result whose `problem()` is set (a gather that timed out) is the tool's error, the result attached.
    `long`: it blocks a while (wait, gather) and reports progress."""

    __slots__ = ("name", "title", "returns", "description", "read_only", "destructive", "idempotent", "long", "quick", "empty",
                 "listed_as", "problem_fails")

    def __init__(self, name: str, title: str, returns: dict[str, Any], *, description: str, read_only: bool = False,
                 destructive: bool = False, idempotent: bool = False, long: bool = False, quick: bool | Quick = False,
                 empty: dict[str, Any] | None = None, listed_as: str | None = None, problem_fails: bool = False) -> None:
        self.name, self.title, self.returns, self.description = name, title, returns, description
        self.read_only, self.destructive, self.idempotent, self.long = read_only, destructive, idempotent or read_only, long
        self.quick, self.empty, self.listed_as, self.problem_fails = quick, empty, listed_as, problem_fails


# the options every command may share: parameter name -> its flags and kind (the CLI's: cli/options.py
# has their help and completion); `room` is also the MCP tool's argument when an operation takes it
SHARED = {"as_": (("--as",), "str"), "room": (("--room", "-r"), "str"), "dir": (("--dir",), "str"),
          "json_": (("--json",), "bool")}


def _shared_name(what: str) -> Callable[[str], Parser]:
    def factory(flag: str) -> Parser:
        from rooms_cli.operations.values import name_value  # not on import: this module imports nothing

        return name_value(flag, what)

    return factory


# a bad --as is a bad option value (exit 2), on the fast path as in typer (cli/options.py); --room is checked
# where it is read (cli/shared.Run.room): `transcript --room rt-…` takes a roundtable's id too
SHARED_PARSE = {"as_": _shared_name("identity")}
ROOM_MCP_HELP = "Room id (default: the server's current room)."


def _arguments_of(body: Body) -> list[str]:
    """The names of the body's parameters after the context (read from its code: no inspect at import)."""
    code = body.__code__
    return list(code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount])


class Operation:
    """An operation: the words that run it, its own parameters, the shared options it takes, the
    function that does it (`body(ctx, **values)`, returning the result), the help (the body's
    docstring), and its MCP tool. `nonblank` names arguments the fast path hands to typer when blank
    (typer says what is wrong)."""

    __slots__ = ("words", "body", "params", "shared", "help", "mcp", "nonblank", "_options")

    def __init__(self, words: tuple[str, ...], body: Body, params: tuple[Param, ...] = (), shared: tuple[str, ...] = (),
                 mcp: Mcp | None = None, nonblank: tuple[str, ...] = ()) -> None:
        name = " ".join(words)
        unknown = [option for option in shared if option not in SHARED]
        if unknown:
            raise ValueError(f"{name}: no shared option {', '.join(unknown)}")
        taken = [p.name for p in params if not p.view]
        if _arguments_of(body) != taken:  # a parameter the body lacks fails here, at import, not at a call
            raise TypeError(f"{name}: {body.__name__} takes ({', '.join(_arguments_of(body))}) after the context; "
                            f"the declaration gives ({', '.join(taken)})")
        self.words, self.body, self.params, self.mcp, self.nonblank = words, body, params, mcp, nonblank
        self.shared = tuple(option for option in SHARED if option in shared)  # in the order the CLI adds them
        self.help = body.__doc__
        self._options: dict[str, Param] | None = None

    @property
    def name(self) -> str:
        return " ".join(self.words)

    def cli_params(self) -> list[Param]:
        """The command line's parameters in typer's order: its own, then the shared options."""
        own = [p for p in self.params if p.cli]
        return own + [Param(name, SHARED[name][1], False if name == "json_" else None, flags=SHARED[name][0],
                            parse=SHARED_PARSE.get(name)) for name in self.shared]

    def options(self) -> dict[str, Param]:
        """Every flag of the command line -> its parameter."""
        if self._options is None:
            self._options = {flag: p for p in self.cli_params() for flag in p.flags}
        return self._options

    def arguments(self) -> list[Param]:
        return [p for p in self.params if p.cli and p.argument]

    def defaults(self) -> dict[str, object]:
        """The command line's values when nothing is given (the shared options are the context's)."""
        return {p.name: p.default for p in self.params if p.cli and not p.required}

    def body_values(self, values: dict[str, Any], *, mcp: bool = False) -> dict[str, Any]:
        """`values` (by parameter name) for the body: the view's left out, every parameter the body takes
        and the values lack given its default (over MCP, its MCP default)."""
        given: dict[str, Any] = {}
        for p in self.params:
            if p.view:
                continue
            if p.name in values:
                given[p.name] = values[p.name]
            else:
                default = p.mcp_default if mcp else p.default
                if default is REQUIRED:
                    raise TypeError(f"{self.name}: {p.name} is required")
                given[p.name] = default
        return given

    def call(self, ctx: Context, **values: Any) -> Any:
        """Run the body in `ctx` with `values` (parsed already), the declared defaults for the rest; its result."""
        return self.body(ctx, **self.body_values(values))

    def mcp_names(self) -> dict[str, str]:
        """Every long flag of a parameter the MCP tool takes -> the tool's name for it (`--next` -> next_step):
        an error that names the flag names the argument over MCP (mcp_server/server.py)."""
        return {flag: name for p in self.params if (name := p.mcp_name) for flag in p.flags if flag.startswith("--")}

    def tool(self, mcp: Mcp, **takes: McpArg) -> Operation:
        """Another MCP tool of this operation: the same command line and body, the tool taking only the
        parameters named, in that order, each as its McpArg says (`reply` is `send --reply-to N MESSAGE`)."""
        unknown = [name for name in takes if name not in {p.name for p in self.params}]
        if unknown:
            raise ValueError(f"{self.name}: no parameter {', '.join(unknown)}")
        params = tuple(p.replace(mcp=takes[p.name]) if p.name in takes else p.replace(mcp=False) for p in self.params)
        twin = Operation(self.words, self.body, params, self.shared, mcp, self.nonblank)
        order = list(takes)
        twin.params = tuple(sorted(params, key=lambda p: order.index(p.name) if p.name in takes else len(order)))
        return twin


def operation(*words: str, params: tuple[Param, ...] = (), shared: tuple[str, ...] = (), mcp: Mcp | None = None,
              nonblank: tuple[str, ...] = ()) -> Callable[[Body], Operation]:
    """Declare the decorated body as the operation `rooms <words>`; the name is bound to the Operation."""

    def declare(body: Body) -> Operation:
        return Operation(words, body, params, shared, mcp, nonblank)

    return declare
