import numpy as np
import pytest

from graphleaks.attacks.base import Output
from graphleaks.attacks.embedding_cluster_mia import EmbeddingClusterMIA, encode_scalar
from graphleaks.attacks.harness import run_attack, sample_challenge
from graphleaks.errors import CapabilityError


def test_known_nodes_are_hints_not_candidates(trained_target):
    a = EmbeddingClusterMIA(n_known=5)
    lc = sample_challenge(a, trained_target, seed=0)
    ch = lc.challenge
    known = np.concatenate([ch.hints["known_members"], ch.hints["known_nonmembers"]])
    assert len(known) == 10
    assert not np.intersect1d(known, ch.candidates).size
    assert set(ch.hints["known_members"]) <= set(trained_target.split.members)
    assert set(ch.hints["known_nonmembers"]) <= set(trained_target.split.nonmembers)
    assert lc.truth.sum() * 2 == len(lc.truth)


def test_scores_are_signed_distances(trained_target):
    r = run_attack(EmbeddingClusterMIA(), trained_target, seed=0)
    assert r.threshold == 0.0
    assert np.isfinite(r.scores).all() and len(np.unique(r.scores)) > 2
    assert any("known members" in n for n in r.notes)


def test_compat_oracle_returns_assignments(trained_target):
    r = run_attack(EmbeddingClusterMIA(compat_duddu_oracle=True), trained_target, seed=0)
    assert set(np.unique(r.scores)) <= {0.0, 1.0}
    assert "compat_duddu_oracle" in r.compat_flags


def test_encode_scalar_is_seeded():
    import torch

    emb = torch.randn(50, 8, generator=torch.Generator().manual_seed(0))
    a = encode_scalar(emb, epochs=20, lr=1e-2, seed=3)
    b = encode_scalar(emb, epochs=20, lr=1e-2, seed=3)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (50,)


def test_labels_only_bundle_refused(trained_target):
    with pytest.raises(CapabilityError, match="EMBEDDINGS"):
        run_attack(EmbeddingClusterMIA(), trained_target, seed=0,
                   exposed=frozenset({Output.LABELS}))


def test_posteriors_only_bundle_refused(trained_target):
    with pytest.raises(CapabilityError, match="EMBEDDINGS"):
        run_attack(EmbeddingClusterMIA(), trained_target, seed=0,
                   exposed=frozenset({Output.POSTERIORS}))


def test_signed_axis_score_ranks_every_candidate_and_compat_saturates():
    """Issue 15: the saturating score tied every candidate beyond a centre."""
    import numpy as np

    from graphleaks.attacks.embedding_cluster_mia import cluster_score

    z = np.array([-9.0, -5.0, -3.0, -1.5, 0.0, 1.5, 3.0, 5.0, 9.0])
    new = cluster_score(z, 2.0, -2.0)
    old = cluster_score(z, 2.0, -2.0, saturating=True)
    assert len(np.unique(new)) == len(z) and np.all(np.diff(new) > 0)
    assert len(np.unique(old)) < len(z)  # the compat flag keeps the paper's saturation
    inside = np.abs(z) <= 2.0
    assert np.allclose(new[inside], old[inside])  # identical between the centres
    assert np.array_equal(np.sign(new), np.sign(old))  # same decision at threshold 0


def test_attack_scores_have_no_saturation_ties():
    import numpy as np

    from graphleaks.attacks.embedding_cluster_mia import EmbeddingClusterMIA
    from graphleaks.attacks.harness import run_attack
    from graphleaks.audit.runner import train_target
    from graphleaks.data.synthetic import csbm
    from graphleaks.models.gnn import ArchitectureSpec

    t = train_target(csbm(200, seed=0), seed=0, spec=ArchitectureSpec(epochs=30))
    new = run_attack(EmbeddingClusterMIA(n_known=3, ae_epochs=60), t, seed=0)
    old = run_attack(EmbeddingClusterMIA(n_known=3, ae_epochs=60,
                                         compat_saturating_score=True), t, seed=0)
    # remaining ties in the new score are nodes with identical embeddings (e.g. all-zero
    # ReLU rows), which no score can separate; the saturating one ties far more
    assert len(np.unique(new.scores)) > len(np.unique(old.scores)) + 5
    assert "compat_saturating_score" in old.compat_flags
