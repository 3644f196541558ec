"""A served GAP model is a fixed release; new releases are charged or refused (issue 15)."""

from __future__ import annotations

import pytest
import torch
from typer.testing import CliRunner

from graphleaks.attacks.linkteller import LinkTeller
from graphleaks.audit.runner import run_audit, train_target
from graphleaks.bundles import load_bundle, save_bundle
from graphleaks.cli import app
from graphleaks.data.synthetic import csbm
from graphleaks.errors import CapabilityError, InvalidConfigError
from graphleaks.privacy.accounting import api_epsilon
from graphleaks.report.markdown import render_markdown

FAST = {"encoder_epochs": 3, "epochs": 3}


@pytest.fixture(scope="module")
def graph():
    return csbm(60, seed=0)


def _edp(graph, **params):  # noqa: ANN001, ANN003, ANN202
    return train_target(graph, defense="gap_edp", seed=0,
                        defense_params={"epsilon": 1.0, **FAST, **params})


def test_training_graph_queries_are_free_and_new_inputs_are_charged(graph):
    t = _edp(graph)
    guard = t.model.release_guard
    t.clear_cache()
    t.posteriors(view="target")
    assert guard.releases == 0
    x = t.graph.x.clone()
    x[0] += 1.0
    e = t.edges("target")
    a = t.query(x, e)[-1]
    assert guard.releases == 1
    assert torch.equal(a, t.query(x, e)[-1]) and guard.releases == 1  # a repeat is free
    x[1] += 1.0
    t.query(x, e)
    assert guard.releases == 2
    eps = [guard.epsilon_after(n) for n in range(4)]
    assert eps[0] == pytest.approx(t.ledger.epsilon, rel=1e-9)
    assert eps == sorted(eps) and eps[2] > t.ledger.epsilon
    assert guard.summary()["epsilon_after_queries"] == pytest.approx(eps[2])


def test_release_past_the_budget_is_refused(graph):
    t = _edp(graph, query_budget=1.5)
    guard = t.model.release_guard
    expected = next(n for n in range(1, 50) if guard.epsilon_after(n) > 1.5)
    x = t.graph.x.clone()
    e = t.edges("target")
    with pytest.raises(CapabilityError, match="query refused"):
        for i in range(expected + 1):
            x[i] += 1.0
            t.query(x, e)
    assert guard.releases == expected - 1
    assert guard.epsilon_after(guard.releases) <= 1.5


@pytest.mark.parametrize("budget", [0.0, -1.0])
def test_non_positive_budget_is_bad_input(graph, budget):
    with pytest.raises(InvalidConfigError, match="query_budget"):
        _edp(graph, query_budget=budget)


def test_cli_non_positive_budget_exit_2(tmp_path):
    r = CliRunner().invoke(app, [
        "audit", "--dataset", "synthetic", "--defense", "gap_edp",
        "--param", "gap_edp.query_budget=0", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "query_budget" in r.output
    assert not (tmp_path / "o").exists()


def test_bundle_round_trip_serves_the_same_release_and_rearms_the_guard(graph, tmp_path):
    t = _edp(graph, query_budget=3.0)
    loaded = load_bundle(save_bundle(t, tmp_path / "b"), graph=graph)
    assert torch.equal(loaded.posteriors(), t.posteriors())
    guard = loaded.model.release_guard
    assert guard is not None and guard.budget == 3.0 and guard.releases == 0
    loaded.query(loaded.graph.x + 0.5, loaded.edges("target"))
    assert guard.releases == 1


def test_linkteller_audit_reports_the_api_epsilon(graph):
    """The former GAP-EDP served LinkTeller's perturbed queries as unaccounted releases."""
    t = _edp(graph)
    report = run_audit(t, [LinkTeller()], seed=0, n_bootstrap=5)
    serving = report.serving
    n = serving.fresh_releases
    assert n > 1
    assert serving.epsilon_after_queries > t.ledger.epsilon
    led = t.ledger
    from graphleaks.privacy.events import event_from_dict

    release = t.model.release_guard.release
    assert serving.epsilon_after_queries == pytest.approx(api_epsilon(
        event_from_dict(led.events[0]), release, n, led.delta, accountant="analytic"))
    assert "fresh release(s)" in render_markdown(report)


def test_ndp_serving_is_guarded_too(graph):
    t = train_target(graph, defense="gap_ndp", seed=0, defense_params={
        "epsilon": 8.0, "encoder_epochs": 1, "epochs": 1, "batch_size": 1000, "max_degree": 3})
    t.query(t.graph.x + 1.0, t.edges("target"))
    assert t.model.release_guard.releases == 1
    assert t.model.release_guard.epsilon_after(1) > t.ledger.epsilon
