"""Spawns: fire-and-forget agents that report back to whoever spawned them.

`start_spawn` writes `.rooms/spawns/<id>.json`, starts a detached worker process in a new session
(`python -m rooms_cli.messaging.worker`) and returns at once. The worker runs the prompt — with the
`runner:` argv from .rooms.yaml (prompt on stdin; ROOMS_DIR, ROOMS_AGENT=<alias>, ROOMS_PARENT=<spawner>
in its environment) or with an LLM-backed profile's model — then delivers the output (or the error
and exit code) to the spawner's inbox as a message from the alias, and marks the record done or failed.

Liveness without pids: the worker holds an flock on `.rooms/run/spawns/<id>.lock` for its whole
life. `rooms spawn` takes that lock before the record exists and hands the locked descriptor to
the worker, so there is no moment when a live spawn looks unlocked. The kernel drops the lock when
the worker dies, however it dies: a waiter blocked on it wakes at once (no polling), and a record
still "running" whose lock is free is a spawn that died without finishing — reported as lost.
"""

from __future__ import annotations

import os
import re
import sys

from rooms_cli.core.errors import InvalidData, InvalidInput, RoomsError
from rooms_cli.core.records import asdict, dataclass  # dataclasses without inspect (records.py)
from rooms_cli.messaging.status import session_names
from rooms_cli.store import atomic, files, layout, locks, schema
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import host_name, new_id, validate_name
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy reads the name

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.project.config import Config

DEFAULT_MAX_DEPTH = 3
ACTIVE = ("starting", "running")
FINAL = ("done", "failed", "lost")  # a spawn in one of these has finished (watch and doctor use this too)
_ALIAS_LETTERS = "bcdefghijklmnopqrstuvwxyz"


class SpawnDepthExceeded(RoomsError):
    code = "spawn_depth_exceeded"


@dataclass
class Spawn:
    """A spawned sub-agent's record (`spawns/<id>.json`)."""

    id: str
    parent: str
    alias: str
    prompt: str
    description: str = ""
    profile: str | None = None
    runner: list[str] | None = None  # argv of a command runner; None: run by rooms with `model`
    model: str | None = None
    depth: int = 1
    status: str = "starting"  # starting, running, done, failed, lost
    created: str = ""
    started: str | None = None
    finished: str | None = None
    duration_s: float | None = None
    pid: int | None = None
    runner_pid: int | None = None
    exit_code: int | None = None
    output: str | None = None
    error: str | None = None
    delivered: int | None = None  # the message number in the parent's inbox
    host: str | None = None  # the machine it runs on: only there can its liveness be known

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def local(self) -> bool:
        """True when it runs (or ran) on this machine; a record pulled from another clone is not."""
        return not self.host or self.host == host_name()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "spawn record") -> Spawn:
        known = {f for f in cls.__dataclass_fields__}
        schema.validate("spawn", data, where, strict=False)  # the check doctor reports and the writer makes (store/schema.py)
        try:
            spawn = cls(**{k: v for k, v in data.items() if k in known})
        except TypeError as exc:
            raise InvalidData(f"{where}: {exc}") from None
        return spawn


# --- files -------------------------------------------------------------------------------------


def record_path(project: Project, spawn_id: str) -> str:
    return layout.spawn_file(project, spawn_id)


def alive_lock_path(project: Project, spawn_id: str) -> str:
    return layout.spawn_lock(project, spawn_id)


def log_path(project: Project, spawn_id: str) -> str:
    return layout.spawn_log(project, spawn_id)


def load_spawn(project: Project, spawn_id: str) -> Spawn:
    path = record_path(project, spawn_id)
    data = atomic.read_json(path)
    if data is None:
        from rooms_cli.core.errors import NotFound

        raise NotFound(f"no spawn {spawn_id!r}")
    if not isinstance(data, dict):
        raise InvalidData(f"{project.relative(path)}: expected a JSON object")
    return Spawn.from_json(data, project.relative(path))


def save_spawn(project: Project, spawn: Spawn) -> None:
    path, data = record_path(project, spawn.id), spawn.to_json()
    schema.validate("spawn", data, project.relative(path))  # what load_spawn would refuse is never written
    atomic.write_json(path, data)


def update_spawn(project: Project, spawn_id: str, change: Callable[[Spawn], None]) -> Spawn:
    """Read-modify-write a record under its lock; `change(spawn)` edits it in place."""
    path = record_path(project, spawn_id)
    with locked(path):
        spawn = load_spawn(project, spawn_id)
        change(spawn)
        save_spawn(project, spawn)
    return spawn


