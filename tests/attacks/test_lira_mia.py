import numpy as np
import pytest
import torch

from graphleaks.attacks.base import Output
from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.lira_mia import LiRAMIA, _masked_moments, _paired_halves, lira_statistic
from graphleaks.errors import CapabilityError, InvalidConfigError
from graphleaks.metrics import binary_metrics


@pytest.mark.parametrize("variant", ["offline", pytest.param("online", marks=pytest.mark.slow)])
def test_overfit_target_leaks(trained_target, variant):
    r = run_attack(LiRAMIA(variant=variant, num_references=8, ref_epochs=40), trained_target,
                   seed=0)
    m = binary_metrics(r.scores, r.labels, n_bootstrap=200, seed=0)
    assert m.auc.lo > 0.5
    assert r.config["variant"] == variant


def test_statistics():
    p = torch.tensor([[0.7, 0.2, 0.1]])
    y = torch.tensor([0])
    np.testing.assert_allclose(lira_statistic(p, y, kind="logit"), [np.log(0.7 / 0.3)],
                               rtol=1e-5)
    np.testing.assert_allclose(lira_statistic(p, y, kind="hinge"), [np.log(0.7 / 0.2)],
                               rtol=1e-5)
    sat = lira_statistic(torch.tensor([[1.0, 0.0]]), torch.tensor([0]), kind="logit")
    assert np.isfinite(sat).all()


def test_paired_halves_are_complementary():
    halves = _paired_halves(11, 4, np.random.default_rng(0))
    assert len(halves) == 4
    assert not np.intersect1d(halves[0], halves[1]).size
    assert len(np.union1d(halves[0], halves[1])) == 11


def test_masked_moments():
    phis = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 9.0]])
    mask = np.array([[True, True], [True, False], [True, True]])
    mu, sd = _masked_moments(phis, mask, fixed_variance=False)
    np.testing.assert_allclose(mu, [3.0, 5.5])
    np.testing.assert_allclose(sd, [2.0, np.sqrt(24.5)])


def test_threat_model_declares_graph_and_labels():
    tm = LiRAMIA.threat_model
    assert tm.graph_knowledge == "full" and tm.label_knowledge and tm.architecture_knowledge


def test_labels_only_bundle_refused(trained_target):
    with pytest.raises(CapabilityError, match="POSTERIORS"):
        run_attack(LiRAMIA(), trained_target, seed=0, exposed=frozenset({Output.LABELS}))


def test_masked_moments_single_reference_uses_a_global_scale():
    phis = np.array([[1.0, 2.0, 4.0]])  # one reference: no node has two observations
    mu, sd = _masked_moments(phis, np.ones_like(phis, dtype=bool), fixed_variance=True)
    np.testing.assert_allclose(mu, phis[0])
    np.testing.assert_allclose(sd, np.full(3, np.std(phis[0], ddof=1)))


def test_offline_with_one_reference(trained_target):
    r = run_attack(LiRAMIA(num_references=1, ref_epochs=40), trained_target, seed=0)
    assert np.isfinite(r.scores).all()
    # a real global scale, not the 1e-6 floor (which would blow scores up by 1e6)
    assert np.abs(r.scores).max() < 1e3
    assert any("global variance" in n for n in r.notes)
    m = binary_metrics(r.scores, r.labels, n_bootstrap=200, seed=0)
    assert m.auc.lo > 0.55


def test_online_needs_two_references(trained_target):
    with pytest.raises(InvalidConfigError, match=r"num_references .*\[2, 1024\].*online"):
        run_attack(LiRAMIA(variant="online", num_references=1), trained_target, seed=0)
