import json

import numpy as np
import pytest
import torch

from graphleaks.attacks.base import Challenge, Task
from graphleaks.attacks.confidence_mia import ConfidenceMIA
from graphleaks.attacks.harness import LabelledChallenge, run_attack
from graphleaks.audit.runner import evaluate_result, run_audit, train_target
from graphleaks.data import tiny_graph
from graphleaks.data.synthetic import csbm
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.report.report import load_report
from graphleaks.report.writers import write_report


def _auc(result, seed=0):
    return evaluate_result(result, n_bootstrap=300, seed=seed).binary.auc


def test_overfit_target_leaks(trained_target):
    auc = _auc(run_attack(ConfidenceMIA(), trained_target, seed=0))
    assert auc.lo > 0.5


def test_fake_membership_from_same_nodes_does_not_leak(trained_target):
    rng = np.random.default_rng(0)
    nonmembers = rng.permutation(trained_target.split.test)
    half = len(nonmembers) // 2
    fake = LabelledChallenge(Challenge(task=Task.MEMBERSHIP, candidates=nonmembers[: 2 * half]),
                             np.r_[np.ones(half), np.zeros(half)].astype(int))
    auc = _auc(run_attack(ConfidenceMIA(threshold="none"), trained_target, seed=0,
                          challenge=fake))
    assert auc.lo < 0.5 < auc.hi


def test_target_without_training_signal_does_not_leak():
    g = csbm(300, num_classes=3, num_features=32, seed=2)
    g.y = g.y[torch.randperm(300, generator=torch.Generator().manual_seed(0))]
    t = train_target(g, spec=ArchitectureSpec(epochs=1, patience=0), seed=0)
    auc = _auc(run_attack(ConfidenceMIA(threshold="none"), t, seed=0))
    assert auc.lo < 0.5 < auc.hi


def test_report_same_seed_same_numbers(trained_target, tmp_path):
    # the default audit: every registered attack, at the quick suite's budgets
    a = run_audit(trained_target, seed=4, n_bootstrap=100, suite="quick")
    b = run_audit(trained_target, seed=4, n_bootstrap=100, suite="quick")
    assert a.to_dict(include_timings=False) == b.to_dict(include_timings=False)
    json_path, md_path = write_report(a, tmp_path)
    data = load_report(json_path)
    from graphleaks.attacks import registry

    assert json.loads(json_path.read_text())["schema_version"] == 2
    assert [x.attack for x in data.attacks] == list(registry)
    assert data.ledger.epsilon == float("inf")
    # v2 round-trips: the decoded report equals the one written, in the typed sense
    assert data == a
    text = md_path.read_text()
    assert "confidence_mia" in text and "TPR@1%FPR" in text
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    json.loads(json_path.read_text())


def test_compat_flag_is_reported(trained_target):
    r = run_audit(trained_target, [ConfidenceMIA(compat_duddu_label_indexing=True)], seed=0,
                  n_bootstrap=50)
    a = r.attacks[0]
    assert a.compat_flags == ["compat_duddu_label_indexing"]
    assert a.metrics.paper_metric is not None
    n = len(trained_target.split.train)
    assert a.metrics.binary.n_pos == n * trained_target.num_classes


def test_a_one_sided_challenge_is_skipped_by_the_default_audit_and_refused_by_name(
        monkeypatch):
    """A sampled challenge with no positive has no metric: never a crash after all the work."""
    import dataclasses

    import graphleaks.audit.runner as runner_mod
    from graphleaks.errors import DataError

    t = train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=20))
    real = runner_mod.run_attack

    def no_positive(attack, target, **kw):
        r = real(attack, target, **kw)
        if attack.name == "confidence_mia":
            r = dataclasses.replace(r, labels=np.zeros_like(r.labels))
        return r

    monkeypatch.setattr(runner_mod, "run_attack", no_positive)
    with pytest.raises(DataError, match="holds no positives"):
        run_audit(t, ["confidence_mia"], seed=0, n_bootstrap=20)
    report = run_audit(t, seed=0, n_bootstrap=20, suite="quick")
    assert "confidence_mia" in report.config["skipped_attacks"]
    assert "confidence_mia" not in [a.attack for a in report.attacks]


def test_an_audit_without_tables_reports_the_same(trained_target):
    # run_audit keeps no candidate table per attack (memory at 1M nodes); the slices and
    # exposure it reports are read from each table before it goes
    from graphleaks.audit.runner import audit_with_scores

    kept = audit_with_scores(trained_target, ["confidence_mia"], seed=0, n_bootstrap=50)
    dropped = audit_with_scores(trained_target, ["confidence_mia"], seed=0, n_bootstrap=50,
                                keep_tables=False)
    assert len(kept.tables) == 1 and dropped.tables == ()
    a, b = kept.report.attacks[0], dropped.report.attacks[0]
    assert a.metrics == b.metrics and a.exposure == b.exposure
    assert a.metrics.slices  # the comparison covers the per-slice metrics
