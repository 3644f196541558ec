"""GAP-EDP / GAP-NDP: calibration, aggregation sensitivity, noise, ledger, bundle round trip."""

from __future__ import annotations

import math

import pytest
import torch

from graphleaks.audit.runner import train_target
from graphleaks.bundles import load_bundle, save_bundle
from graphleaks.data.synthetic import csbm
from graphleaks.defenses.gap import GAPModel, bound_out_degree, sum_aggregate
from graphleaks.errors import InvalidConfigError
from graphleaks.privacy.ledger import PrivacyUnit
from graphleaks.privacy.mechanisms import gaussian_noise

FAST = {"encoder_epochs": 3, "epochs": 3}


@pytest.fixture(scope="module")
def graph():
    return csbm(60, seed=0)


@pytest.fixture(scope="module")
def edp_target(graph):
    return train_target(graph, defense="gap_edp", defense_params={"epsilon": 1.0, **FAST},
                        seed=0)


def test_undirected_edge_changes_aggregate_by_sqrt2():
    z = torch.nn.functional.normalize(torch.randn(5, 4, generator=torch.Generator().manual_seed(0)),
                                      dim=1)
    e = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
    without = e[:, 2:]  # drop the undirected edge {0, 1}
    diff = sum_aggregate(z, e) - sum_aggregate(z, without)
    assert math.isclose(diff.norm().item(), math.sqrt(2), rel_tol=1e-6)


def test_bound_out_degree():
    src = torch.tensor([0] * 10 + [1] * 2)
    e = torch.stack([src, torch.arange(12)])
    out = bound_out_degree(e, 3, torch.Generator().manual_seed(0))
    counts = torch.bincount(out[0], minlength=2)
    assert counts.tolist() == [3, 2]


def test_noise_std_matches_sigma():
    x = gaussian_noise((200_000,), 2.5, torch.Generator().manual_seed(1), dtype=torch.float64)
    se = 2.5 / math.sqrt(2 * 200_000)
    assert abs(x.std().item() - 2.5) < 4 * se


def test_edp_ledger_and_sigma(edp_target):
    led = edp_target.ledger
    assert led.unit == PrivacyUnit.EDGE
    assert math.isfinite(led.epsilon) and abs(led.epsilon - 1.0) < 1e-3
    assert led.components["sensitivity"] == pytest.approx(math.sqrt(2))
    assert any("undirected" in n for n in led.notes)
    assert float(edp_target.model.sigma) == pytest.approx(edp_target.training["sigma"])


def test_edp_directed_unit_matches_golden_sigma(graph):
    from graphleaks.defenses.gap import GAPEDP

    d = GAPEDP(epsilon=1.0, delta=1e-7, edge_unit="directed")
    sigma, led, _ = d._calibrate(graph, None, graph.edge_index)
    assert sigma == pytest.approx(6.617, abs=2e-3)  # defenses.md §3.3, K=2
    assert led.components["directed_unit"] == 1.0


def test_forward_is_deterministic_on_the_training_graph_and_fresh_elsewhere(edp_target):
    t = edp_target
    a = t.logits(view="target")
    t.clear_cache()
    assert torch.equal(a, t.logits(view="target"))
    m: GAPModel = t.model
    z = m.encode(t.graph.x)
    e = t.edges("target")
    assert torch.equal(m.aggregate(z, e), m.aggregate(z, e))
    assert not torch.equal(m.aggregate(z, e)[:, 1:], m.aggregate(z, t.graph.edge_index)[:, 1:])


def test_edp_bundle_round_trip(edp_target, graph, tmp_path):
    path = save_bundle(edp_target, tmp_path / "b")
    loaded = load_bundle(path, graph=graph)
    assert torch.equal(loaded.posteriors(), edp_target.posteriors())
    assert loaded.ledger == edp_target.ledger


def test_bundle_manifest_with_the_old_kebab_name_loads(edp_target, graph, tmp_path):
    # bundles written before the rename say "gap-edp"; they load as gap_edp, re-arm the
    # served release (GAP's on_load), and an audit of them writes only the canonical name
    import json

    from graphleaks.audit.runner import run_audit

    path = save_bundle(edp_target, tmp_path / "b")
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["defense"] == "gap_edp"
    manifest["defense"] = "gap-edp"
    (path / "manifest.json").write_text(json.dumps(manifest))
    loaded = load_bundle(path, graph=graph)
    assert loaded.defense == "gap_edp"
    assert torch.allclose(loaded.logits(), edp_target.logits(), atol=1e-5)
    report = run_audit(loaded, ["confidence_mia"], seed=0, n_bootstrap=20)
    assert report.target.defense == "gap_edp"
    assert "gap-edp" not in report.to_json()


def test_ndp_trains_with_ledger_and_round_trip(graph, tmp_path):
    t = train_target(graph, defense="gap_ndp", seed=0, defense_params={
        "epsilon": 8.0, "encoder_epochs": 1, "epochs": 1, "batch_size": 1000, "max_degree": 3})
    assert t.ledger.unit == PrivacyUnit.NODE
    assert abs(t.ledger.epsilon - 8.0) < 8e-3
    loaded = load_bundle(save_bundle(t, tmp_path / "n"), graph=graph)
    assert torch.equal(loaded.posteriors(), t.posteriors())


@pytest.mark.parametrize(("name", "params", "word"), [
    ("gap_edp", {"epsilon": 0.0}, "epsilon"),
    ("gap_edp", {"epsilon": -1.0}, "epsilon"),
    ("gap_edp", {"delta": 1.0}, "delta"),
    ("gap_edp", {"delta": 0.0}, "delta"),
    ("gap_ndp", {"max_degree": 0}, "max_degree"),
])
def test_bad_input(graph, name, params, word):
    with pytest.raises(InvalidConfigError, match=word):
        train_target(graph, defense=name, defense_params=params, seed=0)


def test_large_delta_warns(graph):
    with pytest.warns(UserWarning, match="delta"):
        train_target(graph, defense="gap_edp", seed=0,
                     defense_params={"epsilon": 1.0, "delta": 0.5, **FAST})
