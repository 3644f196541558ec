"""LPGNN: locally private GNNs (Sajadmanesh & Gatica-Perez, CCS'21), ``defenses.md`` §2.

* Features: every node privatises its own feature vector with the **multi-bit mechanism**
  (ε_x-LDP, §2.2), and the server rectifies it into an unbiased estimate. These rectified
  features are what the target is *served* with (``TrainedTarget.features``); the raw ones
  never enter the model.
* **KProp** (§2.3): K_x steps of x ← Â x with Â = D^{-1/2} A D^{-1/2} (no self-loops),
  followed by a 2-layer GNN (SAGE by default; hidden 16, SELU, dropout).
* Labels (optional, ε_y < ∞; §2.4): k-RR on the train and val labels, then "Drop": label
  propagation ỹ = softmax(Â^{K_y} ŷ), forward correction P(y'|x') = P(y|x')·T and the
  repo's model-selection rule capped by the RR keep probability.

Edges are public under LPGNN's threat model. The ledger's unit is NODE_FEATURE (or
NODE_FEATURE_AND_LABEL) with ε = ε_x + ε_y (basic composition) and components ε_x, ε_y.

Features are min–max scaled to [0, 1] per column over the whole graph before the mechanism,
as in the original code; the column bounds come from the private data (a ledger note says
so; a strict deployment would use public domain bounds).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.data import Data
from torch_geometric.nn import GCNConv

from graphleaks.data.graph import num_classes
from graphleaks.data.splits import MembershipSplit
from graphleaks.defenses.base import Defense
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.privacy.events import (
    ComposedEvent,
    PrivacyEvent,
    PureEpsilonEvent,
    RandomizedResponseEvent,
)
from graphleaks.privacy.ledger import GuaranteeStatus, PrivacyLedger, PrivacyUnit
from graphleaks.privacy.mechanisms import randomized_response, rr_matrix
from graphleaks.seeding import Rngs, derive_seed, torch_seeded

MBM_CONSTANT = 2.18

# (lr, weight_decay, dropout) from LPGNN hparams/lwd.csv, keyed by (ε_x finite, ε_y finite).
LWD: dict[str, dict[tuple[bool, bool], tuple[float, float, float]]] = {
    "cora": {(True, True): (.01, .001, .5), (True, False): (.01, .01, .75),
             (False, True): (.01, .0001, .75), (False, False): (.01, .01, .5)},
    "pubmed": {(True, True): (.01, .0001, .25), (True, False): (.01, .01, .75),
               (False, True): (.01, .0001, 0.0), (False, False): (.01, .001, .25)},
    "facebook": {(True, True): (.001, .01, .5), (True, False): (.01, .01, .75),
                 (False, True): (.01, .0001, .25), (False, False): (.001, .0001, .75)},
    "lastfm": {(True, True): (.001, .0001, .75), (True, False): (.01, .01, .75),
               (False, True): (.01, .0001, .75), (False, False): (.001, .01, .25)},
}
# Best (K_x, K_y) from LPGNN hparams/steps.csv for the budgets listed in defenses.md §2.7.
_INF = math.inf
STEPS: dict[str, dict[tuple[float, float], tuple[int, int]]] = {
    "cora": {(.01, 1): (8, 8), (.1, 1): (2, 4), (1, 1): (2, 8), (2, 1): (4, 8), (3, 1): (16, 8),
             (1, .5): (2, 8), (1, 2): (8, 4), (1, _INF): (16, 0), (_INF, 1): (0, 4)},
    "pubmed": {(.01, 1): (16, 2), (.1, 1): (8, 2), (1, 1): (4, 2), (2, 1): (4, 2),
               (3, 1): (4, 2), (1, .5): (0, 4), (1, 2): (16, 0), (1, _INF): (16, 0),
               (_INF, 1): (0, 2)},
    "facebook": {(.01, 1): (4, 2), (.1, 1): (2, 4), (1, 1): (2, 4), (2, 1): (2, 4),
                 (3, 1): (2, 4), (1, .5): (8, 4), (1, 2): (4, 2), (1, _INF): (8, 0),
                 (_INF, 1): (0, 2)},
    "lastfm": {(.01, 1): (4, 4), (.1, 1): (2, 4), (1, 1): (4, 4), (2, 1): (2, 4),
               (3, 1): (2, 4), (1, .5): (8, 8), (1, 2): (4, 4), (1, _INF): (8, 0),
               (_INF, 1): (0, 2)},
}


# --- the multi-bit mechanism ------------------------------------------------------------
def mbm_sampling_size(epsilon: float, dim: int) -> int:
    """LPGNN's optimal sampling size m* = max(1, min(d, ⌊ε/2.18⌋))."""
    if math.isinf(epsilon):
        return int(dim)
    return max(1, min(int(dim), int(math.floor(epsilon / MBM_CONSTANT))))


