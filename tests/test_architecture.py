"""The architecture, checked: arrows point down, no import cycles, every registered part resolves.

The import graph is read from the source with `ast`, so an import inside a function counts as much
as one at the top of a file (a cycle hidden in a function is still a cycle).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rooms_cli"
PARTS = ("chat", "board", "roundtable", "groups", "messaging", "watch")


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the rooms_cli modules it imports anywhere in its file (functions included)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
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
        graph[name] = {t for t in targets if t in modules and t != name and not name.startswith(t + ".")}
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


FRONT_ENDS = ("rooms_cli.cli", "rooms_cli.mcp_server", "rooms_cli.__main__")  # adapters over the parts


def test_no_module_below_the_front_ends_imports_the_cli():
    bad = [(m, t) for m, ts in import_graph().items() if not m.startswith(FRONT_ENDS)
           for t in ts if t.startswith("rooms_cli.cli")]
    assert bad == []


def test_parts_never_import_the_commands_that_aggregate_them():
    """doctor, tick and demo call into the parts; a part importing them is an arrow running back up."""
    top = {"rooms_cli.doctor", "rooms_cli.tick", "rooms_cli.demo", "rooms_cli.registry", "rooms_cli.providers"}
    bad = [(m, t) for m, ts in import_graph().items() if _part(m) for t in ts if t in top - {"rooms_cli.registry"}]
    assert bad == []


def test_store_and_models_never_import_a_part():
    bad = [(m, t) for m, ts in import_graph().items()
           if m.startswith(("rooms_cli.store", "rooms_cli.models")) for t in ts if _part(t)]
    assert bad == []


def test_store_and_models_import_nothing_above_them():
    # leaves beside the store (errors, config, the /pass rule, terminal-safe text, child environments) import nothing above them
    allowed = ("rooms_cli.store", "rooms_cli.errors", "rooms_cli.models", "rooms_cli.config", "rooms_cli.passes",
               "rooms_cli.terminal", "rooms_cli.child_env")
    bad = [(m, t) for m, ts in import_graph().items()
           if m.startswith(("rooms_cli.store", "rooms_cli.models")) for t in ts if not t.startswith(allowed)]
    assert bad == []


def test_only_the_store_builds_paths_under_rooms():
    """Parts name their files through store/layout.py; `project.path(...)` is spelled nowhere else."""
    offenders = [str(path.relative_to(PACKAGE)) for name, path in _modules().items()
                 if not name.startswith("rooms_cli.store") and ".path(" in path.read_text("utf-8")]
    assert offenders == []


def test_no_part_is_wired_by_an_import_that_may_silently_fail():
    """`try: import … except ImportError: pass` hides a broken part; wiring goes through rooms_cli.registry.
    (An optional extra may be imported in a try whose handler raises a clear error.)"""
    offenders = []
    for path in _modules().values():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
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
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (isinstance(node, ast.ClassDef) and ast.get_docstring(node) is None
                    and any("dataclass" in ast.unparse(d) for d in node.decorator_list)):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}")
    assert offenders == []


# -- the registry ----------------------------------------------------------------------------------

def _entries():
    from rooms_cli import registry

    for table in ("COMMANDS", "TICK_STEPS", "DOCTOR_CHECKS", "DEMO_SECTIONS", "PROMPT_SECTIONS"):
        for name, target in getattr(registry, table).items():
            yield pytest.param(target, id=f"{table}:{name}")


@pytest.mark.parametrize("target", list(_entries()))
def test_every_registered_entry_resolves(target):
    from rooms_cli.registry import resolve

    assert callable(resolve(target))


def test_every_command_of_the_registry_is_on_the_command_line_and_no_other():
    import typer.main

    from rooms_cli.cli.app import app
    from rooms_cli.registry import COMMANDS

    assert sorted(typer.main.get_command(app).commands) == sorted(COMMANDS)  # type: ignore[attr-defined]


def test_a_missing_part_fails_loudly_instead_of_being_skipped():
    from rooms_cli.registry import resolve

    with pytest.raises(ImportError):
        resolve("rooms_cli.nosuchpart.tick:run")
    with pytest.raises(AttributeError):
        resolve("rooms_cli.board.tick:no_such_step")


def test_a_part_check_that_cannot_be_loaded_makes_doctor_report_an_error(project_dir, monkeypatch):
    from rooms_cli import registry
    from rooms_cli.config import load_config
    from rooms_cli.doctor import run_doctor
    from rooms_cli.store.paths import open_project

    monkeypatch.setitem(registry.DOCTOR_CHECKS, "board", "rooms_cli.board.no_such_doctor:check")
    project = open_project(project_dir)
    report = run_doctor(project, load_config(project), providers=False)
    assert report["ok"] is False
    assert any(f.check == "board" and "cannot be loaded" in f.message for f in report["findings"])


def test_a_tick_step_that_cannot_be_imported_fails_the_tick_and_the_others_still_run(project_dir, monkeypatch):
    from rooms_cli import registry
    from rooms_cli.config import load_config
    from rooms_cli.store.paths import open_project
    from rooms_cli.tick import run_tick

    monkeypatch.setitem(registry.TICK_STEPS, "leases", "rooms_cli.board.no_such_tick:expire_leases")
    project = open_project(project_dir)
    report = run_tick(project, load_config(project), dry_run=True)
    assert report["ok"] is False and [f["step"] for f in report["failed"]] == ["leases"]
    assert "no_such_tick" in report["failed"][0]["message"]
    assert set(report["steps"]) == set(registry.TICK_STEPS)


def test_finished_spawn_statuses_are_defined_once():
    from rooms_cli.messaging import spawn
    from rooms_cli.watch import events

    assert events.FINAL is spawn.FINAL


def test_commands_take_the_shared_options_from_one_decorator():
    """--dir/--json/--as/--room come from cli/shared.py's @shared, never re-declared by a command."""
    shared_names = {"DirOpt", "JsonOpt", "AsOpt"}
    offenders = []
    for name, path in _modules().items():
        if not name.startswith("rooms_cli.cli.") or name in ("rooms_cli.cli.shared", "rooms_cli.cli.options"):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef):
                for arg in node.args.args + node.args.kwonlyargs:
                    if isinstance(arg.annotation, ast.Name) and arg.annotation.id in shared_names:
                        offenders.append(f"{name}.{node.name}({arg.arg})")
    assert offenders == []
