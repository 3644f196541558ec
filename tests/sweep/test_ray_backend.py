"""The Ray sweep backend on a local Ray instance: same rows as the local pool, same resume."""

from __future__ import annotations

import pytest

from graphleaks.errors import InvalidConfigError
from graphleaks.sweep.results_store import RESULT_COLUMNS, ResultsStore
from graphleaks.sweep.sweep import parse_sweep_spec, run_sweep

RAW = {"target": {"dataset": "synthetic", "synthetic": {"num_nodes": 60, "num_features": 8},
                  "architecture": {"epochs": 20, "hidden": [16]}},
       "audit": {"n_bootstrap": 20},
       "attacks": {"confidence_mia": {"threshold": "none"}, "link_stealing": {}},
       "sweep": {"defenses": ["none", "gap_edp"], "epsilons": [1.0], "seeds": [0, 1],
                 "defense_params": {"gap_edp": {"encoder_epochs": 10, "epochs": 10}}}}
N_RUNS = 8  # (none + gap_edp at one ε) × 2 seeds × 2 attacks


def _rows(path):
    with ResultsStore(path) as s:
        return [tuple(r[c] for c in RESULT_COLUMNS) for r in s.rows()]


def test_address_needs_the_ray_backend(tmp_path):
    with pytest.raises(InvalidConfigError, match="address"):
        run_sweep(parse_sweep_spec(RAW), tmp_path / "x.sqlite", address="auto")
    assert not (tmp_path / "x.sqlite").exists()


@pytest.mark.slow
def test_ray_gives_the_rows_of_the_local_pool(tmp_path):
    pytest.importorskip("ray", reason="Ray is an optional extra (pip install ray)")
    spec = parse_sweep_spec(RAW)
    local = tmp_path / "local.sqlite"
    assert run_sweep(spec, local, workers=2).ran == N_RUNS

    # a half-finished store, as a killed sweep leaves it: Ray resumes the pending runs
    db = tmp_path / "ray.sqlite"
    half = parse_sweep_spec({**RAW, "sweep": {**RAW["sweep"], "seeds": [0]}})
    assert run_sweep(half, db).ran == N_RUNS // 2
    summary = run_sweep(spec, db, workers=2, backend="ray")
    assert (summary.total, summary.skipped, summary.ran, summary.failed) == (
        N_RUNS, N_RUNS // 2, N_RUNS // 2, 0)
    assert _rows(db) == _rows(local)
    assert run_sweep(spec, db, backend="ray").ran == 0  # nothing left: Ray is not started