def multibit_bit_probability(
    x: torch.Tensor, epsilon: float, m: int, alpha: float = 0.0, beta: float = 1.0
) -> torch.Tensor:
    """P(x*_i = +1 | i sampled) = 1/(e^{ε/m}+1) + (x_i−α)/(β−α)·(e^{ε/m}−1)/(e^{ε/m}+1)."""
    e = math.exp(epsilon / m)
    t = ((x - alpha) / (beta - alpha)).clamp(0.0, 1.0)
    return 1.0 / (e + 1.0) + t * (e - 1.0) / (e + 1.0)


def multibit_encode(
    x: torch.Tensor, epsilon: float, generator: torch.Generator, *, m: int | None = None,
    alpha: float = 0.0, beta: float = 1.0,
) -> torch.Tensor:
    """The user-side multi-bit mechanism: values in {−1, 0, +1}, exactly m non-zeros per row.

    The m coordinates are chosen uniformly without replacement (top-m of uniform noise,
    data-independent); each sampled coordinate is an ε/m-LDP bit.
    """
    n, d = x.shape
    m = mbm_sampling_size(epsilon, d) if m is None else int(m)
    if not 1 <= m <= d:
        raise InvalidConfigError(f"The m parameter of multibit_encode must be in [1, {d}]. "
                                 f"Got {m!r} instead.")
    xd = x.detach().to(torch.float64).cpu()
    scores = torch.rand((n, d), generator=generator, dtype=torch.float64)
    sampled = torch.zeros((n, d), dtype=torch.bool)
    sampled.scatter_(1, scores.topk(m, dim=1).indices, True)
    p = multibit_bit_probability(xd, epsilon, m, alpha, beta)
    bits = torch.rand((n, d), generator=generator, dtype=torch.float64) < p
    out = torch.where(bits, 1.0, -1.0) * sampled
    return out.to(x.dtype)


def multibit_rectify(
    x_star: torch.Tensor, epsilon: float, m: int, alpha: float = 0.0, beta: float = 1.0
) -> torch.Tensor:
    """Server-side unbiased rectifier: d(β−α)/(2m)·(e^{ε/m}+1)/(e^{ε/m}−1)·x* + (α+β)/2."""
    d = x_star.shape[1]
    e = math.exp(epsilon / m)
    scale = d * (beta - alpha) / (2.0 * m) * (e + 1.0) / (e - 1.0)
    return x_star * scale + (alpha + beta) / 2.0


def multibit_mechanism(
    x: torch.Tensor, epsilon: float, generator: torch.Generator, *, m: int | None = None,
    alpha: float = 0.0, beta: float = 1.0,
) -> torch.Tensor:
    """Encode then rectify (ε-LDP per feature vector; unbiased for x ∈ [α, β]^d)."""
    mm = mbm_sampling_size(epsilon, x.shape[1]) if m is None else int(m)
    return multibit_rectify(multibit_encode(x, epsilon, generator, m=mm, alpha=alpha, beta=beta),
                            epsilon, mm, alpha, beta)


