"""`rooms models list|test`: the configured providers, and a doctor that sends one short prompt."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli import output
from rooms_cli.cli.help import GROUPS
from rooms_cli.cli.options import commands
from rooms_cli.cli.shared import Run, shared

models_app = commands(GROUPS["models"])


@models_app.command("list")
@shared()
def list_cmd(run: Run) -> None:
    """List the providers usable here (built-ins included); keys show only where they come from.

    Example: rooms models list --json
    """
    from rooms_cli.agents.providers import describe_providers, open_config

    config, _ = open_config(run.dir)
    providers = describe_providers(config)
    if run.json:
        output.print_json({"default_model": config.default_model, "providers": providers})
        return
    output.say(f"default_model: {config.default_model}")
    for p in providers:
        where = p.get("base_url") or (" ".join(p["command"]) if p.get("command") else "")
        key = ""
        if p.get("key"):
            state = "set" if p.get("key_set") else "missing" if p.get("key_required", True) else "not set, not needed here"
            key = f"  key: {p['key']} ({state})"
        limits = "".join(f"  {k}: {p[k]}" for k in ("max_tokens", "context_window") if p.get(k))
        output.say(f"  {p['name']:<12} {p['type']:<9} {where}{key}{limits}")


@models_app.command("test")
@shared()
def test_cmd(
    run: Run,
    target: Annotated[
        str | None,
        typer.Argument(help="An agent id, provider:model (e.g. ollama:llama3.2) or a provider name (default: default_model)."),
    ] = None,
) -> None:
    """Send one short prompt and report provider, model, latency, usage and the reply (or the exact failure, exit 1).

    Example: rooms models test ollama:llama3.2
    """
    from rooms_cli.agents.providers import check_model, open_config, resolve_target

    config, project = open_config(run.dir)
    model_string, agent = resolve_target(target, config, project)
    report = check_model(model_string, config, agent=agent)
    if run.json:
        output.print_json(report)
        return
    where = report.get("base_url") or " ".join(report.get("command") or []) or report["type"]
    output.say(f"ok  {report['target']}  ({report['type']} · {where})", style="green")
    first = f" (first text after {report['first_token_s']:.2f} s)" if report.get("first_token_s") is not None else ""
    output.say(f"  latency: {report['latency_s']:.2f} s{first}")
    usage = report["usage"]
    output.say(f"  usage:   {usage['input_tokens']} in / {usage['output_tokens']} out" + ("  (offline model)" if report["offline"] else ""))
    output.say(f"  reply:   {report['reply']}")
    output.say(f"  finish:  {report['finish_reason']}" + ("  (cut at the max_tokens limit)" if report["cut"] else ""))
    window = report["context_window"]
    output.say(f"  window:  {f'{window} tokens' if window else 'unknown (set context_window: to say it)'}")
    structured = {True: "yes", False: f"no: {report['structured_note']}", None: "not available"}[report["structured"]]
    output.say(f"  structured output: {structured}")
