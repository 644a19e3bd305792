"""What a wheel install has: the files its messages point to ship inside the package, and no message
sends the user to a checkout's `examples/` folder (issue 45, item 12). A wheel is built and installed
(without dependencies: this interpreter's) into a folder that stands in for site-packages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO

pytestmark = pytest.mark.slow

PROBE = textwrap.dedent("""
    import json, sys, rooms_cli
    from typer.testing import CliRunner
    import typer
    from rooms_cli.cli.app import app
    from rooms_cli.store.installation import add_extra

    out = {"package": rooms_cli.__file__, "advice": add_extra("tui"), "help": {}}
    def walk(cmd, prefix):
        out["help"][" ".join(prefix)] = CliRunner().invoke(app, [*prefix, "--help"]).output
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            walk(sub, (*prefix, name))
    walk(typer.main.get_command(app), ())
    for args in (["init", "--example", "roundtable"], ["schedule"], ["schedule", "example"], ["hook", "claude-code", "settings"]):
        out[" ".join(args)] = CliRunner().invoke(app, args).output
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def wheel_site(tmp_path_factory):
    """The wheel of this checkout, installed into a folder of its own (its dependencies: this interpreter's)."""
    dist, site = tmp_path_factory.mktemp("dist"), tmp_path_factory.mktemp("site")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w", str(dist)],
                           capture_output=True, text=True, timeout=600)
    if build.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {build.stderr.strip().splitlines()[-1:]}")
    wheel = next(dist.glob("rooms_cli-*.whl"))
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr
    return site


def test_a_wheel_install_has_what_its_messages_point_to(wheel_site, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("ROOMS_DIR", "ROOMS_AGENT")}
    env["PYTHONPATH"] = str(wheel_site)  # the wheel's rooms_cli, not this checkout's
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["package"].startswith(str(wheel_site))
    pointing = {path: text for path, text in seen["help"].items() if "examples/" in text}
    assert pointing == {}, "a wheel has no examples/ folder"
    assert "examples/" not in seen["schedule"] and "rooms schedule example" in seen["schedule"]
    assert "schedule:" in seen["schedule example"] and "Morning Standup" in seen["schedule example"]
    assert set(json.loads(seen["hook claude-code settings"])["hooks"]) == {"SessionStart", "UserPromptSubmit", "Stop"}
    assert seen["advice"].endswith("install 'textual<9,>=8.2'"), seen["advice"]  # not an editable checkout's advice


def test_the_schedule_example_pasted_into_a_roundtable_project_is_a_schedule(wheel_site, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(wheel_site), "ROOMS_DIR": str(tmp_path)}
    rooms = [sys.executable, "-m", "rooms_cli"]
    assert subprocess.run([*rooms, "init", str(tmp_path), "--example", "roundtable"], env=env, capture_output=True).returncode == 0
    example = subprocess.run([*rooms, "schedule", "example"], env=env, capture_output=True, text=True).stdout
    with open(tmp_path / ".rooms.yaml", "a") as config:
        config.write(example)
    shown = subprocess.run([*rooms, "schedule", "--json"], env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert len(json.loads(shown.stdout)) == 24