def list_spawns(project: Project) -> list[Spawn]:
    """Every spawn record, oldest first (ids sort by time). A file that is not a spawn record (a name
    that is not an id, `{}`, an `id` other than its file name) is skipped with one warning: a stray file
    must not stop `send`, `agents`, `wait`, `tick` or the hooks (`rooms doctor` names it)."""
    out = []
    for spawn_id in spawn_ids(project):
        try:
            spawn = load_spawn(project, spawn_id)
        except (InvalidData, InvalidInput) as err:
            layout.skip_stray(project, record_path(project, spawn_id), f"not a spawn record ({err.message})")
            continue
        if spawn.id != spawn_id:
            layout.skip_stray(project, record_path(project, spawn_id), f"its id is {spawn.id!r}, not its file name")
            continue
        out.append(spawn)
    return out


def spawn_ids(project: Project) -> list[str]:
    """The ids of the spawn records (files `spawns/<id>.json` whose name is an id)."""
    return layout.record_names(project, layout.spawns_dir(project), ".json", "spawn id")


def latest_by_alias(project: Project, spawns: list[Spawn] | None = None) -> dict[str, Spawn]:
    """alias -> its newest spawn record."""
    return {s.alias: s for s in (spawns if spawns is not None else list_spawns(project))}


def tree_of(project: Project, agent: str, spawns: list[Spawn] | None = None) -> list[Spawn]:
    """The spawns of `agent` and, recursively, theirs."""
    spawns = list_spawns(project) if spawns is None else spawns
    out: list[Spawn] = []
    frontier, seen = [agent], {agent}
    while frontier:
        parent = frontier.pop()
        for spawn in spawns:
            if spawn.parent == parent:
                out.append(spawn)
                if spawn.alias not in seen:
                    seen.add(spawn.alias)
                    frontier.append(spawn.alias)
    return out


# --- liveness ----------------------------------------------------------------------------------


def worker_alive(project: Project, spawn_id: str) -> bool:
    """True while the spawn's worker process holds its lock."""
    return locks.is_alive(alive_lock_path(project, spawn_id))


def block_until_finished(project: Project, spawn_id: str, timeout: float | None) -> bool:
    """Sleep until the spawn's worker exits (its lock is released); False on timeout."""
    import threading

    released = threading.Event()

    def hold_and_release() -> None:
        locks.wait_until_released(alive_lock_path(project, spawn_id))
        released.set()

    threading.Thread(target=hold_and_release, daemon=True, name=f"wait-{spawn_id}").start()
    return released.wait(timeout)


def reap_lost(project: Project, spawn: Spawn, *, dry_run: bool = False) -> bool:
    """If `spawn` is active but its worker is gone, mark it lost and tell its parent. True if lost.

    Only spawns of this machine are judged: a record committed while running elsewhere is left alone.
    """
    if not spawn.active or not spawn.local or worker_alive(project, spawn.id):
        return False
    if dry_run:
        return True
    lost: list[Spawn] = []

    def change(current: Spawn) -> None:
        if current.active:  # re-checked under the record lock: the worker may have just finished
            current.status = "lost"
            current.finished = now_iso()
            current.error = f"the spawn's process (pid {current.pid}) ended without finishing"
            lost.append(current)

    update_spawn(project, spawn.id, change)
    if lost:
        from rooms_cli.messaging.inbox import deliver

        record = lost[0]
        msg = deliver(
            project, record.parent, record.alias, f"lost: {record.error}; its output will never arrive",
            kind="spawn_error", meta={"spawn": record.id, "status": "lost"},
        )
        update_spawn(project, spawn.id, lambda s: setattr(s, "delivered", msg.n))
    return bool(lost)


def reap_all(project: Project, spawns: list[Spawn] | None = None, *, dry_run: bool = False) -> list[Spawn]:
    """Mark every active spawn whose worker is gone as lost; return those."""
    return [s for s in (spawns if spawns is not None else list_spawns(project)) if reap_lost(project, s, dry_run=dry_run)]


# --- starting ----------------------------------------------------------------------------------


def max_depth(config: Config) -> int:
    value: int = config.get("max_spawn_depth", DEFAULT_MAX_DEPTH)
    if value < 0:
        raise InvalidData(".rooms.yaml: key 'max_spawn_depth' must be 0 or more")
    return value


def depth_for(parent: str, spawns: list[Spawn]) -> int:
    """1 for a spawn of an agent that is not itself a spawn; the parent's depth + 1 otherwise."""
    mine = {s.alias: s for s in spawns}.get(parent)
    return (mine.depth + 1) if mine is not None else 1


def choose_alias(description: str | None, taken: set[str]) -> str:
    """`agentb`, `agentc`… or a name made from the description (`API work` -> `api-work`)."""
    if description:
        base = re.sub(r"[^a-z0-9]+", "-", description.lower()).strip("-")[:40].strip("-")
        if base:
            candidate, k = base, 2
            while candidate in taken:
                candidate, k = f"{base}-{k}", k + 1
            return candidate
    round_ = 1
    while True:
        for letter in _ALIAS_LETTERS:
            candidate = f"agent{letter}" + (str(round_) if round_ > 1 else "")
            if candidate not in taken:
                return candidate
        round_ += 1


