"""The local feature update equals full forward passes (float64), and LinkTeller's AUC with it."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from graphleaks.attacks.base import TargetView
from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.linkteller import LinkTeller, influence_matrix
from graphleaks.audit.runner import train_target
from graphleaks.data.synthetic import csbm
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics import auc
from graphleaks.models._local_update import LocalFeatureUpdate, supports
from graphleaks.models.gnn import ArchitectureSpec


def _target(hidden: tuple[int, ...], arch: str = "gcn"):  # noqa: ANN202
    g = csbm(120, num_classes=3, num_features=12, feature_signal=1.0, avg_degree=5, seed=2)
    spec = ArchitectureSpec(arch=arch, hidden=hidden, epochs=15, patience=0)
    return train_target(g, spec=spec, seed=1)


@pytest.mark.parametrize("hidden", [(16,), (16, 8)])
def test_local_update_equals_forward_passes(hidden) -> None:
    t = _target(hidden)
    model = copy.deepcopy(t.model).double().eval()
    assert supports(model)
    x = t.served_features().double()
    edges = t.edges("target")
    engine = LocalFeatureUpdate(model, x, edges)
    with torch.no_grad():
        np.testing.assert_allclose(engine.logits, model(x, edges).numpy(), rtol=1e-12,
                                   atol=1e-12)
        rows = np.arange(0, 120, 3)
        for v in (0, 7, 55, 119):
            xp = x.clone()
            xp[v] *= 1.5
            full = model(xp, edges).numpy()[rows]
            np.testing.assert_allclose(engine.scaled_row_logits(v, 1.5, rows), full,
                                       rtol=1e-12, atol=1e-12)


def test_linkteller_local_and_forward_give_the_same_auc_in_float64() -> None:
    t = _target((16,))
    t.model.double()  # in place: the record is frozen, its module is not
    t.clear_cache()
    view = TargetView(t, LinkTeller.threat_model, view="target")
    x = t.served_features().double()
    nodes = np.arange(0, 120, 2)
    local = influence_matrix(lambda z, r, **kw: view.query_features_rows(z, r, **kw),
                             x, nodes, delta=1e-4)
    forward = influence_matrix(
        lambda z, r, **kw: view.query_features_rows(z, r, local=False, **kw), x, nodes,
        delta=1e-4)
    np.testing.assert_allclose(local, forward, rtol=1e-6, atol=1e-6)
    keys = set(map(tuple, t.edges("target").T.tolist()))
    iu = np.triu_indices(len(nodes), 1)
    labels = np.array([(nodes[j], nodes[i]) in keys for i, j in zip(*iu, strict=True)])
    fwd_scores, loc_scores = forward[iu[1], iu[0]], local[iu[1], iu[0]]
    assert labels.any()
    assert abs(auc(loc_scores, labels) - auc(fwd_scores, labels)) < 1e-6


def test_linkteller_api_modes_agree_and_non_gcn_falls_back() -> None:
    t = _target((16,))
    a = run_attack(LinkTeller(n_nodes=40), t, seed=0)
    b = run_attack(LinkTeller(n_nodes=40, api="forward"), t, seed=0)
    assert abs(auc(a.scores, a.labels) - auc(b.scores, b.labels)) < 1e-3
    sage = _target((16,), arch="sage")
    assert not supports(sage.model)
    r = run_attack(LinkTeller(n_nodes=20, sampler="random"), sage, seed=0)  # 20 nodes as asked
    assert len(r.scores) == 190


def test_linkteller_refuses_too_many_pairs_before_any_work() -> None:
    with pytest.raises(InvalidConfigError, match="max_pairs=1,000.*n_nodes <= 45"):
        LinkTeller(n_nodes=500, max_pairs=1000).check_scale(10_000, 50_000)
    LinkTeller(n_nodes=500, max_pairs=1000).check_scale(40, 100)  # 780 pairs: accepted


def _engines_agree(engine: LocalFeatureUpdate, wide: LocalFeatureUpdate, n: int, f: int,
                   check) -> None:  # noqa: ANN001
    check(engine.logits, wide.logits)
    rows = np.arange(0, n, 5)
    row = np.linspace(-1.0, 1.0, f)
    for v in (0, 33, n - 1):
        check(engine.scaled_row_logits(v, 1.0 + 1e-4, rows),
              wide.scaled_row_logits(v, 1.0 + 1e-4, rows))
        check(engine.replaced_row_logits(v, row, rows), wide.replaced_row_logits(v, row, rows))


def test_float32_features_give_the_float64_answers_without_a_float64_copy(monkeypatch) -> None:
    from graphleaks.models import _local_update

    t = _target((16, 8))
    model = t.model.eval()
    x = t.served_features().float()
    edges = t.edges("target")
    wide = LocalFeatureUpdate(model, x.double(), edges)  # the former path: X widened whole
    engine = LocalFeatureUpdate(model, x, edges)
    assert engine._x.dtype == np.float32 and np.shares_memory(engine._x, x.numpy())
    # one block (a graph of up to ROWS_PER_BLOCK nodes): the same products, bit for bit
    _engines_agree(engine, wide, 120, x.shape[1], np.testing.assert_array_equal)
    # several blocks, a ragged last: BLAS may round a block's sums in another order
    monkeypatch.setattr(_local_update, "ROWS_PER_BLOCK", 7)
    blocked = LocalFeatureUpdate(model, x, edges)
    _engines_agree(blocked, wide, 120, x.shape[1],
                   lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14))
