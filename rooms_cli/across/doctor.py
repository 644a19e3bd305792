"""`rooms doctor`: check the integrity of `.rooms/` and say what to do about each finding.

Checks: the config and every agent file load; no file holds git conflict markers (an unresolved
merge) and `.rooms/.gitattributes`/`.gitignore` have the lines merging needs (docs/git.md); every
JSONL log parses (torn tails, corrupt lines);
every JSON/YAML state file parses; nothing under .rooms/ is a symlink leading outside it; temp files
left by killed writers; providers used by agents are reachable; plus each part's own checks
(dangling leases, orphan spawns…) named in `rooms_cli.across.registry.DOCTOR_CHECKS` as
`(project, config) -> list[Finding]`. A part check that cannot even be imported is an error finding
(a broken part must never read as a healthy one).
"""

from __future__ import annotations

import os
from pathlib import Path

from rooms_cli.core.errors import RoomsError
from rooms_cli.core.findings import Finding
from rooms_cli.core.text import count
from rooms_cli.store import atomic, files, jsonl, layout
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config

__all__ = ["Finding", "run_doctor"]


def check_files(project: Project) -> list[Finding]:
    findings: list[Finding] = []
    root = Path(project.dir).resolve()
    for path in map(Path, files.every_file(project.dir)):
        rel = project.relative(path)
        if path.is_symlink():
            target = path.resolve()
            if target != root and root not in target.parents:
                findings.append(Finding("error", "symlink", f"{rel} is a symlink leading outside .rooms/ ({target})",
                                        f"remove it: rm {rel}", rel))
            continue
        name = path.name
        if name.endswith(".lock"):
            continue
        conflict = _conflict_in(path)
        if conflict is not None:
            findings.append(Finding(
                "error", "merge-conflict", f"{rel} has an unresolved git merge (conflict markers at line {conflict})",
                f"edit {rel}: keep the lines of both sides and delete the marker lines (<<<<<<<, =======, >>>>>>>), "
                f"then `git add {rel}`" + (" — a log merges by itself once .rooms/.gitattributes says *.jsonl merge=union; "
                                          "after `git merge B C` (an octopus merge) abort it and merge one branch at a time"
                                          if name.endswith(".jsonl") else ""), rel))
            continue
        if name.endswith(".tmp"):
            findings.append(Finding("warning", "temp-file", f"{rel} is a temporary file left by an interrupted write",
                                    f"it holds nothing acknowledged; remove it: rm {rel}", rel))
            continue
        try:
            if name.endswith(".jsonl"):
                scan = jsonl.scan(path)
                for lineno, reason in scan.bad:
                    findings.append(Finding("error", "log", f"{rel}: line {lineno} {reason}",
                                            f"fix or delete line {lineno} (readers skip it meanwhile)", rel))
                if scan.torn:
                    findings.append(Finding("warning", "log", f"{rel} ends in an unfinished line (a writer crashed or is writing)",
                                            "the next append repairs it; nothing acknowledged was in that line", rel))
                elif scan.unfinished:
                    findings.append(Finding("warning", "log", f"{rel} ends without a newline (its last record is whole and read)",
                                            "the next append adds the newline; until then a git merge could glue a line to it", rel))
                findings.extend(_future_stamps(rel, path, scan.records) + _blank_lines(rel, path, scan))
                if not scan.records and not scan.bad and path.name == "state.jsonl" and path.parent.parent == Path(project.dir) / "rooms":
                    findings.append(Finding("error", "room", f"{rel} is empty: no room {path.parent.name!r} is there, yet its "
                                            "folder holds the name (a version before 0.2 killed at its first write left it)",
                                            f"remove it (rm {rel}), then rooms room create {path.parent.name} if you want it", rel))
            elif name.endswith(".json"):
                atomic.read_json(path)
            elif name.endswith((".yaml", ".yml")):
                atomic.read_yaml(path)
        except RoomsError as err:
            findings.append(Finding("error", "file", err.message, f"repair or restore {rel} (e.g. from git)", rel))
    return findings


