import numpy as np
import pytest

from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.rmia_mia import RMIAMIA, offline_marginal, pairwise_scores
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics import binary_metrics


@pytest.mark.parametrize("variant,refs", [("offline", 1), ("online", 2)])
def test_overfit_target_leaks(trained_target, variant, refs):
    r = run_attack(RMIAMIA(variant=variant, num_references=refs, ref_epochs=40),
                   trained_target, seed=0)
    m = binary_metrics(r.scores, r.labels, n_bootstrap=200, seed=0)
    assert m.auc.lo > 0.6
    assert ((r.scores >= 0) & (r.scores <= 1)).all()


def test_pairwise_scores_count_dominated_population():
    z = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(pairwise_scores(np.array([0.5, 2.0, 10.0]), z, 1.0),
                               [0.0, 0.5, 1.0])
    np.testing.assert_allclose(pairwise_scores(np.array([2.0]), z, 2.0), [0.25])


def test_offline_correction():
    np.testing.assert_allclose(offline_marginal(np.array([0.4]), 1.0), [0.4])
    np.testing.assert_allclose(offline_marginal(np.array([0.4]), 0.0), [0.7])


def test_online_needs_two_references(trained_target):
    with pytest.raises(InvalidConfigError, match=r"num_references.*\[2, 1024\]"):
        run_attack(RMIAMIA(variant="online", num_references=1), trained_target, seed=0)


def test_zero_reference_budget_refused(trained_target):
    with pytest.raises(InvalidConfigError, match=r"num_references.*\[1, 1024\]"):
        run_attack(RMIAMIA(num_references=0), trained_target, seed=0)
