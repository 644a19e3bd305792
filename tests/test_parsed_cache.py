"""Parsed YAML kept in .rooms/run/parsed.json: a changed file is parsed again (store/parsed.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from rooms_cli.agents import definitions as agents_mod
from rooms_cli.project import config as config_mod
from rooms_cli.project.init import initialize
from rooms_cli.store import parsed
from rooms_cli.store.paths import open_project


def _old(path, seconds=3600):
    t = time.time() - seconds
    os.utime(path, (t, t))


def _fresh_process_caches():
    agents_mod._cache.clear()
    config_mod._cache.clear()


def test_a_changed_file_is_parsed_again(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\n")
    _old(path)
    calls = []

    def parse():
        calls.append(1)
        return {"a": int(path.read_text().split(":")[1])}

    assert parsed.cached(tmp_path, path, parse) == {"a": 1}
    assert parsed.cached(tmp_path, path, parse) == {"a": 1}
    assert len(calls) == 1  # the second read came from the cache
    path.write_text("a: 2\n")  # same size, new content
    _old(path, 3000)
    assert parsed.cached(tmp_path, path, parse) == {"a": 2}
    assert len(calls) == 2


def test_a_file_written_within_the_last_second_is_not_kept(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\n")
    parsed.cached(tmp_path, path, lambda: {"a": 1})
    assert not (tmp_path / "run" / "parsed.json").exists()


def test_data_json_would_change_is_not_kept(tmp_path):
    import datetime

    path = tmp_path / "x.yaml"
    path.write_text("d: 2026-01-01\n")
    _old(path)
    parsed.cached(tmp_path, path, lambda: {"d": datetime.date(2026, 1, 1), 1: "int key"})
    assert not (tmp_path / "run" / "parsed.json").exists()


def test_a_damaged_cache_is_ignored_and_rewritten(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\n")
    _old(path)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "parsed.json").write_text("{not json")
    assert parsed.cached(tmp_path, path, lambda: {"a": 1}) == {"a": 1}
    assert parsed.cached(tmp_path, path, lambda: {"a": "not called"}) == {"a": 1}


def test_an_edited_agent_definition_and_config_are_read_anew(tmp_path):
    initialize(tmp_path, "dev")
    project = open_project(tmp_path)
    agent_file = Path(agents_mod.agent_path(project, "reviewer"))
    for path in (agent_file, tmp_path / ".rooms.yaml"):
        _old(path)
    before = agents_mod.load_agent(project, "reviewer")
    config_mod.load_config(project)
    assert (tmp_path / ".rooms" / "run" / "parsed.json").exists()
    _fresh_process_caches()
    agent_file.write_text(agent_file.read_text().replace(before.directive.splitlines()[0], "Edited directive."))
    cfg = tmp_path / ".rooms.yaml"  # one default_model: key, changed (a key given twice is refused)
    cfg.write_text(cfg.read_text().replace("\ndefault_model: offline\n", "\ndefault_model: local:edited\n", 1))
    assert agents_mod.load_agent(project, "reviewer").directive.startswith("Edited directive.")
    assert config_mod.load_config(project).data.get("default_model") == "local:edited"
    _fresh_process_caches()
    assert agents_mod.load_agent(project, "reviewer").to_json() != before.to_json()


def test_unknown_fields_are_still_warned_about_when_the_definition_comes_from_the_cache(tmp_path, capsys):
    initialize(tmp_path, "dev")
    project = open_project(tmp_path)
    agent_file = Path(agents_mod.agent_path(project, "reviewer"))
    agent_file.write_text(agent_file.read_text().replace("---\n", "---\nflavour: mint\n", 1))
    _old(agent_file)
    for _ in range(2):
        _fresh_process_caches()
        agents_mod.load_agent(project, "reviewer")
        assert "unknown field 'flavour'" in capsys.readouterr().err