def _future_stamps(rel: str, path: Path, records: list[dict[str, Any]]) -> list[Finding]:
    """A warning for a log holding records stamped further ahead of this clock than the allowed skew: the
    clock does not follow them (store/clock.py), so records written after them sort before them."""
    from rooms_cli.store import clock

    moment = clock.now()
    ahead = [(seconds, record) for record in records if (seconds := clock.future_stamp(record.get("hlc"), moment)) is not None]
    if not ahead:
        return []
    seconds, record = max(ahead, key=lambda item: item[0])
    stamp = str(record["hlc"]).encode()
    line = next((n for n, raw in enumerate(files.read_bytes(path).split(b"\n"), 1) if stamp in raw), None)
    ident = next((record[k] for k in ("id", "eid") if isinstance(record.get(k), str)), None)
    where = f"{rel} line {line}" if line else rel
    return [Finding("warning", "future-stamp", f"{where}: {count(len(ahead), 'record')} stamped more than "
                    f"{clock.describe_duration(clock.MAX_SKEW_S)} ahead of this clock, the furthest "
                    f"{clock.describe_duration(seconds)} ahead ({record['hlc']}{f', {ident}' if ident else ''}): its "
                    "writer's clock ran ahead or the line was edited; rooms orders it by its stamp but does not follow it",
                    f"check the clock of the machine that wrote it; if the stamp is wrong, fix it in {rel}", rel)]


def _blank_lines(rel: str, path: Path, scan: jsonl.Scan) -> list[Finding]:
    """A warning for each blank line of a log: readers skip it, nothing is lost, but it is no record."""
    data = files.read_bytes(path)
    if b"\n\n" not in data and not data.startswith(b"\n") and b"\n \n" not in data:
        return []
    return [Finding("warning", "log", f"{rel} line {n} is blank (readers skip it)", f"nothing is lost; to tidy, delete line {n} of {rel}", rel)
            for n, raw in enumerate(data.split(b"\n")[:-1], 1) if not raw.strip()]


def _conflict_in(path: Path) -> int | None:
    from rooms_cli.store import conflicts

    try:
        data = files.read_bytes(path)
    except OSError:
        return None  # reported by the parse checks
    if conflicts.conflict_line(data) is not None:
        return conflicts.conflict_line(data)
    if path.name.endswith(".jsonl"):
        for lineno, raw in enumerate(data.split(b"\n"), 1):
            if conflicts.is_marker(raw):
                return lineno
    return None


# folder (under .rooms/), the suffix of its records' files, what a record's name must be
RECORD_FOLDERS = (
    ("agents", ".md", "agent id"),
    ("groups", ".jsonl", "group name"),
    ("inbox", ".jsonl", "agent id"),
    ("inbox/read", ".jsonl", "agent id"),
    ("memories", ".jsonl", "agent id"),
    ("spawns", ".json", "spawn id"),
    ("status", ".jsonl", "agent id"),
)

# files of formats rooms never released and no longer reads (CHANGELOG, issue 26): glob under .rooms/, what it held
DROPPED_FORMATS = (
    ("rooms/*/room.yaml", "room state, now in rooms/<room>/state.jsonl"),
    ("chat/*.md", "a saved transcript, now one file a save: chat/<room>/<save-id>.md"),
    ("status/*.json", "an agent's status, now in status/<agent>.jsonl"),
    ("schedule/state.json", "what the schedule fired, now in schedule/fired.jsonl"),
)


def check_strays(project: Project) -> list[Finding]:
    """Files that are not records of their part: a name that is not a valid name (`spawns/README.json`,
    `groups/Notes.jsonl`, bytes that are not UTF-8), so every reader skips them. An error: if it holds
    records (a log renamed by hand, a case-folding file system), they are dropped. And a file of a format
    rooms no longer reads (`DROPPED_FORMATS`): a warning, so nobody wonders where its content went."""
    from rooms_cli.store.ids import is_valid_name

    findings = []

    def stray(path: Path, what: str) -> None:
        from rooms_cli.core import terminal

        rel = terminal.safe(project.relative(path))  # bytes that are not UTF-8 shown as \\xff
        findings.append(Finding("error", "stray", f"{rel} is not read by rooms: its name is not a valid {what} "
                                f"(lowercase letters, digits, '.', '_' or '-'), so every reader skips it",
                                f"move it out of .rooms/, or rename it to a valid {what} if it holds records", rel))

    for folder, suffix, what in RECORD_FOLDERS:
        directory = Path(project.dir) / folder
        for entry in files.names(directory):
            if entry.endswith(suffix) and not entry.startswith(".") and not is_valid_name(entry[: -len(suffix)]):
                stray(directory / entry, what)
    rooms = Path(project.dir) / "rooms"
    for entry in files.names(rooms):
        if not (rooms / entry).is_dir():
            continue
        if not is_valid_name(entry):
            stray(rooms / entry, "room id")
            continue
        sessions = rooms / entry / "sessions"
        for name in files.names(sessions):
            if name.endswith(".jsonl") and not name.startswith(".") and not is_valid_name(name[: -len(".jsonl")]):
                stray(sessions / name, "agent id")
    for pattern, held in DROPPED_FORMATS:
        for path in files.matching(project.dir, pattern):
            rel = project.relative(path)
            findings.append(Finding("warning", "dropped-format", f"{rel} is in a format rooms no longer reads ({held}); "
                                    "it is ignored", f"nothing reads it; remove it: rm {rel}", rel))
    return findings


