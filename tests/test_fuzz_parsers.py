"""Fuzzing every parser with hypothesis: logs of each kind, saved transcripts, agent files, config,
@mentions, slash commands, durations, times, id prefixes and path segments.

Two kinds of property: a parser given anything returns or raises the project's typed error (never
another exception), and what rooms writes it reads back unchanged. The logs are fuzzed through
the commands a user runs (in-process): records of the template's own logs with fields replaced by
arbitrary JSON values, odd records, and raw bytes — no command may fail with anything but one
clear sentence.
"""

from __future__ import annotations

import json
import os
import shutil
import string
from pathlib import Path

import hardening_kit
import pytest
from hardening_kit import invoke, problems_with_error
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rooms_cli.core.errors import InvalidData, InvalidInput, NotFound, UsageError

template = hardening_kit.template  # fixture
COUNTS: dict[str, int] = {}
# HARDENING_EXAMPLES scales every budget (bench/soak.py sets it high); CI keeps the defaults
SCALE = float(os.environ.get("HARDENING_EXAMPLES", "1"))
FAST = settings(max_examples=int(100 * SCALE), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SLOW = settings(max_examples=int(12 * SCALE), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


def count(name: str) -> None:
    COUNTS[name] = COUNTS.get(name, 0) + 1


json_scalars = st.none() | st.booleans() | st.integers(-2**63, 2**63) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
json_values = st.recursive(json_scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
                           max_leaves=8)


# --- the store: JSONL, durations, times, ids, paths ----------------------------------------------

@FAST
@given(st.binary(max_size=400))
def test_any_bytes_parse_as_a_log_without_raising(data):
    from rooms_cli.store import jsonl

    count("jsonl bytes")
    scan = jsonl.parse_bytes(data)
    assert all(isinstance(r, dict) for r in scan.records)
    last = data[data.rfind(b"\n") + 1:]  # a last line that parses is kept: only one that does not is torn
    assert scan.end <= len(data) and scan.torn == (bool(last.strip()) and not _parses(last))
    assert scan.unfinished == (bool(last.strip()) and _parses(last))


def _parses(raw: bytes) -> bool:
    try:
        json.loads(raw.decode("utf-8"))
    except ValueError:
        return False
    return True


@FAST
@given(records=st.lists(st.dictionaries(st.text(max_size=8), json_values, max_size=5), max_size=8), torn=st.binary(max_size=30))
def test_records_written_come_back_whatever_torn_tail_a_crash_left(records, torn, tmp_path_factory):
    from rooms_cli.store import jsonl

    count("jsonl round trip")
    records = [{k: v for k, v in r.items() if k != "hlc"} for r in records]  # the store's own field
    path = tmp_path_factory.mktemp("log") / "x.jsonl"
    jsonl.append_many(path, records[:3])
    with open(path, "ab") as handle:  # a writer killed mid-line
        handle.write(torn.replace(b"\n", b""))
    jsonl.append_many(path, records[3:])
    tail = torn.replace(b"\n", b"")
    kept = [json.loads(tail)] if _parses(tail) and isinstance(json.loads(tail), dict) else []  # whole JSON is no torn tail
    assert [{k: v for k, v in r.items() if k != "hlc"} for r in jsonl.read(path)] == records[:3] + kept + records[3:]


units = st.sampled_from([("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)])


@FAST
@given(st.lists(st.tuples(st.integers(0, 999), units), min_size=1, max_size=4))
def test_a_duration_is_the_sum_of_its_parts(parts):
    from rooms_cli.store.clock import parse_duration

    count("duration")
    from rooms_cli.core.errors import InvalidInput
    from rooms_cli.store.clock import MAX_DURATION_S

    text = "".join(f"{n}{u}" for n, (u, _) in parts)
    seconds = sum(n * f for n, (_, f) in parts)
    if seconds <= MAX_DURATION_S:
        assert parse_duration(text) == pytest.approx(seconds)
    else:  # longer than any option takes: one sentence naming the largest, exit 2
        with pytest.raises(InvalidInput, match="the largest accepted is 365d") as refused:
            parse_duration(text)
        assert refused.value.exit_code == 2


@FAST
@given(st.text(max_size=20) | st.sampled_from(["-1s", "1e400", "nan", "inf", "1.5.5m", "m", "10 m", "٣s", "1_0s"]))
def test_any_duration_text_is_a_finite_number_or_a_clear_error(text):
    from rooms_cli.store.clock import parse_duration

    count("duration")
    try:
        seconds = parse_duration(text)
    except InvalidInput as exc:
        assert "duration" in exc.message
        return
    assert 0 <= seconds < float("inf")


@FAST
@given(st.text(max_size=30) | st.datetimes().map(lambda d: d.isoformat()))
def test_any_time_text_is_a_utc_time_or_a_clear_error(text):
    from rooms_cli.store.clock import parse_time

    count("time")
    try:
        moment = parse_time(text)
    except InvalidInput:
        return
    assert moment.utcoffset().total_seconds() == 0


ids = st.builds(lambda p, body: f"{p}-{body}", st.sampled_from(["t", "m", "b", "s"]),
                st.text(alphabet="0123456789ABCDEFGHJKMNPQRSTVWXYZ", min_size=26, max_size=26))


@FAST
@given(st.lists(ids, min_size=1, max_size=6, unique=True), st.data())
def test_an_id_prefix_names_exactly_the_ids_it_starts(candidates, data):
    from rooms_cli.store.ids import resolve_prefix

    count("id prefix")
    prefix = data.draw(st.text(max_size=8) | st.sampled_from(candidates).map(lambda c: c[: data.draw(st.integers(1, len(c)))]))
    try:
        found = resolve_prefix(prefix, candidates, "task id")
    except (NotFound, InvalidInput):
        return
    want = prefix.strip().upper()
    assert found in candidates and (found.upper().startswith(want) or found.split("-", 1)[1].upper().startswith(want))


@FAST
@given(segments=st.lists(st.text(max_size=12) | st.sampled_from(["..", ".", "a/b", "../x", "A", "", "x\x00", "ok"]), min_size=1, max_size=3))
def test_no_path_segment_escapes_rooms(segments, tmp_path_factory):
    from rooms_cli.store.paths import Project

    count("path segments")
    root = tmp_path_factory.getbasetemp() / "seg"
    (root / ".rooms").mkdir(parents=True, exist_ok=True)
    project = Project(root=str(root), dir=str(root / ".rooms"))
    try:
        path = Path(project.path(*segments))
    except InvalidInput:
        return
    assert path.resolve().is_relative_to((root / ".rooms").resolve())


# --- agents and config --------------------------------------------------------------------------

@FAST
@given(st.text(max_size=200) | st.builds(lambda a, b: f"---\n{a}\n---\n{b}", st.text(max_size=80), st.text(max_size=40))
       | st.sampled_from(["---\n---\r0", "---\r\nname: X\r\n---\r\nYou are x.\r\n", "\ufeff---\nname: X\n---\nhi\n"]))
def test_any_agent_file_text_is_an_agent_or_a_clear_error_naming_the_file(text):
    from rooms_cli.agents.definitions import parse_agent

    count("agent file")
    try:
        agent = parse_agent(text, "agents/x.md", "x")
    except InvalidData as exc:
        assert exc.message.startswith("agents/x.md")
        return
    assert agent.directive.strip()
    if text.startswith("---\n") and "\n---\n" not in text[3:] and not text[3:].startswith("---\n"):
        raise AssertionError("an unclosed frontmatter was read as a directive")


names = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=1, max_size=10)
words = st.text(alphabet=string.ascii_letters + " ,.'!?-é☃", max_size=30)
# prose with every way of ending a line: CRLF, a lone CR, NEL, the unicode separators, and the blends of them
line_ends = st.sampled_from(["\r\n", "\r", "\n", "\x85", "\u2028", "\u2029", "\r\r\n", "\n\r", "\x0b", "\x0c"])
prose = st.lists(st.text(max_size=20) | line_ends, max_size=8).map("".join)
message_texts = st.text(max_size=120) | st.sampled_from(["<!-- /rooms:x -->", "---\n", "\n\n**x** at y\n\n", "\r", "-->\n"])
_made = iter(range(10**9))  # a fresh name for each example's file: no example reads another's


def as_lf(text: str) -> str:
    """What rooms keeps of a body's line breaks: each CRLF and each lone CR is one LF (core/markdown.py)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _bare_project(tmp_path_factory, name: str):
    from rooms_cli.store.paths import Project

    root = tmp_path_factory.getbasetemp() / name
    (root / ".rooms").mkdir(parents=True, exist_ok=True)
    return Project(root=str(root), dir=str(root / ".rooms"))


@FAST
@given(names, st.lists(names, max_size=4), st.text(max_size=30), st.text(max_size=30), prose.filter(lambda t: t.strip()),
       st.none() | st.floats(0, 2), st.dictionaries(names, st.floats(-1, 1), max_size=3), st.none() | st.text(min_size=1, max_size=12))
# the cases hypothesis found, run every time: a directive pasted with Windows line ends, a lone CR, a NEL in a name
@example("crlf", [], "", "", "Be brief.\r\nCite the task.\r\n", None, {}, None)
@example("cr", [], "", "", "one\rtwo", None, {}, None)
@example("nel", [], "a\x85b", "", "x", None, {}, None)
def test_an_agent_written_by_rooms_reads_back_the_same(tmp_path_factory, agent_id, tags, name, disposition, directive,
                                                       temperature, affinity, owner):
    """Through the file: every field as given, the directive with its line breaks as "\\n" (a CRLF
    was read back as LF by python-frontmatter, a lone CR as LF by the text read: never the same)."""
    from rooms_cli.agents.definitions import Agent, create_agent, load_agent, parse_agent, render_agent

    count("agent round trip")
    project = _bare_project(tmp_path_factory, "agents")
    agent_id = f"{agent_id}-{next(_made)}"
    agent = Agent(id=agent_id, directive=directive.strip(), name=name, tags=tags, disposition=disposition,
                  temperature=temperature, affinity=affinity, owner=owner)
    create_agent(project, agent)
    for back in (load_agent(project, agent_id), parse_agent(render_agent(agent), "agents/x.md", agent_id)):
        assert (back.id, back.directive, back.name, back.tags, back.disposition, back.temperature, back.affinity, back.owner) == (
            agent.id, as_lf(agent.directive).strip(), agent.name, agent.tags, agent.disposition, agent.temperature,
            agent.affinity, agent.owner)


@FAST
@given(prose.filter(lambda t: t.strip()), st.dictionaries(st.sampled_from(["turns", "tokens", "note"]), st.integers(0, 10**6) | st.text(max_size=10),
                                                      max_size=2))
@example("handed off.\r\nnext: the API\r\n", {})
def test_a_deliberation_written_by_rooms_reads_back_the_same(tmp_path_factory, text, extra):
    """A hand-off note (a model's words) through its file: what `write_deliberation` returns is what
    `latest_deliberation` reads, the note's line breaks as "\\n"."""
    from rooms_cli.chat.handoff import latest_deliberation, write_deliberation

    count("deliberation round trip")
    project = _bare_project(tmp_path_factory, "deliberations")
    agent = f"a{next(_made)}"
    written = write_deliberation(project, agent, "room", text, extra)
    assert written.text == as_lf(text).strip()
    assert latest_deliberation(project, agent) == written


config_keys = st.sampled_from(["user", "default_model", "providers", "leader", "formats", "schedule", "catch_up", "groups",
                               "reducers", "runner", "max_spawn_depth", "wake", "context_threshold", "memory", "other"])
provider_specs = st.fixed_dictionaries({"type": st.sampled_from(["openai", "anthropic", "command", "offline", "x"])},
                                       optional={"base_url": json_values, "command": json_values, "timeout": json_values,
                                                 "max_retries": json_values, "api_key_env": json_values, "headers": json_values})


@FAST
@given(st.dictionaries(config_keys, json_values | st.dictionaries(names, provider_specs, max_size=2), max_size=5) | json_values)
def test_any_config_is_valid_or_a_clear_error_naming_the_key(data):
    from rooms_cli.project.config import validate

    count("config")
    try:
        validate(data, ".rooms.yaml")
    except InvalidData as exc:
        assert exc.message.startswith(".rooms.yaml")


@SLOW
@given(st.text(max_size=120))
def test_any_config_text_loads_or_is_one_sentence(template, tmp_path_factory, text):
    count("config file")
    root = tmp_path_factory.mktemp("cfg")
    shutil.copytree(template / ".rooms" / "agents", root / ".rooms" / "agents")
    (root / ".rooms.yaml").write_text(text)
    out = invoke(["config", "show", "--dir", str(root), "--json"])
    assert not problems_with_error(out, codes=(0, 1)), problems_with_error(out, codes=(0, 1))


# --- chat: @mentions, slash commands, saved transcripts -------------------------------------------

ROSTER = ["researcher", "reviewer", "ops", "architect"]


@FAST
@given(st.text(max_size=80) | st.lists(st.sampled_from(["@jam", "@everyone", "@researcher", "@reseacher", "@@", "@", "hi",
                                                         "@Ops.", "@agents/ops", "@nobody", "email@x.com"]), max_size=6).map(" ".join))
def test_mentions_name_only_agents_and_agents_never_broadcast(text):
    from rooms_cli.chat import addressing

    count("mentions")
    for word in addressing.mentions(text):
        assert word and not word.startswith("@")
    person = addressing.parse(text, ROSTER, ROSTER + ["judge"])
    assert set(person.targets) <= set(ROSTER) and set(person.outside) <= {"judge"}
    agent = addressing.parse(text, ROSTER, ROSTER + ["judge"], from_person=False)
    assert agent.mode in ("open", "direct"), "an agent's @everyone/@jam must stay text"


@FAST
@given(st.text(max_size=40).map(lambda t: "/" + t) | st.sampled_from(["/", "/mute", "/mute a b", "/join", "/drop --no-save",
                                                                       "/halt x", "/'", '/"unclosed', "/MUTE ops"]))
def test_any_slash_line_is_a_command_or_a_usage_error(line):
    from rooms_cli.chat import slash

    count("slash")
    try:
        name, args = slash.parse(line)
    except UsageError as exc:
        assert exc.exit_code == 2 and exc.message
        return
    assert name in slash.COMMANDS and isinstance(args, list)




@FAST
@given(st.lists(st.tuples(names, message_texts), max_size=6))
def test_a_saved_transcript_reads_back_the_same_messages(messages):
    from rooms_cli.chat import saved
    from rooms_cli.chat.transcript import make_message

    count("saved transcript round trip")
    msgs = [make_message("r", speaker, text) for speaker, text in messages]
    doc = saved.encode(saved.SavedTranscript(room="r", saved="2026-11-21T00:00:00.000Z", roster=["a"], messages=msgs))
    back = saved.decode(doc, "chat/r.md")
    assert [(m.speaker, m.text, m.id) for m in back.messages] == [(m.speaker, m.text, m.id) for m in msgs]


@SLOW
@given(st.lists(st.tuples(st.sampled_from(["researcher", "reviewer", "you", "rooms"]), message_texts | prose), max_size=5))
def test_a_saved_transcript_file_gives_back_the_room_s_messages(fuzz_project, monkeypatch, messages):
    """`room save` then `load_saved` (what `join chat/<room>` rehydrates from), through the file: each
    message byte for byte (a message is not prose: its CRs, NELs and markers are the speaker's)."""
    from rooms_cli.chat.lifecycle import load_saved, save
    from rooms_cli.chat.rooms import create_room
    from rooms_cli.chat.transcript import append_message, read_transcript
    from rooms_cli.store.paths import open_project

    count("saved transcript file round trip")
    project = open_project(fuzz_project)
    room = f"saved-{next(_made)}"
    create_room(project, room, agents=["researcher", "reviewer"])
    for speaker, text in messages:
        append_message(project, room, speaker, text)
    save(project, room)
    back = load_saved(project, room)
    assert back is not None
    fields = ("id", "speaker", "text", "kind", "ts", "meta")
    assert [[getattr(m, f) for f in fields] for m in back.messages] == [[getattr(m, f) for f in fields] for m in read_transcript(project, room)]


@FAST
@given(st.text(max_size=300) | st.builds(lambda a, b: f"---\nclass: transcript\nboundary: b\n{a}\n---\n{b}", st.text(max_size=40),
                                         st.text(max_size=200)))
def test_any_saved_transcript_text_decodes_or_is_a_clear_error(text):
    from rooms_cli.chat import saved

    count("saved transcript")
    try:
        saved.decode(text, "chat/r.md")
    except InvalidData as exc:
        assert exc.message.startswith("chat/r.md")


# --- every kind of log, through the commands that read it -----------------------------------------

LOGS = {
    "transcript": (".rooms/rooms/demo-chat/transcript.jsonl", [["transcript", "--room", "demo-chat", "--json"],
                                                               ["room", "save", "--room", "demo-chat"]]),
    "session": (".rooms/rooms/demo-chat/sessions/researcher.jsonl", [["chat", "@researcher hi", "--room", "demo-chat"]]),
    "inbox": (".rooms/inbox/you.jsonl", [["inbox", "--peek", "--json"], ["attention", "--peek"]]),
    "group log": (".rooms/groups/vote.jsonl", [["group", "status", "vote", "--json"], ["group", "list"]]),
    "board": ("{task}", [["board", "--json"], ["task", "show", "{TASK}", "--json"]]),
    "memories": (".rooms/memories/analyst.jsonl", [["memory", "list", "analyst", "--json"]]),
    "queue": (".rooms/roundtables/queue.jsonl", [["roundtable", "queue", "--json"], ["tick", "--dry-run", "--json"]]),
}


# fields of open findings, fuzzed only with strings or not at all (none left: those found were fixed)
STRING_ONLY: set[tuple[str, str]] = set()
KEPT: set[tuple[str, str]] = set()


def _mutate(kind: str, records: list[dict], data) -> list[bytes]:
    """The log's own records with some fields replaced, dropped or added, plus odd lines."""
    out = []
    for record in records:
        record = dict(record)
        for _ in range(data.draw(st.integers(0, 2))):
            key = data.draw(st.sampled_from(sorted(k for k in record if (kind, k) not in KEPT) or ["x"]))
            action = data.draw(st.sampled_from(["replace", "drop"]))
            if action == "drop":
                record.pop(key, None)
            else:
                record[key] = data.draw(st.text(max_size=8) if (kind, key) in STRING_ONLY else json_values)
        out.append(json.dumps(record).encode() + b"\n")
    extra = data.draw(st.lists(st.dictionaries(st.sampled_from(["id", "ts", "kind", "ev", "n", "text", "to", "status", "type", "handle"]),
                                               json_values, max_size=4).map(lambda d: json.dumps(d).encode() + b"\n")
                               | st.binary(max_size=20), max_size=2))
    return out + extra


@pytest.fixture(scope="module")
def fuzz_project(template, tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz") / "proj"
    shutil.copytree(template, root, symlinks=True, ignore=shutil.ignore_patterns("*.lock"))
    return root


@pytest.mark.parametrize("kind", sorted(LOGS), ids=str)
@SLOW
@given(data=st.data())
def test_any_log_content_is_read_or_one_sentence_never_a_crash(fuzz_project, monkeypatch, kind, data):
    root = fuzz_project
    monkeypatch.setenv("ROOMS_DIR", str(root))
    monkeypatch.setenv("ROOMS_AGENT", "you")
    rel, commands = LOGS[kind]
    task = next(p for p in sorted((root / ".rooms/rooms/default/board/tasks").glob("t-*.jsonl")) if b'"reviewer"' in p.read_bytes())
    path = task if rel == "{task}" else root / rel
    original = _ORIGINALS.setdefault(str(path), path.read_bytes())
    records = [json.loads(line) for line in original.splitlines() if line.strip()]
    path.write_bytes(b"".join(_mutate(kind, records, data)))
    count(f"log: {kind}")
    try:
        for command in commands:
            args = [a.replace("{TASK}", task.stem.upper()) for a in command]
            out = invoke(args)
            assert not problems_with_error(out, codes=(0, 1)), (kind, args, problems_with_error(out, codes=(0, 1)), path.read_bytes()[:2000])
    finally:
        path.write_bytes(original)


_ORIGINALS: dict[str, bytes] = {}


@pytest.mark.parametrize("field,command", [("handle", ["group", "list"]), ("profile", ["group", "status", "vote"])])
def test_a_group_event_with_a_null_field_is_not_a_crash(fuzz_project, monkeypatch, field, command):
    monkeypatch.setenv("ROOMS_DIR", str(fuzz_project))
    log = fuzz_project / ".rooms/groups/vote.jsonl"
    original = log.read_bytes()
    try:
        lines = [json.loads(line) for line in original.splitlines()]
        next(r for r in lines if field in r)[field] = None
        log.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in lines))
        out = invoke(command)
        assert not problems_with_error(out, codes=(0, 1)), problems_with_error(out, codes=(0, 1))
    finally:
        log.write_bytes(original)


def test_a_queue_record_without_a_format_is_not_a_crash(fuzz_project, monkeypatch):
    monkeypatch.setenv("ROOMS_DIR", str(fuzz_project))
    queue = fuzz_project / ".rooms/roundtables/queue.jsonl"
    original = queue.read_bytes()
    try:
        queue.write_bytes(original + b'{"op": "enqueue", "id": "q-01M7Z764YTQBBNP1633K1JW32G", "ts": "2026-11-21T14:11:57.018Z", '
                                     b'"request": {}, "by": "cli"}\n')
        out = invoke(["roundtable", "queue", "--json"])
        assert not problems_with_error(out, codes=(0, 1)), problems_with_error(out, codes=(0, 1))
    finally:
        queue.write_bytes(original)


def test_a_task_event_with_a_non_string_kind_is_a_conflict_not_a_crash(fuzz_project, monkeypatch):
    monkeypatch.setenv("ROOMS_DIR", str(fuzz_project))
    task = next(p for p in sorted((fuzz_project / ".rooms/rooms/default/board/tasks").glob("t-*.jsonl")) if b'"reviewer"' in p.read_bytes())
    original = task.read_bytes()
    try:
        task.write_bytes(original + b'{"ev": [], "at": "2026-11-21T14:00:00.000Z", "by": "x"}\n')
        out = invoke(["board", "--json"])
        assert not problems_with_error(out, codes=(0, 1)), problems_with_error(out, codes=(0, 1))
    finally:
        task.write_bytes(original)


def test_zz_report_inputs(capsys):
    """Not a check: prints how many inputs each parser was given (run with -s to see it)."""
    with capsys.disabled():
        print(f"\nfuzz inputs tried: {sum(COUNTS.values())} {dict(sorted(COUNTS.items()))}")
