"""Chunked bootstrap = the former one-shot bootstrap, number for number; boundary intervals.

``_legacy_*`` below is a verbatim-in-substance copy of the implementation before chunking
(``B x n`` count matrices), kept here as the reference the chunked code must reproduce; its
TPR@FPR reads the randomised operating point inside ties, the rule since issue 24.
"""

from __future__ import annotations

import numpy as np
import pytest

from graphleaks.metrics import _core as chunking  # the chunk budget lives with the helpers
from graphleaks.metrics import auc, binary_metrics, bootstrap_auc_ci, bootstrap_ci
from graphleaks.metrics.intervals import BOOTSTRAP, CLOPPER_PEARSON_BOX, DELONG, NEWCOMBE_AUC

# ----------------------------------------------------------------- the former implementation


def _legacy_counts(indices: np.ndarray, n: int) -> np.ndarray:
    n_rep = indices.shape[0]
    offsets = (np.arange(n_rep, dtype=np.int64) * n)[:, None]
    flat = np.bincount((indices + offsets).ravel(), minlength=n_rep * n)
    return flat.reshape(n_rep, n)


def _legacy_binary_counts(y: np.ndarray, n_bootstrap: int, seed: int, stratified: bool):
    pos_idx, neg_idx = np.flatnonzero(y), np.flatnonzero(~y)
    rng = np.random.default_rng(seed)
    if stratified:
        ip = rng.integers(0, pos_idx.size, size=(n_bootstrap, pos_idx.size), dtype=np.int64)
        ineg = rng.integers(0, neg_idx.size, size=(n_bootstrap, neg_idx.size), dtype=np.int64)
        return _legacy_counts(ip, pos_idx.size), _legacy_counts(ineg, neg_idx.size)
    idx = rng.integers(0, y.size, size=(n_bootstrap, y.size), dtype=np.int64)
    counts = _legacy_counts(idx, y.size)
    w_pos, w_neg = counts[:, pos_idx], counts[:, neg_idx]
    keep = (w_pos.sum(axis=1) > 0) & (w_neg.sum(axis=1) > 0)
    return w_pos[keep], w_neg[keep]


def _legacy_roc(s_pos, s_neg, w_pos, w_neg):
    uniq = np.unique(np.concatenate([s_pos, s_neg]))[::-1]
    thresholds = np.concatenate([[np.inf], uniq])

    def cumulative(scores, weights):
        order = np.argsort(-scores, kind="stable")
        asc = scores[order][::-1]
        k = scores.size - np.searchsorted(asc, thresholds, side="left")
        cum = np.zeros((weights.shape[0], scores.size + 1))
        np.cumsum(weights[:, order], axis=1, out=cum[:, 1:])
        return cum[:, k]

    tp, fp = cumulative(s_pos, w_pos), cumulative(s_neg, w_neg)
    n_pos, n_neg = tp[:, -1].copy(), fp[:, -1].copy()
    return tp, fp, tp / n_pos[:, None], fp / n_neg[:, None], n_pos, n_neg


