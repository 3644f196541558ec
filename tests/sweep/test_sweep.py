"""Sweeps: grid expansion, the SQLite store, resume after SIGKILL, the sweep/results CLI."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
import typer
from typer.testing import CliRunner

from graphleaks.cli import _one_line_errors
from graphleaks.cli.results import results
from graphleaks.cli.sweep import sweep
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.sweep.results_store import RESULT_COLUMNS, ResultsStore
from graphleaks.sweep.sweep import expand_grid, parse_sweep_spec, run_sweep

RAW = {"target": {"dataset": "synthetic", "synthetic": {"num_nodes": 60, "num_features": 8},
                  "architecture": {"epochs": 20, "hidden": [16]}},
       "audit": {"n_bootstrap": 20},
       "attacks": {"confidence_mia": {"threshold": "none"}, "link_stealing": {}},
       "sweep": {"defenses": ["none", "gap_edp"], "epsilons": [1.0, 4.0], "seeds": [0, 1],
                 "defense_params": {"gap_edp": {"encoder_epochs": 10, "epochs": 10}}}}
N_RUNS = 12  # none: 2 seeds; gap_edp: 2 ε × 2 seeds; × 2 attacks

SCRIPT = """
import json, sys, time
import graphleaks.sweep.sweep as sw
orig = sw.run_unit
def slow(unit, **kw):
    time.sleep(0.5)
    return orig(unit, **kw)
sw.run_unit = slow
sw.run_sweep(sw.parse_sweep_spec(json.loads(sys.argv[2])), sys.argv[1])
"""


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _rows(path):
    with ResultsStore(path) as s:
        return [tuple(r[c] for c in RESULT_COLUMNS) for r in s.rows()]


@pytest.fixture(scope="module")
def clean_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("clean") / "clean.sqlite"
    summary = run_sweep(parse_sweep_spec(RAW), db)
    assert summary.total == summary.ran == N_RUNS and summary.failed == 0
    return db


def test_grid_and_hashes():
    spec = parse_sweep_spec(RAW)
    units = expand_grid(spec)
    assert [(u.defense, u.epsilon, u.seed) for u in units] == [
        ("none", None, 0), ("none", None, 1), ("gap_edp", 1.0, 0), ("gap_edp", 1.0, 1),
        ("gap_edp", 4.0, 0), ("gap_edp", 4.0, 1)]
    hashes = [r["config_hash"] for u in units for r in u.runs]
    assert len(set(hashes)) == N_RUNS
    assert hashes == [r["config_hash"] for u in expand_grid(parse_sweep_spec(RAW))
                      for r in u.runs]
    assert units[2].target["defense_params"] == {"encoder_epochs": 10, "epochs": 10,
                                                 "epsilon": 1.0}


def test_old_kebab_defense_names_in_a_sweep_resolve_to_canonical():
    # a sweep TOML from before the rename: the same units and config hashes as the
    # canonical spelling (any spelling resolves once, before anything is hashed)
    old = {**RAW, "sweep": {**RAW["sweep"], "defenses": ["none", "gap-edp"],
                            "defense_params": {"GAP-EDP": {"encoder_epochs": 10, "epochs": 10}}}}
    units, new = expand_grid(parse_sweep_spec(old)), expand_grid(parse_sweep_spec(RAW))
    assert [u.defense for u in units] == [u.defense for u in new]
    assert [r["config_hash"] for u in units for r in u.runs] == \
        [r["config_hash"] for u in new for r in u.runs]


def test_results_rows_match_any_spelling_and_read_old_rows_as_canonical():
    store = ResultsStore(":memory:")
    # "gap-edp": a row a store filled before the rename holds
    store.add_pending([{"config_hash": h, "defense": d, "epsilon": 1.0, "attack": a, "seed": 0,
                        "config": {}} for h, d, a in (("h1", "gap-edp", "confidence_mia"),
                                                      ("h2", "gap_edp", "link_stealing"),
                                                      ("h3", "none", "confidence_mia"))])
    assert [r["defense"] for r in store.rows()] == ["gap_edp", "gap_edp", "none"]
    for spelling in ("gap-edp", "gap_edp", "GAP_EDP"):
        assert [r["config_hash"] for r in store.rows(defense=spelling)] == ["h1", "h2"]
    assert [r["config_hash"] for r in store.rows(defense="none", attack="confidence-mia")] \
        == ["h3"]
    assert store.rows(status="done", defense="gap_edp") == []


@pytest.mark.parametrize(("sweep_table", "field"), [
    ({"defenses": ["nope"]}, "sweep.defenses[0]"),
    ({"defenses": ["gap_edp"]}, "sweep.epsilons"),
    ({"defenses": ["gap_edp"], "epsilons": [-1.0]}, "sweep.epsilons"),
    ({"seeds": ["a"]}, "sweep.seeds"),
    ({"colour": 1}, "sweep: unknown key"),
])
def test_bad_sweep_specs(sweep_table, field):
    with pytest.raises(InvalidConfigError, match=field.replace("[", r"\[").replace("]", r"\]")):
        parse_sweep_spec({**RAW, "sweep": sweep_table})


def test_rerun_is_a_no_op(clean_db):
    summary = run_sweep(parse_sweep_spec(RAW), clean_db)
    assert summary.ran == 0 and summary.skipped == N_RUNS
    assert len(_rows(clean_db)) == N_RUNS


def test_resume_after_sigkill_gives_the_clean_rows(clean_db, tmp_path):
    db = tmp_path / "killed.sqlite"
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, str(script), str(db), json.dumps(RAW)], env=env)
    done = 0
    try:
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    con = sqlite3.connect(db, timeout=1)
                    done = con.execute("SELECT COUNT(*) FROM runs WHERE status='done'"
                                       ).fetchone()[0]
                    con.close()
                except sqlite3.OperationalError:
                    done = 0
                if done >= 2:
                    break
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    with ResultsStore(db) as s:
        counts = s.counts()
    assert 2 <= counts["done"] < N_RUNS and counts["done"] % 2 == 0  # units are atomic
    assert counts["done"] + counts["pending"] == N_RUNS
    summary = run_sweep(parse_sweep_spec(RAW), db)
    assert summary.skipped == counts["done"] and summary.ran == N_RUNS - counts["done"]
    assert _rows(db) == _rows(clean_db)


@pytest.mark.slow
def test_process_pool_gives_the_same_rows(clean_db, tmp_path):
    db = tmp_path / "pool.sqlite"
    run_sweep(parse_sweep_spec(RAW), db, workers=2)
    assert _rows(db) == _rows(clean_db)


def test_failed_runs_are_recorded_and_retried(tmp_path, monkeypatch):
    import graphleaks.sweep.sweep as sw

    raw = {**RAW, "sweep": {"defenses": ["none"], "seeds": [0]}}
    db = tmp_path / "f.sqlite"

    def boom(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr("graphleaks.audit.spec.build_target", boom)
    s = sw.run_sweep(parse_sweep_spec(raw), db)
    assert s.failed == 2
    with ResultsStore(db) as store:
        assert {r["status"] for r in store.rows()} == {"failed"}
        assert "boom" in store.rows()[0]["error"]
    monkeypatch.undo()
    assert sw.run_sweep(parse_sweep_spec(raw), db).ran == 0
    s = sw.run_sweep(parse_sweep_spec(raw), db, retry_failed=True)
    assert s.ran == 2 and s.failed == 0


def test_store_rejects_other_files(tmp_path):
    bad = tmp_path / "x.sqlite"
    bad.write_text("not a database at all" * 100)
    with pytest.raises(DataError):
        ResultsStore(bad)


app = typer.Typer()
app.command("sweep")(_one_line_errors(sweep))
app.command("results")(_one_line_errors(results))
runner = CliRunner()


def test_cli_sweep_and_results(clean_db, tmp_path):
    import tomllib  # noqa: F401 - the spec file is TOML

    spec = tmp_path / "sweep.toml"
    spec.write_text("""
