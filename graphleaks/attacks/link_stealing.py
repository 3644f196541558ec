"""Link stealing attacks 0 to 7 (He, Jia, Backes, Gong, Zhang; USENIX Security'21).

Paper: https://arxiv.org/abs/2005.02131. Two nodes linked in the training graph receive similar
posteriors from a GNN. The eight attacks differ in the adversary's knowledge (attacks.md §5.1):

=======  =====================  ====================================================
Attack   Knowledge              Method
=======  =====================  ====================================================
0        posteriors only        unsupervised: ``-distance(a, b)`` (correlation)
1        shadow dataset D'      MLP on 12 dimension-free features, trained on D'
2        features F             unsupervised: ``-distance`` of one score family
3        partial graph A*       MLP on ``4C + 12`` features, trained on known pairs
4        A* + D'                MLP on 12 features, trained on D' pairs + known pairs
5        F + D'                 MLP on 32 features, trained on D'
6        F + A*                 MLP on ``8C + 32`` features, trained on known pairs
7        F + A* + D'            MLP on 32 features, trained on D' pairs + known pairs
=======  =====================  ====================================================

Features follow attacks.md §5.4 exactly: the 8 SciPy distances (cosine, euclidean,
correlation, chebyshev, braycurtis, canberra, cityblock, sqeuclidean; NaN/inf set to 0), the
4 pairwise operators (average, hadamard, weighted-L1, weighted-L2) and the entropy features.
They are computed vectorised, in chunks, so memory grows with the number of pairs.

Threat model: black box (posteriors of any node). The threat model recorded with a result is
the one of the chosen attack: ``feature_knowledge`` for 2/5/6/7, ``graph_knowledge="partial"``
for 3/4/6/7 (the known pairs come as challenge hints, never from the truth of the evaluation
pairs), ``shadow_data="disjoint_subgraph"`` plus architecture knowledge for 1/4/5/7 (the
shadow dataset is the adversary's auxiliary population, on which it trains a shadow GCN with
the target's architecture). The class-level threat model is the union (what
``graphleaks list attacks`` shows).

Pair protocol (attacks.md §5.3): all edges of the target's training graph and as many uniform
non-edges, shuffled and paired; the evaluation set is the last ``eval_fraction`` (10 %), the
known pairs are the first ``train_ratio`` (50 %). Deviations from the original: the
"reference posteriors" come from an MLP the adversary distils from the target's predicted
labels (the original trained it on the target's true training labels); the StandardScaler is
fit on the training pairs (``compat_scaler_on_test`` restores the original's separate fit on
the test pairs); Attack 0/2 scores are never direction-flipped with the evaluation labels.

Example:
    >>> from graphleaks.audit.runner import train_target
    >>> from graphleaks.data import tiny_graph
    >>> from graphleaks.attacks.harness import run_attack
    >>> t = train_target(tiny_graph(), seed=0)
    >>> r = run_attack(LinkStealingAttack(attack=0), t, seed=0)
    >>> r.scores.shape == r.labels.shape
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from graphleaks.attacks._pairs import (
    balanced_pairs,
    undirected_pairs,
)
from graphleaks.attacks._shadow import mechanism_note, mechanism_of, train_shadow
from graphleaks.attacks.base import (
    Attack,
    AttackScores,
    Challenge,
    HeldOutPairsSpec,
    Output,
    TargetView,
    Task,
    ThreatModel,
)
from graphleaks.models.gnn import GNN, ArchitectureSpec
from graphleaks.models.training import train_node_classifier
from graphleaks.seeding import Rngs, derive_seed, torch_seeded

DISTANCES = ("cosine", "euclidean", "correlation", "chebyshev", "braycurtis", "canberra",
             "cityblock", "sqeuclidean")
FAMILIES = ("posterior", "reference", "feature", "difference")
_CHUNK = 4096


@dataclass(frozen=True)
class LinkStealingConfig:
    """Parameters of :class:`LinkStealingAttack`.

    Attributes:
        attack: Which of He et al.'s attacks, 0 to 7.
        distance: Distance of the unsupervised attacks 0 and 2.
        family: Score family of attack 2: ``posterior``, ``reference`` (reference-MLP
            posteriors), ``feature`` or ``difference`` (reference distance minus posterior
            distance).
        train_ratio: Fraction of the shuffled pair list the adversary knows (attacks 3/4/6/7).
        eval_fraction: Fraction of the shuffled pair list that is evaluated (the tail).
        max_eval_pairs: Cap on evaluated positives (and as many negatives); None = all.
        epochs: Epochs of the attack MLP (Keras original: 50).
        batch_size: Batch size of the attack MLP (original: 128; attack 6 used 64).
        lr: Adam learning rate of the attack MLP.
        compat_scaler_on_test: Fit the feature scaler separately on the test pairs, as the
            original did (attacks.md §5.4); default fits on the training pairs only.
    """

    attack: int = field(default=0, metadata={"range": (0, 7)})
    distance: str = field(default="correlation", metadata={"choices": DISTANCES})
    family: str = field(default="feature", metadata={"choices": FAMILIES})
    train_ratio: float = field(default=0.5, metadata={"range": (0.0, 1.0), "closed": "neither"})
    eval_fraction: float = field(default=0.1, metadata={"range": (0.0, 1.0),
                                                        "closed": "neither"})
    max_eval_pairs: int | None = None
    epochs: int = field(default=50, metadata={"range": (1, 10_000)})
    batch_size: int = field(default=128, metadata={"range": (1, 1_000_000)})
    lr: float = field(default=1e-3, metadata={"range": (0.0, 1.0), "closed": "right"})
    compat_scaler_on_test: bool = False

    def check(self) -> None:
        """Cross-field rule: known and evaluated pairs must not overlap."""
        from graphleaks.errors import InvalidConfigError

        if not isinstance(self.attack, int) or isinstance(self.attack, bool):
            raise InvalidConfigError(f"LinkStealingConfig.attack must be an int 0..7; got "
                                     f"{self.attack!r}")
        if self.train_ratio + self.eval_fraction > 1.0 + 1e-9:
            raise InvalidConfigError(
                f"LinkStealingConfig train_ratio + eval_fraction must be <= 1; got "
                f"{self.train_ratio} + {self.eval_fraction}")


USES_FEATURES = frozenset({2, 5, 6, 7})
USES_PARTIAL = frozenset({3, 4, 6, 7})
USES_SHADOW = frozenset({1, 4, 5, 7})


def threat_model_for(attack: int) -> ThreatModel:
    """The threat model of He et al.'s attack ``attack``."""
    shadow = attack in USES_SHADOW
    return ThreatModel(
        access="blackbox", outputs=frozenset({Output.POSTERIORS}),
        graph_knowledge="partial" if attack in USES_PARTIAL else "none",
        feature_knowledge=attack in USES_FEATURES,
        shadow_data="disjoint_subgraph" if shadow else "none",
        architecture_knowledge=shadow,
    )


