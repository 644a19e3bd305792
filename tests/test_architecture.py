"""The architecture, checked: arrows point down, no import cycles, every registered part resolves.

The import graph is read from the source with `ast`, so an import inside a function counts as much
as one at the top of a file (a cycle hidden in a function is still a cycle).
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rooms_cli"
PARTS = ("chat", "board", "roundtable", "groups", "messaging", "watch", "search")


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """The syntax tree of `path`, parsed once for the whole run (the tests only read it)."""
    return ast.parse(path.read_text("utf-8"))


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """module -> the rooms_cli modules it imports anywhere in its file (functions included); built once."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                for alias in node.names:
                    sub = f"{module}.{alias.name}"
                    targets.add(sub if sub in modules else module)
        # the package root re-exports the group API; importing it is its own rule (below). A module importing
        # its own package's __init__ counts like any other arrow (rooms_cli.tui.app -> rooms_cli.tui was a circle).
        graph[name] = frozenset(t for t in targets if t in modules and t != name and t != "rooms_cli")
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _part(module: str) -> str | None:
    bits = module.split(".")
    return bits[1] if len(bits) >= 2 and bits[1] in PARTS else None


def test_no_import_cycles_even_through_imports_inside_functions():
    assert _cycles(import_graph()) == []


def test_no_cycles_between_parts_either():
    """Two parts may depend one way (board on chat), never both ways: that is what moves below both."""
    graph = import_graph()
    parts: dict[str, set[str]] = {f"rooms_cli.{p}": set() for p in PARTS}
    for module, targets in graph.items():
        for target in targets:
            if _part(module) and _part(target) and _part(module) != _part(target):
                parts[f"rooms_cli.{_part(module)}"].add(f"rooms_cli.{_part(target)}")
    assert _cycles(parts) == []


def test_no_module_outside_the_cli_imports_the_cli():
    """The CLI, the MCP server and `rooms top` are three adapters over rooms_cli/operations/: the operations
    return data and print nothing, and the MCP server and the dashboard run them without the CLI."""
    outside = ("rooms_cli.cli", "rooms_cli.__main__")
    bad = [(m, t) for m, ts in import_graph().items() if not m.startswith(outside) for t in ts if t.startswith("rooms_cli.cli")]
    assert bad == []


def test_the_mcp_server_and_the_dashboard_import_no_other_adapter():
    """`rooms mcp` and `rooms top` are started by their CLI commands (the one arrow from the CLI to each);
    neither imports the CLI or the other."""
    adapters = ("rooms_cli.cli", "rooms_cli.mcp_server", "rooms_cli.tui")
    bad = [(m, t) for m, ts in import_graph().items() for t in ts
           if m.startswith(adapters[1:]) and t.startswith(adapters) and t.split(".")[1] != m.split(".")[1]]
    assert bad == []


def test_no_module_imports_another_project_s_private_module():
    """`typer._click`, `watchfiles._rust_notify`, `mcp.shared._context_streams`: another project's private
    module may change in any release. We take their public interface only (no pin held for an internal)."""
    offenders = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            offenders += [f"{name}: {m}" for m in modules if not m.startswith("rooms_cli")
                          and m.split(".")[0] not in sys.stdlib_module_names  # the standard library's _thread is documented
                          and any(part.startswith("_") and not part.startswith("__") for part in m.split("."))]
    assert offenders == []


def test_the_package_root_holds_only_packages():
    """A newcomer reads the layers off the folder listing: the root holds the packages, `__init__.py`
    (the group API) and `__main__.py`; every module lives in the package of what it serves."""
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "__main__.py"]


def test_parts_never_import_the_commands_that_aggregate_them():
    """doctor, tick and demo call into the parts; a part importing them is an arrow running back up."""
    top = {"rooms_cli.across.doctor", "rooms_cli.across.tick", "rooms_cli.across.demo", "rooms_cli.across.registry",
           "rooms_cli.agents.providers"}  # (chat reads across/prompt_sections.py: a table, not a command)
    bad = [(m, t) for m, ts in import_graph().items() if _part(m) for t in ts if t in top]
    assert bad == []


