"""The advice for a missing extra matches how rooms was installed (issue 45, item 2): read from the
distribution's metadata (PEP 610's direct_url.json, where pipx keeps its venvs), never guessed."""

from __future__ import annotations

import json
import sys
from importlib.metadata import PathDistribution
from pathlib import Path

import pytest

from rooms_cli.store.installation import add_extra, installed

METADATA = """Metadata-Version: 2.4
Name: rooms-cli
Version: 0.1.0
Requires-Dist: typer<0.29,>=0.26
Requires-Dist: mcp<3,>=2.3; extra == "mcp"
Requires-Dist: textual<9,>=8.2; extra == "tui"
Provides-Extra: mcp
Provides-Extra: tui
"""


def dist_info(site: Path, direct_url: dict | None = None) -> PathDistribution:
    """A real .dist-info folder in `site`, as pip writes it."""
    folder = site / "rooms_cli-0.1.0.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(METADATA)
    if direct_url is not None:
        (folder / "direct_url.json").write_text(json.dumps(direct_url))
    return PathDistribution(folder)


def test_an_editable_checkout_is_told_to_install_the_extra_in_that_checkout(tmp_path, monkeypatch):
    dist = dist_info(tmp_path / "venv" / "lib" / "python3.11" / "site-packages",
                     {"url": "file:///home/ada/src/rooms%20cli", "dir_info": {"editable": True}})
    found = installed(dist, prefix=str(tmp_path / "venv"))
    assert (found.kind, found.where) == ("editable", "/home/ada/src/rooms cli")
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    if (Path(sys.executable).parent / "pip").exists():
        assert add_extra("tui", found) == "pip install -e '.[tui]' (in /home/ada/src/rooms cli, the checkout rooms runs from)"
    monkeypatch.setenv("PATH", str(tmp_path))  # a venv not activated: its own pip, not another one on PATH
    assert add_extra("tui", found) == f"{sys.executable} -m pip install -e '.[tui]' (in /home/ada/src/rooms cli, the checkout rooms runs from)"


def test_a_pipx_install_is_told_to_inject_the_extra_s_requirements(tmp_path):
    venv = tmp_path / ".local" / "share" / "pipx" / "venvs" / "rooms-cli"
    dist = dist_info(venv / "lib" / "python3.12" / "site-packages", {"url": "file:///tmp/rooms_cli-0.1.0-py3-none-any.whl",
                                                                    "archive_info": {}})
    found = installed(dist, prefix=str(venv))
    assert (found.kind, found.where) == ("pipx", "rooms-cli")
    assert add_extra("tui", found) == "pipx inject rooms-cli 'textual<9,>=8.2'"
    assert add_extra("mcp", found) == "pipx inject rooms-cli 'mcp<3,>=2.3'"


def test_a_wheel_in_a_venv_is_told_to_pip_install_the_requirements_with_its_own_pip(tmp_path, monkeypatch):
    dist = dist_info(tmp_path / "venv" / "lib" / "python3.11" / "site-packages",
                     {"url": "file:///tmp/rooms_cli-0.1.0-py3-none-any.whl", "archive_info": {}})
    found = installed(dist, prefix=str(tmp_path / "venv"))
    assert found.kind == "pip"
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    here = Path(sys.executable).parent / "pip"
    command = add_extra("tui", found)
    if here.exists():
        assert command == "pip install 'textual<9,>=8.2'"
    monkeypatch.setenv("PATH", str(tmp_path))  # no pip of this interpreter on PATH: the interpreter's own
    assert add_extra("tui", found) == f"{sys.executable} -m pip install 'textual<9,>=8.2'"


def test_a_source_tree_on_pythonpath_counts_as_a_checkout(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'rooms-cli'\n")
    dist = dist_info(tmp_path)  # the .egg-info / .dist-info a build leaves beside pyproject.toml
    assert installed(dist, prefix="/usr").kind == "editable"


@pytest.mark.parametrize("broken", ["{", "[]", '{"url": 3, "dir_info": {"editable": true}}'])
def test_a_damaged_direct_url_file_is_no_editable_install(tmp_path, broken):
    site = tmp_path / "site-packages"
    dist = dist_info(site)
    (site / "rooms_cli-0.1.0.dist-info" / "direct_url.json").write_text(broken)
    assert installed(dist, prefix=str(tmp_path)).kind == "pip"


def test_this_checkout_is_seen_as_the_editable_install_it_is():
    from conftest import REPO

    assert add_extra("tui").endswith(f"(in {REPO}, the checkout rooms runs from)")
