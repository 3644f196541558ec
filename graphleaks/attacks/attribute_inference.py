"""Attribute inference from node embeddings (Duddu et al., ``docs/attacks.md`` §4).

The adversary knows a sensitive attribute (gender, country, ...) for an auxiliary fraction of the
nodes, trains a classifier (MLP, random forest or SVM) from their embeddings to the attribute, and
predicts it for every other node. The embeddings are either *released* embeddings
(DeepWalk/node2vec vectors published for the whole graph) or a GNN target's intermediate
embeddings (white box).

The classifier code here (:func:`make_classifier`, :func:`fit_predict`) is the only one in
graphleaks: :mod:`graphleaks.audit.embedding_audit` calls it too. Metrics are never computed here;
the harness evaluates results with :func:`graphleaks.metrics.multiclass.multiclass_metrics`
against the majority baseline of the adversary's known attribute values.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from graphleaks.attacks.base import (
    Attack,
    AttackScores,
    AttributeSpec,
    Challenge,
    EmbeddingRelease,
    Output,
    TargetView,
    Task,
    ThreatModel,
)
from graphleaks.attacks.harness import encode_attribute, split_known
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.seeding import Rngs

__all__ = [
    "CLASSIFIERS",
    "AttributeInference",
    "AttributeInferenceConfig",
    "encode_attribute",
    "fit_predict",
    "make_classifier",
    "split_known",
]

CLASSIFIERS = ("mlp", "rf", "svm")
"""Attack classifiers, with the GraphLeaks scripts' settings (attacks.md §4)."""


def make_classifier(name: str, *, seed: int) -> Any:
    """A fresh, seeded scikit-learn attack classifier.

    Settings follow Duddu et al.'s scripts: ``mlp`` = adam, alpha 1e-5, hidden layers
    (64, 32, 16, 18), at most 200 iterations; ``rf`` = 100 trees of depth at most 150; ``svm`` =
    one-vs-rest RBF ``SVC`` with C = 1. No feature scaling, as in the paper.

    Args:
        name: ``"mlp"``, ``"rf"`` or ``"svm"``.
        seed: ``random_state`` of the classifier.

    Raises:
        InvalidConfigError: If ``name`` is unknown.
    """
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC

    rs = int(seed) & 0x7FFF_FFFF
    if name == "mlp":
        return MLPClassifier(hidden_layer_sizes=(64, 32, 16, 18), solver="adam", alpha=1e-5,
                             max_iter=200, random_state=rs)
    if name == "rf":
        return RandomForestClassifier(n_estimators=100, max_depth=150, random_state=rs)
    if name == "svm":
        return OneVsRestClassifier(SVC(kernel="rbf", C=1.0, random_state=rs))
    raise InvalidConfigError(
        f"unknown attack classifier {name!r}; choose one of: {', '.join(CLASSIFIERS)}"
    )


def fit_predict(
    name: str,
    x_train: npt.ArrayLike,
    y_train: npt.ArrayLike,
    x_test: npt.ArrayLike,
    *,
    seed: int,
) -> npt.NDArray[np.int64]:
    """Train classifier ``name`` on the known nodes and predict the others' class ids.

    Args:
        name: ``"mlp"``, ``"rf"`` or ``"svm"``.
        x_train: ``[n_known, d]`` embeddings of the nodes whose attribute is known.
        y_train: ``[n_known]`` integer class ids.
        x_test: ``[n_test, d]`` embeddings of the nodes to infer.
        seed: Classifier seed.

    Returns:
        ``int64 [n_test]`` predicted class ids.

    Raises:
        DataError: If the known nodes hold a single class or the shapes disagree.
    """
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    xtr = np.asarray(x_train, dtype=np.float64)
    xte = np.asarray(x_test, dtype=np.float64)
    ytr = np.asarray(y_train).astype(np.int64)
    if xtr.ndim != 2 or xte.ndim != 2 or xtr.shape[1] != xte.shape[1] or len(xtr) != len(ytr):
        raise DataError(f"attribute inference needs [n, d] embeddings and one label per known "
                        f"node; got {xtr.shape}, {ytr.shape} and {xte.shape}")
    if len(np.unique(ytr)) < 2:
        raise DataError("attribute inference needs at least 2 attribute values among the "
                        "known nodes; got 1")
    clf = make_classifier(name, seed=seed)
    # One BLAS thread: the attack models' matrices are small, and multi-threaded BLAS made the
    # MLP about 7x slower on 2 busy cores (75 s vs 10 s on LastFM-sized data). It also keeps
    # the predictions independent of the machine's core count.
    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(xtr, ytr)
        pred = clf.predict(xte)
    return np.asarray(pred).astype(np.int64)


