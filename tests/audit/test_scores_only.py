import numpy as np
import pytest

import graphleaks
from graphleaks.attacks.confidence_mia import ConfidenceMIA
from graphleaks.audit.runner import audit_with_scores
from graphleaks.audit.scores_only import audit_scores_run
from graphleaks.errors import CapabilityError, DataError


def _export(target, output="probabilities"):
    nodes = np.concatenate([target.split.members, target.split.nonmembers])
    if output == "probabilities":
        scores = target.posteriors(nodes).detach().numpy()
    elif output == "logits":
        scores = target.logits(nodes).detach().numpy()
    else:
        scores = target.logits(nodes).detach().log_softmax(1).numpy()
    return nodes, scores, target.graph.y.numpy()[nodes]


@pytest.mark.parametrize("output", ["probabilities", "logits"])
def test_scores_only_equals_in_memory_audit(trained_target, output):
    t = trained_target
    memory = audit_with_scores(t, [ConfidenceMIA(threshold="median")], seed=3, n_bootstrap=100)
    nodes, scores, y = _export(t, output)
    # rows shuffled: the audit must find each node's row by its id
    perm = np.random.default_rng(0).permutation(len(nodes))
    only = audit_scores_run(scores[perm], y[perm], t.split.members, t.split.nonmembers,
                            node_ids=nodes[perm], output=output, attacks=["confidence_mia"],
                            seed=3, n_bootstrap=100)
    a, b = memory.tables[0], only.tables[0]
    assert np.array_equal(a.nodes, b.nodes)
    np.testing.assert_allclose(b.scores, a.scores, rtol=0, atol=1e-6)
    ma, mb = memory.report.attacks[0].metrics, only.report.attacks[0].metrics
    assert ma.binary.auc.value == pytest.approx(mb.binary.auc.value)
    if output == "probabilities":  # the very same floats: identical metrics and bound
        assert np.array_equal(a.scores, b.scores)
        assert ma.binary == mb.binary
        # the export has no ledger, hence no comparison with a claim
        assert ma.epsilon_lower_bound.bound == mb.epsilon_lower_bound.bound


def test_default_audit_on_overfit_model_has_auc_ci_above_half(trained_target):
    nodes, scores, y = _export(trained_target)
    report = graphleaks.audit_scores(scores, y, trained_target.split.members,
                                     node_ids=nodes, seed=0, n_bootstrap=200)
    [a] = report.attacks
    assert a.attack == "confidence_mia" and a.config["threshold"] == "median"
    assert a.metrics.binary.auc.lo > 0.5
    assert a.metrics.epsilon_lower_bound.bound.epsilon_lb > 0
    assert a.threat_model.shadow_data == "none"
    assert not a.threat_model.architecture_knowledge
    assert any("median" in n for n in a.notes)
    skipped = report.config["skipped_attacks"]
    assert "LINK" not in skipped["linkteller"] and "FEATURE_QUERIES" in skipped["linkteller"]
    assert "REFERENCE_MODELS" in skipped["lira_mia"]
    # non-members defaulted to every scored non-member
    assert report.target.split_sizes["test"] == len(trained_target.split.nonmembers)


def test_named_attack_with_unmet_needs_is_refused():
    p = np.full((4, 2), 0.5)
    with pytest.raises(CapabilityError, match="FEATURE_QUERIES"):
        graphleaks.audit_scores(p, [0, 1, 0, 1], [0, 1], attacks=["linkteller"])
    with pytest.raises(CapabilityError, match="REFERENCE_MODELS"):
        graphleaks.audit_scores(p, [0, 1, 0, 1], [0, 1], attacks=[ConfidenceMIA()])


@pytest.mark.parametrize("kwargs,match", [
    ({"members": [0, 9]}, "no score row"),
    ({"members": [0, 1], "non_members": [1, 2]}, "overlap"),
    ({"members": [0, 1, 2, 3]}, "empty"),
    ({"members": np.array([True, False, False, False])}, "boolean mask"),
])
def test_bad_member_sets(kwargs, match):
    p = np.full((4, 2), 0.5)
    with pytest.raises(DataError, match=match):
        graphleaks.audit_scores(p, [0, 1, 0, 1], **kwargs)