# ------------------------------------------------------------------------------ features


def pair_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The 8 SciPy distances between rows of ``a`` and ``b``: ``[n, 8]`` (NaN/inf → 0).

    Same definitions as :mod:`scipy.spatial.distance`, in the order of :data:`DISTANCES`.
    """
    out = np.empty((len(a), len(DISTANCES)), dtype=np.float64)
    for s in range(0, len(a), _CHUNK):
        u = np.asarray(a[s:s + _CHUNK], dtype=np.float64)
        v = np.asarray(b[s:s + _CHUNK], dtype=np.float64)
        d = u - v
        ad = np.abs(d)
        sq = (d * d).sum(1)
        with np.errstate(divide="ignore", invalid="ignore"):
            cos = 1.0 - (u * v).sum(1) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1))
            uc, vc = u - u.mean(1, keepdims=True), v - v.mean(1, keepdims=True)
            corr = 1.0 - (uc * vc).sum(1) / (np.linalg.norm(uc, axis=1)
                                              * np.linalg.norm(vc, axis=1))
            bray = ad.sum(1) / np.abs(u + v).sum(1)
            den = np.abs(u) + np.abs(v)
            canb = np.where(den > 0, ad / np.where(den > 0, den, 1.0), 0.0).sum(1)
        out[s:s + _CHUNK] = np.stack(
            [cos, np.sqrt(sq), corr, ad.max(1) if u.shape[1] else np.zeros(len(u)), bray,
             canb, ad.sum(1), sq], axis=1)
    out[~np.isfinite(out)] = 0.0
    return out


def pair_operators(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``concate_all``: average, hadamard, weighted-L1, weighted-L2, concatenated (4·dim)."""
    return np.concatenate([(a + b) / 2.0, a * b, np.abs(a - b), (a - b) ** 2], axis=1)


