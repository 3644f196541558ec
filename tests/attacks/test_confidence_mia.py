import numpy as np
import pytest

from graphleaks.attacks.base import Output
from graphleaks.attacks.confidence_mia import ConfidenceMIA, confidence_scores
from graphleaks.attacks.harness import run_attack
from graphleaks.errors import CapabilityError


def test_scores_are_true_class_posteriors(trained_target):
    r = run_attack(ConfidenceMIA(threshold="none"), trained_target, seed=0)
    post = trained_target.posteriors(r.candidates)
    y = trained_target.graph.y[r.candidates]
    np.testing.assert_allclose(r.scores, post[np.arange(len(y)), y].numpy())
    np.testing.assert_allclose(confidence_scores(post, None), post.max(1).values.numpy())


def test_shadow_threshold_is_independent_of_truth(trained_target):
    r = run_attack(ConfidenceMIA(), trained_target, seed=0)
    assert r.threshold is not None and 0.0 <= r.threshold <= 1.0


def test_duddu_bug_reproduction_ignores_labels(trained_target):
    r = run_attack(ConfidenceMIA(compat_duddu_label_indexing=True), trained_target, seed=0)
    c = trained_target.num_classes
    post = trained_target.posteriors(r.candidates).numpy()
    blocks = r.scores.reshape(-1, c)
    np.testing.assert_allclose(blocks[:, 0], post[:, 1])
    np.testing.assert_allclose(blocks[:, 1:], np.repeat(post[:, :1], c - 1, axis=1))


def test_labels_only_bundle_refused(trained_target):
    with pytest.raises(CapabilityError, match="POSTERIORS"):
        run_attack(ConfidenceMIA(), trained_target, seed=0, exposed=frozenset({Output.LABELS}))