[target]
dataset = "synthetic"
[target.synthetic]
num_nodes = 60
num_features = 8
[target.architecture]
epochs = 20
hidden = [16]
[audit]
n_bootstrap = 20
[attacks.confidence_mia]
threshold = "none"
[attacks.link_stealing]
[sweep]
defenses = ["none", "gap_edp"]
epsilons = [1.0, 4.0]
seeds = [0, 1]
[sweep.defense_params.gap_edp]
encoder_epochs = 10
epochs = 10
""")
    r = runner.invoke(app, ["sweep", str(spec), "--dry-run"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.stdout)) == N_RUNS
    db = tmp_path / "cli.sqlite"
    r = runner.invoke(app, ["sweep", str(spec), "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["ran"] == N_RUNS
    assert _rows(db) == _rows(clean_db)  # the TOML and the dict spec are the same sweep
    r = runner.invoke(app, ["results", str(db)])
    assert r.exit_code == 0 and "12 done" in r.stdout and "gap_edp" in r.stdout
    r = runner.invoke(app, ["results", str(db), "--format", "csv", "--attack",
                            "confidence_mia", "--metric", "auc"])
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("config_hash,defense,epsilon,attack,seed,status,auc,auc_lo")
    assert len(lines) == 7
    r = runner.invoke(app, ["results", str(db), "--format", "json", "--plot",
                            str(tmp_path / "pu.png")])
    assert r.exit_code == 0 and len(json.loads(r.stdout)) == N_RUNS
    assert (tmp_path / "pu.png").read_bytes()[:4] == b"\x89PNG"
    r = runner.invoke(app, ["results", str(tmp_path / "missing.sqlite")])
    assert r.exit_code == 2 and "does not exist" in r.output
    r = runner.invoke(app, ["results", str(db), "--metric", "bogus"])
    assert r.exit_code == 2 and "unknown metric" in r.output
