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
