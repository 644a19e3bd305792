"""The sdist is whole: it holds every file git tracks (but .gitignore) and nothing else the build did not make.

Usage: python .ci/sdist_files.py dist/rooms_cli-X.tar.gz  (run in the checkout the sdist was built from)

The build adds PKG-INFO, setup.cfg and rooms_cli.egg-info/; anything else in the sdist that git does not
track (a test's leftover, a cache) or tracked and missing (a file MANIFEST.in forgot) fails, listed.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

NOT_SHIPPED = {".gitignore"}  # tracked, but means nothing outside a git checkout


def sdist_files(sdist: Path) -> set[str]:
    """The paths in the sdist, relative to its top folder (rooms_cli-X/)."""
    with tarfile.open(sdist) as tar:
        return {member.name.split("/", 1)[1] for member in tar.getmembers()
                if (member.isfile() or member.issym()) and "/" in member.name}


def built_by_setuptools(path: str) -> bool:
    return path in ("PKG-INFO", "setup.cfg") or path.startswith("rooms_cli.egg-info/")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    shipped = sdist_files(Path(argv[0]))
    tracked = set(subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout.decode().split("\0")) - {""}
    missing = sorted(tracked - NOT_SHIPPED - shipped)
    extra = sorted(p for p in shipped - tracked if not built_by_setuptools(p))
    for path in missing:
        print(f"sdist: missing {path} (tracked by git)", file=sys.stderr)
    for path in extra:
        print(f"sdist: {path} is not tracked by git", file=sys.stderr)
    if missing or extra:
        return 1
    print(f"sdist: the {len(tracked) - len(NOT_SHIPPED & tracked)} files git tracks (but {', '.join(sorted(NOT_SHIPPED))}), "
          "and only what the build adds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
