"""Defenses for link predictors, with ledgers in the edge unit.

The private unit is **one member edge** (add/remove one undirected training edge of an
:class:`~graphleaks.data.edge_splits.EdgeMembershipSplit`). A link predictor uses its member
edges twice: as loss positives and as its message-passing graph. Each defense below says
what it releases in their place, and everything the predictor does afterwards is
post-processing of that release:

``none``
    No defense: members are positives and the message-passing graph (ε = ∞).
``edgerand`` / ``lapgraph``
    The member graph (the training positives' graph, never the validation or held-out
    edges) goes once through EdgeRand's randomized response or LapGraph's Laplace top-T
    (the node defenses' own release functions, :func:`~graphleaks.defenses.edgerand.
    edgerand_release`, :func:`~graphleaks.defenses.lapgraph.lapgraph_release`). The
    predictor is then trained with the *released* edges as positives and as its
    message-passing graph, and served on the released graph. Pure ε per member edge.
``gap_edp``
    GAP's aggregation perturbation for a link encoder. Node features (public under edge
    DP) are projected to ``hidden`` dimensions by a seeded PCA and L2-normalised; K hops of
    sum aggregation over the member graph each add Gaussian noise (an undirected edge moves
    two rows by a unit vector: L2 sensitivity √2 per hop) and re-normalise. The noisy
    aggregates ``[h_0, …, h_K]`` are the released node features. The decoder head cannot be
    trained on them non-privately, as GAP's classifier is on public labels: its positives
    are the private member edges. So the head (an edge-free MLP encoder and dot decoder)
    is trained with per-edge DP-SGD (:mod:`graphleaks.models.edge_dp_sgd`), and one noise
    multiplier is shared by both parts and accounted together with RDP (as GAP does).
``dp_sgd``
    Per-edge DP-SGD of an edge-free predictor (encoder ``mlp``, no propagation): the only
    use of an edge is as one clipped loss example. The ledger is built from the sampler the
    training executed (its rate and step count), checked against the plan calibrated.

Validation pairs used for early stopping (``none``, ``edgerand``, ``lapgraph``) are not
member edges and are not covered; ``gap_edp`` and ``dp_sgd`` select no epoch on them.
Defenses register in :data:`link_registry` (``graphleaks list defenses`` shows their task).
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.data import Data

from graphleaks._plugin import Plugin
from graphleaks._registry import Registry
from graphleaks._validation import validate
from graphleaks.data.edge_splits import EdgeMembershipSplit
from graphleaks.data.graph import check_graph
from graphleaks.data.pairs import keys_to_pairs
from graphleaks.data.pairs import pair_keys as pairs_to_keys
from graphleaks.data.ref import DatasetRef
from graphleaks.defenses._edge_release import keys_to_edge_index
from graphleaks.defenses.base import resolve_device
from graphleaks.defenses.edgerand import edgerand_release, edgerand_replace_probability
from graphleaks.defenses.gap import _auto_delta, _check_delta, sum_aggregate
from graphleaks.defenses.lapgraph import lapgraph_release
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.dp_sgd import DPSGDPlan, ExecutedSGM
from graphleaks.models.edge_dp_sgd import check_edge_private, edge_sgm_event, train_edge_dp_sgd
from graphleaks.models.link_predictor import (
    LinkPredictor,
    LinkPredictorSpec,
    fit_link_predictor,
)
from graphleaks.models.link_target import TrainedLinkTarget, link_utility
from graphleaks.privacy.calibration import calibrate_noise_multiplier
from graphleaks.privacy.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
)
from graphleaks.privacy.ledger import GuaranteeStatus, PrivacyLedger, PrivacyUnit
from graphleaks.privacy.mechanisms import gaussian_noise
from graphleaks.seeding import Rngs, derive_seed, torch_seeded

link_registry: Registry[type[LinkDefense]] = Registry("link defense")

_EPS = {"range": (0, None), "closed": "neither"}
_DELTA = {"range": (0.0, 1.0), "closed": "neither", "optional": True}
_UNIT_NOTE = ("unit: one member edge (an undirected training edge of the edge split); "
              "validation and held-out pairs are not covered")


def edge_free_spec(spec: LinkPredictorSpec | None = None) -> LinkPredictorSpec:
    """The edge-free predictor per-edge DP-SGD can train: ``spec`` with an ``mlp`` encoder,
    no propagation, no VGAE (the default: a linear map to 64-dimensional embeddings)."""
    base = spec or LinkPredictorSpec.gae(encoder="mlp", hidden=(), embedding_dim=64)
    return dataclasses.replace(base, encoder="mlp", propagation=0, variational=False)


class LinkDefense(Plugin, ABC):
    """Trains a link predictor under a privacy mechanism (see the module docstring).

    Attributes:
        name: Registry name (:data:`link_registry`).
        privacy_unit: The neighbouring relation its guarantee is stated for.
        Config: Frozen dataclass of parameters.
    """

    _registry = link_registry
    privacy_unit: ClassVar[PrivacyUnit] = PrivacyUnit.EDGE
    #: Whether the target is served on a graph the defense released (edge audits test it).
    releases_graph: ClassVar[bool] = False

    def default_spec(self) -> LinkPredictorSpec:
        """The predictor trained when the caller names none."""
        return LinkPredictorSpec()

    def fit(
        self, graph: Data, split: EdgeMembershipSplit, *, spec: LinkPredictorSpec | None = None,
        seed: int, dataset: DatasetRef | Mapping[str, Any] | None = None, device: str = "cpu",
    ) -> TrainedLinkTarget:
        """Train a link target on ``graph``'s member edges and return it with its ledger.

        Args:
            graph: The graph (validated here); node features are treated as public.
            split: The edge-membership split; its members are the private training edges.
            spec: The predictor (default :meth:`default_spec`).
            seed: Seed of every random choice.
            dataset: Where the graph came from (stored in the bundle).
            device: Torch device to train on; the returned target lives on the CPU.

        Raises:
            InvalidConfigError: If the defense config or spec is invalid.
            DataError: If the graph is malformed or does not match the split.
        """
        self.validate()
        spec = validate(spec or self.default_spec())
        ref = DatasetRef.coerce(dataset)
        graph = check_graph(graph)
        if split.num_nodes != graph.num_nodes:
            raise DataError(f"edge split was drawn for {split.num_nodes} nodes but the graph "
                            f"has {graph.num_nodes}")
        dev = resolve_device(device)
        x = graph.x.to(dev)
        target = self._fit(graph, x, split, spec, seed)
        target.model.cpu()
        target.model.eval()
        target = dataclasses.replace(
            target, graph=graph, dataset=ref.pinned(graph), defense=self.name,
            defense_config=self.config_record(unused_as_none=False),
            released_edges=None if target.released_edges is None
            else target.released_edges.cpu(),
            features=None if target.features is None else target.features.cpu())
        return dataclasses.replace(target, utility=link_utility(target))

    @abstractmethod
    def _fit(self, graph: Data, x: torch.Tensor, split: EdgeMembershipSplit,
             spec: LinkPredictorSpec, seed: int) -> TrainedLinkTarget:
        """Train the target (config, spec and graph already validated)."""


def _train_on_members(graph: Data, x: torch.Tensor, split: EdgeMembershipSplit,
                      spec: LinkPredictorSpec, seed: int, ledger: PrivacyLedger,
                      released: np.ndarray | None, info: dict[str, Any]) -> TrainedLinkTarget:
    """Train with ``released`` pairs (None: the split's members) as positives and graph."""
    train_split = split if released is None else dataclasses.replace(split, members=released)
    model, log = fit_link_predictor(x, train_split, spec, seed=seed)
    info = {"epochs_run": log.epochs_run, "best_epoch": log.best_epoch, **info}
    return TrainedLinkTarget(
        model=model, spec=spec, graph=graph, split=split, seed=seed, ledger=ledger,
        released_edges=None if released is None else keys_to_edge_index(
            pairs_to_keys(released, split.num_nodes), split.num_nodes),
        training=info)


class NoLinkDefense(LinkDefense):
    """No defense: the member edges are the positives and the message-passing graph."""

    name = "none"
    privacy_unit = PrivacyUnit.NONE

    def _fit(self, graph: Data, x: torch.Tensor, split: EdgeMembershipSplit,
             spec: LinkPredictorSpec, seed: int) -> TrainedLinkTarget:
        return _train_on_members(graph, x, split, spec, seed, PrivacyLedger.non_private(),
                                 None, {})


@dataclass(frozen=True)
class LinkEdgeRandConfig:
    """Parameters of EdgeRand on a link predictor's member graph.

    Attributes:
        epsilon: ε per member edge.
        max_edges: Refuse releases with more undirected edges than this (memory guard).
    """

    epsilon: float = field(default=4.0, metadata=_EPS)
    max_edges: int = field(default=5_000_000, metadata={"range": (1, None)})


class LinkEdgeRand(LinkDefense):
    """EdgeRand's randomized response on the member graph; train and serve on the release."""

    name = "edgerand"
    Config = LinkEdgeRandConfig
    releases_graph = True

    def mechanism_epsilon(self) -> float:
        """The ε the release runs at (the ledger's; a broken test fixture overrides it)."""
        return float(self.config.epsilon)

    def _fit(self, graph: Data, x: torch.Tensor, split: EdgeMembershipSplit,
             spec: LinkPredictorSpec, seed: int) -> TrainedLinkTarget:
        cfg, n = self.config, split.num_nodes
        keys = np.sort(pairs_to_keys(split.members, n))
        rng = Rngs.from_seed(seed, "edgerand").numpy
        out = edgerand_release(keys, n, self.mechanism_epsilon(), rng, cfg.max_edges)
        ledger = PrivacyLedger.from_event(
            PrivacyUnit.EDGE, RandomizedResponseEvent(cfg.epsilon, 2), 0.0,
            status=GuaranteeStatus.VERIFIED,
            notes=("EdgeRand on the link predictor's member graph (the training positives' "
                   "graph): randomized response on every unordered pair, keep probability "
                   f"e^eps/(1+e^eps) at eps={cfg.epsilon:g}; the predictor trains on the "
                   "released edges (positives and message passing) and is served on them",
                   _UNIT_NOTE, "exact sparse sampler (defenses.md 6.5b)"),
            components={"epsilon_edges": cfg.epsilon,
                        "replace_probability": edgerand_replace_probability(cfg.epsilon)})
        if len(out) == 0:
            raise InvalidConfigError("the EdgeRand release holds no edge; raise epsilon")
        return _train_on_members(graph, x, split, spec, seed, ledger, keys_to_pairs(out, n),
                                 {"input_undirected_edges": len(keys),
                                  "released_undirected_edges": len(out),
                                  "released_graph": "member edges"})


@dataclass(frozen=True)
class LinkLapGraphConfig:
    """Parameters of LapGraph on a link predictor's member graph.

    Attributes:
        epsilon: ε per member edge (1 % on the edge count, 99 % on the entries).
        count_fraction: Share of ε spent on the edge count.
    """

    epsilon: float = field(default=4.0, metadata=_EPS)
    count_fraction: float = field(default=0.01, metadata={"range": (0.0, 1.0),
                                                          "closed": "neither"})


class LinkLapGraph(LinkDefense):
    """LapGraph's Laplace top-T release of the member graph; train and serve on it."""

    name = "lapgraph"
    Config = LinkLapGraphConfig
    releases_graph = True

    def _fit(self, graph: Data, x: torch.Tensor, split: EdgeMembershipSplit,
             spec: LinkPredictorSpec, seed: int) -> TrainedLinkTarget:
        cfg, n = self.config, split.num_nodes
        keys = np.sort(pairs_to_keys(split.members, n))
        rng = Rngs.from_seed(seed, "lapgraph").numpy
        out, t = lapgraph_release(keys, n, cfg.epsilon, rng, cfg.count_fraction)
        eps1 = cfg.count_fraction * cfg.epsilon
        eps2 = cfg.epsilon - eps1
        ledger = PrivacyLedger.from_event(
            PrivacyUnit.EDGE, ComposedEvent((LaplaceEvent(1.0 / eps1), LaplaceEvent(1.0 / eps2))),
            0.0, status=GuaranteeStatus.VERIFIED,
            notes=(f"LapGraph on the link predictor's member graph: edge count with "
                   f"Lap(1/{eps1:g}), every upper-triangle entry with Lap(1/{eps2:g}), top-T; "
                   "the predictor trains on the released edges and is served on them",
                   _UNIT_NOTE, "exact sparse sampler (defenses.md 6.5b)"),
            components={"epsilon_count": eps1, "epsilon_entries": eps2})
        if len(out) == 0:
            raise InvalidConfigError("the LapGraph release holds no edge; raise epsilon")
        return _train_on_members(graph, x, split, spec, seed, ledger, keys_to_pairs(out, n),
                                 {"input_undirected_edges": len(keys), "noisy_edge_count": t,
                                  "released_undirected_edges": len(out),
                                  "released_graph": "member edges"})


def executed_sgm_event(ran: ExecutedSGM, noise_multiplier: float) -> PrivacyEvent:
    """The record of what the sampler executed: ``ran.steps`` Poisson-sampled Gaussian steps
    at ``ran.rate`` (the ledger is built from this, never from the plan alone)."""
    return SelfComposedEvent(PoissonSampledEvent(ran.rate, GaussianEvent(noise_multiplier)),
                             ran.steps)


def _check_executed(ran: ExecutedSGM, plan: DPSGDPlan) -> None:
    """The sampler must have run the plan the ledger was calibrated for."""
    if ran.steps != plan.steps or not math.isclose(ran.rate, plan.rate, rel_tol=1e-12):
        raise InvalidConfigError(  # an internal inconsistency: never report a wrong ε
            f"DP-SGD executed {ran.steps} steps at rate {ran.rate:g}, but the ledger was "
            f"calibrated for {plan.steps} at {plan.rate:g}")


@dataclass(frozen=True)
class LinkDPSGDConfig:
    """Parameters of per-edge DP-SGD for an edge-free link predictor.

    Attributes:
        epsilon: ε per member edge.
        delta: δ; None gives 10^{−len(str(#member edges))} (< 1/#members).
        batch_size: Expected Poisson batch size B (rate B/#members).
        epochs: Passes over the member edges, in expectation.
        max_grad_norm: Per-edge clipping norm C.
        lr: Adam learning rate.
        negatives_per_positive: Uniform random pairs per example.
    """

    epsilon: float = field(default=4.0, metadata=_EPS)
    delta: float | None = field(default=None, metadata=_DELTA)
    batch_size: int = field(default=256, metadata={"range": (1, None)})
    epochs: int = field(default=20, metadata={"range": (1, 100_000)})
    max_grad_norm: float = field(default=1.0, metadata=_EPS)
    lr: float = field(default=0.01, metadata={"range": (0.0, 10.0), "closed": "right"})
    negatives_per_positive: int = field(default=1, metadata={"range": (1, 100)})

    def check(self) -> None:
        """ε must be finite: DP-SGD needs a noise multiplier."""
        if not math.isfinite(self.epsilon):
            raise InvalidConfigError(f"The epsilon parameter of {type(self).__name__} must be "
                                     f"finite. Got {self.epsilon!r} instead.")


def _edge_plan(cfg: LinkDPSGDConfig | LinkGAPEDPConfig,
               split: EdgeMembershipSplit) -> tuple[float, DPSGDPlan]:
    """δ (given, else the member count's default, checked in the edge unit) and the plan."""
    m = len(split.members)
    delta = cfg.delta if cfg.delta is not None else _auto_delta(m)
    _check_delta(delta, m, "edge")
    return delta, DPSGDPlan(m, cfg.batch_size, cfg.epochs)


def _dp_train(model: LinkPredictor, x: torch.Tensor, split: EdgeMembershipSplit,
              cfg: LinkDPSGDConfig, plan: DPSGDPlan, mult: float, seed: int) -> ExecutedSGM:
    ran = train_edge_dp_sgd(model, x, split, plan=plan, lr=cfg.lr, noise_multiplier=mult,
                            max_grad_norm=cfg.max_grad_norm, seed=derive_seed(seed, "dp_sgd"),
                            negatives_per_positive=cfg.negatives_per_positive)
    _check_executed(ran, plan)
    return ran


class LinkDPSGD(LinkDefense):
    """Per-edge DP-SGD (clip each member edge's gradient, Gaussian noise, Poisson sampler)."""

    name = "dp_sgd"
    Config = LinkDPSGDConfig

    def default_spec(self) -> LinkPredictorSpec:
        """An edge-free predictor (:func:`edge_free_spec`)."""
        return edge_free_spec()

    def _fit(self, graph: Data, x: torch.Tensor, split: EdgeMembershipSplit,
             spec: LinkPredictorSpec, seed: int) -> TrainedLinkTarget:
        cfg = self.config
        delta, plan = _edge_plan(cfg, split)
        mult = calibrate_noise_multiplier(lambda s: edge_sgm_event(plan, s), cfg.epsilon,
                                          delta, accountant="rdp")
        with torch_seeded(derive_seed(seed, "init")):
            model = LinkPredictor(int(x.shape[1]), spec).to(x.device)
        check_edge_private(model)
        ran = _dp_train(model, x, split, cfg, plan, mult, seed)
        event = executed_sgm_event(ran, mult)
        ledger = PrivacyLedger.from_event(
            PrivacyUnit.EDGE, event, delta, accountant="rdp", status=GuaranteeStatus.VERIFIED,
            notes=("per-edge DP-SGD of an edge-free link predictor (mlp encoder, no message "
                   f"passing): Poisson sampling at rate {ran.rate:.6g}, {ran.steps} noised "
                   f"steps (the sampler executed), clip {cfg.max_grad_norm:g}, noise "
                   f"multiplier {mult:.6g}", _UNIT_NOTE,
                   "node features are public; the last iterate is kept (no validation "
                   "selection)"),
            components={"noise_multiplier": mult, "sample_rate": ran.rate,
                        "steps": float(ran.steps)})
        return TrainedLinkTarget(model=model, spec=spec, graph=graph, split=split, seed=seed,
                                 ledger=ledger, training={"sample_rate": ran.rate,
                                                          "steps": ran.steps,
                                                          "noise_multiplier": mult})


@dataclass(frozen=True)
class LinkGAPEDPConfig:
    """Parameters of GAP-EDP's aggregation perturbation for a link encoder.

    Attributes:
        epsilon: ε per member edge (aggregation and head training together).
        delta: δ; None gives 10^{−len(str(#member edges))}.
        hops: Aggregation hops K.
        hidden: Width of the PCA projection of the features (the aggregated vectors).
        batch_size: Expected Poisson batch size of the head's DP-SGD.
        epochs: Head DP-SGD epochs.
        max_grad_norm: Per-edge clipping norm of the head's DP-SGD.
        lr: Adam learning rate of the head.
    """

    epsilon: float = field(default=4.0, metadata=_EPS)
    delta: float | None = field(default=None, metadata=_DELTA)
    hops: int = field(default=2, metadata={"range": (1, 10)})
    hidden: int = field(default=64, metadata={"range": (1, 4096)})
    batch_size: int = field(default=256, metadata={"range": (1, None)})
    epochs: int = field(default=20, metadata={"range": (1, 100_000)})
    max_grad_norm: float = field(default=1.0, metadata=_EPS)
    lr: float = field(default=0.01, metadata={"range": (0.0, 10.0), "closed": "right"})

    def check(self) -> None:
        """ε must be finite: the head's DP-SGD needs a noise multiplier."""
        if not math.isfinite(self.epsilon):
            raise InvalidConfigError(f"The epsilon parameter of {type(self).__name__} must be "
                                     f"finite. Got {self.epsilon!r} instead.")


def gap_link_event(noise_multiplier: float, *, hops: int, rate: float,
                   steps: int) -> PrivacyEvent:
    """GAP-EDP for links: K Gaussian hops (Δ = √2 per undirected edge), then the head's SGM."""
    sens = math.sqrt(2.0)
    return ComposedEvent((
        SelfComposedEvent(GaussianEvent(noise_multiplier * sens, sens), hops),
        executed_sgm_event(ExecutedSGM(rate=rate, steps=steps), noise_multiplier)))


def public_projection(x: torch.Tensor, width: int, seed: int) -> torch.Tensor:
    """Row-normalised seeded PCA of the (public) features to ``width`` columns."""
    k = min(int(width), int(x.shape[1]), int(x.shape[0]))
    with torch_seeded(derive_seed(seed, "pca")):
        xc = x.double() - x.double().mean(dim=0, keepdim=True)
        _, _, v = torch.svd_lowrank(xc, q=k, niter=4)
    z = (xc @ v[:, :k]).float()
    if k < width:
        z = torch.cat([z, z.new_zeros(z.shape[0], width - k)], dim=1)
    return F.normalize(z, dim=-1)


def noisy_aggregates(z: torch.Tensor, edge_index: torch.Tensor, hops: int, sigma: float,
                     generator: torch.Generator) -> torch.Tensor:
    """GAP's PMA: ``[h_0, …, h_K]`` concatenated, ``h_k = normalize(Aᵀh_{k−1} + N(0, σ²))``."""
    hs, h = [z], z
    for _ in range(hops):
        h = sum_aggregate(h, edge_index)
        if sigma > 0:
            h = h + gaussian_noise(tuple(h.shape), sigma, generator, dtype=h.dtype).to(h.device)
        h = F.normalize(h, dim=-1)
        hs.append(h)
    return torch.cat(hs, dim=1)


class LinkGAPEDP(LinkDefense):
    """GAP-EDP's noisy aggregation as a link encoder, and a DP-SGD-trained decoder head."""

    name = "gap_edp"
    Config = LinkGAPEDPConfig

    def default_spec(self) -> LinkPredictorSpec:
        """An edge-free head (:func:`edge_free_spec`) over the aggregates."""
        return edge_free_spec()

    def _fit(self, graph: Data, x: torch.Tensor, split: EdgeMembershipSplit,
             spec: LinkPredictorSpec, seed: int) -> TrainedLinkTarget:
        cfg = self.config
        delta, plan = _edge_plan(cfg, split)

        def build(s: float) -> PrivacyEvent:
            return gap_link_event(s, hops=cfg.hops, rate=plan.rate, steps=plan.steps)

        mult = calibrate_noise_multiplier(build, cfg.epsilon, delta, accountant="rdp")
        sigma = mult * math.sqrt(2.0)
        z = public_projection(x, cfg.hidden, seed).to(x.device)
        gen = torch.Generator().manual_seed(derive_seed(seed, "pma"))
        agg = noisy_aggregates(z, split.message_passing_edge_index().to(x.device), cfg.hops,
                               sigma, gen)
        with torch_seeded(derive_seed(seed, "init")):
            model = LinkPredictor(int(agg.shape[1]), spec).to(x.device)
        check_edge_private(model)
        dcfg = LinkDPSGDConfig(epsilon=cfg.epsilon, batch_size=cfg.batch_size,
                               epochs=cfg.epochs, max_grad_norm=cfg.max_grad_norm, lr=cfg.lr)
        ran = _dp_train(model, agg, split, dcfg, plan, mult, seed)
        ledger = PrivacyLedger.from_event(
            PrivacyUnit.EDGE, gap_link_event(mult, hops=cfg.hops, rate=ran.rate,
                                             steps=ran.steps),
            delta, accountant="rdp", status=GuaranteeStatus.VERIFIED,
            notes=(f"GAP-EDP for links: {cfg.hops} Gaussian sum aggregations over the member "
                   f"graph, sigma={sigma:.6g} per hop, L2 sensitivity sqrt(2) per undirected "
                   "edge; the noisy aggregates are the released node features",
                   f"decoder head trained by per-edge DP-SGD on the aggregates: rate "
                   f"{ran.rate:.6g}, {ran.steps} steps (executed), noise multiplier "
                   f"{mult:.6g} shared with the aggregation, composed with RDP", _UNIT_NOTE,
                   "features are public (seeded PCA); served as a fixed release: the "
                   "aggregates answer every query, so query-time edges are not read"),
            components={"noise_multiplier": mult, "sigma_pma": sigma, "hops": float(cfg.hops),
                        "sample_rate": ran.rate, "steps": float(ran.steps)})
        return TrainedLinkTarget(model=model, spec=spec, graph=graph, split=split, seed=seed,
                                 ledger=ledger, features=agg.detach(),
                                 training={"sigma": sigma, "noise_multiplier": mult,
                                           "sample_rate": ran.rate, "steps": ran.steps})


def get_link_defense(name: str, params: Mapping[str, Any] | None = None) -> LinkDefense:
    """An instance of the link defense ``name`` with ``params``, validated.

    Raises:
        InvalidConfigError: For an unknown name (naming the valid ones) or a bad parameter.
    """
    try:
        cls = link_registry.get(name)
    except (KeyError, InvalidConfigError, ValueError):
        raise InvalidConfigError(
            f"unknown defense {str(name)[:40]!r} for the link task; choose one of: "
            f"{', '.join(link_registry.names())}") from None
    d = cls(**dict(params or {}))
    d.validate()
    return d


__all__ = [
    "LinkDPSGD", "LinkDefense", "LinkEdgeRand", "LinkGAPEDP", "LinkLapGraph", "NoLinkDefense",
    "edge_free_spec", "executed_sgm_event", "gap_link_event", "get_link_defense", "link_registry",
    "noisy_aggregates", "public_projection",
]
