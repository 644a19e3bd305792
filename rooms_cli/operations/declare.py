"""One declaration per operation: its words, its parameters, the function that does it, its MCP tool.

An operation agents call in loops is declared once, as plain data (operations/hot.py):

    @operation("task", "claim", shared=AS_ROOM, params=(TASK_ID, LEASE, CLAIM_LEASE_ID, SYNC),
               mcp=Mcp("task_claim", "Claim a task", CLAIM))
    def task_claim(run, task_id, lease, lease_id, sync): ...

and everything else is derived from that declaration:

- the typer command (`shared.declared_command`): its signature carries the typer.Option/Argument
  of each parameter (cli/options.py `annotation`), so help, completion and messages are typer's;
- the fast path's table (cli/fast.py): flags, kinds, environment variables, defaults and value
  parsers come from here, so a command line parsed without typer means what it means to typer;
- the MCP tool's input schema (mcp_server/tools.py `declared`): a parameter's MCP name, description,
  default and kind where they differ from the CLI (`McpArg`), a parameter the tool lacks (`mcp=False`)
  or only the tool has (`cli=False`).

Adding an option is one `Param` in the operation's `params`. This module imports nothing: the fast
path imports it on every command (no typing, dataclasses, inspect or typer: docs/performance.md).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Parser = Callable[[Any], Any]  # a value parser of operations/values.py
    Body = Callable[..., None]  # an operation's function: (run, **values)


class _Required:
    """The default of a parameter that must be given."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()

# what a value is: how typer annotates it, how MCP types it, how the fast path reads it (a duration is
# seconds on the command line, through its parser, and a string checked as a duration over MCP)
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
                 min_length: int | None = None, max_length: int | None = None):
        self.name, self.help, self.default, self.kind, self.ge, self.le = name, help, default, kind, ge, le
        self.choices = choices
        self.min_length, self.max_length = min_length, max_length


class Param:
    """One argument (no flags) or option of an operation.

    `parse` makes the value parser of operations/values.py from the option's first flag (`duration_value`);
    `complete` names the tab completion (agents, rooms); `min` is click's lower bound of an int;
    `cli=False`: only the MCP tool takes it; `mcp=False`: only the command line; an `McpArg`: the
    MCP tool takes it otherwise."""

    __slots__ = ("name", "kind", "default", "help", "flags", "envvar", "parse", "metavar", "show_default", "complete",
                 "min", "cli", "mcp")

    def __init__(self, name: str, kind: str = "str", default: object = REQUIRED, help: str | None = None,
                 flags: tuple[str, ...] = (), *, envvar: str | None = None, parse: Callable[[str], Parser] | None = None,
                 metavar: str | None = None,
                 show_default: bool = True, complete: str | None = None, min: int | None = None, cli: bool = True,
                 mcp: bool | McpArg = True):
        if kind not in KINDS:
            raise ValueError(f"{name}: kind {kind!r} is not one of {', '.join(KINDS)}")
        self.name, self.kind, self.default, self.help, self.flags = name, kind, default, help, flags
        self.envvar, self.parse, self.metavar, self.show_default = envvar, parse, metavar, show_default
        self.complete, self.min, self.cli, self.mcp = complete, min, cli, mcp

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

    def replace(self, **changes: Any) -> Param:
        """This parameter with some fields changed (the same option declared with another help text)."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        name, kind, default, help, flags = (fields.pop(k) for k in ("name", "kind", "default", "help", "flags"))
        return Param(name, kind, default, help, flags, **fields)


class Mcp:
    """The MCP tool of an operation: its name, title, the JSON Schema of its result, and its hints."""

    __slots__ = ("name", "title", "returns", "read_only", "destructive", "idempotent", "long")

    def __init__(self, name: str, title: str, returns: dict[str, Any], *, read_only: bool = False, destructive: bool = False,
                 idempotent: bool = False, long: bool = False):
        self.name, self.title, self.returns = name, title, returns
        self.read_only, self.destructive, self.idempotent, self.long = read_only, destructive, idempotent or read_only, long


# the options every command may share (cli/shared.py): parameter name -> its flags and kind; their help
# and completion are typer's, in cli/options.py
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


class Operation:
    """An operation: the words that run it, its own parameters, the shared options it takes, the
    function that does it (`body(run, **values)`), the help (the body's docstring), and its MCP tool.

    `cli` is what typer calls when the command line allows more than the body takes (chat with no
    message reads stdin or opens chat mode); `nonblank` names arguments the fast path hands to typer
    when blank (typer says what is wrong)."""

    __slots__ = ("words", "body", "params", "shared", "help", "cli", "mcp", "nonblank", "_options")

    def __init__(self, words: tuple[str, ...], body: Body, params: tuple[Param, ...] = (), shared: tuple[str, ...] = (),
                 mcp: Mcp | None = None, cli: Body | None = None, nonblank: tuple[str, ...] = ()):
        unknown = [name for name in shared if name not in SHARED]
        if unknown:
            raise ValueError(f"{' '.join(words)}: no shared option {', '.join(unknown)}")
        self.words, self.body, self.params, self.mcp, self.nonblank = words, body, params, mcp, nonblank
        self.shared = tuple(name for name in SHARED if name in shared)  # in the order @shared adds them
        self.help = body.__doc__
        self.cli = cli or body
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
        """The body's values when nothing is given (the shared options are the Run's)."""
        return {p.name: p.default for p in self.params if p.cli and not p.required}

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
        taken = tuple(p.replace(mcp=takes[name]) for name in takes for p in self.params if p.name == name)
        rest = tuple(p.replace(mcp=False) for p in self.params if p.name not in takes)
        return Operation(self.words, self.body, taken + rest, self.shared, mcp, self.cli, self.nonblank)


def operation(*words: str, params: tuple[Param, ...] = (), shared: tuple[str, ...] = (), mcp: Mcp | None = None,
              cli: Body | None = None, nonblank: tuple[str, ...] = ()) -> Callable[[Body], Operation]:
    """Declare the decorated body as the operation `rooms <words>`; the name is bound to the Operation."""

    def declare(body: Body) -> Operation:
        return Operation(words, body, params, shared, mcp, cli, nonblank)

    return declare