def _plan(project: Project, config: Config, profile: str | None, runner: list[str] | None) -> tuple[list[str] | None, str | None]:
    """(runner argv, model string): what will run the spawn."""
    if profile:
        from rooms_cli.agents.definitions import load_agent

        agent = load_agent(project, profile)
        model = agent.model_string(config.default_model)
        if model != "external":
            return None, model
        runner = runner or config.get("runner")
        if not runner:
            raise InvalidInput(
                f"profile {profile!r} is external (a process outside rooms): set runner: in .rooms.yaml "
                "(e.g. [claude, -p]) so rooms knows what to start for it"
            )
        return list(runner), None
    runner = runner or config.get("runner")
    if runner:
        return list(runner), None
    return None, config.default_model


def start_spawn(
    project: Project, config: Config, parent: str, prompt: str, *, description: str | None = None,
    profile: str | None = None, runner: list[str] | None = None,
) -> Spawn:
    """Start PROMPT as a new agent spawned by `parent`; returns at once with the record."""
    validate_name(parent, "spawner")
    if not prompt or not prompt.strip():
        raise InvalidInput("the spawn prompt is empty: say what the new agent should do")
    if runner is not None and (not runner or not all(isinstance(a, str) for a in runner)):
        raise InvalidInput("runner must be a non-empty list of arguments")
    if profile is not None:
        validate_name(profile, "profile (agent id)")
    plan_runner, model = _plan(project, config, profile, runner)
    spawn_id = new_id("s").lower()
    alive = locks.hold_liveness(alive_lock_path(project, spawn_id))  # a fresh file: uncontended
    try:
        with locked(layout.spawn_aliases_lock(project), what="the spawn alias registry"):
            spawns = list_spawns(project)
            depth = depth_for(parent, spawns)
            limit = max_depth(config)
            if depth > limit:
                raise SpawnDepthExceeded(
                    f"{parent} is at spawn depth {depth - 1}; max_spawn_depth is {limit} "
                    "(raise it in .rooms.yaml if deeper trees are intended)"
                )
            taken = {s.alias for s in spawns} | session_names(project) | {parent}
            spawn = Spawn(
                id=spawn_id, parent=parent, alias=choose_alias(description, taken), prompt=prompt,
                description=(description or "").strip(), profile=profile, runner=plan_runner, model=model,
                depth=depth, status="starting", created=now_iso(), host=host_name(),
            )
            save_spawn(project, spawn)
        try:
            pid = _launch_worker(project, spawn, alive)
        except OSError as exc:
            reason = f"could not start the spawn's worker process: {exc}"

            def failed(s: Spawn) -> None:
                s.status, s.finished, s.error = "failed", now_iso(), reason

            update_spawn(project, spawn_id, failed)
            raise RoomsError(reason) from None
    finally:
        alive.hand_over()  # the worker keeps its own copy of the locked descriptor
    return update_spawn(project, spawn_id, lambda s: setattr(s, "pid", s.pid or pid))


def _package_parent() -> str:
    """The directory holding this rooms_cli package (read from this file's own path)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))



def worker_env(project: Project, spawn: Spawn, extra: dict[str, Any] | None = None) -> dict[str, str]:
    """The allow-listed environment (rooms_cli/core/child_env.py) for the worker of `spawn` and its
    runner: no lease or instance of the spawner's, no API key but the spawn's own model's, plus
    the top-level `pass_env:` names of .rooms.yaml."""
    from rooms_cli.core.child_env import child_env, provider_env_names
    from rooms_cli.project.config import load_config

    config = load_config(project)
    names = [str(n) for n in (config.get("pass_env") or [])]
    if spawn.model:
        from rooms_cli.models import parse_model

        spec = config.providers().get(parse_model(spawn.model)[0])
        names += provider_env_names(spec) if spec else []
    env = child_env(names)
    env["ROOMS_DIR"] = str(project.root)
    # the worker must import this same rooms_cli, installed or not
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_package_parent(), os.environ.get("PYTHONPATH", "")) if p)
    env.update(extra or {})
    return env


def _launch_worker(project: Project, spawn: Spawn, alive: locks.HeldLock) -> int:
    import subprocess  # here, not at the top: `rooms send` reads spawns (the roster) and starts none (~3 ms)

    lock_fd = alive.fd
    assert lock_fd is not None  # held until hand_over(), after the launch
    with files.open_for_append(log_path(project, spawn.id)) as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rooms_cli.messaging.worker", "spawn", spawn.id, "--lock-fd", str(lock_fd)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            cwd=str(project.root), env=worker_env(project, spawn), pass_fds=(lock_fd,),
            start_new_session=True,  # outlives `rooms spawn` and its terminal
        )
    _forget_child(proc)
    return proc.pid


def _forget_child(proc: subprocess.Popen[Any]) -> None:
    # A long-lived spawner (the Python API, tests) must not keep zombies: reap the worker in a
    # daemon thread when it exits. A short `rooms spawn` process exits first and init adopts it.
    import threading

    threading.Thread(target=proc.wait, daemon=True).start()
