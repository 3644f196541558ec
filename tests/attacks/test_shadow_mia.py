import numpy as np
import pytest

from graphleaks.attacks._shadow import posterior_features
from graphleaks.attacks.base import Output
from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.shadow_mia import ShadowMIA
from graphleaks.errors import CapabilityError
from graphleaks.metrics import binary_metrics


@pytest.mark.parametrize("classifier", ["mlp", "logreg", "gbdt"])
def test_overfit_target_leaks(trained_target, classifier):
    r = run_attack(ShadowMIA(classifier=classifier), trained_target, seed=0)
    m = binary_metrics(r.scores, r.labels, n_bootstrap=200, seed=0)
    assert m.auc.lo > 0.5
    assert r.threshold == 0.5
    assert r.config["posterior"] == "sorted" and r.config["balanced"] is True


def test_posterior_forms():
    import torch

    p = torch.tensor([[0.2, 0.7, 0.1], [0.5, 0.1, 0.4]])
    np.testing.assert_allclose(posterior_features(p, form="raw"), p.double().numpy())
    np.testing.assert_allclose(posterior_features(p, form="sorted", top_k=2),
                               [[0.7, 0.2], [0.5, 0.4]], rtol=1e-6)
    assert posterior_features(p, form="log_sorted").shape == (2, 3)


def test_top_k_and_multiple_shadows(trained_target):
    r = run_attack(ShadowMIA(top_k=2, num_shadows=2, classifier="logreg"), trained_target,
                   seed=1)
    assert any("top 2" in n for n in r.notes)
    assert any("2 shadow(s)" in n for n in r.notes)


def test_compat_duddu_protocol_gives_hard_scores(trained_target):
    r = run_attack(ShadowMIA(compat_duddu_protocol=True), trained_target, seed=0)
    assert set(np.unique(r.scores)) <= {0.0, 1.0}
    assert "compat_duddu_protocol" in r.compat_flags
    assert any("not reproduced" in n for n in r.notes)


def test_labels_only_bundle_refused(trained_target):
    with pytest.raises(CapabilityError, match="POSTERIORS"):
        run_attack(ShadowMIA(), trained_target, seed=0, exposed=frozenset({Output.LABELS}))
