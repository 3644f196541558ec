"""Sanity guards for the membership suite: no attack may find membership where there is none.

* A target trained on randomly permuted labels with early stopping on validation accuracy
  learns nothing transferable and stops almost at once, so it carries no membership signal.
* A "membership" split drawn from the same nodes (all non-members, labelled at random) has no
  signal whatever the target: any AUC away from 0.5 would mean the attack leaks labels.
"""

import dataclasses

import numpy as np
import pytest
import torch

from graphleaks.attacks.base import Challenge, Task
from graphleaks.attacks.base_mia import BASEMIA
from graphleaks.attacks.confidence_mia import ConfidenceMIA
from graphleaks.attacks.embedding_cluster_mia import EmbeddingClusterMIA
from graphleaks.attacks.gbase_mia import GBASEMIA
from graphleaks.attacks.harness import run_attack
from graphleaks.attacks.label_only_mia import LabelOnlyMIA
from graphleaks.attacks.lira_mia import LiRAMIA
from graphleaks.attacks.rmia_mia import RMIAMIA
from graphleaks.attacks.shadow_mia import ShadowMIA
from graphleaks.audit.runner import train_target
from graphleaks.data.splits import SplitConfig
from graphleaks.metrics import binary_metrics
from graphleaks.models.gnn import ArchitectureSpec

ATTACKS = {
    "confidence_mia": lambda: ConfidenceMIA(threshold="none"),
    "shadow_mia": lambda: ShadowMIA(classifier="logreg"),
    "embedding_cluster_mia": lambda: EmbeddingClusterMIA(ae_epochs=100),
    "lira_mia": lambda: LiRAMIA(num_references=8, ref_epochs=20),
    "rmia_mia": lambda: RMIAMIA(num_references=1, ref_epochs=20),
    "rmia_mia_online": lambda: RMIAMIA(variant="online", num_references=2, ref_epochs=20),
    "base_mia": lambda: BASEMIA(num_references=2, ref_epochs=20),
    "gbase_mia": lambda: GBASEMIA(num_references=2, ref_epochs=20, num_samples=2),
    "label_only_mia": lambda: LabelOnlyMIA(num_queries=16),
}


@pytest.fixture(scope="module")
def random_label_target(small_graph):
    g = small_graph.clone()
    perm = torch.from_numpy(np.random.default_rng(0).permutation(g.num_nodes))
    g.y = g.y[perm]
    spec = ArchitectureSpec(hidden=(32,), epochs=100, patience=10)
    return train_target(g, spec=spec, seed=0,
                        split=SplitConfig(train_frac=0.3, val_frac=0.1, test_frac=0.3))


def _auc_ci(r):
    m = binary_metrics(r.scores, r.labels, n_bootstrap=300, seed=0)
    return m.auc.lo, m.auc.hi


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_random_label_target_has_no_signal(random_label_target, name):
    r = run_attack(ATTACKS[name](), random_label_target, seed=0)
    lo, hi = _auc_ci(r)
    assert lo <= 0.5 <= hi, (name, lo, hi)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_same_node_split_has_no_signal(trained_target, name):
    rng = np.random.default_rng(1)
    pool = rng.permutation(np.concatenate([trained_target.split.nonmembers,
                                           trained_target.split.val]))
    cands = np.sort(pool[:-10])
    truth = np.zeros(len(cands), dtype=np.int64)
    truth[rng.permutation(len(cands))[: len(cands) // 2]] = 1
    ch = Challenge(task=Task.MEMBERSHIP, candidates=cands, _truth=truth,
                   hints={"known_members": pool[-10:-5], "known_nonmembers": pool[-5:]})
    r = run_attack(ATTACKS[name](), trained_target, seed=0, challenge=ch)
    lo, hi = _auc_ci(r)
    assert lo <= 0.5 <= hi, (name, lo, hi)


def test_protocol_knobs_recorded(trained_target):
    r = run_attack(ShadowMIA(classifier="logreg"), trained_target, seed=0)
    assert r.query_graph == "target"
    cfg = r.config
    assert {"balanced", "posterior", "top_k"} <= set(cfg)
    assert dataclasses.asdict(ShadowMIA().config)["compat_duddu_protocol"] is False
