"""Other programs' databases are refused and never modified; ``results`` is read-only."""

from __future__ import annotations

import json
import sqlite3

import pytest

SPEC = {"target": {"dataset": "synthetic", "synthetic": {"num_nodes": 60, "num_features": 8},
                   "architecture": {"epochs": 3, "hidden": [8]}},
        "audit": {"n_bootstrap": 20},
        "attacks": {"confidence_mia": {"threshold": "none"}},
        "sweep": {"defenses": ["none"], "seeds": [0]}}


def _toml(value) -> str:
    """A tiny TOML writer for the nested tables of SPEC."""
    lines: list[str] = []

    def table(prefix: str, d: dict) -> None:
        scalars = {k: v for k, v in d.items() if not isinstance(v, dict)}
        if prefix:
            lines.append(f"[{prefix}]")
        lines.extend(f"{k} = {json.dumps(v)}" for k, v in scalars.items())
        for k, v in d.items():
            if isinstance(v, dict):
                table(f"{prefix}.{k}" if prefix else k, v)

    table("", value)
    return "\n".join(lines) + "\n"


@pytest.fixture
def app_db(hostile):
    """Another program's SQLite database (rollback journal, one table)."""
    return hostile.foreign_db(hostile.root / "app.sqlite")


@pytest.fixture
def spec(hostile):
    path = hostile.root / "sweep.toml"
    path.write_text(_toml(SPEC))
    return path


def test_results_refuses_a_foreign_database(hostile, app_db):
    hostile.refused("results", app_db, match="not a graphleaks results store")


def test_sweep_refuses_a_foreign_database_before_running(hostile, app_db, spec, monkeypatch):
    import graphleaks.sweep.sweep as sw

    def boom(*args, **kwargs):
        raise RuntimeError("a run started")

    monkeypatch.setattr(sw, "run_unit", boom)
    hostile.refused("sweep", spec, "--db", app_db, match="app.sqlite")


def test_foreign_wal_database_gets_no_side_files(hostile, spec):
    path = hostile.foreign_db(hostile.root / "wal.sqlite", wal=True)
    hostile.refused("results", path)
    hostile.refused("sweep", spec, "--db", path)


@pytest.mark.parametrize("content", [b"not a database at all",
                                     b"SQLite format 3\x00" + b"\x00" * 84])
def test_files_that_are_not_stores(hostile, content):
    path = hostile.root / "x.sqlite"
    path.write_bytes(content)
    hostile.refused("results", path)


def test_store_of_a_newer_version(hostile):
    from graphleaks.sweep.results_store import ResultsStore

    path = hostile.root / "s.sqlite"
    ResultsStore(path).close()
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value='99' WHERE key='store_version'")
    con.commit()
    con.close()
    line = hostile.refused("results", path)
    assert "99" in line and "1" in line


def test_marker_of_another_program(hostile):
    path = hostile.root / "s.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("CREATE TABLE runs (x)")
    con.execute("INSERT INTO meta VALUES ('store_format', 'other-tool')")
    con.execute("INSERT INTO meta VALUES ('store_version', '1')")
    con.commit()
    con.close()
    hostile.refused("results", path, match="marker")


def test_results_is_read_only_on_its_own_store(hostile, spec):
    r = hostile.run("sweep", spec, "--db", "s.sqlite")
    assert r.exit_code == 0, r.stderr
    before = hostile.snapshot(hostile.root)
    r = hostile.run("results", "s.sqlite", "--format", "csv")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("config_hash,")
    assert hostile.snapshot(hostile.root) == before  # no byte changed, no -wal/-shm left
    r = hostile.run("sweep", spec, "--db", "s.sqlite")  # resuming our own store still works
    assert r.exit_code == 0, r.stderr
