"""Write the tiny random llama model and serve it with llama.cpp's server, in the foreground.

    pip install xllamacpp gguf numpy          # or: pip install -e '.[test]'
    python examples/llamacpp/serve_tiny.py --port 8080
    # then, in a project: providers: {llamacpp: {type: openai, base_url: "http://127.0.0.1:8080/v1"}}

Nothing is downloaded: the model (about 0.5 MB, random weights, gibberish out) is written to
--model (default: a file in the system's temp directory). Ctrl-C stops the server.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))

import tinymodel  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--parallel", type=int, default=4, help="parallel slots (agents answering at once)")
    parser.add_argument("--slot-ctx", type=int, default=4096, help="context tokens per slot (at most 8192)")
    parser.add_argument("--model", default=str(Path(tempfile.gettempdir()) / "rooms-tiny.gguf"))
    args = parser.parse_args()
    model = tinymodel.write_model(args.model)
    print(f"model: {model}", flush=True)
    print(f"serving on http://127.0.0.1:{args.port}/v1 (model alias: tiny); Ctrl-C stops", flush=True)
    tinymodel.serve(model, port=args.port, parallel=args.parallel, n_ctx=args.parallel * args.slot_ctx)
    return 0


if __name__ == "__main__":
    sys.exit(main())
