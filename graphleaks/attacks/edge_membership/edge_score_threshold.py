"""Score-threshold edge membership: the link predictor's own score of the pair.

A model that fit its training edges scores them higher than pairs it never trained on, so
its own logit ranks members first (the loss/confidence threshold attack of Yeom et al.,
"Privacy Risk in Machine Learning", CSF 2018, https://arxiv.org/abs/1709.01604, applied to
pairs as the edge-membership baselines of LMIA, Wang & Wang, ACSAC 2023, and of GNNDelete's
membership check, Cheng et al., ICLR 2023, https://arxiv.org/abs/2302.13406, do). Its own
threshold is logit 0 (the model predicts "edge"), chosen without the labels, so its ε lower
bound is sound.

Threat model: black box, the pair's score only; no graph, feature or architecture knowledge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphleaks.attacks.base import AttackScores, Challenge
from graphleaks.attacks.edge_membership.base import EdgeAttack, LinkTargetView
from graphleaks.seeding import Rngs
from graphleaks.threat import Output, ThreatModel


@dataclass(frozen=True)
class EdgeScoreThresholdConfig:
    """:class:`EdgeScoreThreshold` has no parameters."""


class EdgeScoreThreshold(EdgeAttack):
    """Membership score = the target's logit for the pair (threshold 0: predicted edge).

    Example:
        >>> EdgeScoreThreshold.task.value, EdgeScoreThreshold.target_kind
        ('edge_membership', 'link')
    """

    name = "edge_score_threshold"
    requires = frozenset({Output.LOGITS})
    threat_model = ThreatModel(access="blackbox", outputs=frozenset({Output.LOGITS}),
                               feature_knowledge=False)
    paper = "Yeom et al. CSF 2018 (score threshold), as edge baseline in LMIA (ACSAC 2023)"
    Config = EdgeScoreThresholdConfig

    def _score(self, target: LinkTargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        del rngs  # deterministic
        pairs = np.asarray(challenge.candidates, dtype=np.int64)
        return AttackScores(target.pair_logits(pairs), threshold=0.0, notes=(
            "score: the target's logit of the pair; threshold 0 (the model predicts an edge)",))
