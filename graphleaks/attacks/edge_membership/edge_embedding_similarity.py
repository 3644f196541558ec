"""LMIA's embedding-similarity edge membership: how alike the endpoints' embeddings are.

Link Membership Inference Attacks against Unsupervised Graph Representation Learning (Wang &
Wang, ACSAC 2023) score a pair by a similarity of its endpoints' node embeddings: training
pulls the embeddings of a training edge's endpoints together (the decoder's positive term),
so member pairs are more alike than held-out ones. This is their unsupervised variant:
``cosine``, ``dot`` (inner product) or ``euclidean`` (negated distance, so higher = more
alike) on a named embedding layer (default: the last one the model exposes).

Threat model: white box on the embeddings (the model exposes a node-embedding layer); no
graph, feature or architecture knowledge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from graphleaks.attacks.base import AttackScores, Challenge
from graphleaks.attacks.edge_membership.base import EdgeAttack, LinkTargetView
from graphleaks.errors import CapabilityError
from graphleaks.models.link_predictor import PAIR_CHUNK
from graphleaks.seeding import Rngs
from graphleaks.threat import Output, ThreatModel

SIMILARITIES = ("cosine", "dot", "euclidean")


@dataclass(frozen=True)
class EdgeEmbeddingSimilarityConfig:
    """Parameters of :class:`EdgeEmbeddingSimilarity`.

    Attributes:
        similarity: ``cosine``, ``dot`` or ``euclidean`` (negated distance).
        layer: Name of the embedding layer ("": the last exposed one).
    """

    similarity: str = field(default="cosine", metadata={"choices": SIMILARITIES})
    layer: str = ""


def pair_similarity(emb: torch.Tensor, pairs: np.ndarray, kind: str, *,
                    chunk: int = PAIR_CHUNK) -> np.ndarray:
    """Similarity of each pair's endpoint embeddings (higher = more alike), float64.

    Pairs are gathered ``chunk`` at a time (each row's value is computed alone, so the
    result does not depend on ``chunk``): two million candidates at width 128 would
    otherwise gather 4 GB of float64 endpoint rows at once.
    """
    p = torch.as_tensor(np.asarray(pairs, dtype=np.int64)).reshape(-1, 2)
    out = np.empty(len(p), dtype=np.float64)
    for start in range(0, len(p), chunk):
        q = p[start:start + chunk]
        # rows upcast after the gather: the float64 copy is of the chunk, not of all nodes
        a, b = emb[q[:, 0]].double(), emb[q[:, 1]].double()
        if kind == "dot":
            v = (a * b).sum(1)
        elif kind == "euclidean":
            v = -(a - b).norm(dim=1)
        else:
            v = torch.nn.functional.cosine_similarity(a, b, dim=1, eps=1e-12)
        out[start:start + len(q)] = v.numpy()
    return out


class EdgeEmbeddingSimilarity(EdgeAttack):
    """LMIA: cosine / dot / euclidean similarity of the endpoints' embeddings.

    Example:
        >>> import torch
        >>> emb = torch.tensor([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0]])
        >>> pair_similarity(emb, np.array([[0, 1], [0, 2]]), "cosine").round(3).tolist()
        [0.995, 0.0]
    """

    name = "edge_embedding_similarity"
    requires = frozenset({Output.EMBEDDINGS})
    threat_model = ThreatModel(access="whitebox", outputs=frozenset({Output.EMBEDDINGS}),
                               feature_knowledge=False)
    paper = "LMIA, Wang & Wang, ACSAC 2023 (similarity-based link membership)"
    Config = EdgeEmbeddingSimilarityConfig

    def _score(self, target: LinkTargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        del rngs  # deterministic
        cfg = self.config
        layers = target.embedding_layers
        if not layers:
            raise CapabilityError(f"{self.name} requires EMBEDDINGS; the model names no "
                                  "embedding layer (pass embedding_layers=('name',))")
        layer = cfg.layer or layers[-1]
        pairs = np.asarray(challenge.candidates, dtype=np.int64)
        emb = target.embeddings(layer, pairs)
        return AttackScores(pair_similarity(emb, pairs, cfg.similarity), notes=(
            f"LMIA similarity {cfg.similarity} of the endpoints' embeddings at layer "
            f"{layer!r}",))
