"""White-box membership inference by clustering embeddings (Duddu et al. 2020, §2).

An autoencoder compresses each candidate's intermediate embedding (layer ``layer`` of the
target) to one scalar; KMeans(2) clusters the scalars. The cluster holding more of the
``n_known`` nodes whose membership the adversary knows (challenge hints, disjoint from the
candidates) is named "member". The score is the signed distance of a node's scalar along the
centroid axis, toward the member centre: ``2·(z − (c_in + c_out)/2)·sign(c_in − c_out)``
(threshold 0 = the cluster assignment). It ranks every candidate. The former score
``|z − c_out| − |z − c_in|`` (kept by ``compat_saturating_score``) equals it between the two
centres but is constant outside that segment: on Cora 488 of 1,064 candidates tied, so TPR at
low FPR was 0 and the AUC was biased (issue 15).

The original notebook instead took the best of 100 KMeans seeds *against the ground truth*
(attacks.md §2, P2-1), an oracle. An attack never sees the truth here; ``compat_duddu_oracle``
reproduces the notebook's autoencoder (ReLU bottleneck, sigmoid decoder, binary cross-entropy)
and returns the hard cluster assignment as 0/1 scores. The oracle labelling then equals the
``oracle_balanced_accuracy`` every report already carries (the best threshold over those
scores chosen with the labels, floored at 0.5 = max(acc, 1 - acc) on balanced candidates).
KMeans on one scalar converges to the same partition for essentially every seed, so the best
of 100 seeds adds nothing beyond the orientation choice.

Threat model: white box (intermediate embeddings) and the membership of a few known nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from graphleaks.attacks.base import (
    Attack,
    AttackScores,
    Challenge,
    MembershipSpec,
    Output,
    TargetView,
    Task,
    ThreatModel,
)
from graphleaks.seeding import Rngs, torch_seeded


@dataclass(frozen=True)
class EmbeddingClusterMIAConfig:
    """Parameters of :class:`EmbeddingClusterMIA`.

    Attributes:
        layer: Target layer whose output is the embedding (0 = first hidden layer).
        n_known: Known members and known non-members each (drawn outside the candidates).
        ae_epochs: Full-batch autoencoder epochs.
        ae_lr: Autoencoder Adam learning rate.
        kmeans_init: KMeans restarts (``n_init``).
        compat_duddu_oracle: Reproduce the notebook's autoencoder and return hard cluster
            assignments; the oracle labelling is the report's ``oracle_balanced_accuracy``.
        compat_saturating_score: Score ``|z − c_out| − |z − c_in|`` as before issue 15, which
            ties every candidate beyond a centre.
    """

    layer: int = field(default=0, metadata={"range": (-16, 16)})
    n_known: int = field(default=10, metadata={"range": (1, 100_000)})
    ae_epochs: int = field(default=300, metadata={"range": (1, 100_000)})
    ae_lr: float = field(default=1e-2, metadata={"range": (0.0, 10.0), "closed": "right"})
    kmeans_init: int = field(default=10, metadata={"range": (1, 1000)})
    compat_duddu_oracle: bool = False
    compat_saturating_score: bool = False


def cluster_score(
    z: np.ndarray, c_in: float, c_out: float, *, saturating: bool = False
) -> np.ndarray:
    """Membership score of scalars ``z`` given the member and non-member centres.

    Args:
        z: The candidates' scalar codes.
        c_in: Centre of the cluster named "member".
        c_out: Centre of the other cluster.
        saturating: Use ``|z − c_out| − |z − c_in|``, constant outside ``[c_in, c_out]``.

    Returns:
        Scores, higher = closer to the member side; 0 on the cluster boundary.

    Example:
        >>> cluster_score(np.array([-5.0, -1.0, 0.0, 4.0]), 1.0, -1.0).tolist()
        [-10.0, -2.0, 0.0, 8.0]
    """
    z = np.asarray(z, dtype=np.float64)
    if saturating:
        return np.abs(z - c_out) - np.abs(z - c_in)
    direction = 1.0 if c_in >= c_out else -1.0
    return 2.0 * (z - (c_in + c_out) / 2.0) * direction


class _AutoEncoder(nn.Module):
    def __init__(self, dim: int, duddu: bool) -> None:
        super().__init__()
        self.duddu = duddu
        self.enc = nn.Linear(dim, 1)
        self.dec = nn.Linear(1, dim)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        z = self.enc(x)
        return torch.relu(z) if self.duddu else z

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.dec(self.encode(x))
        return torch.sigmoid(out) if self.duddu else out


def encode_scalar(emb: torch.Tensor, *, epochs: int, lr: float, seed: int,
                  duddu: bool = False) -> np.ndarray:
    """Train an autoencoder with a 1-unit bottleneck on ``emb`` and return the codes.

    The default is a linear bottleneck on standardised inputs with MSE loss; ``duddu`` uses
    the notebook's ReLU bottleneck, sigmoid decoder and binary cross-entropy (on inputs
    min-max scaled to [0, 1], which the notebook did not do; P2-3).
    """
    x = emb.detach().float()
    if duddu:
        lo, hi = x.min(0).values, x.max(0).values
        x = (x - lo) / (hi - lo).clamp_min(1e-12)
    else:
        x = (x - x.mean(0)) / x.std(0).clamp_min(1e-6)
    with torch_seeded(seed):
        ae = _AutoEncoder(x.shape[1], duddu)
        opt = torch.optim.Adam(ae.parameters(), lr=lr)
        loss_fn: nn.Module = nn.BCELoss() if duddu else nn.MSELoss()
        for _ in range(epochs):
            opt.zero_grad()
            loss = loss_fn(ae(x), x)
            loss.backward()
            opt.step()
    with torch.no_grad():
        return ae.encode(x).view(-1).double().numpy()


class EmbeddingClusterMIA(Attack):
    """Unsupervised white-box MIA: autoencoder to a scalar, KMeans(2), known-node naming.

    Example:
        >>> from graphleaks.audit.runner import train_target
        >>> from graphleaks.data import tiny_graph
        >>> from graphleaks.attacks.harness import run_attack
        >>> from graphleaks.models.gnn import ArchitectureSpec
        >>> t = train_target(tiny_graph(), seed=0, spec=ArchitectureSpec(epochs=20))
        >>> r = run_attack(EmbeddingClusterMIA(n_known=2, ae_epochs=50), t, seed=0)
        >>> r.scores.shape == r.labels.shape
        True
    """

    name = "embedding_cluster_mia"
    task = Task.MEMBERSHIP
    requires = frozenset({Output.EMBEDDINGS})
    threat_model = ThreatModel(
        access="whitebox", outputs=frozenset({Output.EMBEDDINGS}), label_knowledge=False,
    )
    Config = EmbeddingClusterMIAConfig

    def unused_fields(self) -> dict[str, str]:
        """The oracle compat mode scores hard assignments (recorded None, refused if set)."""
        if self.config.compat_duddu_oracle:
            return {"compat_saturating_score": "compat_duddu_oracle scores hard cluster "
                                               "assignments, not distances"}
        return {}

    def challenge_spec(self) -> MembershipSpec:
        """Balanced members vs non-members, plus ``n_known`` of each as hints.

        The harness removes the known nodes from the candidate pool first, so they are never
        scored.
        """
        return MembershipSpec(n_known=self.config.n_known)

    def _score(self, target: TargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        from sklearn.cluster import KMeans

        cfg = self.config
        cands = np.asarray(challenge.candidates)
        known_in = np.asarray(challenge.hints.get("known_members", np.empty(0, np.int64)))
        known_out = np.asarray(challenge.hints.get("known_nonmembers", np.empty(0, np.int64)))
        nodes = np.concatenate([cands, known_in, known_out]).astype(np.int64)
        emb = target.embeddings(nodes, layer=cfg.layer)
        z = encode_scalar(emb, epochs=cfg.ae_epochs, lr=cfg.ae_lr,
                          seed=rngs.child("autoencoder").seed, duddu=cfg.compat_duddu_oracle)
        km = KMeans(n_clusters=2, n_init=cfg.kmeans_init,
                    random_state=int(rngs.child("kmeans").seed % (2**31 - 1)))
        assign = km.fit_predict(z.reshape(-1, 1))
        centers = km.cluster_centers_.reshape(-1)
        n = len(cands)
        a_in = assign[n:n + len(known_in)]
        a_out = assign[n + len(known_in):]
        notes = [f"embedding layer {cfg.layer}; autoencoder to 1 scalar; KMeans(2)"]
        if len(a_in) + len(a_out):
            # Vote: fraction of known members minus fraction of known non-members per cluster.
            vote = [(np.mean(a_in == c) if len(a_in) else 0.0)
                    - (np.mean(a_out == c) if len(a_out) else 0.0) for c in (0, 1)]
            member_cluster = int(np.argmax(vote))
            notes.append(f"clusters named with {len(a_in)} known members and {len(a_out)} "
                         "known non-members (not the evaluation labels)")
        else:
            member_cluster = int(np.argmin(np.bincount(assign, minlength=2)))
            notes.append("no known nodes in the challenge: the smaller cluster is named "
                         "'member' (an arbitrary orientation)")
        c_in, c_out = centers[member_cluster], centers[1 - member_cluster]
        zc = z[:n]
        if cfg.compat_duddu_oracle:
            scores = (assign[:n] == member_cluster).astype(np.float64)
            notes.append("compat: Duddu autoencoder (ReLU bottleneck, sigmoid decoder, BCE); "
                         "scores are hard cluster assignments; the notebook's oracle labelling "
                         "(best of 100 KMeans seeds against the truth) equals this result's "
                         "oracle_balanced_accuracy")
            return AttackScores(scores, threshold=0.5, notes=tuple(notes))
        scores = cluster_score(zc, c_in, c_out, saturating=cfg.compat_saturating_score)
        if cfg.compat_saturating_score:
            notes.append("compat: saturating score |z - c_out| - |z - c_in| (ties every "
                         "candidate beyond a centre)")
        else:
            notes.append("score: signed distance along the centroid axis (ranks every "
                         "candidate)")
        return AttackScores(scores.astype(np.float64), threshold=0.0, notes=tuple(notes))
