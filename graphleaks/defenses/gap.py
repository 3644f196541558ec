"""GAP: aggregation perturbation (Sajadmanesh et al., USENIX Security 2023), edge and node DP.

Pipeline (``defenses.md`` §3.2, §3.4b):

1. **Encoder module**: MLP(d→h→…→h) → L2-normalise; pre-trained on the training nodes with a
   throw-away head (BN → dropout → SELU → Linear). ``z = normalize(mlp(x))``.
2. **Aggregation perturbation (PMA)**: ``h_0 = z``; for k = 1..K:
   ``h_k = normalize(Σ_{(u→v)} h_{k−1}[u] + N(0, σ²))`` (sum aggregation at the target
   node ``v``), computed once on the training graph and cached.
3. **Classification module**: one Linear per hop → concatenate → L2-normalise → BN →
   dropout → SELU → Linear to classes, trained on the cached aggregates.

Privacy (``defenses.md`` §3.1, §3.3, §3.4):

* ``gap_edp`` (unit EDGE): only PMA touches edges. Each hop releases a Gaussian sum of unit
  vectors; removing one *directed* adjacency entry changes one row by one unit vector (Δ = 1,
  the paper's unit), removing one *undirected* edge {u, v} changes two rows (Δ = √2, our
  default, ``edge_unit="undirected"``). σ per hop is calibrated for K compositions with the
  exact analytic-Gaussian accountant (it reproduces the paper's σ table).
* ``gap_ndp`` (unit NODE): out-degrees are bounded to D by uniform sampling without
  replacement (each node then feeds at most D aggregates: Δ = √D per hop, noise std σ·√D),
  and the encoder and classifier are trained with DP-SGD (Opacus; Poisson sampling, clip C,
  noise multiplier σ). One σ is shared by the three stages and the composition
  ``T_enc·SGM + K·Gaussian + T_cls·SGM`` is accounted with RDP. There is no validation-based
  checkpoint selection (the last epoch is kept), because val nodes are private units too.
  The guarantee is recorded as the authors' claim (see the S&P'24 critique in §3.11).

Serving is a fixed release (issue 15): the model keeps the aggregates it was trained on (the
training release) and answers every query on the training graph from them, also after a
bundle round trip (the noise is re-drawn bit for bit from ``noise_seed`` and the digest of the
encoder output and edge list). Any *other* (features, graph) pair needs a new noisy
aggregation of the private edges, i.e. a new release, seeded by that input's digest (so
differencing two queries cannot cancel the noise, and repeating one is free). Each distinct
new release is charged to the served model's :class:`ReleaseGuard`: the report gives the
API's ε after n releases (training ∘ n releases, same accountant), and with
``query_budget`` set a release that would take the API's ε past it is refused
(:class:`~graphleaks.errors.CapabilityError`).

Noise is research-grade (float64 Box–Muller from torch), not side-channel hardened.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.data import Data

from graphleaks.data.graph import num_classes
from graphleaks.data.splits import MembershipSplit
from graphleaks.defenses.base import Defense
from graphleaks.errors import CapabilityError, InvalidConfigError
from graphleaks.models.dp_sgd import DPSGDPlan, train_dp_sgd, train_full_batch
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.privacy.accounting import api_epsilon
from graphleaks.privacy.calibration import calibrate_gaussian_sigma, calibrate_noise_multiplier
from graphleaks.privacy.events import (
    ComposedEvent,
    GaussianEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    SelfComposedEvent,
    event_from_dict,
)
from graphleaks.privacy.ledger import GuaranteeStatus, PrivacyLedger, PrivacyUnit
from graphleaks.privacy.mechanisms import gaussian_noise
from graphleaks.seeding import derive_seed, torch_seeded

_POS = {"range": (0, None), "closed": "neither"}
_DELTA = {"range": (0.0, 1.0), "closed": "neither", "optional": True}
_BUDGET = {"range": (0.0, None), "closed": "neither", "optional": True}


def _digest(*tensors: torch.Tensor) -> int:
    h = hashlib.sha256()
    for t in tensors:
        arr = t.detach().cpu().contiguous().numpy()
        h.update(str(arr.shape).encode())
        h.update(arr.tobytes())
    return int.from_bytes(h.digest()[:8], "little") & ((1 << 63) - 1)


def sum_aggregate(h: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
    """``out[v] = Σ_{(u→v) ∈ edges} h[u]`` (sum over in-edges, i.e. ``Aᵀ h``)."""
    out = torch.zeros_like(h)
    if edge_index.numel():
        out.index_add_(0, edge_index[1], h[edge_index[0]])
    return out


def bound_out_degree(
    edge_index: torch.Tensor, max_degree: int, generator: torch.Generator
) -> torch.Tensor:
    """Keep at most ``max_degree`` out-edges per source node, uniformly without replacement.

    Afterwards every node feeds at most ``max_degree`` aggregates (``defenses.md`` §3.4); the
    result is directed even if the input was symmetric.
    """
    if edge_index.numel() == 0:
        return edge_index
    src = edge_index[0].cpu()
    key = torch.rand(src.numel(), generator=generator, dtype=torch.float64)
    order = torch.argsort(key)
    order = order[torch.argsort(src[order], stable=True)]
    s = src[order]
    first = torch.ones_like(s, dtype=torch.bool)
    first[1:] = s[1:] != s[:-1]
    pos = torch.arange(s.numel())
    start = torch.cummax(torch.where(first, pos, torch.zeros_like(pos)), 0).values
    keep = order[(pos - start) < max_degree]
    keep = torch.sort(keep).values
    return edge_index[:, keep.to(edge_index.device)]


class ReleaseGuard:
    """Counts the fresh releases a served GAP model makes and enforces its query budget.

    The accounting itself is the pure :func:`~graphleaks.privacy.accounting.api_epsilon`;
    this object only holds the count (distinct inputs; a repeated query is free).

    Args:
        training: The training event (the ledger's record).
        release: The event of one fresh release (K noisy hops).
        delta: The ledger's δ.
        accountant: The ledger's accountant.
        budget: Largest API ε allowed, or None to accumulate without limit.
    """

    def __init__(self, training: PrivacyEvent, release: PrivacyEvent, delta: float, *,
                 accountant: str, budget: float | None) -> None:
        self.training, self.release, self.delta = training, release, float(delta)
        self.accountant, self.budget = accountant, budget
        self.seen: set[int] = set()

    @property
    def releases(self) -> int:
        """Fresh releases served so far."""
        return len(self.seen)

    def epsilon_after(self, releases: int) -> float:
        """The API's ε after ``releases`` fresh releases."""
        return api_epsilon(self.training, self.release, releases, self.delta,
                           accountant=self.accountant)  # type: ignore[arg-type]

    def charge(self, digest: int) -> None:
        """Charge the release of input ``digest`` (free if already served).

        Raises:
            CapabilityError: If the release would take the API's ε past the budget.
        """
        if digest in self.seen:
            return
        if self.budget is not None:
            eps = self.epsilon_after(self.releases + 1)
            if eps > self.budget * (1 + 1e-12):
                raise CapabilityError(
                    f"query refused: it needs a new release of the private graph, which would "
                    f"take the served model's epsilon to {eps:.4g}, past its query_budget "
                    f"{self.budget:g} ({self.releases} fresh releases served); query the "
                    "training graph, or raise the defense's query_budget")
        self.seen.add(digest)

    def summary(self) -> dict[str, Any]:
        """What the report records: releases served, the API's ε, the budget."""
        return {"fresh_releases": self.releases,
                "epsilon_after_queries": self.epsilon_after(self.releases),
                "query_budget": self.budget,
                "policy": ("refused past query_budget" if self.budget is not None
                           else "accumulated per release")}


class GAPModel(nn.Module):
    """Encoder, noisy aggregation and per-hop classifier in one module.

    ``forward(x, edge_index)`` runs all three (see the module docstring for how the noise is
    seeded). ``embed`` returns ``[z, hidden, logits]``; ``hidden`` (the layer that reads the
    graph, through the noisy aggregates) is the declared embedding layer white-box attacks
    read.
    """

    #: Read by the target-model protocol with a forward hook (layer 0 of ``embeddings``).
    embedding_layers = ("hidden_out",)

    def __init__(
        self, in_dim: int, out_dim: int, *, hidden: int = 16, encoder_layers: int = 2,
        hops: int = 2, batch_norm: bool = True, dropout: float = 0.0,
        max_degree: int | None = None,
    ) -> None:
        super().__init__()
        self.in_dim, self.out_dim, self.hops = int(in_dim), int(out_dim), int(hops)
        self.max_degree = max_degree
        layers: list[nn.Module] = []
        width = in_dim
        for i in range(encoder_layers):
            layers.append(nn.Linear(width, hidden))
            if i < encoder_layers - 1:
                layers.append(nn.SELU())
            width = hidden
        self.encoder = nn.Sequential(*layers)
        self.encoder_bn: nn.Module = nn.BatchNorm1d(hidden) if batch_norm else nn.Identity()
        self.encoder_head = nn.Linear(hidden, out_dim)
        self.base = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(hops + 1))
        self.bn: nn.Module = (nn.BatchNorm1d(hidden * (hops + 1)) if batch_norm
                              else nn.Identity())
        self.head = nn.Linear(hidden * (hops + 1), out_dim)
        self.dropout = float(dropout)
        # Parameter-free tap on the classifier's hidden layer (the noisy aggregates after
        # the per-hop layers), so white-box attacks read it as they read a GNN's hidden
        # layers; it adds no state, so bundles saved before it load unchanged.
        self.hidden_out = nn.Identity()
        self.sigma: torch.Tensor
        self.noise_seed: torch.Tensor
        self.register_buffer("sigma", torch.zeros((), dtype=torch.float64))
        self.register_buffer("noise_seed", torch.zeros((), dtype=torch.int64))
        self.release_guard: ReleaseGuard | None = None
        self._release: tuple[int, torch.Tensor] | None = None  # (digest, training release)

    # --- stages -----------------------------------------------------------------------
    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """``z = normalize(mlp(x))``."""
        return F.normalize(self.encoder(x), dim=-1)

    def encoder_logits(self, x: torch.Tensor) -> torch.Tensor:
        """Pre-training path of the encoder module."""
        h = self.encoder_bn(self.encode(x))
        h = F.selu(F.dropout(h, self.dropout, self.training))
        return self.encoder_head(h)

    @torch.no_grad()
    def aggregate(self, z: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """A fresh release: noisy aggregates ``[h_0, …, h_K]`` stacked to (N, K+1, hidden).

        Charged to :attr:`release_guard` (when set) before its noise is drawn; the noise is
        seeded by the digest of ``(z, edge_index)``, so a repeated input gets the same noise
        and is not charged twice.
        """
        digest = _digest(z, edge_index)
        if self.release_guard is not None:
            self.release_guard.charge(digest)
        return self._draw(z, edge_index, digest)

    @torch.no_grad()
    def fix_release(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """Draw (or re-draw, bit for bit) the training release and serve it from now on.

        The release is kept with the digest of the *inputs* ``(x, edge_index)``, which does
        not depend on the device the encoder ran on, so a target trained on a GPU and served
        on the CPU still answers its training graph from the training release.
        """
        z = self.encode(x)
        agg = self._draw(z, edge_index, _digest(z, edge_index))
        self._release = (_digest(x, edge_index), agg)
        return agg

    def _draw(self, z: torch.Tensor, edge_index: torch.Tensor, digest: int) -> torch.Tensor:
        seed = derive_seed(int(self.noise_seed), "pma", digest)
        gen = torch.Generator().manual_seed(seed)
        if self.max_degree is not None:
            edge_index = bound_out_degree(edge_index, self.max_degree, gen)
        sigma = float(self.sigma)
        hs = [z]
        h = z
        for _ in range(self.hops):
            h = sum_aggregate(h, edge_index)
            if sigma > 0:
                h = h + gaussian_noise(tuple(h.shape), sigma, gen, dtype=h.dtype).to(h.device)
            h = F.normalize(h, dim=-1)
            hs.append(h)
        return torch.stack(hs, dim=1)

    def classify_hidden(self, agg: torch.Tensor) -> torch.Tensor:
        """Per-hop Linear → concat → normalize → BN → dropout → SELU."""
        parts = [lin(agg[:, k]) for k, lin in enumerate(self.base)]
        h = F.normalize(torch.cat(parts, dim=-1), dim=-1)
        h = self.bn(h)
        return self.hidden_out(F.selu(F.dropout(h, self.dropout, self.training)))

    def classify(self, agg: torch.Tensor) -> torch.Tensor:
        """Logits from cached aggregates."""
        return self.head(self.classify_hidden(agg))

    # --- model API --------------------------------------------------------------------
    def embed(self, x: torch.Tensor, edge_index: torch.Tensor) -> list[torch.Tensor]:
        """``[z, hidden, logits]``: the training release for the training inputs, else fresh."""
        z = self.encode(x)
        if self._release is not None and self._release[0] == _digest(x, edge_index):
            agg = self._release[1].to(z.device)
        else:
            agg = self.aggregate(z.detach(), edge_index)
        hidden = self.classify_hidden(agg)
        return [z, hidden, self.head(hidden)]

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """Logits (see :meth:`embed` for which release answers)."""
        return self.embed(x, edge_index)[-1]


class _EncoderNet(nn.Module):
    """The encoder module's trainable part (shares parameters with the GAP model)."""

    _model: GAPModel

    def __init__(self, model: GAPModel) -> None:
        super().__init__()
        self.__dict__["_model"] = model  # a plain reference, not a submodule
        self.encoder, self.encoder_bn, self.encoder_head = (
            model.encoder, model.encoder_bn, model.encoder_head)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._model.training = self.training
        return self._model.encoder_logits(x)


class _ClassifierNet(nn.Module):
    """The classification module's trainable part (shares parameters with the GAP model)."""

    _model: GAPModel

    def __init__(self, model: GAPModel) -> None:
        super().__init__()
        self.__dict__["_model"] = model
        self.base, self.bn, self.head = model.base, model.bn, model.head

    def forward(self, agg: torch.Tensor) -> torch.Tensor:
        self._model.training = self.training
        return self._model.classify(agg)


def _auto_delta(num_units: int) -> float:
    """GAP's δ='auto': 10^{−len(str(n))} (< 1/n)."""
    return 10.0 ** (-len(str(max(int(num_units), 1))))


def _check_delta(delta: float, num_units: int, unit: str) -> None:
    if num_units > 0 and delta > 1.0 / num_units:
        warnings.warn(f"delta={delta:g} exceeds 1/{num_units} (1 / the number of protected "
                      f"{unit}s); the guarantee permits leaking some {unit} outright",
                      UserWarning, stacklevel=4)


class _GAPBase(Defense):
    """Shared GAP training; subclasses set the privacy unit and accounting."""

    dp_training: bool = False

    @classmethod
    def _make_model(cls, in_dim: int, out_dim: int, config: dict[str, Any]) -> GAPModel:
        return GAPModel(
            in_dim, out_dim, hidden=int(config.get("hidden", 16)),
            encoder_layers=int(config.get("encoder_layers", 2)), hops=int(config.get("hops", 2)),
            batch_norm=not cls.dp_training, dropout=float(config.get("dropout", 0.0)),
            max_degree=int(config["max_degree"]) if "max_degree" in config else None,
        )

    @classmethod
    def build_model(
        cls, in_dim: int, out_dim: int, spec: ArchitectureSpec, config: dict[str, Any]
    ) -> nn.Module:
        """An untrained GAP module (σ and the noise seed are buffers, loaded with weights)."""
        return cls._make_model(in_dim, out_dim, config)

    def _fit(
        self, graph: Data, split: MembershipSplit, spec: ArchitectureSpec, seed: int
    ) -> TrainedTarget:
        cfg = self.config
        edges = split.training_edges(graph.edge_index)
        with torch_seeded(derive_seed(seed, "init")):
            model = self._make_model(graph.num_features, num_classes(graph),
                                     dataclasses.asdict(cfg)).to(graph.x.device)
        model.noise_seed.fill_(derive_seed(seed, "pma-noise"))
        sigma, ledger, plan = self._calibrate(graph, split, edges)
        model.sigma.fill_(sigma)
        dev = graph.x.device
        y = graph.y
        train = torch.as_tensor(split.train, dtype=torch.long, device=dev)
        val = torch.as_tensor(split.val, dtype=torch.long, device=dev)
        enc_net, cls_net = _EncoderNet(model), _ClassifierNet(model)
        sgd_plans: dict[str, DPSGDPlan] = plan.pop("sgd_plans", {})
        training: dict[str, Any] = {"sigma": sigma, **plan}
        # 1. encoder module
        if self.dp_training:
            ran = train_dp_sgd(
                enc_net, graph.x, y, train, plan=sgd_plans["encoder"], lr=cfg.lr,
                noise_multiplier=plan["noise_multiplier"], max_grad_norm=cfg.max_grad_norm,
                seed=derive_seed(seed, "encoder"))
            training["encoder_steps"], training["encoder_sample_rate"] = ran.steps, ran.rate
        else:
            training["encoder_best_epoch"] = train_full_batch(
                enc_net, graph.x, y, train, val, epochs=cfg.encoder_epochs, lr=cfg.lr,
                weight_decay=cfg.weight_decay, seed=derive_seed(seed, "encoder"),
                select_on_val=True)
        model.eval()
        # 2. aggregation perturbation, once, on the training graph: the served release
        with torch.no_grad():
            agg = model.fix_release(graph.x, edges)
        # 3. classification module on the cached aggregates
        if self.dp_training:
            ran = train_dp_sgd(
                cls_net, agg, y, train, plan=sgd_plans["classifier"], lr=cfg.lr,
                noise_multiplier=plan["noise_multiplier"], max_grad_norm=cfg.max_grad_norm,
                seed=derive_seed(seed, "classifier"))
            training["classifier_steps"], training["classifier_sample_rate"] = ran.steps, ran.rate
        else:
            training["classifier_best_epoch"] = train_full_batch(
                cls_net, agg, y, train, val, epochs=cfg.epochs, lr=cfg.lr,
                weight_decay=cfg.weight_decay, seed=derive_seed(seed, "classifier"),
                select_on_val=True)
        model.eval()
        model.release_guard = self._guard(ledger, float(sigma), cfg)
        # the target card names GAP's architecture, not the ArchitectureSpec it does not train
        training["architecture"] = {"arch": self.name, "hidden": [cfg.hidden],
                                    "encoder_layers": cfg.encoder_layers, "hops": cfg.hops,
                                    "encoder_epochs": cfg.encoder_epochs, "epochs": cfg.epochs}
        return TrainedTarget(model=model, spec=spec, graph=graph, split=split, seed=seed,
                             ledger=ledger, training=training)

    def _release_event(self, sigma: float, config: Any) -> PrivacyEvent:
        """The event of one fresh release: K Gaussian hops at the served σ."""
        raise NotImplementedError

    def _guard(self, ledger: PrivacyLedger, sigma: float, config: Any) -> ReleaseGuard | None:
        if not ledger.is_private or not ledger.events:
            return None
        acct = "analytic" if "analytic" in ledger.accountant else "rdp"
        return ReleaseGuard(event_from_dict(ledger.events[0]),
                            self._release_event(sigma, config), ledger.delta,
                            accountant=acct, budget=getattr(config, "query_budget", None))

    @classmethod
    def on_load(cls, target: TrainedTarget) -> None:
        """Re-arm a loaded model: re-draw its training release and restore its guard."""
        model = target.model
        if not isinstance(model, GAPModel):
            return
        config = cls.Config(**{k: v for k, v in target.defense_config.items()
                               if k in {f.name for f in dataclasses.fields(cls.Config)}})
        model.fix_release(target.served_features(), target.edges("target"))
        model.release_guard = cls(config)._guard(target.ledger, float(model.sigma), config)

    def _calibrate(
        self, graph: Data, split: MembershipSplit, edges: torch.Tensor
    ) -> tuple[float, PrivacyLedger, dict[str, Any]]:
        raise NotImplementedError


@dataclass(frozen=True)
class GAPEDPConfig:
    """Parameters of GAP-EDP (paper defaults, ``defenses.md`` §3.8).

    Attributes:
        epsilon: Edge-level ε (``inf``: GAP-∞, no noise).
        delta: δ; None gives GAP's 'auto' 10^{−len(str(#units))}.
        edge_unit: ``"undirected"`` (Δ = √2, default) or ``"directed"`` (Δ = 1, the paper's).
        hops: Number of aggregation hops K.
        hidden: Width of the encoder output and per-hop layers.
        encoder_layers: Encoder MLP layers.
        encoder_epochs: Encoder pre-training epochs.
        epochs: Classifier epochs.
        lr: Adam learning rate.
        weight_decay: Adam weight decay.
        dropout: Dropout probability.
        query_budget: Largest ε the served model may reach, training release included, as
            queries on other inputs make fresh releases; None accumulates them without limit
            (the report gives the API's ε after n releases). Must be > 0.
    """

    epsilon: float = field(default=4.0, metadata=_POS)
    delta: float | None = field(default=None, metadata=_DELTA)
    edge_unit: str = field(default="undirected", metadata={"choices": ("undirected", "directed")})
    hops: int = field(default=2, metadata={"range": (1, 10)})
    hidden: int = field(default=16, metadata={"range": (1, 4096)})
    encoder_layers: int = field(default=2, metadata={"range": (1, 10)})
    encoder_epochs: int = field(default=100, metadata={"range": (1, 100_000)})
    epochs: int = field(default=100, metadata={"range": (1, 100_000)})
    lr: float = field(default=0.01, metadata={"range": (0.0, 10.0), "closed": "right"})
    weight_decay: float = field(default=0.0, metadata={"range": (0.0, None)})
    dropout: float = field(default=0.0, metadata={"range": (0.0, 1.0), "closed": "left"})
    query_budget: float | None = field(default=None, metadata=_BUDGET)


class GAPEDP(_GAPBase):
    """GAP with edge-level DP: only the aggregation perturbation touches edges.

    Example:
        >>> from graphleaks.data import tiny_graph, MembershipSplit
        >>> g = tiny_graph()
        >>> t = GAPEDP(epsilon=1.0, encoder_epochs=5, epochs=5).fit(
        ...     g, MembershipSplit.draw(g.num_nodes, seed=0), model=ArchitectureSpec(), seed=0)
        >>> round(t.ledger.epsilon, 3), t.ledger.unit.value
        (1.0, 'edge')
    """

    name = "gap_edp"
    privacy_unit = PrivacyUnit.EDGE
    Config = GAPEDPConfig

    def _release_event(self, sigma: float, config: Any) -> PrivacyEvent:
        sens = math.sqrt(2.0) if config.edge_unit == "undirected" else 1.0
        return SelfComposedEvent(GaussianEvent(sigma, sens), config.hops)

    def _calibrate(
        self, graph: Data, split: MembershipSplit, edges: torch.Tensor
    ) -> tuple[float, PrivacyLedger, dict[str, Any]]:
        cfg = self.config
        undirected = cfg.edge_unit == "undirected"
        sens = math.sqrt(2.0) if undirected else 1.0
        n_directed = int(graph.edge_index.shape[1])
        units = n_directed // 2 if undirected else n_directed
        delta = cfg.delta if cfg.delta is not None else _auto_delta(units)
        _check_delta(delta, units, "edge")
        plan: dict[str, Any] = {"sensitivity": sens, "delta": delta}
        if math.isinf(cfg.epsilon):
            return 0.0, PrivacyLedger.non_private(), plan
        sigma = calibrate_gaussian_sigma(cfg.epsilon, delta, sensitivity=sens,
                                         compositions=cfg.hops, accountant="analytic")
        event = SelfComposedEvent(GaussianEvent(sigma, sens), cfg.hops)
        unit_note = (
            "edge unit: undirected edge {u,v} (L2 sensitivity sqrt(2) per hop: both rows change)"
            if undirected else
            "edge unit: directed adjacency entry (L2 sensitivity 1 per hop, the GAP paper's "
            "unit); for an undirected graph an undirected edge costs sqrt(2)x more "
            "(defenses.md 3.1)")
        ledger = PrivacyLedger.from_event(
            PrivacyUnit.EDGE, event, delta, accountant="analytic",
            status=GuaranteeStatus.VERIFIED,
            notes=(unit_note,
                   f"GAP-EDP: {cfg.hops} Gaussian aggregation releases, sigma={sigma:.6g} per hop",
                   "encoder and classifier see no edges (non-private training, val selection)",
                   "served as a fixed release: queries on the training graph reuse it; any "
                   "other input is a fresh release, charged per release (the report gives the "
                   "API's epsilon after n releases" + (f", refused past {cfg.query_budget:g}"
                                                       if cfg.query_budget else "") + ")"),
            components={"sensitivity": sens, "sigma": sigma, "hops": float(cfg.hops),
                        "directed_unit": 0.0 if undirected else 1.0},
        )
        return sigma, ledger, plan


@dataclass(frozen=True)
class GAPNDPConfig:
    """Parameters of GAP-NDP (paper defaults, ``defenses.md`` §3.8, Facebook column).

    Attributes:
        epsilon: Node-level ε.
        delta: δ; None gives 10^{−len(str(#training nodes))}.
        max_degree: Out-degree bound D (≥ 1).
        hops: Aggregation hops K.
        hidden: Hidden width.
        encoder_layers: Encoder MLP layers.
        encoder_epochs: Encoder DP-SGD epochs.
        epochs: Classifier DP-SGD epochs.
        batch_size: Expected Poisson batch size B.
        max_grad_norm: Per-sample clipping norm C.
        lr: Adam learning rate.
        weight_decay: Unused by DP-SGD training (kept for symmetry, must be ≥ 0).
        dropout: Dropout probability.
        query_budget: Largest ε the served model may reach, training release included, as
            queries on other inputs make fresh releases; None accumulates them without limit
            (the report gives the API's ε after n releases). Must be > 0.
    """

    epsilon: float = field(default=8.0, metadata=_POS)
    delta: float | None = field(default=None, metadata=_DELTA)
    max_degree: int = field(default=100, metadata={"range": (1, None)})
    hops: int = field(default=2, metadata={"range": (1, 10)})
    hidden: int = field(default=16, metadata={"range": (1, 4096)})
    encoder_layers: int = field(default=2, metadata={"range": (1, 10)})
    encoder_epochs: int = field(default=10, metadata={"range": (1, 100_000)})
    epochs: int = field(default=10, metadata={"range": (1, 100_000)})
    batch_size: int = field(default=256, metadata={"range": (1, None)})
    max_grad_norm: float = field(default=1.0, metadata=_POS)
    lr: float = field(default=0.01, metadata={"range": (0.0, 10.0), "closed": "right"})
    weight_decay: float = field(default=0.0, metadata={"range": (0.0, None)})
    dropout: float = field(default=0.0, metadata={"range": (0.0, 1.0), "closed": "left"})
    query_budget: float | None = field(default=None, metadata=_BUDGET)

    def check(self) -> None:
        """ε must be finite for NDP (DP-SGD needs a noise multiplier); weight_decay must stay
        0, since DP-SGD training here applies none (a value would be recorded, not used)."""
        if not math.isfinite(self.epsilon):
            raise InvalidConfigError("The epsilon parameter of GAPNDP must be finite. "
                                     f"Got {self.epsilon!r} instead.")
        if self.weight_decay != 0.0:
            raise InvalidConfigError("The weight_decay parameter of GAPNDP has no effect: its "
                                     "DP-SGD training applies no weight decay. Got "
                                     f"{self.weight_decay!r}; drop it.")


def ndp_event(
    noise_multiplier: float, *, rate: float, encoder_steps: int, hops: int, classifier_steps: int
) -> PrivacyEvent:
    """GAP-NDP's composition: encoder SGM steps, K PMA hops, classifier SGM steps."""
    sgm = PoissonSampledEvent(rate, GaussianEvent(noise_multiplier))
    return ComposedEvent((SelfComposedEvent(sgm, encoder_steps),
                          SelfComposedEvent(GaussianEvent(noise_multiplier), hops),
                          SelfComposedEvent(sgm, classifier_steps)))


class GAPNDP(_GAPBase):
    """GAP with node-level DP: degree bounding, PMA with Δ = √D, DP-SGD for both MLPs."""

    name = "gap_ndp"
    privacy_unit = PrivacyUnit.NODE
    Config = GAPNDPConfig
    dp_training = True

    def _release_event(self, sigma: float, config: Any) -> PrivacyEvent:
        return SelfComposedEvent(GaussianEvent(sigma / math.sqrt(config.max_degree)),
                                 config.hops)

    def _calibrate(
        self, graph: Data, split: MembershipSplit, edges: torch.Tensor
    ) -> tuple[float, PrivacyLedger, dict[str, Any]]:
        cfg = self.config
        n_train = len(split.train)
        delta = cfg.delta if cfg.delta is not None else _auto_delta(n_train)
        _check_delta(delta, n_train, "node")
        enc_plan = DPSGDPlan(n_train, cfg.batch_size, cfg.encoder_epochs)
        cls_plan = DPSGDPlan(n_train, cfg.batch_size, cfg.epochs)
        rate, t_enc, t_cls = enc_plan.rate, enc_plan.steps, cls_plan.steps

        def build(m: float) -> PrivacyEvent:
            return ndp_event(m, rate=rate, encoder_steps=t_enc, hops=cfg.hops,
                             classifier_steps=t_cls)

        mult = calibrate_noise_multiplier(build, cfg.epsilon, delta, accountant="rdp")
        sens = math.sqrt(cfg.max_degree)
        sigma = mult * sens
        ledger = PrivacyLedger.from_event(
            PrivacyUnit.NODE, build(mult), delta, accountant="rdp",
            status=GuaranteeStatus.AUTHORS_CLAIM,
            notes=(f"GAP-NDP: out-degree bounded to D={cfg.max_degree}; PMA sensitivity "
                   f"sqrt(D), noise multiplier {mult:.6g} shared with DP-SGD",
                   "no validation-based checkpoint selection (last epoch kept)",
                   "node-level claim as stated by the authors; disputed by Xiang et al. "
                   "(S&P'24), see defenses.md 3.11",
                   "served as a fixed release: queries on the training graph reuse it; any "
                   "other input is a fresh release, charged per release (the report gives the "
                   "API's epsilon after n releases" + (f", refused past {cfg.query_budget:g}"
                                                       if cfg.query_budget else "") + ")"),
            components={"noise_multiplier": mult, "sigma_pma": sigma, "max_degree":
                        float(cfg.max_degree), "sample_rate": rate,
                        "encoder_steps": float(t_enc), "classifier_steps": float(t_cls),
                        "steps_per_epoch": float(enc_plan.steps_per_epoch)},
        )
        return sigma, ledger, {"noise_multiplier": mult, "delta": delta, "sample_rate": rate,
                               "sgd_plans": {"encoder": enc_plan, "classifier": cls_plan}}


__all__ = ["GAPEDP", "GAPNDP", "GAPModel", "bound_out_degree", "ndp_event", "sum_aggregate"]
