"""`inspect` imported for free until used, for the fast commands' processes (Python 3.11)."""

from __future__ import annotations

import _thread
import sys
import types


class _Deferred(types.ModuleType):
    """A module in sys.modules whose code runs on the first read of a name it does not have yet.

    Not importlib's LazyLoader: on 3.11 its module runs its code on *any* attribute read, and every
    `import inspect` statement reads `__spec__`, so dataclasses' own import would run it at once."""

    def __getattr__(self, name: str):
        with _DEFERRED_LOCK:  # a second thread waits for the whole module, as an import would
            if self.__name__ not in _STARTED:  # a cycle back into the module sees it partial, as in an import
                _STARTED.add(self.__name__)
                self.__spec__.loader.exec_module(self)  # type: ignore[union-attr]
                self.__class__ = types.ModuleType  # type: ignore[assignment]  # a plain module from now on
        return types.ModuleType.__getattribute__(self, name)


_DEFERRED_LOCK = _thread.RLock()
_STARTED: set[str] = set()


def defer_inspect() -> None:
    """Let `import inspect` be free until one of its names is used (Python 3.11).

    Called by the console script (cli/fast.py) when it runs a fast command, before anything else is
    imported: the process is ours, so this changes nothing for a program that imports rooms_cli as a
    library. Every record here is a dataclass, and `dataclasses` imports inspect (~7 ms a process: ast, dis,
    tokenize, linecache) for one thing only: to write a signature into a dataclass that has no
    docstring. Ours all have one, so `rooms task next` never used inspect and paid for it on every
    claim. So inspect goes into sys.modules unexecuted, and runs in full when one of its names is
    first read (typer's path reads them at once; nothing changes for it).
    Python 3.12 reads every dataclass's annotations through inspect, so there it is imported as usual.
    The other way, hand-written record classes, would be ~15 dataclasses rewritten by hand (init, eq,
    repr, asdict, defaults) against one mechanism here; tests/test_domain_imports.py checks it holds.
    """
    if sys.version_info >= (3, 12) or "inspect" in sys.modules:
        return
    import importlib.util

    spec = importlib.util.find_spec("inspect")
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _Deferred
    sys.modules["inspect"] = module
