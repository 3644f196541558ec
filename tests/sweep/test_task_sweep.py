"""Sweeps over the link and graph tasks: the grid takes the task's own defenses, every row's
config records the task, and the process and Ray backends run the same unit function."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import pytest

from graphleaks.errors import InvalidConfigError
from graphleaks.sweep.results_store import RESULT_COLUMNS, ResultsStore
from graphleaks.sweep.sweep import expand_grid, parse_sweep_spec, run_sweep

LINK = {"target": {"task": "link", "dataset": "synthetic", "synthetic": {"num_nodes": 80},
                   "architecture": {"epochs": 2}},
        "audit": {"n_bootstrap": 20}, "attacks": {"edge_score_threshold": {}},
        "sweep": {"defenses": ["none", "edgerand", "lapgraph", "gap_edp", "dp_sgd"],
                  "epsilons": [1.0, 4.0], "seeds": [0],
                  "defense_params": {"gap_edp": {"epochs": 1}, "dp_sgd": {"epochs": 1}}}}
GRAPH = {"target": {"task": "graph", "dataset": "motif", "synthetic": {"num_graphs": 30},
                    "architecture": {"epochs": 1, "hidden": 4}},
         "audit": {"n_bootstrap": 20}, "attacks": {"graph_confidence_mia": {}},
         "sweep": {"defenses": ["none", "dp_sgd"], "epsilons": [4.0], "seeds": [0]}}


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _rows(path: Any) -> list[dict[str, Any]]:
    with ResultsStore(path) as s:
        return s.rows()


def test_link_grid_uses_the_link_defenses() -> None:
    units = expand_grid(parse_sweep_spec(LINK))
    assert [(u.defense, u.epsilon) for u in units] == [
        ("none", None), ("edgerand", 1.0), ("edgerand", 4.0), ("lapgraph", 1.0),
        ("lapgraph", 4.0), ("gap_edp", 1.0), ("gap_edp", 4.0), ("dp_sgd", 1.0),
        ("dp_sgd", 4.0)]
    assert all(u.target["task"] == "link" for u in units)
    assert units[-1].target["defense_params"] == {"epochs": 1, "epsilon": 4.0}
    hashes = [r["config_hash"] for u in units for r in u.runs]
    assert len(set(hashes)) == len(hashes) == 9


def test_a_node_grid_records_no_task() -> None:
    """A node sweep's run configs (and so their hashes, which resume a store) are as before."""
    raw = {"target": {"dataset": "synthetic"}, "attacks": {"confidence_mia": {}},
           "sweep": {"defenses": ["none"], "seeds": [0]}}
    (unit,) = expand_grid(parse_sweep_spec(raw))
    assert "task" not in unit.target and "task" not in unit.runs[0]["config"]["target"]


@pytest.mark.parametrize("raw,needle", [
    ({**GRAPH, "sweep": {"defenses": ["edgerand"], "epsilons": [1.0]}},
     "sweep.defenses[0]: 'edgerand' is not a defense of the graph task"),
    ({**LINK, "sweep": {"defenses": ["edgerand"]}}, "defense 'edgerand' needs at least one ε"),
    ({**LINK, "sweep": {"defenses": ["none"], "defense_params": {"dp_sgd": {"epochs": 1}}}},
     "'dp_sgd' is not in sweep.defenses"),
    ({**LINK, "sweep": {"defenses": ["dp_sgd"], "epsilons": [1.0],
                        "defense_params": {"dp_sgd": {"epoch": 1}}}}, "has no parameter"),
    ({**GRAPH, "target": {**GRAPH["target"], "bundle": "b"}}, "target.bundle"),
    # the target's defense parameters go to every swept defense: refused before any run
    ({**GRAPH, "target": {**GRAPH["target"], "defense": "dp_sgd",
                          "defense_params": {"max_grad_norm": 1.0}}},
     "sweep.defense_params.none: none.max_grad_norm"),
])
def test_bad_task_sweeps_refused(raw, needle) -> None:
    with pytest.raises(InvalidConfigError) as e:
        parse_sweep_spec(raw)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_graph_sweep_rows_carry_the_task(tmp_path) -> None:
    summary = run_sweep(parse_sweep_spec(GRAPH), tmp_path / "g.sqlite")
    assert (summary.total, summary.ran, summary.failed) == (2, 2, 0)
    rows = _rows(tmp_path / "g.sqlite")
    assert {r["task"] for r in rows} == {"graph"}
    assert {r["status"] for r in rows} == {"done"}
    ledgers = {r["defense"]: r["ledger"] for r in rows}
    assert ledgers["none"]["unit"] == "none"
    assert ledgers["dp_sgd"]["unit"] == "graph"
    assert ledgers["dp_sgd"]["epsilon"] == pytest.approx(4.0, rel=1e-2)
    assert all("auc" in r["metrics"]["binary"] for r in rows)
    from graphleaks.sweep.results_store import to_csv

    head, first = to_csv(rows, ["auc"]).splitlines()[:2]
    assert head.endswith(",task,test_link_auc") and first.endswith(",graph,")


