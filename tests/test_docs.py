"""Every shell example in README.md and docs/*.md runs as written (issue 31: docs that run as written).

Each document runs in a fresh, empty directory, its examples in order, as one reader would paste them:
`cd` and `export` carry from one block to the next. The examples are read with Sybil (a kept library
for testing examples in documentation; its markdown lexer, skip directives and per-document
namespace are exactly what this needs — pytest's own doctest runs Python only):

- a ```bash / ```sh block runs as a bash script with `set -e`: every command must succeed (and one
  before `&&`, which `set -e` lets pass, must print no `error:`, `fatal:` or traceback);
- a ```console block is a transcript: each `$ command` runs, and the lines after it up to the next
  `$` are its expected output (stdout and stderr together), compared line by line with doctest's
  ELLIPSIS (`...` matches anything) after trailing spaces are dropped;
- an example that cannot run offline (a real model server, a key, another program) is marked
  explicitly just before it: `<!-- skip: next "needs an Ollama server" -->` (Sybil's skip directive).

Three things a reader does by hand are stood in for: `pip install …` is a no-op (the suite runs with
the package installed), so is `python -m pytest` (the suite is what is running), and commands that
follow until Ctrl-C (`rooms watch`, `rooms mcp`) run for two seconds (`rooms top` needs a terminal:
its examples are marked to skip, and tests/test_top.py runs them). Time and chance are fixed (ROOMS_NOW
is not set, ROOMS_SEED is) so the offline model answers the same way every run, and git knows who
commits, as a reader's configured git does.
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys
import unittest
from pathlib import Path

import pytest
from conftest import REPO, rooms_env

sybil = pytest.importorskip("sybil")

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

PRELUDE = r"""
pip() { :; }                      # the reader installs; the suite runs installed
python() { if [ "$1 $2" = "-m pytest" ]; then return 0; fi; command python "$@"; }   # the suite is this run
rooms() {
  case "$1" in
    watch|mcp) local rc=0; timeout 2 "$(type -P rooms)" "$@" </dev/null || rc=$?; [ $rc -eq 124 ] || return $rc ;;
    *) command rooms "$@" ;;
  esac
}
"""


class Session:
    """One document's reader: a working directory and the variables it exported so far."""

    def __init__(self, root: Path):
        self.root = root
        self.cwd = root
        self.exports = ""
        bindir = Path(sys.executable).parent
        self.env = rooms_env({
            "HOME": str(root), "ROOMS_SEED": "7", "NO_COLOR": "1", "COLUMNS": "120", "TERM": "dumb",
            # a reader's git knows who they are (HOME is the empty directory, so no ~/.gitconfig)
            "GIT_AUTHOR_NAME": "reader", "GIT_AUTHOR_EMAIL": "reader@example.com",
            "GIT_COMMITTER_NAME": "reader", "GIT_COMMITTER_EMAIL": "reader@example.com",
            "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        })
        for name in ("ROOMS_DIR", "ROOMS_AGENT", "ROOMS_ROOM", "ROOMS_NOW"):
            self.env.pop(name, None)

    def run(self, script: str, *, check: bool) -> subprocess.CompletedProcess:
        state = self.root / ".docs-state"
        full = (f"{PRELUDE}\n{self.exports}\ncd {shlex.quote(str(self.cwd))}\n"
                + ("set -e\n" if check else "")
                + f"{script}\n__rc=$?\nset +e\npwd > {shlex.quote(str(state))}.cwd\n"
                f"export -p > {shlex.quote(str(state))}.env\nexit $__rc\n")
        proc = subprocess.run(["bash", "-c", full], capture_output=True, text=True, env=self.env, timeout=180)
        cwd_file, env_file = Path(f"{state}.cwd"), Path(f"{state}.env")
        if cwd_file.exists():
            self.cwd = Path(cwd_file.read_text().strip() or self.cwd)
        if env_file.exists():
            self.exports = "\n".join(line for line in env_file.read_text().splitlines()
                                     if re.match(r"declare -x (ROOMS_|OPENAI_|ANTHROPIC_|OLLAMA_)", line))
        return proc


def run_script(example) -> str | None:
    """A bash/sh block: the whole block must succeed."""
    proc = example.namespace["session"].run(example.parsed, check=True)
    # `set -e` does not stop at a failing command before `&&`: an error it printed still fails the block
    failed = [line for line in proc.stderr.splitlines() if line.startswith(("error:", "fatal:", "Traceback"))]
    if proc.returncode != 0 or failed:
        return (f"the block exited {proc.returncode}{' printing ' + repr(failed[0]) if failed else ''}"
                f"\n--- block ---\n{example.parsed}"
                f"--- stdout ---\n{proc.stdout[-2000:]}--- stderr ---\n{proc.stderr[-2000:]}")
    return None


def console_steps(text: str) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a console block."""
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return [(cmd, "\n".join(out).rstrip()) for cmd, out in steps]


CHECKER = doctest.OutputChecker()


def run_console(example) -> str | None:
    """A console block: each `$ command` runs, its output must match what the block shows."""
    session = example.namespace["session"]
    for command, expected in console_steps(example.parsed):
        proc = session.run(f"{command} 2>&1", check=False)
        got = "\n".join(line.rstrip() for line in proc.stdout.rstrip().splitlines())
        want = "\n".join(line.rstrip() for line in expected.splitlines())
        if not CHECKER.check_output(want + "\n", got + "\n", doctest.ELLIPSIS):
            return f"$ {command}\n--- the document shows ---\n{want}\n--- it printed (exit {proc.returncode}) ---\n{got}"
    return None


def parsers():
    from sybil.parsers.markdown import CodeBlockParser, SkipParser

    return [CodeBlockParser("bash", run_script), CodeBlockParser("sh", run_script),
            CodeBlockParser("console", run_console), SkipParser()]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_the_shell_examples_of_each_document_run_as_written(doc, tmp_path):
    from sybil import Sybil

    document = Sybil(parsers(), path=str(REPO)).parse(doc)
    document.namespace["session"] = Session(tmp_path)
    for example in document.examples():
        try:
            example.evaluate()
        except unittest.SkipTest:  # marked: cannot run offline; the next example goes on
            continue
        except Exception as exc:  # SybilFailure: say which example, where
            pytest.fail(f"{doc.relative_to(REPO)}, line {example.line}: {exc}", pytrace=False)
