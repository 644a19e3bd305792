"""Agent definitions: `.rooms/agents/<id>.md`, YAML frontmatter + the system directive as body.

Every field is validated with a clear error naming the file and the field. Unknown fields warn.
"""

from __future__ import annotations

import os

from rooms_cli.core import terminal
from rooms_cli.core.errors import InvalidData, InvalidInput, NotFound
from rooms_cli.core.markdown import lines, yaml_fields
from rooms_cli.core.records import asdict, dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.store import files, layout
from rooms_cli.store.ids import validate_name
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

VOICE_KEYS = ("tone", "quirk", "line")


@dataclass
class Agent:
    """An agent as defined in `.rooms/agents/<id>.md`."""

    id: str
    directive: str
    name: str = ""
    tags: list[str] = field(default_factory=list)
    disposition: str = ""
    model: str | None = None  # None: the project's default_model
    quiet: bool = False
    idle: bool = False
    owner: str | None = None
    temperature: float | None = None
    context_window: int = 8192
    max_tokens: int | None = None  # the reply limit for this agent (models/limits.py: reply_limit)
    voice: dict[str, str] = field(default_factory=dict)
    affinity: dict[str, float] = field(default_factory=dict)
    capabilities: list[str] = field(default_factory=list)
    wake: bool = False
    path: str | None = None  # where it was read from (relative to the project)

    @property
    def display_name(self) -> str:
        return self.name or self.id.replace("-", " ").replace("_", " ").title()

    def model_string(self, default_model: str) -> str:
        return self.model or default_model

    def is_external(self, default_model: str = "offline") -> bool:
        return self.model_string(default_model) == "external"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_FIELDS = {
    "id", "name", "tags", "disposition", "model", "quiet", "idle", "owner", "temperature",
    "context_window", "max_tokens", "voice", "affinity", "capabilities", "wake",
}


def _fail(where: str, fld: str, expected: str, value: object) -> InvalidData:
    return InvalidData(f"{where}: field {fld!r} must be {expected}, found {value!r}")