def test_store_and_models_never_import_a_part():
    bad = [(m, t) for m, ts in import_graph().items()
           if m.startswith(("rooms_cli.store", "rooms_cli.models")) for t in ts if _part(t)]
    assert bad == []


def test_store_and_models_import_nothing_above_them():
    # beside the store: the shared vocabulary (core/) and the project's configuration
    allowed = ("rooms_cli.store", "rooms_cli.core", "rooms_cli.models", "rooms_cli.project.config")
    bad = [(m, t) for m, ts in import_graph().items()
           if m.startswith(("rooms_cli.store", "rooms_cli.models")) for t in ts if not t.startswith(allowed)]
    assert bad == []


def test_nothing_in_the_package_imports_the_package_root():
    """`rooms_cli/__init__.py` re-exports the group API, so it sits above every part: a module importing
    it (`import rooms_cli`, `from rooms_cli import spawn_group`) is an arrow running back up. A module
    of the package is imported by its own name (`from rooms_cli import terminal`); only the version,
    a constant, may be read from the root."""
    modules = _modules()
    offenders = []
    for name, path in modules.items():
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.Import):
                offenders += [f"{name}: import {a.name}" for a in node.names if a.name == "rooms_cli"]
            elif isinstance(node, ast.ImportFrom) and node.module == "rooms_cli" and not node.level:
                offenders += [f"{name}: from rooms_cli import {a.name}" for a in node.names
                              if f"rooms_cli.{a.name}" not in modules and a.name != "__version__"]
    assert offenders == []


def test_the_text_utilities_are_a_leaf():
    """Chat, the roundtable and the offline model share rooms_cli/core/text.py; it imports none of them."""
    assert import_graph()["rooms_cli.core.text"] == set()


def test_the_shared_vocabulary_imports_nothing_above_the_store():
    """Every layer may import core/ (errors, records, shapes, text, terminal), so it imports only itself and the store."""
    bad = [(m, t) for m, ts in import_graph().items() if m.startswith("rooms_cli.core")
           for t in ts if not t.startswith(("rooms_cli.core", "rooms_cli.store"))]
    assert bad == []


def test_only_the_sync_runs_git():
    """store/sync/ is the one place that runs git (`rooms sync`, and the pre-commit guard through its `Git`)."""
    offenders = []
    for name, path in _modules().items():
        if name.startswith("rooms_cli.store.sync"):
            continue
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.List) and node.elts and isinstance(node.elts[0], ast.Constant) and node.elts[0].value == "git":
                offenders.append(f"{name}:{node.lineno}")
    assert offenders == []


def test_only_the_store_builds_paths_under_rooms():
    """Parts name their files through store/layout.py; `project.path(...)` is spelled nowhere else."""
    offenders = [str(path.relative_to(PACKAGE)) for name, path in _modules().items()
                 if not name.startswith("rooms_cli.store") and ".path(" in path.read_text("utf-8")]
    assert offenders == []


def test_no_part_is_wired_by_an_import_that_may_silently_fail():
    """`try: import … except ImportError: pass` hides a broken part; wiring is by plain imports (rooms_cli.across.registry).
    (An optional extra may be imported in a try whose handler raises a clear error.)"""
    offenders = []
    for path in _modules().values():
        for node in ast.walk(_parsed(path)):
            if not isinstance(node, ast.Try):
                continue
            imports_ours = any(isinstance(n, (ast.Import, ast.ImportFrom)) and
                               (getattr(n, "module", None) or n.names[0].name).startswith("rooms_cli") for n in node.body)
            swallowed = any(not any(isinstance(n, ast.Raise) for n in ast.walk(h)) for h in node.handlers)
            if imports_ours and swallowed:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


def test_every_dataclass_has_a_docstring():
    """On Python 3.11 `dataclasses` calls `inspect.signature(cls)` for a dataclass without a docstring,
    to write one: work at import, on every command's path, for a text nobody reads. So every record
    says what it is (read from the source: a record never created in a test counts too)."""
    offenders = []
    for path in _modules().values():
        for node in ast.walk(_parsed(path)):
            if (isinstance(node, ast.ClassDef) and ast.get_docstring(node) is None
                    and any("dataclass" in ast.unparse(d) for d in node.decorator_list)):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}")
    assert offenders == []


