"""`rooms doctor` finds what is wrong under .rooms/ and says what to do; it changes nothing."""

from __future__ import annotations

import os


def snapshot(root):
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.name.endswith(".lock")}


def test_doctor_on_a_fresh_project_is_clean(project_dir, cli):
    run = cli("doctor", "--offline", "--json")
    assert run.exit_code == 0, run.stdout
    assert run.json()["ok"] is True


def test_doctor_reports_corrupt_logs_bad_state_symlinks_and_temp_files(project_dir, cli):
    rooms = project_dir / ".rooms"
    (rooms / "inbox" / "bob.jsonl").write_bytes(b'{"n": 1}\nnot json\n{"n": 2}\n{"n": 3')
    (rooms / "rooms" / "default" / "room.yaml").write_text("id: default\nroster: [a\n")
    (rooms / "spawns" / ".s-1.json.123.tmp").write_text("{")
    os.symlink("/etc", rooms / "rooms" / "escape")
    (rooms / "agents" / "broken.md").write_text("---\ntags: 5\n---\nhi\n")
    before = snapshot(project_dir)
    run = cli("doctor", "--offline", "--json")
    assert run.exit_code == 1
    found = {(f["check"], f["file"]) for f in run.json()["findings"]}
    assert ("log", ".rooms/inbox/bob.jsonl") in found
    assert ("file", ".rooms/rooms/default/room.yaml") in found
    assert ("temp-file", ".rooms/spawns/.s-1.json.123.tmp") in found
    assert ("symlink", ".rooms/rooms/escape") in found
    assert ("agent", ".rooms/agents/broken.md") in found
    assert all(f["fix"] for f in run.json()["findings"])
    assert snapshot(project_dir) == before


def test_doctor_reports_an_unreachable_provider(project_dir, cli):
    (project_dir / ".rooms.yaml").write_text("providers:\n  local: {type: openai, base_url: 'http://127.0.0.1:9/v1', max_retries: 0}\n")
    (project_dir / ".rooms" / "agents" / "remote.md").write_text("---\nmodel: local:tiny\n---\nYou are remote.\n")
    (project_dir / ".rooms" / "agents" / "tool.md").write_text("---\nmodel: cmd:x\n---\nYou run a tool.\n")
    (project_dir / ".rooms.yaml").write_text(
        "providers:\n  local: {type: openai, base_url: 'http://127.0.0.1:9/v1'}\n  cmd: {type: command, command: [no-such-binary-xyz]}\n"
    )
    run = cli("doctor", "--json")
    assert run.exit_code == 1
    messages = " ".join(f["message"] for f in run.json()["findings"])
    assert "'local' is unreachable" in messages and "used by remote" in messages
    assert "no-such-binary-xyz" in messages