def _refuse_non_mapping_frontmatter(text: str, where: str) -> None:
    """Refuse what python-frontmatter silently accepts: an unclosed block (the fields would become
    part of the directive) and a block that is a list or a bare string (dropped)."""
    import yaml

    lines = [line.rstrip("\r") for line in text.lstrip("\ufeff").split("\n")]  # a lone CR ends no line
    if not lines or lines[0].strip() != "---":
        return
    closing = next((i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---"), None)
    if closing is None:
        raise InvalidData(f"{where}: the frontmatter is not closed: add a line '---' after the last field")
    try:
        data = yaml.safe_load("\n".join(lines[1:closing]))
    except yaml.YAMLError:
        return  # reported by the frontmatter parser with its line
    if data is not None and not isinstance(data, dict):
        raise InvalidData(f"{where}: the frontmatter must be a mapping of fields such as 'tags: [a, b]', found {type(data).__name__}")


def read_frontmatter(text: str, where: str) -> tuple[dict[str, Any], str]:
    """(fields, directive text) of a definition file, before validation; `where` names it in errors."""
    import frontmatter
    import yaml

    try:
        post = frontmatter.loads(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise InvalidData(f"{where}: the frontmatter is not valid YAML{at}: {getattr(exc, 'problem', exc)}") from None
    # what else frontmatter raises: ValueError (JSON frontmatter, undecodable text), TypeError (a key
    # that is not a string: Post takes the keys as keyword arguments), RecursionError (nesting past the stack)
    except (ValueError, TypeError, RecursionError) as exc:
        raise InvalidData(f"{where}: cannot read the frontmatter: {exc}") from None
    _refuse_non_mapping_frontmatter(text, where)
    return dict(post.metadata), post.content


def _text(meta: dict[str, Any], where: str, key: str) -> str:
    value = meta.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(where, key, "text", value)
    return value


def _flag(meta: dict[str, Any], where: str, key: str) -> bool:
    value = meta.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _fail(where, key, "true or false", value)
    return value


def _words(meta: dict[str, Any], where: str, key: str) -> list[str]:
    """A list of words, also written as one comma-separated string."""
    value = meta.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(where, key, "a list of words", value)
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _token_count(where: str, key: str, value: object, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise _fail(where, key, f"a whole number of tokens (at least {least})", value)
    return value


def _temperature(meta: dict[str, Any], where: str) -> float | None:
    value = meta.get("temperature")
    if value is None:
        return None
    if not _is_number(value) or not 0 <= value <= 2:
        raise _fail(where, "temperature", "a number from 0 to 2", value)
    return float(value)


def _voice(meta: dict[str, Any], where: str) -> dict[str, str]:
    voice = meta.get("voice") or {}
    if not isinstance(voice, dict) or not all(isinstance(v, str) for v in voice.values()):
        raise _fail(where, "voice", "a mapping such as {tone: measured, quirk: …, line: …}", voice)
    for key in voice:
        if key not in VOICE_KEYS:
            raise InvalidData(f"{where}: field 'voice' has unknown key {key!r}; use tone, quirk and line")
    return dict(voice)


def _affinity(meta: dict[str, Any], where: str) -> dict[str, float]:
    affinity = meta.get("affinity") or {}
    if not isinstance(affinity, dict):
        raise _fail(where, "affinity", "a mapping of agent id to a number from -1 to 1", affinity)
    clean: dict[str, float] = {}
    for other, value in affinity.items():
        if not _is_number(value) or not -1 <= value <= 1:
            raise InvalidData(f"{where}: field 'affinity.{other}' must be a number from -1 to 1, found {value!r}")
        clean[str(other)] = float(value)
    return clean


def _model(meta: dict[str, Any], where: str) -> str | None:
    model = meta.get("model")
    if model is None:
        return None
    if not isinstance(model, str) or not model.strip():
        raise _fail(where, "model", "a model string such as offline or ollama:llama3.2", model)
    return model.strip()


def _owner(meta: dict[str, Any], where: str) -> str | None:
    owner = meta.get("owner")
    if owner is not None and not isinstance(owner, str):
        raise _fail(where, "owner", "a name", owner)
    return owner


def parse_agent(text: str, where: str, default_id: str, fields: tuple[dict[str, Any], str] | None = None) -> Agent:
    """Build an Agent from the text of a definition file (or its already read `fields`).

    Each field has its reader above, which names the file and the field when the value is wrong."""
    meta, content = fields if fields is not None else read_frontmatter(text, where)
    meta = dict(meta)
    for key in meta:
        if key not in _FIELDS:
            terminal.warn(f"{where}: unknown field {key!r} ignored")
    try:
        valid_id = validate_name(meta.get("id", default_id), "agent id")
    except InvalidInput as exc:
        raise InvalidData(f"{where}: field 'id': {exc}") from None
    temperature = _temperature(meta, where)
    window = _token_count(where, "context_window", meta.get("context_window", 8192), 256)
    max_tokens = None if meta.get("max_tokens") is None else _token_count(where, "max_tokens", meta["max_tokens"], 1)
    voice, affinity = _voice(meta, where), _affinity(meta, where)
    model, owner = _model(meta, where), _owner(meta, where)
    directive = lines(content).strip()  # a lone "\r" as the file read as text gives it (core/markdown.py)
    if not directive:
        raise InvalidData(f"{where}: the system directive (the text after the frontmatter) is missing")
    return Agent(
        id=valid_id,
        directive=directive,
        name=_text(meta, where, "name"),
        tags=_words(meta, where, "tags"),
        disposition=_text(meta, where, "disposition"),
        model=model,
        quiet=_flag(meta, where, "quiet"),
        idle=_flag(meta, where, "idle"),
        owner=owner,
        temperature=temperature,
        context_window=window,
        max_tokens=max_tokens,
        voice=voice,
        affinity=affinity,
        capabilities=_words(meta, where, "capabilities"),
        wake=_flag(meta, where, "wake"),
    )


def check_model(agent: Agent, project: Project, where: str) -> None:
    """Refuse a model string naming a provider that does not exist."""
    from rooms_cli.project.config import load_config

    if agent.model is None:
        return
    provider = agent.model.split(":", 1)[0]
    if provider not in load_config(project).providers():
        known = ", ".join(sorted(load_config(project).providers()))
        raise InvalidData(f"{where}: field 'model' names unknown provider {provider!r}; known providers: {known}")


def agent_path(project: Project, agent_id: str) -> str:
    return layout.agent_file(project, agent_id)


_cache: dict[tuple[str, int, int], Agent] = {}


def load_agent_file(project: Project, path: str) -> Agent:
    stat = os.stat(path)
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key in _cache:
        return _cache[key]
    where = project.relative(path)
    try:
        text = files.read_text(path)
    except UnicodeDecodeError:
        raise InvalidData(f"{where}: not UTF-8 text") from None
    except OSError as exc:
        raise InvalidData(f"cannot read {where}: {exc.strerror}") from None
    from rooms_cli.store import conflicts

    conflicts.check_text(where, text)
    from rooms_cli.store import parsed

    fields = parsed.cached(project.dir, path, lambda: list(read_frontmatter(text, where)), stat)
    agent = parse_agent(text, where, os.path.splitext(os.path.basename(path))[0], (fields[0], fields[1]))
    check_model(agent, project, where)
    agent.path = where
    _cache[key] = agent
    return agent


def list_agents(project: Project) -> list[Agent]:
    """Every agent definition, sorted by id."""
    folder = layout.agents_dir(project)
    return [load_agent_file(project, os.path.join(folder, f"{agent_id}.md")) for agent_id in agent_ids(project)]


def agent_ids(project: Project) -> list[str]:
    """The agents defined: `agents/<id>.md` whose name is an id (a `README.md` there is skipped, with a warning)."""
    return layout.record_names(project, layout.agents_dir(project), ".md", "agent id")


def load_agent(project: Project, agent_id: str) -> Agent:
    """One agent by id; NotFound lists the known ones."""
    validate_name(agent_id, "agent id")
    path = agent_path(project, agent_id)
    if not os.path.exists(path):
        known = ", ".join(agent_ids(project)) or "none yet (rooms agent new ID, or rooms init --example roundtable)"
        raise NotFound(f"no agent {agent_id!r}; known agents: {known}")
    return load_agent_file(project, path)


def render_agent(agent: Agent) -> str:
    """The definition file text for `agent` (frontmatter + directive), which reads back as `agent` with
    the directive's line breaks as "\\n" (core/markdown.py: what every reader of the file sees)."""
    meta: dict[str, Any] = {"id": agent.id}
    if agent.name:
        meta["name"] = agent.name
    meta["tags"] = list(agent.tags)
    if agent.disposition:
        meta["disposition"] = agent.disposition
    if agent.model:
        meta["model"] = agent.model
    for key in ("quiet", "idle", "wake"):
        if getattr(agent, key):
            meta[key] = True
    if agent.owner:
        meta["owner"] = agent.owner
    if agent.temperature is not None:
        meta["temperature"] = agent.temperature
    if agent.context_window != 8192:
        meta["context_window"] = agent.context_window
    if agent.max_tokens is not None:
        meta["max_tokens"] = agent.max_tokens
    if agent.voice:
        meta["voice"] = dict(agent.voice)
    if agent.affinity:
        meta["affinity"] = dict(agent.affinity)
    if agent.capabilities:
        meta["capabilities"] = list(agent.capabilities)
    return f"---\n{yaml_fields(meta, flow_lists=True)}---\n{lines(agent.directive).strip()}\n"


def create_agent(project: Project, agent: Agent, *, overwrite: bool = False) -> str:
    """Write a new agent definition atomically; refuses to replace an existing one."""
    from rooms_cli.core.errors import Conflict
    from rooms_cli.store import atomic

    path = agent_path(project, agent.id)
    if os.path.exists(path) and not overwrite:
        raise Conflict(f"agent {agent.id!r} already exists at {project.relative(path)}", code="name_taken")
    text = render_agent(agent)
    parse_agent(text, project.relative(path), agent.id)  # never write what we could not read back
    atomic.write_text(path, text)
    return path