# -- the registry ----------------------------------------------------------------------------------

def _loaders():
    from rooms_cli.across import prompt_sections, registry

    tables = {"TICK_STEPS": registry.TICK_STEPS, "DOCTOR_CHECKS": registry.DOCTOR_CHECKS,
              "DEMO_SECTIONS": registry.DEMO_SECTIONS, "ROOM_SECTIONS": prompt_sections.ROOM_SECTIONS}
    for table, entries in tables.items():
        for name, load in entries.items():
            yield pytest.param(load, id=f"{table}:{name}")


@pytest.mark.parametrize("load", list(_loaders()))
def test_every_registered_part_loads_by_a_plain_import(load):
    assert callable(load())


def test_parts_are_wired_by_imports_never_by_names_in_strings():
    """No import_module / __import__ / sys.modules juggling: mypy and the import graph see every arrow."""
    offenders = []
    for name, path in _modules().items():
        for node in ast.walk(_parsed(path)):
            called = node.func if isinstance(node, ast.Call) else None
            if isinstance(called, (ast.Name, ast.Attribute)) and \
                    (getattr(called, "id", None) or getattr(called, "attr", None)) in ("import_module", "__import__"):
                offenders.append(f"{name}:{node.lineno}")
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Subscript) and ast.unparse(t.value) == "sys.modules" for t in node.targets):
                offenders.append(f"{name}:{node.lineno}")
    assert offenders == []


def test_every_part_s_doctor_demo_and_tick_module_is_wired_in_the_registry():
    """A part that grows a `doctor.py`, `demo.py` or `tick.py` and no loader would be silently skipped."""
    hooks = {m for m in _modules() if m.rpartition(".")[2] in ("doctor", "demo", "tick")
             and not m.startswith("rooms_cli.across")}
    assert hooks - import_graph()["rooms_cli.across.registry"] == set()


def test_only_the_commands_that_run_every_part_import_the_registry():
    importers = sorted(m for m, ts in import_graph().items() if "rooms_cli.across.registry" in ts)
    assert importers == ["rooms_cli.across.demo", "rooms_cli.across.doctor", "rooms_cli.across.tick"]


def test_every_command_of_the_cli_table_is_on_the_command_line_and_no_other():
    import typer.main

    from rooms_cli.cli.app import app, commands

    assert sorted(typer.main.get_command(app).commands) == sorted(commands())  # type: ignore[attr-defined]


def _broken_loader():
    from rooms_cli.board.no_such_module import check

    return check


def test_a_part_check_that_cannot_be_loaded_makes_doctor_report_an_error(project_dir, monkeypatch):
    from rooms_cli.across import registry
    from rooms_cli.across.doctor import run_doctor
    from rooms_cli.project.config import load_config
    from rooms_cli.store.paths import open_project

    monkeypatch.setitem(registry.DOCTOR_CHECKS, "board", _broken_loader)
    project = open_project(project_dir)
    report = run_doctor(project, load_config(project), providers=False)
    assert report["ok"] is False
    broken = [f for f in report["findings"] if f.check == "board" and "cannot be loaded" in f.message]
    assert len(broken) == 1 and "rooms_cli.board.no_such_module" in broken[0].fix


def test_a_tick_step_that_cannot_be_imported_fails_the_tick_and_the_others_still_run(project_dir, monkeypatch):
    from rooms_cli.across import registry
    from rooms_cli.across.tick import run_tick
    from rooms_cli.project.config import load_config
    from rooms_cli.store.paths import open_project

    monkeypatch.setitem(registry.TICK_STEPS, "leases", _broken_loader)
    project = open_project(project_dir)
    report = run_tick(project, load_config(project), dry_run=True)
    assert report["ok"] is False and [f["step"] for f in report["failed"]] == ["leases"]
    assert "no_such_module" in report["failed"][0]["message"]
    assert set(report["steps"]) == set(registry.TICK_STEPS)


