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


def test_tune_scale_picks_the_best_simulated_auc():
    """Scores that separate perfectly only at a = 0.3 must select 0.3 (the authors' objective)."""
    from graphleaks.attacks._references import SCALE_GRID, tune_scale

    rng = np.random.default_rng(0)
    lr = rng.normal(0.0, 10.0, 400)
    members = np.repeat([1, 0], 200)
    lt = 0.3 * lr + np.where(members == 1, 1.0, -1.0)
    a, value = tune_scale(lambda s: lt - s * lr, members)
    assert a == 0.3 and value == 1.0
    assert 0.3 in SCALE_GRID


def test_masked_log_mean_exp_averages_only_the_masked_rows():
    from graphleaks.attacks._references import masked_log_mean_exp

    a = np.log(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 8.0]]))
    mask = np.array([[True, False], [True, True], [False, True]])
    np.testing.assert_allclose(masked_log_mean_exp(a, mask), np.log([2.0, 6.0]))


def test_masked_log_mean_exp_is_minus_inf_without_a_reference():
    """A column no reference may score is -inf, with no NaN and no warning."""
    import warnings

    from graphleaks.attacks._references import masked_log_mean_exp

    a = np.log(np.array([[1.0, 2.0], [3.0, 4.0]]))
    mask = np.array([[True, False], [True, False]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = masked_log_mean_exp(a, mask)
    assert got[0] == np.log(2.0) and got[1] == -np.inf


def test_tuned_scale_is_recorded_and_scores_as_that_fixed_scale(trained_target):
    """tune_scale only chooses a: with the same references the scores are BASE's at that a."""
    import re

    from graphleaks.attacks._references import SCALE_GRID

    tuned = run_attack(BASEMIA(num_references=4, ref_epochs=20, tune_scale=True),
                       trained_target, seed=0)
    note = next(n for n in tuned.notes if "tuned" in n)
    a = float(re.search(r"scale a=([0-9.]+) \(tuned", note).group(1))
    assert a in SCALE_GRID
    assert tuned.config["offline_scale"] is None and tuned.config["tune_scale"] is True
    fixed = run_attack(BASEMIA(num_references=4, ref_epochs=20, offline_scale=a),
                       trained_target, seed=0)
    np.testing.assert_allclose(tuned.scores, fixed.scores)


def test_tune_scale_needs_three_references():
    """Fewer than 3 offline references cannot tune: tune_scale is unused there (the CLI refuses
    it, the record says None) and offline_scale is read."""
    from graphleaks.plugins import check_used

    two = BASEMIA(num_references=2, tune_scale=True)
    assert "num_references in [3, 1024]" in two.unused_fields()["tune_scale"]
    with pytest.raises(InvalidConfigError, match="tune_scale has no effect"):
        check_used(two, ["tune_scale"])
    assert two.config_record()["tune_scale"] is None
    assert two.config_record()["offline_scale"] == 0.7
    assert "tune_scale" in BASEMIA(variant="online", tune_scale=True).unused_fields()
    assert set(BASEMIA(num_references=3, tune_scale=True).unused_fields()) == {"offline_scale"}


def test_simulated_offline_leaves_out_the_target_and_its_complement():
    """Reference 0 is the simulated target; 1 is its complement (every node IN 0 or 1)."""
    import torch

    from graphleaks.attacks._references import References, simulated_offline

    members = (np.array([0, 1]), np.array([2, 3]), np.array([0, 2]), np.array([1, 3]))
    refs = References(models=(), members=members, population=np.arange(4),
                      x=torch.zeros(4, 1), edges=torch.empty(2, 0, dtype=torch.long),
                      labels=torch.zeros(4, dtype=torch.long))
    inside, out = simulated_offline(refs, np.arange(4))
    np.testing.assert_array_equal(inside, [True, True, False, False])
    np.testing.assert_array_equal(out, [[False, True, False, True], [True, False, True, False]])
