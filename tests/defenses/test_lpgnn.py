"""LPGNN: the multi-bit mechanism exactly, KProp, RR labels, ledger, bundle round trip."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from graphleaks.audit.runner import train_target
from graphleaks.bundles import load_bundle, save_bundle
from graphleaks.data.splits import SplitConfig
from graphleaks.data.synthetic import csbm
from graphleaks.defenses.lpgnn import (
    LPGNNConfig,
    kprop,
    mbm_sampling_size,
    multibit_bit_probability,
    multibit_encode,
    multibit_rectify,
    resolve_hparams,
)
from graphleaks.errors import InvalidConfigError
from graphleaks.privacy.ledger import PrivacyUnit
from graphleaks.privacy.mechanisms import rr_matrix

SPLIT = SplitConfig(kind="transductive", train_frac=0.5, val_frac=0.25, test_frac=0.25)


def output_probability(x, out, eps, m):
    """P(out | x) of the multi-bit mechanism, from its definition (alpha=0, beta=1)."""
    d = len(x)
    if sum(o != 0 for o in out) != m:
        return 0.0
    prob = 1.0 / math.comb(d, m)
    p1 = multibit_bit_probability(torch.tensor(x, dtype=torch.float64), eps, m)
    for i, o in enumerate(out):
        if o == 1:
            prob *= float(p1[i])
        elif o == -1:
            prob *= 1.0 - float(p1[i])
    return prob


@pytest.mark.parametrize(("d", "eps", "m"), [(1, 0.5, 1), (2, 1.0, 1), (3, 5.0, 2), (4, 9.0, 4)])
def test_multibit_ratio_is_exactly_e_eps(d, eps, m):
    grid = [0.0, 0.3, 1.0]
    inputs = list(itertools.product(grid, repeat=d))
    outputs = list(itertools.product([-1, 0, 1], repeat=d))
    worst = 0.0
    for out in outputs:
        probs = [output_probability(x, out, eps, m) for x in inputs]
        if max(probs) == 0.0:
            continue
        assert min(probs) > 0.0
        worst = max(worst, math.log(max(probs) / min(probs)))
    for x in inputs:  # a distribution
        assert sum(output_probability(x, o, eps, m) for o in outputs) == pytest.approx(1.0)
    assert worst == pytest.approx(eps, rel=1e-9)


def test_sampler_matches_enumerated_distribution():
    x = torch.tensor([[0.2, 0.9]]).repeat(40_000, 1)
    out = multibit_encode(x, 1.0, torch.Generator().manual_seed(0), m=1)
    pats = [tuple(int(v) for v in row) for row in out.tolist()]
    counts = {o: pats.count(o) for o in set(pats)}
    for o in itertools.product([-1, 0, 1], repeat=2):
        p = output_probability([0.2, 0.9], o, 1.0, 1)
        se = math.sqrt(p * (1 - p) / len(pats)) + 1e-12
        assert abs(counts.get(o, 0) / len(pats) - p) < 5 * se


def test_sampling_size_and_rectifier_spike():
    assert mbm_sampling_size(1.0, 1433) == 1
    assert mbm_sampling_size(4.3, 1433) == 1
    assert mbm_sampling_size(9.0, 1433) == 4
    assert mbm_sampling_size(100.0, 3) == 3
    spike = multibit_rectify(torch.ones(1, 1433), 1.0, 1)[0, 0].item() - 0.5
    assert spike == pytest.approx(1433 * 0.5 * (math.e + 1) / (math.e - 1))
    assert round(spike) == 1550


def test_rectified_estimate_is_unbiased():
    x = torch.tensor([[0.1, 0.5, 0.8, 1.0]]).repeat(50_000, 1)
    est = multibit_rectify(multibit_encode(x, 2.0, torch.Generator().manual_seed(3)), 2.0, 1)
    e = math.exp(2.0)
    var = 4 * 0.25 * ((e + 1) / (e - 1)) ** 2
    assert torch.all((est.mean(0) - x[0]).abs() < 5 * math.sqrt(var / 50_000))


def test_rr_matrix_exact():
    t = rr_matrix(3, 1.0)
    e = math.e
    assert np.allclose(np.diag(t), e / (e + 2)) and np.allclose(t.sum(1), 1.0)


def test_kprop_is_symmetric_normalised():
    e = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    x = torch.eye(3)
    a = kprop(x, e, 1)
    deg = torch.tensor([1.0, 2.0, 1.0])
    expected = torch.zeros(3, 3)
    for s, t in e.t().tolist():
        expected[t, s] = 1 / math.sqrt(deg[s] * deg[t])
    assert torch.allclose(a, expected)


def test_paper_hyperparameters():
    hp = resolve_hparams(LPGNNConfig(epsilon=1.0))
    assert (hp["x_steps"], hp["y_steps"], hp["lr"], hp["weight_decay"], hp["dropout"]) == (
        16, 0, .01, .01, .75)
    hp = resolve_hparams(LPGNNConfig(epsilon=1.0, epsilon_y=1.0), "facebook")
    assert (hp["x_steps"], hp["y_steps"], hp["lr"]) == (2, 4, .001)


@pytest.fixture(scope="module")
def graph():
    return csbm(60, seed=0)


@pytest.mark.parametrize("eps_y", [math.inf, 1.0])
def test_trains_with_ledger_and_round_trip(graph, tmp_path, eps_y):
    t = train_target(graph, defense="lpgnn", split=SPLIT, seed=0,
                     defense_params={"epsilon": 1.0, "epsilon_y": eps_y, "epochs": 5})
    led = t.ledger
    assert led.components["epsilon_x"] == 1.0 and led.components["epsilon_y"] == eps_y
    if math.isinf(eps_y):
        assert led.unit == PrivacyUnit.NODE_FEATURE and led.epsilon == pytest.approx(1.0)
    else:
        assert led.unit == PrivacyUnit.NODE_FEATURE_AND_LABEL
        assert led.epsilon == pytest.approx(2.0)
    assert t.features is not None and not torch.equal(t.features, t.graph.x)
    loaded = load_bundle(save_bundle(t, tmp_path / "b"), graph=graph)
    assert torch.equal(loaded.features, t.features)
    assert torch.equal(loaded.posteriors(), t.posteriors())


@pytest.mark.parametrize(("params", "word"), [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": -2.0}, "epsilon"),
    ({"epsilon_y": 0.0}, "epsilon_y"),
])
def test_bad_input(graph, params, word):
    with pytest.raises(InvalidConfigError, match=word):
        train_target(graph, defense="lpgnn", defense_params=params, seed=0)


def test_mean_sage_matches_pyg():
    from torch_geometric.nn import SAGEConv

    from graphleaks.defenses.lpgnn import MeanSAGE

    torch.manual_seed(0)
    ours, ref = MeanSAGE(5, 3), SAGEConv(5, 3, aggr="mean", root_weight=True)
    with torch.no_grad():
        ref.lin_l.weight.copy_(ours.lin_l.weight)
        ref.lin_l.bias.copy_(ours.bias.uniform_())
        ref.lin_r.weight.copy_(ours.lin_r.weight)
    x = torch.randn(4, 5)
    e = torch.tensor([[0, 1, 2, 1], [1, 0, 1, 2]])
    assert torch.allclose(ours(x, e), ref(x, e), atol=1e-6)


# --- issue 15: per-dataset hyperparameters, recorded truthfully; isolated nodes in KProp ---


def test_loaded_graph_carries_its_dataset_name():
    from graphleaks.data import load_dataset

    assert load_dataset("cora").name == "cora"


def test_named_graph_selects_its_table_and_the_record_says_so():
    from graphleaks.audit.runner import train_target
    from graphleaks.data.synthetic import csbm

    g = csbm(60, seed=0)
    g.name = "facebook-pagepage"
    t = train_target(g, defense="lpgnn", seed=0, defense_params={"epochs": 2})
    assert t.training["dataset"] == "facebook" and t.training["dataset_source"] == "graph"
    assert t.defense_config["dataset"] == "facebook"
    assert not any("fell back" in n for n in t.ledger.notes)


@pytest.mark.parametrize("name", [None, "citeseer"])
def test_untuned_graph_gets_a_seeded_validation_search(name):
    from graphleaks.audit.runner import run_audit, train_target
    from graphleaks.data.synthetic import csbm
    from graphleaks.defenses.lpgnn import SEARCH_LR, SEARCH_WEIGHT_DECAY, SEARCH_X_STEPS
    from graphleaks.report.markdown import render_markdown

    g = csbm(60, seed=0)
    if name is not None:
        g.name = name
    t = train_target(g, defense="lpgnn", seed=0, defense_params={"epochs": 2})
    assert t.training["dataset_source"] == "search"
    assert t.training["x_steps"] in SEARCH_X_STEPS and t.training["lr"] in SEARCH_LR
    assert t.training["weight_decay"] in SEARCH_WEIGHT_DECAY
    # pinned in the config, so the bundle rebuilds the searched model
    assert t.defense_config["x_steps"] == t.training["x_steps"]
    notes = [n for n in t.ledger.notes if "seeded validation search" in n]
    assert len(notes) == 1 and "fell back to Cora's" not in " ".join(t.ledger.notes)
    again = train_target(g, defense="lpgnn", seed=0, defense_params={"epochs": 2})
    assert again.training == t.training  # seeded
    report = run_audit(t, seed=0, n_bootstrap=5)
    md = render_markdown(report)
    assert "seeded validation search" in md
    # the target card names LPGNN's architecture, not the unused GCN spec
    assert report.target.architecture["arch"] == "lpgnn-sage" and "**LPGNN-SAGE**" in md


def test_a_user_set_hyperparameter_keeps_the_explicit_fallback(tmp_path):
    from graphleaks.audit.runner import train_target
    from graphleaks.data.synthetic import csbm

    t = train_target(csbm(60, seed=0), defense="lpgnn", seed=0,
                     defense_params={"epochs": 2, "lr": 0.01})
    assert t.training["dataset_source"] == "fallback" and t.training["dataset"] == "cora"
    assert len([n for n in t.ledger.notes if "fell back to Cora's" in n]) == 1


def test_unknown_dataset_in_config_is_bad_input():
    from graphleaks.audit.runner import train_target
    from graphleaks.data.synthetic import csbm
    from graphleaks.errors import InvalidConfigError

    with pytest.raises(InvalidConfigError, match="dataset parameter of LPGNN"):
        train_target(csbm(60, seed=0), defense="lpgnn", seed=0,
                     defense_params={"dataset": "citeseer", "epochs": 2})


def test_kprop_keeps_an_isolated_nodes_own_features():
    from graphleaks.defenses.lpgnn import kprop

    x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    e = torch.tensor([[0, 1], [1, 0]])  # node 2 has no neighbour in this graph
    out = kprop(x, e, 3)
    assert torch.equal(out[2], x[2])
    assert torch.allclose(out[:2], torch.tensor([[3.0, 4.0], [1.0, 2.0]]))  # plain Â^3 x