def test_finished_spawn_statuses_are_defined_once():
    """watch imports messaging/spawn.py only once a spawn changed (start-up), so it has no FINAL of its
    own: every status spawn.FINAL names, and only those, finishes a spawn in watch's events."""
    from pathlib import Path

    from rooms_cli.messaging import spawn
    from rooms_cli.watch import events
    from rooms_cli.watch.sources import Source

    assert not hasattr(events, "FINAL")
    source = Source("spawn", Path("s-1.json"), "spawn", "s-1", snapshot=True)
    for status in (*spawn.FINAL, "paused", "waiting"):
        made = events.EventMaker().from_snapshot(source, {"status": "running"}, {"status": status})
        assert ([e["type"] for e in made] == ["spawn.finish"]) is (status in spawn.FINAL), status


def test_commands_take_the_shared_options_from_one_decorator():
    """--dir/--json/--as/--room come from cli/shared.py's @shared, never re-declared by a command."""
    shared_names = {"DirOpt", "JsonOpt", "AsOpt"}
    offenders = []
    for name, path in _modules().items():
        if not name.startswith("rooms_cli.cli.") or name in ("rooms_cli.cli.shared", "rooms_cli.cli.options"):
            continue
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.FunctionDef):
                for arg in node.args.args + node.args.kwonlyargs:
                    if isinstance(arg.annotation, ast.Name) and arg.annotation.id in shared_names:
                        offenders.append(f"{name}.{node.name}({arg.arg})")
    assert offenders == []


REPLAYS = ("groups/log.py", "chat/rooms.py", "board/replay.py", "roundtable/queue.py", "reservations/ledger.py",
           "store/schema.py", "store/order.py")


def test_each_log_replay_is_a_table_of_small_handlers():
    """A log's fold maps each event kind to a small handler (adding a kind is one entry and one function):
    no function of a replay or of the schema above McCabe complexity 15 (`ruff --select C901`)."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "C901", "--config", "lint.mccabe.max-complexity=15",
         "--output-format", "concise", *(str(PACKAGE / path) for path in REPLAYS)],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


# -- the store is the one layer that touches files ----------------------------------------------------

# Modules outside store/ allowed to do file I/O themselves, and why. Each works on the process's standard
# streams rather than on files: there is nothing there for the store to own.
FILE_IO_OUTSIDE_STORE = {
    "rooms_cli/cli/guard.py": "points a closed stdout or stderr at /dev/null so that exiting cannot fail",
    "rooms_cli/mcp_server/transport.py": "the MCP stdio transport: duplicates stdin/stdout for the wire, /dev/null behind",
}
# pathlib methods and os/io/shutil functions that read, write, list, create, move or delete files
_PATH_IO = {"read_text", "write_text", "read_bytes", "write_bytes", "glob", "rglob", "iterdir", "unlink", "mkdir",
            "rmdir", "touch", "symlink_to", "hardlink_to", "chmod"}
_OS_IO = {"open", "fdopen", "replace", "rename", "renames", "remove", "unlink", "listdir", "scandir", "walk", "mkdir",
          "makedirs", "rmdir", "removedirs", "truncate", "link", "symlink", "chmod"}


def file_io_calls(path: Path) -> list[str]:
    """The calls in `path` that do file I/O themselves (`open(...)`, `os.replace`, `p.read_text()`…), as
    `line: call`. A call through a store module (`atomic.write_text`, `files.read_bytes`) is the store's."""
    tree = _parsed(path)
    store_names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and (node.module or "").startswith("rooms_cli.store") for alias in node.names}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            found.append(f"{node.lineno}: open")
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            parent = isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"
            if owner in store_names or parent:  # super().write_text(): an overridden method (click's help), not a path's
                continue
            if (owner in ("os", "io") and func.attr in _OS_IO) or (owner == "shutil" and func.attr != "which"):
                found.append(f"{node.lineno}: {owner}.{func.attr}")
            elif owner not in ("os", "io") and (func.attr in _PATH_IO or (
                    func.attr == "open" and owner != "webbrowser" and not (owner or "x")[0].isupper())):
                found.append(f"{node.lineno}: .{func.attr}")
    return sorted(found)


