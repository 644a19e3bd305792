"""A tiny random-weight llama model written as GGUF, and llama.cpp's server for it (via xllamacpp).

    python tests/integration/tinymodel.py write /tmp/tiny.gguf
    python tests/integration/tinymodel.py serve /tmp/tiny.gguf --port 8080 --parallel 4

The model has the llama architecture (2 layers, embedding 64, 4 heads, feed-forward 128, F32) and a
SentencePiece-style vocabulary stored in the file: `<unk>`, `<s>`, `</s>`, the 256 byte tokens
`<0x00>`…`<0xFF>` (so any UTF-8 input tokenizes), `▁` and printable ASCII, plus a ChatML-style chat
template. Its weights are random, so it writes gibberish — but it writes it through a real inference
engine: tokenization, prompt templates, parallel slots, sampling, SSE streaming, usage counts. The
output layer is biased toward printable characters so the gibberish stays readable. Nothing is
downloaded; writing the file takes well under a second.

`gguf` and `numpy` are needed to write the model, `xllamacpp` to serve it (the test extras).
"""

from __future__ import annotations

import argparse
import os
import signal
import string
import sys
import time
from pathlib import Path

N_LAYERS = 2
N_EMBD = 64
N_HEAD = 4
N_FF = 128
N_CTX_TRAIN = 8192
BIAS = 2.0

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def vocabulary() -> tuple[list[str], list[float], list[int]]:
    """(tokens, scores, token types) of the SentencePiece-style vocabulary."""
    from gguf import TokenType

    tokens: list[str] = ["<unk>", "<s>", "</s>"]
    types: list[int] = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL]
    tokens += ["<|im_start|>", "<|im_end|>"]
    types += [TokenType.CONTROL, TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [TokenType.BYTE] * 256
    # "▁" is SentencePiece's space; printable ASCII without the space (which "▁" stands for).
    pieces = ["▁"] + [c for c in string.printable if c.isprintable() and c != " "]
    tokens += pieces
    types += [TokenType.NORMAL] * len(pieces)
    # Scores rank merges; every normal piece is a single character, so any order is fine.
    scores = [0.0] * len(tokens)
    return tokens, scores, [int(t) for t in types]


def write_model(path: str | os.PathLike, *, seed: int = 1234) -> Path:
    """Write the tiny model to `path` (a .gguf file) and return the path."""
    import numpy as np
    from gguf import GGUFWriter

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tokens, scores, types = vocabulary()
    n_vocab = len(tokens)
    rng = np.random.default_rng(seed)

    def weights(*shape: int, scale: float = 0.08):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    writer = GGUFWriter(str(path), "llama")
    writer.add_name("rooms-tiny-random")
    writer.add_context_length(N_CTX_TRAIN)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYERS)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(0)  # all F32

    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)

    # numpy shapes are (rows, columns) = GGUF's (ne1, ne0): a weight maps ne0 inputs to ne1 outputs.
    embedding = weights(n_vocab, N_EMBD, scale=0.5)
    embedding[:, 0] += 3.0
    writer.add_tensor("token_embd.weight", embedding)
    for layer in range(N_LAYERS):
        prefix = f"blk.{layer}"
        writer.add_tensor(f"{prefix}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{prefix}.{name}.weight", weights(N_EMBD, N_EMBD))
        writer.add_tensor(f"{prefix}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(f"{prefix}.ffn_gate.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(f"{prefix}.ffn_up.weight", weights(N_FF, N_EMBD))
        writer.add_tensor(f"{prefix}.ffn_down.weight", weights(N_EMBD, N_FF))
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))

    # The output layer: random, plus a boost for printable pieces along embedding dimension 0, which
    # every token embedding carries with a large constant (see `embedding`): after the final norm that
    # dimension stays large and positive, so printable pieces win most draws while control and byte
    # tokens stay possible, only unlikely. The gibberish stays readable; generation mostly runs to
    # max_tokens.
    output = weights(n_vocab, N_EMBD, scale=0.3)
    printable = [i for i, t in enumerate(types) if t == 1]
    output[printable, 0] += BIAS
    output[tokens.index("▁"), 0] += BIAS / 4  # a space now and then: word-like gibberish
    writer.add_tensor("output.weight", output)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def server_params(model_path: str | os.PathLike, *, port: int, parallel: int = 4, n_ctx: int = 16384,
                  n_predict: int = 32, threads: int = 1, alias: str = "tiny", chat_template: str = ""):
    """xllamacpp.CommonParams for llama.cpp's server on 127.0.0.1:`port`, model alias `alias`.

    `n_ctx` is the whole context, split between the `parallel` slots; the vocabulary is one
    character a token, so a slot needs about as many tokens as its prompt has characters.
    `n_predict` is the reply length when a request sets no `max_tokens`. `chat_template` (Jinja)
    replaces the model's own; empty keeps it. Any GGUF can be served this way (tests/integration/smollm.py).
    """
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.model_alias = {alias}
    if chat_template:
        params.use_jinja = True
        params.chat_template = chat_template
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = n_ctx
    params.n_parallel = parallel
    params.n_predict = n_predict
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_threads_http = max(4, parallel + 2)
    params.warmup = False
    return params


def serve(model_path: str | os.PathLike, *, port: int, parallel: int = 4, n_ctx: int = 16384,
          n_predict: int = 32, threads: int = 1, alias: str = "tiny", chat_template: str = "",
          exit_with_parent: bool = False) -> None:
    """Run llama.cpp's server in this process until SIGTERM or SIGINT (or, with
    `exit_with_parent`, until the process that started it is gone: no orphan server after a
    killed test run)."""
    import xllamacpp

    server = xllamacpp.Server(server_params(model_path, port=port, parallel=parallel, n_ctx=n_ctx,
                                            n_predict=n_predict, threads=threads, alias=alias,
                                            chat_template=chat_template))
    parent = os.getppid()
    stopping = False

    def stop(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not stopping and not (exit_with_parent and os.getppid() != parent):
        time.sleep(0.2)
    del server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the tiny random llama model, or serve it with llama.cpp.")
    sub = parser.add_subparsers(dest="command", required=True)
    write = sub.add_parser("write", help="write the model to a .gguf file")
    write.add_argument("path")
    write.add_argument("--seed", type=int, default=1234)
    run = sub.add_parser("serve", help="serve a model with llama.cpp's server on 127.0.0.1")
    run.add_argument("path")
    run.add_argument("--port", type=int, default=8080)
    run.add_argument("--parallel", type=int, default=4)
    run.add_argument("--ctx", type=int, default=16384)
    run.add_argument("--predict", type=int, default=32)
    run.add_argument("--threads", type=int, default=1)
    run.add_argument("--alias", default="tiny", help="the model name the server answers to")
    run.add_argument("--chat-template-file", help="a Jinja chat template to use instead of the model's own")
    run.add_argument("--exit-with-parent", action="store_true", help="stop when the starting process is gone")
    args = parser.parse_args(argv)
    if args.command == "write":
        print(write_model(args.path, seed=args.seed))
        return 0
    template = Path(args.chat_template_file).read_text("utf-8") if args.chat_template_file else ""
    serve(args.path, port=args.port, parallel=args.parallel, n_ctx=args.ctx, n_predict=args.predict,
          threads=args.threads, alias=args.alias, chat_template=template, exit_with_parent=args.exit_with_parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
