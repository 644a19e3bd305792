"""The `@dataclass` of the records the commands agents loop on, without importing `inspect`.

The standard library's `dataclasses` imports `inspect` (with ast, dis, tokenize, linecache: ~6 ms of a
~20 ms `python -c pass`, 11–20 ms of CPU a process on a loaded machine) for one thing: to write a
docstring for a dataclass that has none. Ours all have one (tests/test_architecture.py). So the
records on the hot paths (`task next|claim`, `board`, `send`, `inbox`: store, board, messaging,
config, context) are declared with this `dataclass`, which builds the same `__init__`, `__repr__`,
`__eq__` (and `__hash__` and read-only attributes when frozen) from the class's annotations, and
`field(default_factory=…, repr=False)`; `asdict` copies a record into dicts. It does what those
records use and no more: no ordering, slots, kw_only, InitVar or __post_init__ (a record needing one
uses `dataclasses`). mypy reads the standard library's declarations (below), so the records are
type-checked as dataclasses.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name

if TYPE_CHECKING:
    from dataclasses import FrozenInstanceError as FrozenInstanceError
    from dataclasses import asdict as asdict
    from dataclasses import dataclass as dataclass
    from dataclasses import field as field
else:

    class _Missing:
        def __repr__(self) -> str:
            return "MISSING"

    _MISSING = _Missing()

    class _Field:
        """A field's default, default factory and whether repr shows it (dataclasses.field's subset)."""

        __slots__ = ("name", "default", "default_factory", "repr", "init")

        def __init__(self, default=_MISSING, default_factory=_MISSING, repr=True):
            if default is not _MISSING and default_factory is not _MISSING:
                raise ValueError("cannot specify both default and default_factory")
            self.name, self.default, self.default_factory, self.repr = "", default, default_factory, repr
            self.init = True  # every field is a parameter of __init__ (read by tools that list a dataclass's fields: hypothesis's printer)


    def field(*, default=_MISSING, default_factory=_MISSING, repr=True):
        """A field with a default (or a factory making one per instance) and whether repr shows it."""
        return _Field(default, default_factory, repr)

    class FrozenInstanceError(AttributeError):
        """Assigning to a field of a frozen record (dataclasses.FrozenInstanceError's twin)."""

    def dataclass(cls=None, /, *, frozen=False):
        """Make `cls` a record of its annotated fields: __init__, __repr__, __eq__ (frozen: __hash__ and
        no assignment), as `dataclasses.dataclass` would."""

        def wrap(cls):
            return _process(cls, frozen)

        return wrap if cls is None else wrap(cls)

    def _fields_of(cls) -> list:
        fields = {f.name: f for base in reversed(cls.__mro__[1:]) for f in getattr(base, "__record_fields__", ())}
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            value = cls.__dict__.get(name, _MISSING)
            made = value if isinstance(value, _Field) else _Field(default=value)
            made.name = name
            if isinstance(value, _Field):
                if made.default is _MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, made.default)
            fields[name] = made
        return list(fields.values())

    def _init(cls, fields, frozen):
        """The generated __init__: each field in order, defaults and factories as dataclasses give them."""
        namespace = {"_FACTORY": _MISSING, "_set": object.__setattr__}
        params, body = ["self"], []
        seen_default = False
        for f in fields:
            if f.default is not _MISSING:
                namespace[f"_d_{f.name}"] = f.default
                params.append(f"{f.name}=_d_{f.name}")
                value = f.name
            elif f.default_factory is not _MISSING:
                namespace[f"_f_{f.name}"] = f.default_factory
                params.append(f"{f.name}=_FACTORY")
                value = f"_f_{f.name}() if {f.name} is _FACTORY else {f.name}"
            else:
                if seen_default:
                    raise TypeError(f"non-default argument {f.name!r} follows default argument")
                params.append(f.name)
                value = f.name
            seen_default = seen_default or f.default is not _MISSING or f.default_factory is not _MISSING
            body.append(f"_set(self, {f.name!r}, {value})" if frozen else f"self.{f.name} = {value}")
        source = f"def __init__({', '.join(params)}):\n    " + ("\n    ".join(body) or "pass")
        exec(source, namespace)  # noqa: S102 - the code is built from the class's own field names, as dataclasses does
        init = namespace["__init__"]
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        return init

    def _process(cls, frozen):
        fields = _fields_of(cls)
        names = tuple(f.name for f in fields)
        shown = tuple(f.name for f in fields if f.repr)
        cls.__record_fields__ = tuple(fields)
        cls.__dataclass_fields__ = {f.name: f for f in fields}  # the field names, where a reader lists them
        cls.__match_args__ = names

        def __repr__(self):
            return f"{type(self).__qualname__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")"

        def __eq__(self, other):
            if other.__class__ is not self.__class__:
                return NotImplemented
            return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

        made = {"__init__": _init(cls, fields, frozen), "__repr__": __repr__, "__eq__": __eq__}
        for name, method in made.items():
            if name not in cls.__dict__:
                method.__qualname__ = f"{cls.__qualname__}.{name}"
                setattr(cls, name, method)
        if frozen:
            def __hash__(self):
                return hash(tuple(getattr(self, n) for n in names))

            def __setattr__(self, name, value):
                if type(self) is cls or name in names:
                    raise FrozenInstanceError(f"cannot assign to field {name!r}")
                super(cls, self).__setattr__(name, value)

            def __delattr__(self, name):
                if type(self) is cls or name in names:
                    raise FrozenInstanceError(f"cannot delete field {name!r}")
                super(cls, self).__delattr__(name)

            cls.__hash__, cls.__setattr__, cls.__delattr__ = __hash__, __setattr__, __delattr__
        elif "__hash__" not in cls.__dict__:
            cls.__hash__ = None  # mutable and compared by value: unhashable, as a dataclass
        return cls

    def asdict(obj):
        """A record as a dict, records, lists, tuples and dicts inside it copied likewise (dataclasses.asdict)."""

        def convert(value):
            if hasattr(type(value), "__record_fields__"):
                return {f.name: convert(getattr(value, f.name)) for f in type(value).__record_fields__}
            if isinstance(value, (list, tuple)):
                return type(value)(convert(v) for v in value)
            if isinstance(value, dict):
                return type(value)((convert(k), convert(v)) for k, v in value.items())
            if value is None or isinstance(value, (str, int, float)):  # immutable: nothing to copy
                return value
            import copy  # only for other values: copy imports weakref, which keeps a command from its fast exit (cli/fast.py)

            return copy.deepcopy(value)


        return convert(obj)