def _legacy_binary_metrics(s, y, *, threshold, fpr_points, n_bootstrap, seed, conf=0.95):
    y = y.astype(bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    w_pos, w_neg = _legacy_binary_counts(y, n_bootstrap, seed, True)
    wp = np.vstack([np.ones((1, n_pos)), w_pos]).astype(np.float64)
    wn = np.vstack([np.ones((1, n_neg)), w_neg]).astype(np.float64)
    s_pos, s_neg = s[y], s[~y]
    tp, fp, tpr, fpr, npos, nneg = _legacy_roc(s_pos, s_neg, wp, wn)
    pred = tp + fp
    prec = np.divide(tp, pred, out=np.zeros_like(tp), where=pred > 0)
    vals = {
        "auc": np.sum(np.diff(fpr, axis=1) * (tpr[:, 1:] + tpr[:, :-1]), axis=1) / 2.0,
        "average_precision": np.sum(np.diff(tpr, axis=1) * prec[:, 1:], axis=1),
        "max_advantage": np.max(tpr - fpr, axis=1),
    }
    rows = np.arange(tp.shape[0])
    for f in fpr_points:
        # the randomised operating point inside a tie (issue 24), written out independently
        last = np.sum(fpr <= f, axis=1) - 1
        nxt = np.minimum(last + 1, fpr.shape[1] - 1)
        t0, t1 = tpr[rows, last], tpr[rows, nxt]
        f0, f1 = fpr[rows, last], fpr[rows, nxt]
        frac = np.divide(f - f0, f1 - f0, out=np.zeros_like(f0), where=f1 > f0)
        vals[f"tpr@{f!r}"] = np.where(t1 > t0, t0 + frac * (t1 - t0), t0)
    if threshold is not None:
        tpt = wp @ (s_pos >= threshold).astype(np.float64)
        fpt = wn @ (s_neg >= threshold).astype(np.float64)
        vals["at:recall"] = tpt / npos
        vals["at:fpr"] = fpt / nneg
        vals["at:accuracy"] = (tpt + nneg - fpt) / (npos + nneg)
    alpha = 1.0 - conf
    return {k: (float(v[0]), *np.quantile(v[1:], [alpha / 2, 1 - alpha / 2]).tolist())
            for k, v in vals.items()}


# ----------------------------------------------------------------- tests


def _data(seed: int, n: int, ties: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.4
    y[:2] = [True, False]
    s = rng.normal(size=n) + 0.8 * y
    return (np.round(s, 1) if ties else s), y.astype(np.int64)


def _flat(m) -> dict[str, tuple[float, float, float, str]]:
    out = {"auc": m.auc, "average_precision": m.average_precision,
           "max_advantage": m.max_advantage}
    out.update({f"tpr@{f!r}": e for f, e in m.tpr_at_fpr.items()})
    if m.at_threshold is not None:
        out.update({f"at:{k}": getattr(m.at_threshold, k) for k in ("recall", "fpr", "accuracy")})
    return {k: (e.value, e.lo, e.hi, e.method) for k, e in out.items()}


@pytest.mark.parametrize(("seed", "n", "ties", "rows"),
                         [(0, 40, False, 3), (1, 120, True, 3), (2, 301, True, 1),
                          (3, 64, True, 1000)])
def test_chunked_bootstrap_equals_the_former_one_shot(seed, n, ties, rows, monkeypatch) -> None:
    s, y = _data(seed, n, ties)
    # Chunks of a few replicates (or one), so the chunk seams really are crossed.
    monkeypatch.setattr(chunking, "CHUNK_ELEMENTS", rows * n)
    fprs = (0.01, 0.1, 0.3)
    new = _flat(binary_metrics(s, y, threshold=0.3, fpr_points=fprs, n_bootstrap=200,
                               seed=seed))
    old = _legacy_binary_metrics(s.astype(float), y, threshold=0.3, fpr_points=fprs,
                                 n_bootstrap=200, seed=seed)
    interior = 0
    for key, (value, lo, hi) in old.items():
        n_value, n_lo, n_hi, method = new[key]
        assert n_value == value
        if method == BOOTSTRAP:
            assert (n_lo, n_hi) == (lo, hi), key  # bit for bit
            interior += 1
        else:  # the boundary fix changes only metrics at the edge of their range
            assert value in (0.0, 1.0), key
    assert interior >= 6


def test_chunked_auc_ci_and_generic_ci_equal_the_former(monkeypatch) -> None:
    s, y = _data(5, 90, True)
    w_pos, w_neg = _legacy_binary_counts(y.astype(bool), 150, 7, stratified=False)
    tp, fp, tpr, fpr, *_ = _legacy_roc(s[y == 1], s[y == 0], w_pos.astype(float),
                                       w_neg.astype(float))
    aucs = np.sum(np.diff(fpr, axis=1) * (tpr[:, 1:] + tpr[:, :-1]), axis=1) / 2.0
    expected = tuple(np.quantile(aucs, [0.025, 0.975]).tolist())
    monkeypatch.setattr(chunking, "CHUNK_ELEMENTS", 200)
    assert bootstrap_auc_ci(s, y, n_bootstrap=150, seed=7, stratified=False) == expected
    generic = bootstrap_ci(auc, s, y, n_bootstrap=150, seed=7, stratified=False)
    assert generic == pytest.approx(expected, abs=1e-12)


def test_interval_at_the_boundary_does_not_collapse() -> None:
    # LinkTeller on Cora: all 28 edges outrank every non-edge; published AUC 0.9987.
    rng = np.random.default_rng(0)
    s = np.concatenate([rng.uniform(2, 3, 28), rng.uniform(0, 1, 2000)])
    y = np.r_[np.ones(28), np.zeros(2000)]
    m = binary_metrics(s, y, n_bootstrap=200, seed=0)
    assert m.auc.value == 1.0 and m.auc.method == NEWCOMBE_AUC
    assert m.auc.lo < 0.9987 < m.auc.hi == 1.0
    assert m.tpr_at_fpr[0.001].value == 1.0 and m.tpr_at_fpr[0.001].lo < 1.0
    # issue 29: an analytic TPR@FPR interval also brackets the threshold the negatives set
    # (a Clopper-Pearson box); it was the positives' Clopper-Pearson interval alone
    assert m.tpr_at_fpr[0.001].method == CLOPPER_PEARSON_BOX
    # The percentile bootstrap alone collapses here: that is what is being fixed.
    assert bootstrap_auc_ci(s, y, n_bootstrap=200, seed=0) == (1.0, 1.0)


def test_rate_of_zero_gets_an_upper_bound_above_zero() -> None:
    s, y = _data(3, 200, False)
    m = binary_metrics(s, y, fpr_points=(0.0,), n_bootstrap=100, seed=0)
    e = m.tpr_at_fpr[0.0]
    if e.value == 0.0:
        assert e.method == CLOPPER_PEARSON_BOX and e.lo == 0.0 < e.hi  # box: issue 29
    else:
        assert e.method == BOOTSTRAP


def test_analytic_intervals_above_the_size_limit_are_recorded() -> None:
    s, y = _data(4, 3000, False)
    boot = binary_metrics(s, y, threshold=0.0, n_bootstrap=300, seed=0)
    ana = binary_metrics(s, y, threshold=0.0, n_bootstrap=300, seed=0, analytic_above=1000)
    assert ana.interval == "analytic" and ana.n_bootstrap == 0
    assert ana.auc.method == DELONG and ana.to_dict()["auc"]["method"] == DELONG
    assert ana.auc.value == boot.auc.value
    # DeLong and the bootstrap agree on a large interior sample (widths within 20 %).
    w_a, w_b = ana.auc.hi - ana.auc.lo, boot.auc.hi - boot.auc.lo
    assert abs(w_a - w_b) < 0.2 * w_b
    for name in ("accuracy", "recall", "fpr", "precision", "f1", "advantage"):
        e = getattr(ana.at_threshold, name)
        assert e.lo <= e.value <= e.hi and e.method != BOOTSTRAP


def test_chunked_multiclass_equals_the_former_one_shot(monkeypatch) -> None:
    from graphleaks.metrics import multiclass_metrics

    rng = np.random.default_rng(0)
    t = rng.integers(0, 4, 300)
    p = np.where(rng.random(300) < 0.5, t, rng.integers(0, 4, 300))
    # the former: one [B + 1, n] weight matrix
    n, n_boot = t.size, 120
    idx = np.random.default_rng(3).integers(0, n, size=(n_boot, n), dtype=np.int64)
    w = np.vstack([np.ones((1, n)), _legacy_counts(idx, n)]).astype(np.float64)
    acc = w @ (t == p).astype(np.float64) / n
    expected = (float(acc[0]), *np.quantile(acc[1:], [0.025, 0.975]).tolist())
    monkeypatch.setattr(chunking, "CHUNK_ELEMENTS", 7 * n)
    m = multiclass_metrics(t, p, n_bootstrap=n_boot, seed=3)
    assert (m.accuracy.value, m.accuracy.lo, m.accuracy.hi) == expected


def test_bootstrap_memory_does_not_grow_with_the_number_of_replicates() -> None:
    import tracemalloc

    s, y = _data(6, 30_000, False)

    def peak(n_bootstrap: int) -> int:
        tracemalloc.start()
        try:
            binary_metrics(s, y, threshold=0.0, n_bootstrap=n_bootstrap, seed=0)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    # 2 chunks against 12 chunks of replicates: a B x n array (or a kept view of one chunk
    # per chunk) would make the second peak about 6 times the first.
    assert peak(400) < 1.3 * peak(50)