@dataclass(frozen=True)
class AttributeInferenceConfig:
    """Parameters of :class:`AttributeInference`.

    Attributes:
        aux_frac: Fraction of nodes whose attribute the adversary knows (paper: 0.3, 0.5).
        classifier: Attack classifier: ``mlp``, ``rf`` or ``svm``.
        source: ``released_embeddings`` (DeepWalk/node2vec vectors of the whole graph,
            published by the data holder) or ``target_embeddings`` (the GNN target's
            intermediate embeddings, white box).
        layer: Layer of the target's embeddings (``target_embeddings`` only; 0 = first
            hidden layer, -1 = logits).
        embedder: How the released embeddings are made when none are supplied:
            ``deepwalk`` or ``node2vec``.
        dimensions: Released embedding size.
        walk_length: Nodes per walk.
        walks_per_node: Walks started from every node.
        window: Skip-gram window.
        epochs: Word2Vec passes.
        p: node2vec return parameter.
        q: node2vec in-out parameter.
        max_walk_tokens: Budget of the release's skip-gram corpus (``num_nodes ·
            walks_per_node · walk_length`` tokens; None: none). Over it, walks per node and
            then the walk length are lowered (:func:`~graphleaks.attacks.base.walk_budget`)
            and the challenge's notes give the values that ran. The audit suites set it
            (:mod:`graphleaks.audit.suite`).
    """

    aux_frac: float = field(default=0.3, metadata={"range": (0.0, 1.0), "closed": "neither"})
    classifier: str = field(default="mlp", metadata={"choices": CLASSIFIERS})
    source: str = field(default="released_embeddings",
                        metadata={"choices": ("released_embeddings", "target_embeddings")})
    layer: int = 0
    embedder: str = field(default="deepwalk", metadata={"choices": ("deepwalk", "node2vec")})
    dimensions: int = field(default=64, metadata={"range": (1, None), "closed": "left"})
    walk_length: int = field(default=40, metadata={"range": (2, None), "closed": "left"})
    walks_per_node: int = field(default=10, metadata={"range": (1, None), "closed": "left"})
    window: int = field(default=5, metadata={"range": (1, None), "closed": "left"})
    epochs: int = field(default=1, metadata={"range": (1, None), "closed": "left"})
    p: float = field(default=1.0, metadata={"range": (0.0, None), "closed": "neither"})
    q: float = field(default=1.0, metadata={"range": (0.0, None), "closed": "neither"})
    max_walk_tokens: int | None = field(default=None, metadata={"range": (1, None),
                                                                "optional": True})


