"""The detached process behind one spawn (internal: started by `start_spawn`, never by a user).

    python -m rooms_cli.messaging.worker spawn <id> --lock-fd N

It inherits the spawn's locked liveness descriptor (N) and keeps it open until it exits, runs the
prompt, delivers the result to the parent's inbox, and marks the record done or failed — in that
order, so whoever sees the record finished also finds the message.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from rooms_cli.core.text import count
from rooms_cli.messaging.spawn import Spawn, load_spawn, update_spawn, worker_env
from rooms_cli.store.clock import now_iso
from rooms_cli.store.paths import Project, open_project

MAX_OUTPUT = 100_000  # characters of output kept in the record and the message
TAIL = 2_000


def _clip(text: str, limit: int = MAX_OUTPUT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"\n… ({count(len(text) - limit, 'more character')} cut)"


def run_command(project: Project, spawn: Spawn) -> tuple[int, str, str]:
    """Run the command runner with the prompt on stdin; (exit code, stdout, stderr)."""
    env = worker_env(project, spawn, {"ROOMS_AGENT": spawn.alias, "ROOMS_PARENT": spawn.parent, "ROOMS_SPAWN_ID": spawn.id})
    try:
        proc = subprocess.Popen(
            spawn.runner or [], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=str(project.root), env=env,
        )
    except OSError as exc:
        return 127, "", f"cannot run {spawn.runner[0] if spawn.runner else '?'} (runner: in .rooms.yaml): {exc.strerror or exc}"
    # a `kill` of the worker stops the runner too, and the spawn is then reported as failed
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    update_spawn(project, spawn.id, lambda s: setattr(s, "runner_pid", proc.pid))
    out, err = proc.communicate(spawn.prompt.encode("utf-8"))
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def run_model(project: Project, spawn: Spawn) -> str:
    """Run the prompt through the profile's (or the default) model; the reply text."""
    import asyncio

    from rooms_cli.agents.definitions import load_agent
    from rooms_cli.models import provider_for
    from rooms_cli.models.limits import mark_cut
    from rooms_cli.models.prompt import conversation
    from rooms_cli.models.repetition import drop_echoes, guarded, loop_start
    from rooms_cli.project.config import load_config

    config = load_config(project)
    agent = load_agent(project, spawn.profile) if spawn.profile else None
    directive = agent.directive if agent else "You are a capable assistant working on one task."
    system = (
        f"{directive}\n\nYou are {spawn.alias}, spawned by {spawn.parent} for one task. "
        f"Your answer is delivered to {spawn.parent} as a message: make it complete and self-contained."
    )
    provider, model = provider_for(spawn.model or config.default_model, config)
    completion = asyncio.run(guarded(provider, conversation(system, [("user", spawn.prompt)]), model=model,
                                     temperature=agent.temperature if agent else None, agent=agent, purpose="task"))
    text, cut = completion.text, completion.cut or completion.finish_reason == "repetition"
    if not completion.offline:  # what a language model read back of its instructions is not its answer, nor a loop
        text = drop_echoes(text, system)[0]
        at = loop_start(text)
        text, cut = (text[:at].rstrip(), True) if at is not None else (text, cut)
    return mark_cut(text) if cut and text else text


def run_spawn(project: Project, spawn_id: str) -> Spawn:
    """Run one spawn to the end and report it; returns the final record."""
    from rooms_cli.core.errors import RoomsError
    from rooms_cli.messaging.inbox import deliver

    def started(s: Spawn) -> None:
        s.status, s.started, s.pid = "running", now_iso(), os.getpid()

    spawn = update_spawn(project, spawn_id, started)
    clock = time.monotonic()
    exit_code, output, error = 0, "", None
    try:
        if spawn.runner:
            exit_code, output, stderr = run_command(project, spawn)
            if exit_code != 0:
                how = f"was killed by signal {-exit_code}" if exit_code < 0 else f"exited with code {exit_code}"
                error = f"{spawn.runner[0]} {how}" + (f": {stderr.strip()[-TAIL:]}" if stderr.strip() else "")
        else:
            output = run_model(project, spawn)
    except RoomsError as exc:
        exit_code, error = 1, exc.message
    except Exception as exc:  # a bug or an odd failure: still report it to the parent
        exit_code, error = 1, f"{type(exc).__name__}: {exc}"
    duration = round(time.monotonic() - clock, 3)
    meta = {"spawn": spawn.id, "exit_code": exit_code, "duration_s": duration}
    if error is None:
        msg = deliver(project, spawn.parent, spawn.alias, _clip(output) or "(no output)", kind="spawn_output", meta=meta)
    else:
        text = error + (f"\n--- output ---\n{_clip(output, TAIL)}" if output.strip() else "")
        msg = deliver(project, spawn.parent, spawn.alias, text, kind="spawn_error", meta=meta)

    def finished(s: Spawn) -> None:
        s.status = "done" if error is None else "failed"
        s.finished, s.duration_s, s.exit_code = now_iso(), duration, exit_code
        s.output, s.error, s.delivered = _clip(output), error, msg.n

    return update_spawn(project, spawn.id, finished)


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[0] != "spawn" or argv[2] != "--lock-fd":
        print("usage: python -m rooms_cli.messaging.worker spawn ID --lock-fd N (internal)", file=sys.stderr)
        return 2
    # argv[3] is the inherited locked descriptor: it stays open (and locked) until this process exits
    project = open_project(os.environ.get("ROOMS_DIR"))
    load_spawn(project, argv[1])
    run_spawn(project, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
