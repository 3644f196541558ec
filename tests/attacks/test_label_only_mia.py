import numpy as np
import pytest

from graphleaks.attacks.base import Output
from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.label_only_mia import LabelOnlyMIA
from graphleaks.errors import CapabilityError
from graphleaks.metrics import binary_metrics


def test_overfit_target_leaks_with_labels_only(trained_target):
    r = run_attack(LabelOnlyMIA(), trained_target, seed=0, exposed=frozenset({Output.LABELS}))
    m = binary_metrics(r.scores, r.labels, n_bootstrap=200, seed=0)
    assert m.auc.lo > 0.6


def test_without_perturbation_score_is_correctness(trained_target):
    r = run_attack(LabelOnlyMIA(noise_scale=0.0, edge_drop=0.0, num_queries=3),
                   trained_target, seed=0)
    assert set(np.unique(r.scores)) <= {0.0, 1.0}


def test_prediction_reference_needs_no_labels_in_score(trained_target):
    r = run_attack(LabelOnlyMIA(reference="prediction", num_queries=8), trained_target, seed=0)
    assert r.scores.min() >= 1 / 9


def test_requires_labels_output(trained_target):
    with pytest.raises(CapabilityError, match="LABELS"):
        run_attack(LabelOnlyMIA(), trained_target, seed=0, exposed=frozenset())