def test_only_the_store_touches_files():
    """Reading, appending, replacing, listing, locking and caching files go through rooms_cli/store/; the
    few modules that must do otherwise are named, with the reason, in FILE_IO_OUTSIDE_STORE."""
    doing_io = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).as_posix()
        if not rel.startswith("rooms_cli/store/") and (calls := file_io_calls(path)):
            doing_io[rel] = calls
    assert {m: c for m, c in doing_io.items() if m not in FILE_IO_OUTSIDE_STORE} == {}
    assert sorted(doing_io) == sorted(FILE_IO_OUTSIDE_STORE), "an allowed module no longer does file I/O: drop it"
    assert len(FILE_IO_OUTSIDE_STORE) <= 6


def test_the_file_io_check_sees_what_it_is_meant_to(tmp_path):
    source = tmp_path / "sample.py"
    source.write_text("import os\nfrom rooms_cli.store import atomic\n"
                      "def f(p):\n    open(p)\n    p.read_text()\n    os.replace(p, p)\n    atomic.write_text(p, '')\n"
                      "    Context.open(p)\n    'a'.replace('a', 'b')\n")
    assert file_io_calls(source) == ["4: open", "5: .read_text", "6: os.replace"]


def test_only_the_store_opens_a_database():
    """sqlite3 opening a file is file I/O: the search index's file is store/ftsindex.py's alone."""
    offenders = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            imported = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(module.split(".")[0] == "sqlite3" for module in imported) and name != "rooms_cli.store.ftsindex":
                offenders.append(name)
    assert offenders == []


def test_nothing_in_the_package_waits_for_the_interpreter_s_shutdown():
    """The console script ends a command with os._exit when it imported neither threading nor weakref
    (cli/fast.py `leave`): nothing of rooms may count on the shutdown, so no module registers an atexit hook."""
    offenders = []
    for name, path in _modules().items():
        for node in ast.walk(_parsed(path)):
            imported = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if "atexit" in imported:
                offenders.append(name)
    assert offenders == []


def test_no_module_outside_the_store_takes_file_locks_itself():

    """fcntl (flock) is the store's: store/locks.py takes every lock, a spawn's liveness lock included."""
    offenders = []
    for name, path in _modules().items():
        if name.startswith("rooms_cli.store"):
            continue
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.Import) and any(a.name == "fcntl" for a in node.names):
                offenders.append(name)
            elif isinstance(node, ast.ImportFrom) and node.module == "fcntl":
                offenders.append(name)
    assert offenders == []


def test_every_cache_goes_through_the_one_cache_primitive():
    """store/cache.py is the only code that stores a cache (atomic.write_cache) or unpickles one: a part
    that kept its own cache file would bring back a design of its own (fsync or not, fatal or not)."""
    offenders = []
    for name, path in _modules().items():
        if name in ("rooms_cli.store.cache", "rooms_cli.store.atomic"):
            continue
        tree = _parsed(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "write_cache":
                offenders.append(f"{name}: write_cache")
            elif isinstance(node, ast.ImportFrom) and any(a.name == "write_cache" for a in node.names):
                offenders.append(f"{name}: write_cache")
            elif isinstance(node, ast.Import) and any(a.name == "pickle" for a in node.names):
                offenders.append(f"{name}: pickle")
    assert offenders == []


def test_every_catch_all_is_one_that_docs_architecture_argues():
    """`except Exception` only where docs/architecture.md's table says why ("`chat/calling.py` (2)"): a new one
    is either narrowed to the failures it expects or argued there, and a narrowed one leaves the table."""
    import re

    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text("utf-8")
    section = doc.split("## Where a catch-all stays, and why", 1)[1].split("\n## ", 1)[0]
    argued: dict[str, int] = {}
    for row in section.splitlines():
        if row.startswith("| `"):
            for path, count in re.findall(r"`([\w/]+\.py)`(?: \((\d+)\))?", row.split(" | ")[0]):
                argued[path] = int(count or 1)
    found: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.ExceptHandler) and isinstance(node.type, ast.Name) and node.type.id == "Exception":
                key = path.relative_to(PACKAGE).as_posix()
                found[key] = found.get(key, 0) + 1
    assert found == argued
