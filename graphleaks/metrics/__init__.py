"""Metrics: the only place in graphleaks that turns attack scores into numbers.

Attacks return scores (higher = more likely positive) and the harness attaches the labels;
everything reported (AUC, TPR at low FPR, advantage, accuracy, epsilon lower bounds) is computed
here, with seeded bootstrap confidence intervals.
"""

from __future__ import annotations

from graphleaks.metrics.binary import (
    BinaryMetrics,
    Estimate,
    ThresholdEstimates,
    ThresholdMetrics,
    advantage_from_accuracy,
    auc,
    average_precision,
    best_balanced_accuracy,
    binary_metrics,
    duddu_onehot_confidence_accuracy,
    max_advantage,
    roc_curve,
    roc_points,
    threshold_metrics,
    tpr_at_fpr,
)
from graphleaks.metrics.bootstrap import bootstrap_auc_ci, bootstrap_ci, percentile_interval
from graphleaks.metrics.multiclass import (
    MulticlassMetrics,
    accuracy,
    f1_macro,
    f1_micro,
    majority_baseline,
    multiclass_metrics,
)
from graphleaks.metrics.privacy_bound import EpsilonBound, clopper_pearson, epsilon_lower_bound

__all__ = [
    "BinaryMetrics",
    "EpsilonBound",
    "Estimate",
    "MulticlassMetrics",
    "ThresholdEstimates",
    "ThresholdMetrics",
    "accuracy",
    "advantage_from_accuracy",
    "auc",
    "average_precision",
    "best_balanced_accuracy",
    "binary_metrics",
    "bootstrap_auc_ci",
    "bootstrap_ci",
    "clopper_pearson",
    "duddu_onehot_confidence_accuracy",
    "epsilon_lower_bound",
    "f1_macro",
    "f1_micro",
    "majority_baseline",
    "max_advantage",
    "multiclass_metrics",
    "percentile_interval",
    "roc_curve",
    "roc_points",
    "threshold_metrics",
    "tpr_at_fpr",
]
