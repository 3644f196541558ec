"""Wu et al.'s training-based membership inference over whole graphs.

After Wu, Yang, Pan, Yuan ("Adapting membership inference attacks to GNN for graph
classification: approaches and implications", ICDM 2021, https://arxiv.org/abs/2110.08760,
code ``TrustworthyGNN/MIA-GNN``): the adversary trains a shadow model of the target's
architecture on half of its own graphs (shadow members), queries it on those and on the
other half (shadow non-members), and trains an attack classifier on the **sorted**
posterior vectors (largest first, so the class order does not matter). The attack
classifier then scores the target's posteriors of each candidate graph. The shadow data
here is the adversary's population, disjoint from every candidate (the paper splits one
dataset into disjoint target and shadow parts). The decision threshold is the classifier's
own 0.5, chosen without the evaluation labels.

Threat model: black box (posteriors), auxiliary graphs of the same distribution, the
target's architecture.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks.attacks.base import AttackScores, Challenge
from graphleaks.attacks.graph_membership.base import GraphAttack, GraphTargetView
from graphleaks.models.graph_target import copy_logits
from graphleaks.seeding import Rngs, derive_seed
from graphleaks.threat import ThreatModel


@dataclass(frozen=True)
class GraphShadowMIAConfig:
    """Parameters of :class:`GraphShadowMIA`.

    Attributes:
        shadow_epochs: Epochs of the shadow model (no early stopping: it should fit its
            members as a deployed model does).
        hidden: Width of the attack MLP's hidden layer.
    """

    shadow_epochs: int = field(default=100, metadata={"range": (1, 100_000)})
    hidden: int = field(default=64, metadata={"range": (1, 4096)})


def sorted_posteriors(logits: torch.Tensor) -> np.ndarray:
    """Posterior vectors sorted largest first (Wu et al.'s attack features)."""
    post = torch.softmax(logits.double(), dim=1).numpy()
    return np.asarray(-np.sort(-post, axis=1))


class GraphShadowMIA(GraphAttack):
    """Shadow model + attack classifier on sorted posteriors (Wu et al. ICDM'21)."""

    name = "graph_shadow_mia"
    Config = GraphShadowMIAConfig
    config: GraphShadowMIAConfig
    threat_model = ThreatModel(shadow_data="same_distribution", architecture_knowledge=True,
                               defense_knowledge=False)
    paper = "Wu et al. ICDM'21 (training-based attack)"

    def _score(self, view: GraphTargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        from sklearn.neural_network import MLPClassifier

        pop = view.population()
        perm = rngs.numpy.permutation(len(pop))
        half = len(pop) // 2
        shadow_in = [pop[int(i)] for i in perm[:half]]
        shadow_out = [pop[int(i)] for i in perm[half:]]
        seed = int(rngs.numpy.integers(0, 2**31 - 1))
        shadow = view.copies().train(shadow_in, epochs=self.config.shadow_epochs,
                                     seed=derive_seed(seed, "shadow"))
        logits_in, logits_out = copy_logits(shadow, shadow_in), copy_logits(shadow, shadow_out)
        feats = np.concatenate([sorted_posteriors(logits_in), sorted_posteriors(logits_out)])
        y = np.concatenate([np.ones(len(shadow_in)), np.zeros(len(shadow_out))])
        clf = MLPClassifier(hidden_layer_sizes=(self.config.hidden,), max_iter=1000,
                            random_state=derive_seed(seed, "mlp") % (2**31))
        clf.fit(feats, y)
        ids = np.asarray(challenge.candidates)
        target_feats = sorted_posteriors(view.log_posteriors(ids))
        scores = clf.predict_proba(target_feats)[:, 1]
        # the 0.5 threshold transfers only when the shadow fits its members as the target
        # does: its accuracies are stated so a mismatch can be seen beside the attack's F1
        acc_in, acc_out = _accuracy(logits_in, shadow_in), _accuracy(logits_out, shadow_out)
        return AttackScores(scores, threshold=0.5, notes=(
            f"shadow model: {len(shadow_in)} shadow members / {len(shadow_out)} shadow "
            "non-members from the population",
            f"shadow model accuracy: {acc_in:.3f} on its members, {acc_out:.3f} on its "
            "non-members"))


def _accuracy(logits: torch.Tensor, graphs: list[Data]) -> float:
    """Share of ``graphs`` whose class the logits rank first."""
    y = torch.as_tensor([int(g.y) for g in graphs])
    return float((logits.argmax(1) == y).double().mean())
