import numpy as np
import pytest

from graphleaks.attacks.base import Output
from graphleaks.attacks.confidence_mia import ConfidenceMIA, confidence_scores
from graphleaks.attacks.harness import LabelledChallenge, run_attack, sample_challenge
from graphleaks.errors import CapabilityError
from graphleaks.seeding import derive_seed


def test_scores_are_true_class_posteriors(trained_target):
    r = run_attack(ConfidenceMIA(threshold="none"), trained_target, seed=0)
    post = trained_target.posteriors(r.candidates)
    y = trained_target.graph.y[r.candidates]
    np.testing.assert_allclose(r.scores, post[np.arange(len(y)), y].numpy())
    np.testing.assert_allclose(confidence_scores(post, None), post.max(1).values.numpy())


def test_shadow_threshold_is_independent_of_truth(trained_target):
    # the same challenge with every membership label flipped: a threshold that read the
    # truth would move; one calibrated on the shadow model alone cannot
    attack = ConfidenceMIA()
    lc = sample_challenge(attack, trained_target, seed=derive_seed(0, "challenge"))
    flipped = LabelledChallenge(lc.challenge, 1 - lc.truth)
    r = run_attack(attack, trained_target, seed=0, challenge=lc)
    r_flipped = run_attack(attack, trained_target, seed=0, challenge=flipped)
    assert r.threshold is not None and 0.0 <= r.threshold <= 1.0
    assert r_flipped.threshold == r.threshold
    np.testing.assert_array_equal(r_flipped.scores, r.scores)
    assert r_flipped.labels.tolist() == (1 - r.labels).tolist()  # the truth did change


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