class AttributeInference(Attack):
    """Infer a sensitive node attribute from embeddings, knowing it for a fraction of nodes.

    The harness samples the challenge (:meth:`challenge_spec`): it draws the known nodes
    (``aux_frac`` of all nodes, seeded) and gives the adversary their attribute values as
    ``hints["train_labels"]`` and their ids as ``hints["known_nodes"]``; the candidates are
    all other nodes. The attribute is
    the target graph's ``y`` unless ``attribute`` is given. Scores are predicted class ids.

    With ``source="released_embeddings"`` the vectors are ``released`` if given (row ``i`` =
    node ``i``), else the challenge simulates the release: the data holder trains
    DeepWalk/node2vec on the target's graph and publishes the vectors
    (``hints["released_embeddings"]``).

    Args:
        config: The configuration.
        released: Released embeddings ``[num_nodes, d]`` to attack instead of generating them.
        attribute: Attribute values ``[num_nodes]`` to infer instead of the graph's ``y``.
        **overrides: Config fields.
    """

    name = "attribute_inference"
    task = Task.ATTRIBUTE
    requires = frozenset({Output.RELEASED_EMBEDDINGS})
    threat_model = ThreatModel(
        access="graybox",
        outputs=frozenset({Output.RELEASED_EMBEDDINGS, Output.EMBEDDINGS}),
        feature_knowledge=False,
        label_knowledge=False,
    )
    Config = AttributeInferenceConfig

    def __init__(
        self,
        config: AttributeInferenceConfig | None = None,
        *,
        released: npt.ArrayLike | None = None,
        attribute: npt.ArrayLike | None = None,
        **overrides: Any,
    ) -> None:
        super().__init__(config, **overrides)
        self.released = None if released is None else np.asarray(released, dtype=np.float32)
        self.attribute = None if attribute is None else np.asarray(attribute)
        out = (Output.RELEASED_EMBEDDINGS if self.config.source == "released_embeddings"
               else Output.EMBEDDINGS)
        self.requires = frozenset({out})  # type: ignore[misc]

    def unused_fields(self) -> dict[str, str]:
        """Fields the configured source does not read (recorded as None, refused if set)."""
        cfg = self.config
        walk = ("embedder", "dimensions", "walk_length", "walks_per_node", "window", "epochs",
                "p", "q", "max_walk_tokens")
        if cfg.source != "released_embeddings":
            why = "source='target_embeddings' reads the target's own embeddings; no walk "
            return {f: why + "embedding is trained" for f in walk}
        out = {"layer": "layer is read only with source='target_embeddings'"}
        if self.released is not None:
            out.update({f: "released embeddings were supplied, so none are trained"
                        for f in walk})
        elif cfg.embedder == "deepwalk":
            out.update({f: "DeepWalk walks uniformly; p and q steer node2vec's walks"
                        for f in ("p", "q")})
        return out

    def challenge_spec(self) -> AttributeSpec:
        """Known nodes with their attribute as hints; all other nodes as candidates.

        The harness draws the known nodes, encodes the attribute and, for
        ``source="released_embeddings"`` without ``released``, simulates the data holder's
        release.
        """
        cfg = self.config
        release = released = None
        if cfg.source == "released_embeddings":
            released = self.released
            if released is None:
                release = EmbeddingRelease(
                    embedder=cfg.embedder, dimensions=cfg.dimensions,
                    walk_length=cfg.walk_length, walks_per_node=cfg.walks_per_node,
                    window=cfg.window, epochs=cfg.epochs, p=cfg.p, q=cfg.q,
                    max_walk_tokens=cfg.max_walk_tokens)
        return AttributeSpec(aux_frac=cfg.aux_frac, attribute=self.attribute, release=release,
                             released=released)

    def _score(self, target: TargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        known = np.asarray(challenge.hints["known_nodes"])
        ytr = np.asarray(challenge.hints["train_labels"])
        cand = np.asarray(challenge.candidates)
        if cfg.source == "released_embeddings":
            if "released_embeddings" not in challenge.hints:
                raise InvalidConfigError("attribute_inference with source=released_embeddings "
                                         "needs hints['released_embeddings']")
            emb = np.asarray(challenge.hints["released_embeddings"])
            xtr, xte = emb[known], emb[cand]
            what = "released embeddings"
        else:
            xtr = target.embeddings(known, layer=cfg.layer).detach().cpu().numpy()
            xte = target.embeddings(cand, layer=cfg.layer).detach().cpu().numpy()
            what = f"target embeddings (layer {cfg.layer})"
        pred = fit_predict(cfg.classifier, xtr, ytr, xte, seed=rngs.seed)
        note = (f"{cfg.classifier} trained on the {what} of {len(known)} nodes with a known "
                f"attribute ({cfg.aux_frac:.0%}); scores are predicted class ids")
        return AttackScores(pred.astype(np.float64), notes=(note,))
