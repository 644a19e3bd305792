"""How this copy of rooms was installed, read from its distribution's metadata, and so how to add an extra.

    add_extra("tui")   # "pip install -e '.[tui]' (in /src/rooms, the checkout rooms runs from)"

The advice for an optional extra (`tui`: Textual for `rooms top`; `mcp`: the SDK for `rooms mcp`) must be
one the user can run as it stands. `pip install 'rooms-cli[tui]'` fails while the package is on no
index and means nothing to a pipx install, so the install is told apart by what pip and pipx leave:
- an editable checkout: `direct_url.json` says `dir_info.editable` (PEP 610), or the metadata found lies
  in a source tree (an `.egg-info` beside `pyproject.toml`, when the checkout is on PYTHONPATH):
  `pip install -e '.[tui]'` in that checkout (with this interpreter's pip, as below: a checkout installed
  into a venv that is not activated);
- pipx: the distribution (or the interpreter) lives under `…/pipx/venvs/<name>/`: `pipx inject <name> …`
  with the extra's own requirements;
- anything else (a venv or user install from a wheel, an sdist, an index): the extra's requirements,
  installed with the pip of the interpreter that runs rooms (its path when `pip` on PATH is another one).
The requirements come from the metadata's `Requires-Dist: …; extra == "tui"` lines.
Read only when an extra is missing (an error path): `importlib.metadata` is not imported otherwise.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path

from rooms_cli.core.records import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.metadata import Distribution

DISTRIBUTION = "rooms-cli"
_EXTRA = re.compile(r"""^\s*([^;]+?)\s*;.*\bextra\s*==\s*["']([\w.-]+)["']""")


@dataclass
class Install:
    """How rooms was installed: kind (editable | pipx | pip), the checkout or pipx venv name, the extras' requirements."""

    kind: str
    where: str = ""  # the checkout (editable) or the pipx venv's name
    extras: dict[str, list[str]] | None = None


def _distribution() -> Distribution | None:
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        return distribution(DISTRIBUTION)
    except PackageNotFoundError:
        return None


def _metadata_dir(dist: Distribution) -> Path | None:
    path = getattr(dist, "_path", None)  # PathDistribution keeps its folder here (the API has no public name)
    return Path(path) if path is not None else None


def installed(dist: Distribution | None = None, prefix: str | None = None) -> Install:
    """How `dist` (default: this rooms-cli) was installed; `prefix` is the interpreter's (sys.prefix)."""
    dist = dist if dist is not None else _distribution()
    prefix = sys.prefix if prefix is None else prefix
    extras: dict[str, list[str]] = {}
    for line in (dist.requires or []) if dist is not None else []:
        match = _EXTRA.match(line)
        if match:
            extras.setdefault(match.group(2), []).append(match.group(1).replace(" ", ""))
    folder = _metadata_dir(dist) if dist is not None else None
    direct = dist.read_text("direct_url.json") if dist is not None else None
    try:
        origin = json.loads(direct) if direct else {}
    except ValueError:
        origin = {}
    if isinstance(origin, dict) and (origin.get("dir_info") or {}).get("editable") and str(origin.get("url", "")).startswith("file://"):
        from urllib.parse import unquote, urlparse

        return Install("editable", unquote(urlparse(origin["url"]).path), extras)
    if folder is not None and (folder.parent / "pyproject.toml").exists():
        return Install("editable", str(folder.parent), extras)
    for place in ([folder] if folder is not None else []) + [Path(prefix)]:
        parts = place.parts
        for i in range(len(parts) - 2):
            if parts[i] == "pipx" and parts[i + 1] == "venvs":
                return Install("pipx", parts[i + 2], extras)
    return Install("pip", "", extras)


def _pip() -> str:
    """`pip` when the one on PATH belongs to this interpreter, else this interpreter's `-m pip`."""
    found = shutil.which("pip")
    here = Path(sys.executable).parent
    if found and Path(found).parent == here:
        return "pip"
    return f"{shlex.quote(sys.executable)} -m pip"


def add_extra(extra: str, install: Install | None = None) -> str:
    """The command that adds `extra` to this install, as the user can run it (see the module docstring)."""
    install = install or installed()
    if install.kind == "editable":
        return f"{_pip()} install -e '.[{extra}]' (in {install.where}, the checkout rooms runs from)"
    wanted = " ".join(shlex.quote(r) for r in (install.extras or {}).get(extra, [])) or shlex.quote(f"{DISTRIBUTION}[{extra}]")
    if install.kind == "pipx":
        return f"pipx inject {install.where} {wanted}"
    return f"{_pip()} install {wanted}"
