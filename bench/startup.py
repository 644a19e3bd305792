"""Start-up cost of `rooms` compared with a bare interpreter (ratio within one run).

    python bench/startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def timed(argv: list[str], runs: int, env: dict) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "rooms_cli", "init", tmp, "--example", "dev"], env=env, capture_output=True, check=True)
        env["ROOMS_DIR"] = tmp
        rows = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("rooms --help", [sys.executable, "-m", "rooms_cli", "--help"]),
            ("rooms --version", [sys.executable, "-m", "rooms_cli", "--version"]),
            ("rooms agent list --json", [sys.executable, "-m", "rooms_cli", "agent", "list", "--json"]),
        ]
        base = None
        print(f"{'command':<28}{'median ms':>10}{'× python':>10}")
        for name, argv in rows:
            t = timed(argv, args.runs, env)
            base = base or t
            print(f"{name:<28}{t * 1000:>10.1f}{t / base:>10.1f}")


if __name__ == "__main__":
    main()
