"""The mypy --strict ratchet: the count of strict errors in rooms_cli may only go down.

The project's own mypy settings (pyproject.toml) are the gate every change must pass; the strict
count measures how much of the code is still untyped. This script runs `mypy --strict rooms_cli`,
counts the errors and compares them with the number in .ci/mypy-strict-max: above it fails (an
annotation was lost or new untyped code came in), below it asks to lower the file so the gain is
kept. CI only: it takes about 20 s.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_FILE = ROOT / ".ci" / "mypy-strict-max"
ERROR = re.compile(r"^[^:\s][^:]*:\d+(?::\d+)?: error: ", re.MULTILINE)


def strict_errors() -> int:
    """Run mypy --strict on the package and count its error lines (notes are not errors)."""
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "rooms_cli"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    # 0: clean, 1: type errors found; anything else is mypy failing to run.
    if run.returncode not in (0, 1):
        sys.exit(f"mypy --strict did not run (exit {run.returncode}):\n{run.stderr}{run.stdout}")
    return len(ERROR.findall(run.stdout))


def main() -> int:
    allowed = int(MAX_FILE.read_text().strip())
    found = strict_errors()
    print(f"mypy --strict rooms_cli: {found} errors (allowed: {allowed}, from {MAX_FILE.name})")
    if found > allowed:
        print(f"FAIL: {found} > {allowed}; annotate the new code instead of raising the limit")
        return 1
    if found < allowed:
        print(f"lower .ci/mypy-strict-max to {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
