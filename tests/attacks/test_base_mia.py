import numpy as np
import pytest

from graphleaks.attacks._references import log_mean_exp
from graphleaks.attacks.base_mia import BASEMIA
from graphleaks.attacks.harness import run_attack
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics import binary_metrics


@pytest.mark.parametrize("variant", ["offline", "online"])
def test_overfit_target_leaks(trained_target, variant):
    r = run_attack(BASEMIA(variant=variant, num_references=2, ref_epochs=40), trained_target,
                   seed=0)
    m = binary_metrics(r.scores, r.labels, n_bootstrap=200, seed=0)
    assert m.auc.lo > 0.6
    assert r.threshold == 0.0


def test_prior_shifts_scores_only(trained_target):
    a = run_attack(BASEMIA(ref_epochs=20), trained_target, seed=0)
    b = run_attack(BASEMIA(ref_epochs=20, prior=0.25), trained_target, seed=0)
    np.testing.assert_allclose(a.scores - b.scores, np.log(3.0))


def test_log_mean_exp():
    a = np.log(np.array([[1.0, 1e-300], [3.0, 1e-300]]))
    np.testing.assert_allclose(log_mean_exp(a, 0), [np.log(2.0), np.log(1e-300)])


def test_online_needs_two_references(trained_target):
    with pytest.raises(InvalidConfigError, match="num_references"):
        run_attack(BASEMIA(variant="online", num_references=1), trained_target, seed=0)
