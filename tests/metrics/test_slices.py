"""Slice metrics: per-slice AUC and TPR@1%FPR with intervals, or 'too few'."""

from __future__ import annotations

import numpy as np

from graphleaks.metrics.binary import auc
from graphleaks.metrics.slices import slice_metrics


def _data():
    rng = np.random.default_rng(0)
    labels = np.r_[np.ones(200), np.zeros(200)].astype(int)
    group = np.arange(400) % 2 == 0
    # the "low" group leaks, the other does not
    scores = rng.normal(size=400) + labels * np.where(group, 2.0, 0.0)
    return scores, labels, group


def test_slices_match_whole_metrics_on_the_subset_and_separate_groups():
    scores, labels, group = _data()
    out = slice_metrics(scores, labels, {"low": group, "high": ~group}, n_bootstrap=100,
                        seed=0)
    assert out["low"].auc.value == auc(scores[group], labels[group])
    assert out["low"].auc.lo > out["high"].auc.hi
    assert out["low"].n_pos == 100 and out["low"].n_neg == 100


def test_too_few_candidates_get_counts_only_and_same_seed_same_numbers():
    scores, labels, group = _data()
    tiny = np.zeros(400, dtype=bool)
    tiny[:15] = True  # 8 positives, 7 negatives... all positives, in fact
    a = slice_metrics(scores, labels, {"tiny": tiny, "low": group}, n_bootstrap=50, seed=3)
    b = slice_metrics(scores, labels, {"tiny": tiny, "low": group}, n_bootstrap=50, seed=3)
    assert a == b
    assert a["tiny"].too_few and a["tiny"].auc is None and not a["tiny"].tpr_at_fpr
    assert a["tiny"].to_dict() == {"n_pos": a["tiny"].n_pos, "n_neg": a["tiny"].n_neg,
                                   "too_few": True}


def test_bootstrap_slices_are_the_former_per_slice_binary_metrics():
    from graphleaks.metrics.binary import binary_metrics
    from graphleaks.seeding import derive_seed

    scores, labels, group = _data()
    out = slice_metrics(scores, labels, {"low": group}, n_bootstrap=60, seed=5)
    # the former code: the whole metric set per slice, with the slice's own seed
    old = binary_metrics(scores[group], labels[group], fpr_points=(0.01,), n_bootstrap=60,
                         seed=derive_seed(5, "slice", "low"))
    assert out["low"].auc == old.auc
    assert dict(out["low"].tpr_at_fpr) == dict(old.tpr_at_fpr)


def test_analytic_slices_equal_each_slice_alone_and_never_bootstrap():
    from graphleaks.metrics.binary import auc_tpr_estimates

    scores, labels, group = _data()
    third = np.arange(400) % 3 == 0
    masks = {"low": group, "high": ~group, "third": third}
    out = slice_metrics(scores, labels, masks, n_bootstrap=60, seed=5, intervals="analytic")
    boot = slice_metrics(scores, labels, masks, n_bootstrap=60, seed=5)
    for key, m in masks.items():
        a, t = auc_tpr_estimates(scores[m], labels[m], fpr_points=(0.01,), n_bootstrap=1,
                                 seed=0, intervals="analytic")
        assert out[key].auc == a and dict(out[key].tpr_at_fpr) == t
        assert a.method in ("delong", "newcombe-score-auc")
        assert t[0.01].method == "clopper-pearson-box"
        # the same point estimates as the bootstrap path
        assert a.value == boot[key].auc.value
        assert t[0.01].value == boot[key].tpr_at_fpr[0.01].value


def test_slice_intervals_must_be_named():
    import pytest

    from graphleaks.errors import InvalidConfigError

    scores, labels, group = _data()
    with pytest.raises(InvalidConfigError):
        slice_metrics(scores, labels, {"low": group}, n_bootstrap=10, seed=0, intervals="auto")
