"""Soak: the hardening campaign for longer than CI allows, then a table of what it survived.

    python bench/soak.py                 # ~5 minutes: 10x the crash rounds, 20x the fuzz examples
    python bench/soak.py --scale 3       # shorter
    python bench/soak.py --scale 22 --crash-only   # ≥ 1 000 SIGKILLs (issue #17), ~8 minutes
    HARDENING_SEED=7 python bench/soak.py

It runs the crash campaign (tests/test_hardening_crash.py) with more rounds and the fuzzers
(tests/test_fuzz_parsers.py) with more examples, as pytest sessions, and prints the kills
survived, the acknowledged writes checked and the inputs tried. Not a timed test.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_pytest(test_file: str, env: dict) -> tuple[int, str, float]:
    began = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout", "0", test_file],
                          cwd=REPO, env=env, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=10, help="multiplier of the CI budgets (default 10)")
    parser.add_argument("--crash-only", action="store_true", help="run the crash campaign alone, not the fuzzers")
    args = parser.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["HARDENING_ROUNDS"] = str(max(1, round(3 * args.scale)))
    env["HARDENING_EXAMPLES"] = str(2 * args.scale)
    rows = []
    failed = False
    for name, test_file, pattern in (
        ("crash campaign", "tests/test_hardening_crash.py", r"kills survived: (\d+) (\{.*?\}); acknowledged writes checked: (\d+)"),
        ("fuzzing", "tests/test_fuzz_parsers.py", r"fuzz inputs tried: (\d+) (\{.*?\})"),
    ):
        if args.crash_only and name != "crash campaign":
            continue
        code, out, seconds = run_pytest(test_file, env)
        failed |= code != 0
        found = re.search(pattern, out)
        summary = out.strip().splitlines()[-1] if out.strip() else ""
        rows.append((name, found.group(1) if found else "?", found.group(3) if found and found.lastindex == 3 else "-",
                     f"{seconds:.0f}", "ok" if code == 0 else "FAILED", found.group(2) if found else summary))
        if code != 0:
            print("\n".join(ln for ln in out.splitlines() if ln.startswith(("E ", "FAILED")))[-6000:], file=sys.stderr)
    print(f"soak at scale {args.scale:g} (crash rounds {env['HARDENING_ROUNDS']}, fuzz x{env['HARDENING_EXAMPLES']}), "
          f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}")
    print(f"{'campaign':<16} {'count':>7} {'acked':>6} {'s':>5}  result  detail")
    for name, count, acked, seconds, result, detail in rows:
        print(f"{name:<16} {count:>7} {acked:>6} {seconds:>5}  {result:<6}  {detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
