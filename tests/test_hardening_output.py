"""A completed write is never reported as a failure (issue 29, item 3).

When printing fails after the command's write completed (stdout on a full disk: `/dev/full`), the
command exits 5 (`not_printed`) with a sentence that says what was done — `claimed t-… lease l-… but
could not print it` — never "internal error"; a closed stdout (`>&-`) after a completed write exits 0.
A command that wrote nothing and could not print exits 1 (`io_error`). Both parsers: the fast path
(cli/fast.py) and typer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import rooms_env

FULL = "/dev/full"
needs_full = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full on this system")


def run_with_stdout(project_dir, args, stdout, *, typer: bool = False, extra_env: dict | None = None):
    """Run `rooms ARGS` as a real process with fd 1 as given: a path, or None for a closed descriptor."""
    env = rooms_env({"ROOMS_DIR": str(project_dir), **(extra_env or {})})
    if typer:  # the same command line through typer: the fast path is bypassed by going through cli.app
        code = "import sys; from rooms_cli.cli.app import main; sys.argv[0] = 'rooms'; main()"
    else:
        code = "import sys; from rooms_cli.cli.fast import main; sys.argv[0] = 'rooms'; main()"
    argv = [sys.executable, "-c", code, *args]
    if stdout is None:
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                              preexec_fn=lambda: os.close(1), timeout=60)
    else:
        with open(stdout, "w") as out:
            proc = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, text=True, env=env, timeout=60)
    return proc


def board_json(rooms, project_dir):
    return json.loads(rooms("board", "--json", env={"ROOMS_DIR": str(project_dir)}).stdout)


@needs_full
@pytest.mark.parametrize("typer", [False, True], ids=["fast", "typer"])
def test_a_claim_whose_result_cannot_be_printed_says_it_claimed_and_exits_5(project_dir, rooms, typer):
    assert rooms("task", "add", "Review the API", "--lane", "bob", "--done", "a verdict").exit_code == 0
    proc = run_with_stdout(project_dir, ["task", "next", "--json", "--as", "bob"], FULL, typer=typer)
    assert proc.returncode == 5, proc.stderr
    error = json.loads(proc.stderr.strip().splitlines()[-1])["error"]
    assert error["code"] == "not_printed"
    task = board_json(rooms, project_dir)["lanes"][0]["tasks"][0]
    lease = task["lease"]["lease_id"]
    assert error["message"].startswith(f"claimed {task['id']} lease {lease} but could not print it")
    assert "internal" not in proc.stderr and "Traceback" not in proc.stderr
    assert "Exception ignored" not in proc.stderr  # nothing fails again at exit


@needs_full
@pytest.mark.parametrize("typer", [False, True], ids=["fast", "typer"])
def test_a_send_whose_result_cannot_be_printed_says_it_was_sent(project_dir, rooms, typer):
    proc = run_with_stdout(project_dir, ["send", "deploy is green", "--to", "ops", "--as", "bob"], FULL, typer=typer)
    assert proc.returncode == 5, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: sent i-") and "to ops but could not print it" in lines[0]
    inbox = (project_dir / ".rooms" / "inbox" / "ops.jsonl").read_text().splitlines()
    assert len(inbox) == 1 and json.loads(inbox[0])["text"] == "deploy is green"


@pytest.mark.parametrize("typer", [False, True], ids=["fast", "typer"])
def test_a_closed_stdout_is_not_an_error_for_a_command_that_wrote_what_it_was_asked(project_dir, typer):
    proc = run_with_stdout(project_dir, ["send", "x", "--to", "ops", "--as", "bob"], None, typer=typer)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "error" not in proc.stderr
    inbox = (project_dir / ".rooms" / "inbox" / "ops.jsonl").read_text().splitlines()
    assert [json.loads(line)["text"] for line in inbox] == ["x"]


def test_a_closed_stdout_never_lends_descriptor_1_to_a_data_file(project_dir):
    for text in ("one", "two"):
        proc = run_with_stdout(project_dir, ["send", text, "--to", "ops", "--as", "bob"], None, typer=True)
        assert proc.returncode == 0, proc.stderr
    inbox = (project_dir / ".rooms" / "inbox" / "ops.jsonl").read_text().splitlines()
    assert [json.loads(line)["text"] for line in inbox] == ["one", "two"]


@pytest.mark.parametrize("stdout", [None, pytest.param(FULL, marks=needs_full)], ids=["closed", "full"])
def test_a_read_that_cannot_print_is_one_sentence_exit_1(project_dir, stdout):
    proc = run_with_stdout(project_dir, ["board", "--json"], stdout)
    assert proc.returncode == 1, proc.stderr
    error = json.loads(proc.stderr.strip().splitlines()[-1])["error"]
    assert error["code"] == "io_error" and error["message"].startswith("could not print the output")


@needs_full
def test_a_typer_command_that_wrote_names_the_files_it_wrote(project_dir):
    proc = run_with_stdout(project_dir, ["agent", "new", "zed"], FULL, typer=True)
    assert proc.returncode == 5, proc.stderr
    assert proc.stderr == "error: wrote .rooms/agents/zed.md but could not print it (standard output: the disk is full); " \
                          "it is done: do not run the command again\n"
    assert (project_dir / ".rooms" / "agents" / "zed.md").is_file()


def test_a_reader_that_leaves_early_is_still_not_an_error(project_dir):
    env = rooms_env({"ROOMS_DIR": str(project_dir)})
    proc = subprocess.run(f"{sys.executable} -m rooms_cli send y --to ops --as bob | head -c 0; exit ${{PIPESTATUS[0]}}",
                          shell=True, executable="/bin/bash", capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


@needs_full
@pytest.mark.parametrize("verb", ["claim", "renew", "release", "done"])
def test_every_lease_command_says_what_it_did_when_it_cannot_print(project_dir, rooms, verb):
    """A guard for the sentence itself: each lease command records what it did before it prints."""
    env = {"ROOMS_DIR": str(project_dir)}
    assert rooms("task", "add", "Review", "--lane", "bob", "--done", "a verdict", env=env).exit_code == 0
    task = board_json(rooms, project_dir)["lanes"][0]["tasks"][0]["id"]
    if verb != "claim":
        claimed = json.loads(rooms("task", "claim", task, "--as", "bob", "--json", env=env).stdout)
        lease = claimed["lease_id"] if "lease_id" in claimed else claimed["lease"]["lease_id"]
    args = {"claim": ["task", "claim", task, "--as", "bob"],
            "renew": ["task", "renew", task, "--lease-id", lease, "--as", "bob"] if verb != "claim" else [],
            "release": ["task", "release", task, "--lease-id", lease, "--as", "bob"] if verb != "claim" else [],
            "done": ["task", "done", task, "--summary", "ok", "--lease-id", lease, "--as", "bob"] if verb != "claim" else []}[verb]
    proc = run_with_stdout(project_dir, args, FULL)
    assert proc.returncode == 5, proc.stderr
    said = {"claim": "claimed ", "renew": "renewed the lease of ", "release": "released ", "done": "finished "}[verb]
    assert proc.stderr.startswith(f"error: {said}{task}"), proc.stderr