# --- propagation --------------------------------------------------------------------------
def sym_norm_weights(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Edge weights of Â = D^{-1/2} A D^{-1/2} without self-loops (in-degree at targets)."""
    ones = torch.ones(edge_index.shape[1], device=edge_index.device)
    deg = torch.zeros(num_nodes, device=edge_index.device).index_add_(0, edge_index[1], ones)
    inv = deg.pow(-0.5)
    inv[torch.isinf(inv)] = 0.0
    return inv[edge_index[0]] * inv[edge_index[1]]


def kprop(x: torch.Tensor, edge_index: torch.Tensor, steps: int) -> torch.Tensor:
    """``steps`` applications of Â (no weights, no non-linearity).

    A node without in-neighbours keeps its own row. Â has no self-loops, so applying it
    verbatim would replace such a node's features with zeros at the first step; on the
    inductive protocol's partitioned graphs about half the nodes are isolated, and the model
    then predicts one class for all of them (issue 15). The original code never met the
    case: its graphs (whole Cora, PubMed, ...) have no isolated nodes, where this is equal to
    plain ``Â^K x``.
    """
    if steps == 0 or edge_index.numel() == 0:
        return x
    w = sym_norm_weights(edge_index, x.shape[0]).to(x.dtype).unsqueeze(1)
    src, dst = edge_index[0], edge_index[1]
    deg = torch.zeros(x.shape[0], device=x.device).index_add_(
        0, dst, torch.ones(dst.numel(), device=x.device))
    isolated = (deg == 0).unsqueeze(1)
    for _ in range(steps):
        x = torch.where(isolated, x, torch.zeros_like(x).index_add_(0, dst, w * x[src]))
    return x


def mean_aggregate(h: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
    """Mean of in-neighbour rows (0 for nodes without in-edges)."""
    out = torch.zeros_like(h)
    if edge_index.numel() == 0:
        return out
    out.index_add_(0, edge_index[1], h[edge_index[0]])
    cnt = torch.zeros(h.shape[0], dtype=h.dtype, device=h.device)
    cnt.index_add_(0, edge_index[1], torch.ones(edge_index.shape[1], dtype=h.dtype,
                                                device=h.device))
    return out / cnt.clamp(min=1).unsqueeze(1)


class MeanSAGE(nn.Module):
    """GraphSAGE (mean, root weight, no normalisation) as ``lin_l(mean(x)) + lin_r(x)``.

    Equal to PyG's ``SAGEConv(aggr="mean", root_weight=True)`` but projects *before*
    aggregating (mean is linear), so high-dimensional inputs are never gathered per edge.
    """

    def __init__(self, in_dim: int, out_dim: int) -> None:
        super().__init__()
        self.lin_l = nn.Linear(in_dim, out_dim, bias=False)
        self.lin_r = nn.Linear(in_dim, out_dim, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_dim))

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """``mean_{u→v} W_l x_u + b + W_r x_v``."""
        return mean_aggregate(self.lin_l(x), edge_index) + self.bias + self.lin_r(x)


class LPGNNModel(nn.Module):
    """KProp(K_x) followed by a 2-layer GNN; ``forward`` takes the *privatised* features."""

    #: The hidden layer (after SELU), read by white-box attacks as a GNN's hidden layer.
    embedding_layers = ("hidden_out",)

    def __init__(self, in_dim: int, out_dim: int, *, x_steps: int, hidden: int = 16,
                 dropout: float = 0.5, arch: str = "sage") -> None:
        super().__init__()
        self.in_dim, self.out_dim, self.x_steps = int(in_dim), int(out_dim), int(x_steps)
        self.dropout = float(dropout)
        if arch == "sage":
            self.conv1: nn.Module = MeanSAGE(in_dim, hidden)
            self.conv2: nn.Module = MeanSAGE(hidden, out_dim)
        else:
            self.conv1 = GCNConv(in_dim, hidden)
            self.conv2 = GCNConv(hidden, out_dim)
        # parameter-free tap: bundles saved before it load unchanged
        self.hidden_out = nn.Identity()

    def gnn(self, xp: torch.Tensor, edge_index: torch.Tensor) -> list[torch.Tensor]:
        """The GNN on already-propagated features: ``[hidden, logits]``."""
        h = self.hidden_out(F.selu(self.conv1(xp, edge_index)))
        h_drop = F.dropout(h, self.dropout, self.training)
        return [h, self.conv2(h_drop, edge_index)]

    def embed(self, x: torch.Tensor, edge_index: torch.Tensor) -> list[torch.Tensor]:
        """``[hidden, logits]`` after KProp."""
        return self.gnn(kprop(x, edge_index, self.x_steps), edge_index)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """Logits."""
        return self.embed(x, edge_index)[-1]


# --- the defense ------------------------------------------------------------------------
@dataclass(frozen=True)
class LPGNNConfig:
    """Parameters of LPGNN. ``None`` means "the paper's value" (``defenses.md`` §2.7).

    Attributes:
        epsilon: Feature-LDP budget ε_x (``inf``: raw features).
        epsilon_y: Label-LDP budget ε_y (``inf``: clean labels, the default).
        x_steps: KProp steps K_x (None: steps.csv for the dataset and budget).
        y_steps: Label propagation steps K_y (None: steps.csv).
        dataset: Dataset whose hyperparameters apply: ``cora``, ``pubmed``, ``facebook`` or
            ``lastfm`` (None: the graph's ``name``). A graph without one, or a dataset
            without tuned values, gets a small seeded validation search over K_x, lr and
            weight decay (``SEARCH_*``; dropout and K_y stay Cora's), pinned into the config
            and noted in the ledger, unless one of those fields is set: then Cora's table
            fills the rest, with a note.
        arch: ``"sage"`` (the paper's main model) or ``"gcn"``.
        hidden: Hidden width.
        lr: Learning rate (None: lwd.csv).
        weight_decay: Weight decay (None: lwd.csv).
        dropout: Dropout (None: lwd.csv).
        epochs: Training epochs (the paper's 500).
    """

    epsilon: float = field(default=1.0, metadata={"range": (0, None), "closed": "neither"})
    epsilon_y: float = field(default=math.inf,
                             metadata={"range": (0, None), "closed": "neither"})
    x_steps: int | None = field(default=None, metadata={"range": (0, 64), "optional": True})
    y_steps: int | None = field(default=None, metadata={"range": (0, 64), "optional": True})
    dataset: str | None = None
    arch: str = field(default="sage", metadata={"choices": ("sage", "gcn")})
    hidden: int = field(default=16, metadata={"range": (1, 4096)})
    lr: float | None = field(default=None, metadata={"range": (0.0, 10.0), "closed": "right",
                                                     "optional": True})
    weight_decay: float | None = field(default=None,
                                       metadata={"range": (0.0, None), "optional": True})
    dropout: float | None = field(default=None, metadata={"range": (0.0, 1.0), "closed": "left",
                                                          "optional": True})
    epochs: int = field(default=500, metadata={"range": (1, 100_000)})


def _dataset_key(name: str) -> str | None:
    """The hyperparameter table's key for a dataset name, or None if it has no entry."""
    key = name.lower().replace("-", "").replace("_", "")
    if key.startswith("facebook"):
        return "facebook"
    if key.startswith("lastfm"):
        return "lastfm"
    return key if key in LWD else None


def hparams_dataset(config: LPGNNConfig, graph_name: str | None = None) -> tuple[str, str, str]:
    """Which dataset's hyperparameters apply: ``(key, source, note)``.

    ``source`` is ``config`` (``LPGNNConfig.dataset``), ``graph`` (the loaded graph's name)
    or ``fallback`` (Cora's, the paper's main dataset, for a user graph without a name or a
    dataset the paper did not tune); ``note`` says so for the ledger ("" when not a fallback).

    Raises:
        InvalidConfigError: If ``config.dataset`` names a dataset without tuned values.
    """
    if config.dataset is not None:
        key = _dataset_key(config.dataset)
        if key is None:
            raise InvalidConfigError(
                f"The dataset parameter of LPGNN must be one of {', '.join(sorted(LWD))} (the "
                f"datasets with tuned hyperparameters). Got {config.dataset!r} instead; leave it "
                "unset to use the graph's own name")
        return key, "config", ""
    if graph_name is None:
        return "cora", "fallback", (
            "the graph carries no dataset name (a user graph): LPGNN's per-dataset "
            "hyperparameters (K_x, K_y, lr, wd, dropout) fell back to Cora's; set "
            "lpgnn.dataset to choose another table")
    key = _dataset_key(graph_name)
    if key is None:
        return "cora", "fallback", (
            f"LPGNN has no tuned hyperparameters for dataset {graph_name!r}: fell back to "
            "Cora's (K_x, K_y, lr, wd, dropout); set lpgnn.dataset to choose another table")
    return key, "graph", ""


def resolve_hparams(config: LPGNNConfig, graph_name: str | None = None) -> dict[str, Any]:
    """The effective (K_x, K_y, lr, wd, dropout) for a config, filling paper defaults.

    Also returns which dataset's table was used (``dataset``), where that choice came from
    (``dataset_source``) and, for a fallback, the note the ledger carries (``dataset_note``).
    """
    ds, source, note = hparams_dataset(config, graph_name)
    ex, ey = config.epsilon, config.epsilon_y
    lr, wd, dp = LWD[ds][(math.isfinite(ex), math.isfinite(ey))]
    table = STEPS[ds]
    same_y = [k for k in table if (k[1] == ey) or (math.isfinite(k[1]) and math.isfinite(ey)
                                                   and k[1] == 1)]
    if not math.isfinite(ex):
        kx_ky = table[(_INF, 1)] if math.isfinite(ey) else (0, 0)
    elif (ex, ey) in table:
        kx_ky = table[(ex, ey)]
    else:
        cands = [k for k in same_y if math.isfinite(k[0])]
        near = min(cands, key=lambda k: (abs(math.log(k[0]) - math.log(ex)), k[0]))
        kx_ky = table[near]
    kx, ky = kx_ky
    if not math.isfinite(ey):
        ky = 0
    return {
        "dataset": ds,
        "dataset_source": source,
        "dataset_note": note,
        "x_steps": config.x_steps if config.x_steps is not None else kx,
        "y_steps": config.y_steps if config.y_steps is not None else ky,
        "lr": config.lr if config.lr is not None else lr,
        "weight_decay": config.weight_decay if config.weight_decay is not None else wd,
        "dropout": config.dropout if config.dropout is not None else dp,
    }


def minmax_scale(x: torch.Tensor) -> torch.Tensor:
    """Per-column min–max scaling to [0, 1]; constant columns become 0."""
    lo = x.min(0).values
    span = x.max(0).values - lo
    span = torch.where(span > 0, span, torch.ones_like(span))
    return ((x - lo) / span).clamp(0.0, 1.0)


class LPGNN(Defense):
    """Locally private GNN: multi-bit feature perturbation + KProp (+ RR/Drop labels).

    Example:
        >>> from graphleaks.data import tiny_graph, MembershipSplit
        >>> g = tiny_graph()
        >>> t = LPGNN(epsilon=1.0, epochs=5).fit(
        ...     g, MembershipSplit.draw(g.num_nodes, seed=0), model=ArchitectureSpec(), seed=0)
        >>> t.ledger.unit.value, t.ledger.components["epsilon_x"]
        ('node_feature', 1.0)
    """

    name = "lpgnn"
    privacy_unit = PrivacyUnit.NODE_FEATURE
    Config = LPGNNConfig

    @classmethod
    def build_model(
        cls, in_dim: int, out_dim: int, spec: ArchitectureSpec, config: dict[str, Any]
    ) -> nn.Module:
        """An untrained LPGNN module of the saved configuration."""
        cfg = LPGNNConfig(**config)
        hp = resolve_hparams(cfg)
        return LPGNNModel(in_dim, out_dim, x_steps=hp["x_steps"], hidden=cfg.hidden,
                          dropout=hp["dropout"], arch=cfg.arch)

    def _fit(
        self, graph: Data, split: MembershipSplit, spec: ArchitectureSpec, seed: int
    ) -> TrainedTarget:
        cfg = self.config
        graph_name = getattr(graph, "name", None)
        graph_name = graph_name if isinstance(graph_name, str) else None
        hp = resolve_hparams(cfg, graph_name)
        search = (hp["dataset_source"] == "fallback"
                  and all(getattr(cfg, f) is None for f in _SEARCHED))
        if cfg.dataset is None:
            # bundles rebuild the model from defense_config, and the manifest must say which
            # table was used: pin it there (the source and any fallback note go to training
            # and to the ledger)
            object.__setattr__(self, "config", dataclasses.replace(cfg, dataset=hp["dataset"]))
            cfg = self.config
        dev = graph.x.device
        rngs = Rngs.from_seed(seed, "lpgnn")
        # 1. features: min–max to [0,1], then MBM (every node, test nodes included)
        x01 = minmax_scale(graph.x.to(torch.float32).cpu())
        if math.isfinite(cfg.epsilon):
            m = mbm_sampling_size(cfg.epsilon, x01.shape[1])
            xprime = multibit_mechanism(x01, cfg.epsilon, rngs.child("mbm").torch, m=m)
        else:
            m = x01.shape[1]
            xprime = x01
        xprime = xprime.to(dev)
        edges = split.training_edges(graph.edge_index)
        k = num_classes(graph)
        with torch_seeded(derive_seed(seed, "init")):
            model = LPGNNModel(graph.num_features, k, x_steps=hp["x_steps"], hidden=cfg.hidden,
                               dropout=hp["dropout"], arch=cfg.arch).to(dev)
        # 2. labels: k-RR on train ∪ val, Drop (propagation + forward correction)
        y = graph.y
        train = torch.as_tensor(split.train, dtype=torch.long, device=dev)
        val = torch.as_tensor(split.val, dtype=torch.long, device=dev)
        labelled = torch.cat([train, val])
        y_noisy = y.clone()
        if math.isfinite(cfg.epsilon_y):
            y_noisy[labelled] = randomized_response(
                y[labelled].cpu(), k, cfg.epsilon_y, rngs.child("rr").torch).to(dev)
            T = torch.as_tensor(rr_matrix(k, cfg.epsilon_y), dtype=torch.float32, device=dev)
        else:
            T = torch.eye(k, device=dev)
        keep_p = float(T[0, 0])
        ky = int(hp["y_steps"])
        y0 = torch.zeros((graph.num_nodes, k), device=dev)
        y0[labelled] = F.one_hot(y_noisy[labelled], k).float()
        y_tilde = torch.softmax(kprop(y0, edges, ky), 1) if ky > 0 else y0
        targets = y_tilde.argmax(1)
        # 3. train on cached KProp features
        note = hp["dataset_note"]
        if search:
            # A graph the paper did not tune: Cora's table trained Amazon Photo to best epoch
            # 1 near the majority baseline, so a small seeded search on the validation nodes
            # picks (K_x, lr, weight decay) instead; the choice is pinned in the config so a
            # bundle rebuilds the same model.
            hp, note = _search_hparams(hp, graph, xprime, edges, T, ky, targets, y_noisy,
                                       train, val, keep_p, cfg, k, seed)
            object.__setattr__(self, "config", dataclasses.replace(
                cfg, x_steps=hp["x_steps"], lr=hp["lr"], weight_decay=hp["weight_decay"],
                dropout=hp["dropout"]))
            cfg = self.config
            with torch_seeded(derive_seed(seed, "init")):
                model = LPGNNModel(graph.num_features, k, x_steps=hp["x_steps"],
                                   hidden=cfg.hidden, dropout=hp["dropout"],
                                   arch=cfg.arch).to(dev)
        xbar = kprop(xprime, edges, hp["x_steps"])
        log = _train(model, xbar, edges, T, ky, targets, y_noisy, train, val, keep_p,
                     lr=hp["lr"], weight_decay=hp["weight_decay"], epochs=cfg.epochs,
                     seed=derive_seed(seed, "train"))
        ledger = self._ledger(cfg, k, m, x01.shape[1], note)
        # the target card names LPGNN's architecture, not the unused ArchitectureSpec
        log["architecture"] = {"arch": f"lpgnn-{cfg.arch}", "x_steps": hp["x_steps"],
                               "hidden": [cfg.hidden], "dropout": hp["dropout"],
                               "epochs": cfg.epochs, "lr": hp["lr"],
                               "weight_decay": hp["weight_decay"]}
        return TrainedTarget(model=model, spec=spec, graph=graph, split=split, seed=seed,
                             ledger=ledger, features=xprime.detach(),
                             training={**log, **{k_: v for k_, v in hp.items()
                                                 if k_ != "dataset_note"}, "m": m})

    @staticmethod
    def _ledger(cfg: LPGNNConfig, k: int, m: int, d: int, note: str = "") -> PrivacyLedger:
        events: list[PrivacyEvent] = []
        components = {"epsilon_x": cfg.epsilon, "epsilon_y": cfg.epsilon_y, "mbm_m": float(m)}
        if math.isfinite(cfg.epsilon):
            events.append(PureEpsilonEvent(cfg.epsilon))
        if math.isfinite(cfg.epsilon_y):
            events.append(RandomizedResponseEvent(cfg.epsilon_y, k))
        if not events:
            led = PrivacyLedger.non_private()
            return dataclasses.replace(led, notes=led.notes + ((note,) if note else ()))
        unit = (PrivacyUnit.NODE_FEATURE_AND_LABEL if math.isfinite(cfg.epsilon_y)
                else PrivacyUnit.NODE_FEATURE if math.isfinite(cfg.epsilon)
                else PrivacyUnit.NODE_LABEL)
        event = events[0] if len(events) == 1 else ComposedEvent(tuple(events))
        notes = [f"local DP: multi-bit mechanism, eps_x={cfg.epsilon:g}, m={m} of d={d} "
                 "coordinates per node; edges are public under LPGNN's threat model",
                 "features min-max scaled with column bounds computed from the data "
                 "(as in the original code); a strict deployment uses public bounds",
                 f"hyperparameters (K_x, K_y, lr, wd, dropout) are the paper's for "
                 f"{cfg.dataset}, tuned without privacy accounting"]
        if note:
            notes.append(note)
        if math.isfinite(cfg.epsilon_y):
            notes.append(f"labels of train and val nodes: {k}-ary randomized response, "
                         f"eps_y={cfg.epsilon_y:g}; model selection uses noisy val labels")
        return PrivacyLedger.from_event(unit, event, 0.0, status=GuaranteeStatus.VERIFIED,
                                        notes=tuple(notes), components=components)


def _train(
    model: LPGNNModel, xbar: torch.Tensor, edges: torch.Tensor, T: torch.Tensor, ky: int,
    targets: torch.Tensor, y_noisy: torch.Tensor, train: torch.Tensor, val: torch.Tensor,
    keep_p: float, *, lr: float, weight_decay: float, epochs: int, seed: int,
) -> dict[str, Any]:
    """Adam full batch with LPGNN's selection rule (``defenses.md`` §2.4)."""
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)

    def corrected(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        p = torch.softmax(logits, 1)
        p_noisy = p @ T
        p_tilde = torch.softmax(kprop(p_noisy, edges, ky), 1) if ky > 0 else p_noisy
        return p_noisy, p_tilde

    best = {"val_loss": math.inf, "val_acc": -1.0, "train_acc": -1.0}
    best_epoch, best_state = 0, None
    with torch_seeded(seed):
        for epoch in range(epochs + 1):
            # One first-layer pass serves both the evaluation of the current weights (no
            # dropout) and the training step (dropout acts after layer 1 only).
            model.train()
            h = F.selu(model.conv1(xbar, edges))
            with torch.no_grad():
                logits = model.conv2(h.detach(), edges)
                p_noisy, _ = corrected(logits)
                pred = logits.argmax(1)
                train_acc = (pred[train] == y_noisy[train]).float().mean().item()
                if len(val):
                    val_loss = F.nll_loss(torch.log(p_noisy[val] + 1e-9), y_noisy[val]).item()
                    val_acc = (pred[val] == y_noisy[val]).float().mean().item()
                else:
                    val_loss, val_acc = -float(epoch), 0.0
            if epoch > 0 and (
                    val_loss < best["val_loss"] and best["val_acc"] < val_acc <= keep_p + 1e-9
                    and best["train_acc"] < train_acc <= 1.05 * keep_p + 1e-9):
                best = {"val_loss": val_loss, "val_acc": val_acc, "train_acc": train_acc}
                best_epoch = epoch
                best_state = {k: v.clone() for k, v in model.state_dict().items()}
            if epoch == epochs:
                break
            opt.zero_grad()
            logits = model.conv2(F.dropout(h, model.dropout, True), edges)
            _, p_tilde = corrected(logits)
            loss = F.nll_loss(torch.log(p_tilde[train] + 1e-9), targets[train])
            loss.backward()
            opt.step()
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return {"best_epoch": best_epoch, "epochs_run": epochs,
            "best_val_accuracy": max(best["val_acc"], 0.0)}


#: Hyperparameters the validation search sets (only when the user set none of them).
_SEARCHED = ("x_steps", "lr", "weight_decay", "dropout")
#: The search grid: K_x, learning rate, weight decay (dropout stays the table's).
SEARCH_X_STEPS: tuple[int, ...] = (2, 8, 16)
SEARCH_LR: tuple[float, ...] = (0.01, 0.001)
SEARCH_WEIGHT_DECAY: tuple[float, ...] = (0.0001, 0.01)


def _search_hparams(
    hp: dict[str, Any], graph: Data, xprime: torch.Tensor, edges: torch.Tensor,
    T: torch.Tensor, ky: int, targets: torch.Tensor, y_noisy: torch.Tensor,
    train: torch.Tensor, val: torch.Tensor, keep_p: float, cfg: LPGNNConfig, k: int,
    seed: int,
) -> tuple[dict[str, Any], str]:
    """The grid point with the best validation accuracy (ties: the earlier point), and the
    ledger note that says so. Each point trains one model for ``cfg.epochs`` with seeds
    derived from ``seed``; the validation labels are the (noisy, if ε_y is finite) ones the
    model selection already reads."""
    points = [(kx, lr, wd) for kx in SEARCH_X_STEPS for lr in SEARCH_LR
              for wd in SEARCH_WEIGHT_DECAY]
    best: tuple[float, dict[str, Any]] | None = None
    xbars: dict[int, torch.Tensor] = {}
    for i, (kx, lr, wd) in enumerate(points):
        if kx not in xbars:
            xbars[kx] = kprop(xprime, edges, kx)
        with torch_seeded(derive_seed(seed, "search", i)):
            model = LPGNNModel(graph.num_features, k, x_steps=kx, hidden=cfg.hidden,
                               dropout=hp["dropout"], arch=cfg.arch).to(xprime.device)
        log = _train(model, xbars[kx], edges, T, ky, targets, y_noisy, train, val, keep_p,
                     lr=lr, weight_decay=wd, epochs=cfg.epochs,
                     seed=derive_seed(seed, "search", i, "train"))
        acc = float(log["best_val_accuracy"])
        if best is None or acc > best[0]:
            best = (acc, {"x_steps": kx, "lr": lr, "weight_decay": wd})
    assert best is not None  # the grid is not empty
    chosen = {**hp, **best[1], "dataset_source": "search"}
    grid = "; ".join(f"{n} in {{{', '.join(f'{v:g}' for v in vals)}}}" for n, vals in (
        ("K_x", SEARCH_X_STEPS), ("lr", SEARCH_LR), ("weight decay", SEARCH_WEIGHT_DECAY)))
    note = (f"the paper tuned no hyperparameters for this graph: a seeded validation search "
            f"({grid}; {len(points)} trainings, "
            f"dropout {hp['dropout']:g}) chose K_x={chosen['x_steps']}, lr={chosen['lr']:g}, "
            f"weight decay={chosen['weight_decay']:g} (validation accuracy {best[0]:.3f}); "
            "the search reads validation labels without privacy accounting, as the paper's "
            "tuning did")
    return chosen, note


__all__ = [
    "LPGNN", "LPGNNConfig", "LPGNNModel", "kprop", "mbm_sampling_size", "multibit_bit_probability",
    "multibit_encode", "multibit_mechanism", "multibit_rectify", "resolve_hparams",
]
