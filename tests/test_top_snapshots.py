"""Screenshots of every tab of `rooms top` at 80×24 and 200×50, and of its key list, lasso and search at 80×24,
compared with the accepted ones.

The project is tests/topkit.py's, with fixed ids at ROOMS_NOW (and ROOMS_SEED for the offline model),
so a frame is the same on every run. After a deliberate change to the layout, look at the new frames
and accept them: `pytest tests/test_top_snapshots.py --snapshot-update` (the SVGs live in
tests/__snapshots__/test_top_snapshots/).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import topkit

pytest.importorskip("textual")
pytest.importorskip("pytest_textual_snapshot")

from rooms_cli.project.context import Context  # noqa: E402
from rooms_cli.tui.app import TopApp  # noqa: E402

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return topkit.seeded_template(tmp_path_factory, "snap")


@pytest.fixture
def demo(template, tmp_path, monkeypatch) -> Path:
    root = topkit.copy_of(template, tmp_path, monkeypatch)
    monkeypatch.setenv("ROOMS_SEED", "7")
    return root


async def _loaded(pilot) -> None:
    began = time.monotonic()
    while not pilot.app.loaded.is_set() and time.monotonic() - began < 30:
        await pilot.pause(0.02)
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
@pytest.mark.parametrize("tab", ["board", "rooms", "agents", "rev"])
def test_tab(snap_compare, demo, tab, size):
    app = TopApp(Context.open(str(demo), as_="alice"), tab=tab, live=False)
    assert snap_compare(app, terminal_size=size, run_before=_loaded)


@pytest.mark.parametrize("keys", [["question_mark"], ["ctrl+g", "space", "down", "down", "space"]], ids=["keys", "lasso"])
def test_dialog(snap_compare, demo, keys):
    """The key list (each description wraps beside its key) and the lasso (who is ticked, in words)."""
    app = TopApp(Context.open(str(demo), as_="alice"), tab="board", live=False)

    async def open_it(pilot) -> None:
        await _loaded(pilot)
        await pilot.press(*keys)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=open_it)


def test_search(snap_compare, demo):
    """`/` and a query: each hit's kind, place, author and time, then its snippet with the matches in bold
    (no asterisks), best first."""
    app = TopApp(Context.open(str(demo), as_="alice"), tab="board", live=False)

    async def search(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("slash", *"review", "enter")
        while str(pilot.app.screen.query_one("#status").render()) in ("", "searching…"):
            await pilot.pause(0.02)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=search)