def _fake_ray() -> types.ModuleType:
    """A stand-in for Ray that runs each remote task in this process when it is waited on:
    enough to show a task unit goes through the backend's own code and unit function."""
    ray = types.ModuleType("ray")
    state = {"on": False}

    class Ref:
        def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> None:
            self.fn, self.args, self.kwargs = fn, args, kwargs

    def remote(**_: Any) -> Callable[[Callable[..., Any]], Any]:
        def wrap(fn: Callable[..., Any]) -> Any:
            return types.SimpleNamespace(
                remote=lambda *a, **k: Ref(fn, a, k))
        return wrap

    ray.is_initialized = lambda: state["on"]  # type: ignore[attr-defined]
    ray.init = lambda **_: state.update(on=True)  # type: ignore[attr-defined]
    ray.shutdown = lambda: state.update(on=False)  # type: ignore[attr-defined]
    ray.remote = remote  # type: ignore[attr-defined]
    ray.wait = lambda refs, num_returns=1: (refs[:1], refs[1:])  # type: ignore[attr-defined]
    ray.get = lambda ref: ref.fn(*ref.args, **ref.kwargs)  # type: ignore[attr-defined]
    ray.cancel = lambda *a, **k: None  # type: ignore[attr-defined]
    ray.__version__ = "0-fake"  # type: ignore[attr-defined]
    return ray


def test_link_sweep_on_ray_gives_the_rows_of_the_process_backend(tmp_path, monkeypatch):
    raw = {**LINK, "sweep": {"defenses": ["none", "edgerand"], "epsilons": [2.0],
                             "seeds": [0]}}
    spec = parse_sweep_spec(raw)
    local = tmp_path / "local.sqlite"
    assert run_sweep(spec, local).ran == 2
    monkeypatch.setitem(sys.modules, "ray", _fake_ray())
    db = tmp_path / "ray.sqlite"
    summary = run_sweep(spec, db, backend="ray", workers=1)
    assert (summary.ran, summary.failed) == (2, 0)
    rows = _rows(db)
    assert {r["task"] for r in rows} == {"link"}
    assert [tuple(r[c] for c in RESULT_COLUMNS) for r in rows] == \
        [tuple(r[c] for c in RESULT_COLUMNS) for r in _rows(local)]


def test_results_table_shows_a_link_predictors_utility(tmp_path) -> None:
    from typer.testing import CliRunner

    from graphleaks.cli import app

    spec = {**LINK, "sweep": {"defenses": ["none"], "seeds": [0]}}
    run_sweep(parse_sweep_spec(spec), tmp_path / "l.sqlite")
    r = CliRunner().invoke(app, ["results", str(tmp_path / "l.sqlite")])
    assert r.exit_code == 0, r.output
    head, row = r.stdout.splitlines()[1:3]
    assert head.split()[-2:] == ["test_acc", "test_link_auc"]
    # no accuracy for a link predictor; its held-out link AUC instead
    assert row.split()[-2] == "-" and 0.0 <= float(row.split()[-1]) <= 1.0
