"""`rooms config show` (`rooms init`, `tick`, `doctor` and `demo` are declared operations: operations/project.py, across.py)."""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.help import GROUPS
from rooms_cli.cli.options import commands
from rooms_cli.cli.shared import Run, shared

config_app = commands(GROUPS["config"])


@config_app.command("show")
@shared()
def config_show(run: Run) -> None:
    """Print the effective configuration (built-in providers included, secrets masked).

    Example: rooms config show --json
    """

    shown = run.config.masked()
    if run.json:
        output.print_json(shown)
        return
    import yaml

    source = run.project.relative(run.config.path) if run.config.path else "(no .rooms.yaml: defaults)"
    output.say(f"# effective config from {source}")
    output.say(yaml.safe_dump(shown, sort_keys=False, allow_unicode=True).rstrip())