def entropy(p: np.ndarray) -> np.ndarray:
    """``H(p) = -Σ (p+1e-5) log(p+1e-5)`` per row, as a column ``[n, 1]``."""
    q = np.asarray(p, dtype=np.float64) + 1e-5
    return -(q * np.log(q)).sum(1, keepdims=True)


def entropy_features(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The 4 operators on the two posteriors' entropies: ``[n, 4]``."""
    return pair_operators(entropy(a), entropy(b))


@dataclass
class _NodeData:
    """Per-node inputs of the pair features (rows indexed by node id)."""

    post: np.ndarray
    ref: np.ndarray | None = None
    feat: np.ndarray | None = None


def pair_features(attack: int, data: _NodeData, pairs: np.ndarray) -> np.ndarray:
    """Feature vector of each pair for attack ``attack`` (dimensions of attacks.md §5.4)."""
    i, j = pairs[:, 0], pairs[:, 1]
    a, b = data.post[i], data.post[j]
    if attack in (1, 4):
        return np.hstack([pair_distances(a, b), entropy_features(a, b)])
    if attack == 3:
        return np.hstack([pair_operators(a, b), pair_distances(a, b), entropy_features(a, b)])
    assert data.ref is not None and data.feat is not None
    ra, rb = data.ref[i], data.ref[j]
    fa, fb = data.feat[i], data.feat[j]
    common = [pair_distances(a, b), pair_distances(ra, rb), pair_distances(fa, fb),
              entropy_features(a, b), entropy_features(ra, rb)]
    if attack in (5, 7):
        return np.hstack(common)
    if attack == 6:
        return np.hstack([pair_operators(np.hstack([a, ra]), np.hstack([b, rb])), *common])
    raise ValueError(f"attack {attack} has no supervised features")


# ------------------------------------------------------------------------- attack model


class _MLP(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Dropout(0.5),
                                 nn.Linear(32, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def _standardise(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    mu, sd = ref.mean(0), ref.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    return (x - mu) / sd


def train_attack_mlp(
    x: np.ndarray, y: np.ndarray, *, epochs: int, batch_size: int, lr: float, seed: int,
) -> nn.Module:
    """He et al.'s attack MLP: 32-32 ReLU with dropout 0.5, softmax CE, Adam (eval mode)."""
    gen = torch.Generator().manual_seed(derive_seed(seed, "batches") & 0xFFFF_FFFF)
    xt = torch.as_tensor(x, dtype=torch.float32)
    yt = torch.as_tensor(y, dtype=torch.long)
    with torch_seeded(seed):
        model = _MLP(xt.shape[1])
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        model.train()
        for _ in range(epochs):
            perm = torch.randperm(len(xt), generator=gen)
            for s in range(0, len(xt), batch_size):
                idx = perm[s:s + batch_size]
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(xt[idx]), yt[idx])
                loss.backward()
                opt.step()
    model.eval()
    return model


def reference_posteriors(x: torch.Tensor, labels: torch.Tensor, num_classes: int, *,
                         seed: int, epochs: int = 200) -> np.ndarray:
    """Posteriors of a feature-only MLP (hidden 16) the adversary fits to ``labels``."""
    spec = ArchitectureSpec(arch="mlp", hidden=(16,), epochs=epochs, patience=0)
    with torch_seeded(derive_seed(seed, "init")):
        model = GNN(x.shape[1], num_classes, spec)
    rng = np.random.default_rng(derive_seed(seed, "nodes"))
    nodes = np.sort(rng.permutation(len(x))[: max(1, len(x) // 2)])
    empty = torch.empty(2, 0, dtype=torch.long)
    train_node_classifier(model, x, empty, labels, nodes, lr=0.01, weight_decay=5e-4,
                          epochs=epochs, patience=0, seed=derive_seed(seed, "train"))
    model.eval()
    with torch.no_grad():
        return torch.softmax(model(x, empty), dim=1).numpy().astype(np.float64)


class LinkStealingAttack(Attack):
    """He et al.'s link stealing attacks 0 to 7 (choose with ``attack``); see the module doc."""

    name = "link_stealing"
    task = Task.LINK
    requires = frozenset({Output.POSTERIORS})
    threat_model = ThreatModel(
        access="blackbox", outputs=frozenset({Output.POSTERIORS}), graph_knowledge="partial",
        feature_knowledge=True, shadow_data="disjoint_subgraph", architecture_knowledge=True,
    )
    Config = LinkStealingConfig

    def __init__(self, config: Any | None = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        k = getattr(self.config, "attack", 0)
        if isinstance(k, int) and 0 <= k <= 7:
            # The recorded threat model is the chosen attack's, not the class-level union.
            self.threat_model = threat_model_for(k)  # type: ignore[misc]

    def unused_fields(self) -> dict[str, str]:
        """Fields the chosen attack 0..7 does not read (recorded as None, refused if set)."""
        k = self.config.attack
        out: dict[str, str] = {}
        if k not in (0, 2):
            out["distance"] = f"attack {k} is supervised; distance scores only attacks 0 and 2"
        if k != 2:
            out["family"] = f"family selects attack 2's score; attack {k} is chosen"
        if k not in USES_PARTIAL:
            out["train_ratio"] = (f"attack {k} knows no pairs of the target graph; only "
                                  "attacks 3, 4, 6 and 7 train on them")
        if k in (0, 2):
            for f in ("epochs", "batch_size", "lr", "compat_scaler_on_test"):
                out[f] = f"attack {k} is unsupervised and trains no MLP"
        return out

    def challenge_spec(self) -> HeldOutPairsSpec:
        """He et al.'s pairs: evaluated tail, known head as hints (attacks 3/4/6/7 only)."""
        cfg = self.config
        return HeldOutPairsSpec(eval_fraction=cfg.eval_fraction, known_fraction=cfg.train_ratio,
                                max_eval_pairs=cfg.max_eval_pairs,
                                known_pairs=cfg.attack in USES_PARTIAL)

    # --------------------------------------------------------------------------- scoring

    def _score(self, target: TargetView, challenge: Challenge, rngs: Rngs) -> AttackScores:
        cfg = self.config
        k = cfg.attack
        pairs = np.asarray(challenge.candidates, dtype=np.int64).reshape(-1, 2)
        all_nodes = np.arange(target.num_nodes)
        post = target.posteriors(all_nodes).numpy().astype(np.float64)
        data = _NodeData(post=post)
        if k in USES_FEATURES:
            x = target.features()
            data.feat = x.numpy().astype(np.float64)
            data.ref = reference_posteriors(x, torch.as_tensor(post.argmax(1)),
                                            target.num_classes, seed=rngs.child("ref").seed)
        if k == 0:
            d = pair_distances(post[pairs[:, 0]], post[pairs[:, 1]])
            return AttackScores(-d[:, DISTANCES.index(cfg.distance)],
                                notes=(f"attack 0: -{cfg.distance} distance of posteriors",))
        if k == 2:
            return AttackScores(self._family_scores(data, pairs),
                                notes=(f"attack 2: -{cfg.distance} distance, family "
                                       f"{cfg.family}",))
        xs, ys = [], []
        notes: list[str] = []
        if k in USES_SHADOW:
            sx, sy, shadow_note = self._shadow_pairs(target, rngs)
            xs.append(sx)
            ys.append(sy)
            notes.append(shadow_note)
        if k in USES_PARTIAL:
            known = challenge.hints.get("known_pairs")
            if known is None or len(known) == 0:
                from graphleaks.errors import CapabilityError

                raise CapabilityError(f"link_stealing attack {k} needs known pairs of the "
                                      "target graph (challenge hints 'known_pairs'); build the "
                                      "challenge with the harness")
            xs.append(pair_features(k, data, np.asarray(known, dtype=np.int64)))
            ys.append(np.asarray(challenge.hints["known_labels"], dtype=np.int64))
        x_train, y_train = np.vstack(xs), np.concatenate(ys)
        x_test = pair_features(k, data, pairs)
        x_train_s = _standardise(x_train, x_train)
        x_test_s = _standardise(x_test, x_test if cfg.compat_scaler_on_test else x_train)
        model = train_attack_mlp(x_train_s, y_train, epochs=cfg.epochs,
                                 batch_size=cfg.batch_size, lr=cfg.lr,
                                 seed=rngs.child("mlp").seed)
        with torch.no_grad():
            prob = torch.softmax(model(torch.as_tensor(x_test_s, dtype=torch.float32)), 1)
        notes.insert(0, f"attack {k}: MLP on {x_train.shape[1]} features, {len(y_train)} "
                        "training pairs")
        if cfg.compat_scaler_on_test:
            notes.append("compat: scaler fit on the test pairs (original behaviour)")
        return AttackScores(prob[:, 1].numpy().astype(np.float64), threshold=0.5,
                            notes=tuple(notes))

    def _family_scores(self, data: _NodeData, pairs: np.ndarray) -> np.ndarray:
        cfg = self.config
        c = DISTANCES.index(cfg.distance)
        i, j = pairs[:, 0], pairs[:, 1]
        assert data.ref is not None and data.feat is not None

        def dist(m: np.ndarray) -> np.ndarray:
            return pair_distances(m[i], m[j])[:, c]

        if cfg.family == "posterior":
            return -dist(data.post)
        if cfg.family == "reference":
            return -dist(data.ref)
        if cfg.family == "feature":
            return -dist(data.feat)
        return dist(data.ref) - dist(data.post)

    def _shadow_pairs(
        self, target: TargetView, rngs: Rngs
    ) -> tuple[np.ndarray, np.ndarray, str]:
        """Features and labels of all shadow pairs (shadow edges + as many non-edges), and a note.

        The shadow's features are the ones it is served with (the defense's, when the
        adversary trains it through the target's defense), as the target's are.
        """
        k = self.config.attack
        population, _ = target.population()
        shadow = train_shadow(population, target.architecture(), target.num_classes,
                              seed=rngs.child("shadow").seed)
        m = int(population.num_nodes)
        with torch.no_grad():
            post = torch.softmax(shadow.logits(np.arange(m)), 1).numpy().astype(np.float64)
        data = _NodeData(post=post)
        if k in USES_FEATURES:
            x = shadow.features
            data.feat = x.numpy().astype(np.float64)
            data.ref = reference_posteriors(x, population.y, target.num_classes,
                                            seed=rngs.child("shadow-ref").seed)
        rng = rngs.child("shadow-pairs").numpy
        pos, neg = balanced_pairs(undirected_pairs(shadow.edges), m, rng)
        pairs = np.concatenate([pos, neg])
        y = np.r_[np.ones(len(pos), np.int64), np.zeros(len(neg), np.int64)]
        return (pair_features(k, data, pairs), y,
                mechanism_note(mechanism_of(population), "link-stealing shadow"))