def check_octopus(project: Project) -> list[Finding]:
    """A merge of several branches at once in progress (MERGE_HEAD names two or more commits): git's
    octopus strategy runs no merge driver, so every log both sides appended to conflicts."""
    from rooms_cli.core.findings import octopus_recovery

    git = _git_dir(Path(project.root))
    if git is None:
        return []
    try:
        heads = files.read_text(git / "MERGE_HEAD").split()
    except (OSError, UnicodeDecodeError):
        return []
    if len(heads) < 2:
        return []
    return [Finding("error", "octopus", f"an octopus merge of {len(heads)} branches is in progress and .rooms/ cannot "
                    "merge that way", octopus_recovery(), str(git / "MERGE_HEAD"))]


def _git_dir(start: Path) -> Path | None:
    """The git directory of the checkout holding `start` (`.git`, or the directory a `.git` file names)."""
    for folder in (start, *start.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            try:
                text = files.read_text(dot).strip()
            except (OSError, UnicodeDecodeError):
                return None
            if text.startswith("gitdir:"):
                named = Path(text.partition(":")[2].strip())
                return named if named.is_absolute() else folder / named
            return None
    return None


def check_caches(project: Project) -> list[Finding]:
    """What sits in `.rooms/run/` (this machine's caches, out of git) that rooms did not put there: a
    pickle (rooms never loads one: its caches are JSON) or any file git tracks there (a clone carried
    it, `git add -f`). Readers ignore both — a cache is trusted only for the very files it was built
    from — so each is a warning naming it."""
    run = Path(project.dir) / "run"
    findings = []
    for path in map(Path, files.every_file(run)):
        if path.name.endswith((".pickle", ".pkl")):
            rel = project.relative(path)
            findings.append(Finding("warning", "cache", f"{rel} is a pickle, which rooms never loads (its caches are JSON); "
                                    "it was planted or left by an old version", f"remove it: rm {rel}", rel))
    seen = {f.file for f in findings}
    for rel in _tracked(project, run):
        if rel not in seen:
            findings.append(Finding("warning", "cache", f"{rel} is tracked by git, but .rooms/run/ is this machine's "
                                    "and a clone's copy is never trusted", f"git rm --cached -- {rel}", rel))
    return findings


def _tracked(project: Project, folder: Path) -> list[str]:
    """The files under `folder` that git tracks, relative to the project root (none without git)."""
    from rooms_cli.core.errors import RoomsError
    from rooms_cli.store.sync.engine import Git

    try:  # paths come relative to cwd, as bytes: any name git can hold
        proc = Git(project.root, purpose="rooms doctor").run("ls-files", "-z", "--", str(folder), check=False)
    except RoomsError:
        return []
    if proc.returncode != 0:
        return []
    return [os.fsdecode(name) for name in proc.stdout.split(b"\0") if name]


def check_git_files(project: Project) -> list[Finding]:
    """`.rooms/.gitattributes` and `.gitignore` hold what merging between clones needs."""
    from rooms_cli.store.paths import GITATTRIBUTES_LINES, GITIGNORE_LINES

    findings = []
    for name, needed, why in (
        (".gitattributes", GITATTRIBUTES_LINES, "without it, two clones that both appended to a log conflict in git"),
        (".gitignore", GITIGNORE_LINES, "without it, lock and temporary files get committed"),
    ):
        path = Path(project.dir) / name
        try:
            have = {line.strip() for line in files.read_text(path).splitlines()}
        except FileNotFoundError:
            have = set()
        except (OSError, UnicodeDecodeError):
            continue  # reported by check_files
        missing = [line for line in needed if line not in have]
        if missing:
            rel = project.relative(path)
            lines = "\\n".join(missing)
            findings.append(Finding("warning", "git", f"{rel} lacks {', '.join(repr(x) for x in missing)}: {why}",
                                    f"printf '{lines}\\n' >> {rel} && git add {rel}", rel))
    return findings


def check_definitions(project: Project) -> list[Finding]:
    from rooms_cli.agents.definitions import load_agent_file
    from rooms_cli.project.config import load_config

    findings: list[Finding] = []
    try:
        load_config(project)
    except RoomsError as err:
        findings.append(Finding("error", "config", err.message, "fix .rooms.yaml (see .rooms.yaml.example)", ".rooms.yaml"))
    folder = layout.agents_dir(project)
    for agent_id in layout.record_names(project, folder, ".md", "agent id"):
        path = Path(folder) / f"{agent_id}.md"
        rel = project.relative(path)
        try:
            agent = load_agent_file(project, str(path))
        except RoomsError as err:
            findings.append(Finding("error", "agent", err.message, "fix the field named in the message", rel))
            continue
        if agent.id != agent_id:
            # found as `agent_id` (its file) but speaking as `agent.id`: mentions, inboxes and rosters disagree
            findings.append(Finding("error", "agent", f"{rel}: its id is {agent.id!r}, not its file name {agent_id!r}",
                                    f"make them agree: set `id: {agent_id}` in {rel}, or rename the file to {agent.id}.md", rel))
    return findings


def check_providers(project: Project, config: Config) -> list[Finding]:
    """Each provider an agent uses answers (HTTP reachability / command on PATH); offline needs nothing."""
    import shutil

    from rooms_cli.agents.definitions import list_agents
    from rooms_cli.models import parse_model

    try:
        agents = list_agents(project)
    except RoomsError:
        return []  # reported by check_definitions
    used: dict[str, list[str]] = {}
    for agent in agents:
        name, _ = parse_model(agent.model_string(config.default_model))
        used.setdefault(name, []).append(agent.id)
    findings = []
    providers = config.providers()
    for name, agent_ids in sorted(used.items()):
        spec = providers.get(name)
        if spec is None:
            continue
        who = ", ".join(agent_ids)
        if spec["type"] == "command":
            exe = spec["command"][0]
            if not (shutil.which(exe) or Path(exe).is_file()):
                findings.append(Finding("error", "provider", f"provider {name!r} runs {exe!r}, which is not on PATH (used by {who})",
                                        f"install {exe} or change providers.{name}.command", ".rooms.yaml"))
        elif spec["type"] in ("openai", "anthropic"):
            problem = _http_unreachable(name, spec, config)
            if problem:
                findings.append(Finding("error", "provider", f"provider {name!r} is unreachable: {problem} (used by {who})",
                                        f"start the server or fix providers.{name}.base_url; then `rooms models test {agent_ids[0]}`",
                                        ".rooms.yaml"))
    return findings


def _http_unreachable(name: str, spec: dict[str, Any], config: Config) -> str | None:
    """None when the provider's server answers HTTP at all (any status), else what went wrong."""
    import httpx

    from rooms_cli.models import get_provider

    provider = get_provider(name, config)
    url = provider.base_url() if hasattr(provider, "base_url") else spec.get("base_url") or "https://api.anthropic.com"
    try:
        httpx.get(url.rstrip("/") + "/models", timeout=3.0)
    except httpx.HTTPError as exc:
        from rooms_cli.core.child_env import mask_text

        return f"{mask_text(url)}: {type(exc).__name__}"
    return None


def check_parts(project: Project, config: Config) -> list[Finding]:
    """Each part's own checks (registry.DOCTOR_CHECKS); one that cannot be loaded is an error."""
    from rooms_cli.across.registry import DOCTOR_CHECKS

    findings: list[Finding] = []
    for part, load in DOCTOR_CHECKS.items():
        try:
            check = load()
        except ImportError as exc:
            findings.append(Finding("error", part, f"the {part} checks cannot be loaded ({type(exc).__name__}: {exc})",
                                    f"reinstall rooms or repair {exc.name or f'rooms_cli.{part}'}"))
            continue
        try:
            findings.extend(check(project, config))
        except RoomsError as err:
            findings.append(Finding("error", part, err.message, "see the message"))
    return findings


def run_doctor(project: Project, config: Config, *, providers: bool = True) -> dict[str, Any]:
    layout.quiet_strays()  # each stray file is a finding here, not a warning too
    try:
        findings = (check_files(project) + check_strays(project) + check_octopus(project) + check_git_files(project)
                    + check_caches(project) + check_definitions(project))
        findings.extend(check_parts(project, config))
        if providers:
            findings.extend(check_providers(project, config))
    finally:
        layout.quiet_strays(False)
    from rooms_cli.core.child_env import mask_text

    for finding in findings:  # a finding that quotes configuration never shows its credentials
        finding.message, finding.fix = mask_text(finding.message), mask_text(finding.fix)
    errors = sum(1 for f in findings if f.severity == "error")
    return {"ok": errors == 0, "errors": errors, "warnings": len(findings) - errors, "findings": findings}
