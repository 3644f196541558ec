"""HeteroRR (Tran et al., IEEE BigData'22; ``defenses.md`` §5, §8.6): FeatureRR part.

FeatureRR gives each feature i its own budget ε_i = θ_i·ε_f and releases a k-bin value u/k
with Pr(u | t) ∝ exp(−|u − t|/(k σ_i)), σ_i = (k−1)/(k ε_i) (Eqs. 8–9, Thm 3), where t is the
bin of the node's [0, 1]-scaled feature. θ_i = γ α_i + (1−γ)[β_min + (β_max − β_i)],
normalized to sum 1 (Eq. 7, Alg. 1 line 5):

* α (importance): permutation importance of a linear model trained on **public** nodes;
* β (sensitivity by masking): the mean |z_i − ẑ_i| when feature i is masked to its public
  mean, normalized (we have no raw-input encoder g, so masking acts on z directly).

Modes (``mode``):

* ``corrected`` (default, §8.6): one θ from public nodes, shared by every node; the
  per-feature worst-case log-ratio is ε_i and the features compose to ε_f (VERIFIED).
* ``paper``: β is computed from each node's own features (flaw F1, §5.2), so θ and the
  output distribution depend on the node's data; the ledger is the authors' claim ε_f, with
  the defensible bound 2ε_f in ``components``.

Edges: the public/private split is an input: ``edge_split="random"`` marks a
``private_fraction`` of the edges at random, as in the paper's PPI setting, and
``edge_split="column"`` reads the graph's ``private_edge_index`` (the ``private`` column of an
edge list, :func:`graphleaks.data.load_graph_files`). Public edges are released as they are;
the private part is replaced by EdgeRR's sample (:mod:`graphleaks.defenses.edge_rr`: pHRG
MCMC with ε_e1, noisy probabilities with ε_e2, ε_e = ε_e1 + ε_e2 = ``epsilon_e``). In
corrected mode V̄ is all nodes (fixed publicly) and the chain is the joint
exponential-mechanism chain; in paper mode V̄ is the data-dependent set of nodes with a
private edge (flaw E4) and the chain alternates public and private sub-steps (Alg. 2).

The two guarantees are for different neighbouring relations and are not added: ε_f is
feature LDP per node (the ledger's headline ε, unit ``node_feature``), ε_e is edge DP for
private edges (``components["epsilon_e"]``, second event of the ledger).

``features="public"`` runs EdgeRR alone, as in the paper's edge experiments (§V, EdgeRR vs
LapGraph): features are treated as public and released as they are, and the ledger's headline
is ε_e (unit ``edge``). ``standardize`` (default on) centres and scales every column of
FeatureRR's release by its mean and standard deviation over the released matrix. That is
post-processing of released values, so it costs no privacy; without it the k-bin noise puts
a large positive offset on every one of Cora's sparse binary features (mean 0.013 → about
0.2), and a GCN trained on the raw release stalls at the majority class (Cora test accuracy
0.297 at ε_f = 1e4, ε_e = 8, against 0.705 standardized).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.data import Data

from graphleaks.data.graph import num_classes
from graphleaks.data.splits import MembershipSplit
from graphleaks.defenses._edge_release import (
    keys_to_edge_index,
    pair_keys,
    private_input_edges,
    train_on_released,
)
from graphleaks.defenses.base import Defense
from graphleaks.defenses.edge_rr import EdgeRRResult, edge_rr
from graphleaks.errors import InvalidConfigError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.privacy.accounting import pure_epsilon
from graphleaks.privacy.events import PureEpsilonEvent
from graphleaks.privacy.ledger import GuaranteeStatus, PrivacyLedger, PrivacyUnit
from graphleaks.seeding import Rngs, torch_seeded


def kbin_probabilities(k: int, epsilon_i: float) -> np.ndarray:
    """The k×k matrix P[t, u] = Pr(output bin u | input bin t) of the k-bin mechanism."""
    t = np.arange(k)
    logits = -np.abs(t[None, :] - t[:, None]) * (epsilon_i / (k - 1))
    p = np.exp(logits - logits.max(1, keepdims=True))
    return p / p.sum(1, keepdims=True)


def worst_case_log_ratio(k: int, epsilon_i: float) -> float:
    """max over (u, t, t') of ln Pr(u|t)/Pr(u|t'), by enumeration."""
    lp = np.log(kbin_probabilities(k, epsilon_i))
    return float((lp[:, None, :] - lp[None, :, :]).max())


def discretize(z01: torch.Tensor, k: int) -> torch.Tensor:
    """Bin index in {0, …, k−1} of values in [0, 1] (bin t covers [t/k, (t+1)/k])."""
    return (z01 * k).ceil().clamp(1, k).long() - 1


def kbin_mechanism(
    z01: torch.Tensor, eps: torch.Tensor, k: int, generator: torch.Generator,
    chunk: int = 256,
) -> torch.Tensor:
    """Privatize [0,1] features with per-feature (or per-node-per-feature) budgets ``eps``.

    Returns the released values (u+1)/k. Vectorized inverse-CDF sampling over node chunks.
    """
    n, d = z01.shape
    eps = eps.to(torch.float64)
    u_grid = torch.arange(k, dtype=torch.float64)
    out = torch.empty((n, d), dtype=torch.float32)
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        t = discretize(z01[a:b].to(torch.float64), k).unsqueeze(-1)
        e = eps if eps.dim() == 1 else eps[a:b]
        logits = -(u_grid - t).abs() * (e / (k - 1)).unsqueeze(-1)
        cdf = torch.softmax(logits, -1).cumsum(-1)
        r = torch.rand((b - a, d, 1), generator=generator, dtype=torch.float64)
        u = (cdf < r).sum(-1).clamp(max=k - 1)
        out[a:b] = ((u + 1).to(torch.float32)) / k
    return out


def node_minmax(x: torch.Tensor) -> torch.Tensor:
    """Per-node min–max scaling to [0, 1] (local: each node uses only its own vector)."""
    lo = x.min(1, keepdim=True).values
    span = (x.max(1, keepdim=True).values - lo).clamp_min(1e-12)
    return ((x - lo) / span).clamp(0, 1)


def permutation_importance(
    x: torch.Tensor, y: torch.Tensor, n_classes: int, seed: int, epochs: int = 200
) -> np.ndarray:
    """α: normalized drop in accuracy when a feature is permuted (linear model, public data)."""
    with torch_seeded(seed):
        lin = torch.nn.Linear(x.shape[1], n_classes)
        opt = torch.optim.Adam(lin.parameters(), lr=0.05, weight_decay=1e-4)
        for _ in range(epochs):
            opt.zero_grad()
            F.cross_entropy(lin(x), y).backward()
            opt.step()
    gen = torch.Generator().manual_seed(seed & 0x7FFFFFFF)
    with torch.no_grad():
        logit = lin(x)
        base = F.cross_entropy(logit, y).item()
        w = lin.weight  # permuting column i changes the logits by (x_perm_i − x_i) w_i
        perm = torch.randperm(x.shape[0], generator=gen)
        delta = x[perm] - x
        imp = np.zeros(x.shape[1])
        for i in range(x.shape[1]):
            li = logit + delta[:, i:i + 1] * w[:, i].unsqueeze(0)
            imp[i] = max(F.cross_entropy(li, y).item() - base, 0.0)
    s = imp.sum()
    return imp / s if s > 0 else np.full(len(imp), 1.0 / len(imp))


def combine_theta(alpha: np.ndarray, beta: np.ndarray, gamma: float) -> np.ndarray:
    """Eq. 7 then normalization: θ ∝ γα + (1−γ)[β_min + (β_max − β)] (last axis)."""
    bmin = beta.min(-1, keepdims=True)
    bmax = beta.max(-1, keepdims=True)
    theta = gamma * alpha + (1 - gamma) * (bmin + (bmax - beta))
    s = theta.sum(-1, keepdims=True)
    uniform = np.full_like(theta, 1.0 / theta.shape[-1])
    return np.where(s > 0, theta / np.where(s > 0, s, 1.0), uniform)


@dataclass(frozen=True)
class HeteroRRConfig:
    """Parameters of HeteroRR.

    Attributes:
        epsilon: Feature LDP budget ε_f per node.
        mode: ``corrected`` (shared public θ) or ``paper`` (per-node θ, flaw F1).
        k: Number of bins (≥ 2).
        gamma: Weight γ of importance vs sensitivity in θ, in [0, 1].
        private_fraction: Fraction of edges marked private at random (public/private split).
        edge_split: ``random`` (``private_fraction``) or ``column`` (the graph's
            ``private_edge_index``, read from a ``private`` column of the edge list).
        public_fraction: Fraction of nodes whose features and labels are public (θ source).
        epsilon_e: EdgeRR edge budget ε_e = ε_e1 + ε_e2 for the private edges.
        mcmc_fraction: ε_e1/ε_e, the share of the MCMC (exponential mechanism).
        mcmc_steps: Fixed number of MCMC iterations (data-independent; §5.3 E5); ``None``
            = min(200 000, 50·n), which depends only on the public node count.
        features: ``kbin`` privatizes features with FeatureRR; ``public`` releases them as
            they are (EdgeRR alone; the ledger's headline is then ε_e).
        standardize: Centre and scale each column of FeatureRR's release (post-processing).
    """

    epsilon: float = field(default=1.0, metadata={"range": (0, None), "closed": "neither"})
    mode: str = field(default="corrected", metadata={"choices": ("corrected", "paper")})
    k: int = field(default=10, metadata={"range": (2, None)})
    gamma: float = field(default=0.5, metadata={"range": (0.0, 1.0)})
    private_fraction: float = field(default=0.2, metadata={"range": (0.0, 1.0),
                                                           "closed": "right"})
    public_fraction: float = field(default=0.1, metadata={"range": (0.0, 1.0),
                                                          "closed": "neither"})
    epsilon_e: float = field(default=1.0, metadata={"range": (0, None), "closed": "neither"})
    mcmc_fraction: float = field(default=0.5, metadata={"range": (0.0, 1.0),
                                                        "closed": "neither"})
    mcmc_steps: int | None = field(default=None, metadata={"range": (0, None),
                                                           "optional": True})
    edge_split: str = field(default="random", metadata={"choices": ("random", "column")})
    features: str = field(default="kbin", metadata={"choices": ("kbin", "public")})
    standardize: bool = True


class HeteroRR(Defense):
    """FeatureRR on node features; public edges released, private edges through EdgeRR."""

    name = "heterorr"
    privacy_unit = PrivacyUnit.NODE_FEATURE
    Config = HeteroRRConfig

    def unused_fields(self) -> dict[str, str]:
        """Fields the configured release does not read (recorded None, refused if set)."""
        cfg = self.config
        out: dict[str, str] = {}
        if cfg.features == "public":
            for f in ("epsilon", "k", "gamma", "public_fraction", "standardize"):
                out[f] = ("features='public' releases the features as they are; FeatureRR's "
                          f"{f} is not used (EdgeRR's budget is epsilon_e)")
        if cfg.edge_split == "column":
            out["private_fraction"] = ("edge_split='column' reads the private edges from the "
                                       "edge list; private_fraction draws them at random")
        return out

    def _fit(
        self, graph: Data, split: MembershipSplit, spec: ArchitectureSpec, seed: int
    ) -> TrainedTarget:
        cfg = self.config
        n = graph.num_nodes
        rngs = Rngs.from_seed(seed, "heterorr")
        keys = pair_keys(private_input_edges(graph, split), n)
        private = self._private_mask(graph, keys, rngs)
        public_keys = keys[~private]
        z, feature_info = None, {}
        if cfg.features == "kbin":
            pub = np.sort(rngs.child("public").numpy.choice(
                n, size=max(2, int(round(cfg.public_fraction * n))), replace=False))
            z, theta = self._feature_rr(graph, pub, rngs)
            if cfg.standardize:
                z = (z - z.mean(0)) / z.std(0).clamp_min(1e-6)
            z = z.to(graph.x.device)
            feature_info = {"public_nodes": len(pub), "theta_min": float(theta.min()),
                            "theta_max": float(theta.max())}
        steps = cfg.mcmc_steps if cfg.mcmc_steps is not None else min(200_000, 50 * n)
        t0 = time.perf_counter()
        er = edge_rr(n, public_keys, keys[private], cfg.epsilon_e,
                     mcmc_fraction=cfg.mcmc_fraction, mcmc_steps=steps,
                     chain="joint" if cfg.mode == "corrected" else "alternating",
                     private_nodes=np.ones(n, dtype=bool) if cfg.mode == "corrected" else None,
                     seed_rngs=rngs.child("edgerr"))
        release_s = time.perf_counter() - t0
        ledger = self._ledger(cfg, int(private.sum()), len(keys), er, steps)
        released = keys_to_edge_index(np.union1d(public_keys, er.private_keys), n)
        target = train_on_released(
            graph, split, spec, seed, released, ledger,
            {"mode": cfg.mode, "private_edges": int(private.sum()),
             "public_edges": len(public_keys), **feature_info,
             "released_private_edges": len(er.private_keys), "release_seconds": release_s,
             "edgerr_private_nodes": er.num_private_nodes, "edgerr_delta_e": er.delta_e,
             **{f"edgerr_{k}": v for k, v in er.info.items()}},
            features=z)
        return dataclasses.replace(target, public_edges=keys_to_edge_index(public_keys, n))

    def _private_mask(self, graph: Data, keys: np.ndarray, rngs: Rngs) -> np.ndarray:
        """Which of the training edges ``keys`` are private.

        Raises:
            InvalidConfigError: If the split marks no edge private, or ``column`` is asked
                of a graph without a private column.
        """
        cfg = self.config
        if cfg.edge_split == "random":
            private = rngs.child("edges").numpy.random(len(keys)) < cfg.private_fraction
            if len(keys) and not private.any():
                raise InvalidConfigError(
                    "The private_fraction parameter of HeteroRR must mark at least one private "
                    f"edge; the private edge set is empty. Got {cfg.private_fraction!r} instead.")
            return private
        marked = getattr(graph, "private_edge_index", None)
        if marked is None:
            raise InvalidConfigError(
                "The edge_split parameter of HeteroRR is 'column' but the graph has no private "
                "edge column; load an edge list with the header source,target,private or use "
                "edge_split=random")
        private = np.isin(keys, pair_keys(marked, graph.num_nodes))
        if len(keys) and not private.any():
            raise InvalidConfigError(
                "The edge_split parameter of HeteroRR is 'column' but no training edge is marked "
                "private; the private edge set is empty. Mark edges with 1 in the private column")
        return private

    def _feature_rr(
        self, graph: Data, pub: np.ndarray, rngs: Rngs
    ) -> tuple[torch.Tensor, np.ndarray]:
        """FeatureRR's release and the θ it used (shared, or one row per node in paper mode)."""
        cfg = self.config
        x = node_minmax(graph.x.detach().to(torch.float32).cpu())
        xp = x[pub]
        alpha = permutation_importance(xp, graph.y.cpu()[pub], num_classes(graph),
                                       rngs.child("alpha").seed)
        mean_pub = xp.mean(0)
        if cfg.mode == "corrected":
            beta_raw = (xp - mean_pub).abs().mean(0).numpy()
            beta = beta_raw / max(beta_raw.sum(), 1e-12)
            theta = combine_theta(alpha, beta, cfg.gamma)
        else:
            beta_raw = (x - mean_pub).abs().numpy()  # the node's own data (flaw F1)
            beta = beta_raw / np.maximum(beta_raw.sum(1, keepdims=True), 1e-12)
            theta = combine_theta(alpha[None, :], beta, cfg.gamma)
        eps = torch.from_numpy(theta * cfg.epsilon)
        return kbin_mechanism(x, eps, cfg.k, rngs.child("rr").torch), theta

    @staticmethod
    def _ledger(cfg: HeteroRRConfig, n_private: int, n_edges: int,
                er: EdgeRRResult, steps: int) -> PrivacyLedger:
        edge_event = er.event
        eps_e = pure_epsilon(edge_event)
        split = (f"at random (private_fraction={cfg.private_fraction:g})"
                 if cfg.edge_split == "random" else "by the edge list's private column")
        edge_notes = (f"edges: {n_private} of {n_edges} marked private {split}; public edges "
                      "released as they are; labels not protected",
                      f"EdgeRR: eps_e = {eps_e:g} edge-DP for private edges = eps_e1 "
                      f"{er.epsilon_mcmc:g} (pHRG MCMC, exponential mechanism T = "
                      f"eps_e1/(2*Delta_e), Delta_e = {er.delta_e:.4g} from Eq. 19, "
                      f"{steps} fixed steps; holds at stationarity only) + eps_e2 "
                      f"{er.epsilon_prob:g} (Laplace scale {er.noise_scale:.4g} on LCA counts, "
                      "one draw per ER block)")
        common = (f"FeatureRR: k={cfg.k} bins, gamma={cfg.gamma:g}, per-feature "
                  f"eps_i = theta_i*eps_f, sigma_i=(k-1)/(k eps_i)", *edge_notes,
                  "units: epsilon is node-feature LDP (eps_f, events[0]); eps_e is a separate "
                  "edge-level guarantee (events[1]); they are not added")
        base = PrivacyLedger.from_event(PrivacyUnit.NODE_FEATURE, PureEpsilonEvent(cfg.epsilon),
                                        0.0)
        events = base.events + (edge_event.to_dict(),)
        edge_comp = {"epsilon_e": eps_e, "epsilon_e1": er.epsilon_mcmc,
                     "epsilon_e2": er.epsilon_prob, "delta_e": er.delta_e}
        if cfg.features == "public":
            corrected = cfg.mode == "corrected"
            return PrivacyLedger.from_event(
                PrivacyUnit.EDGE, edge_event, 0.0,
                status=GuaranteeStatus.VERIFIED if corrected else GuaranteeStatus.AUTHORS_CLAIM,
                notes=(("corrected mode: EdgeRR's private node set is all nodes (fixed "
                        "publicly) and the chain targets exp(L_pub + T L_pri)" if corrected
                        else "authors' claim: EdgeRR's private node set depends on the data "
                        "(flaw E4) and the chain alternates sub-steps (Alg. 2)"),
                       "features=public: node features released as they are (not protected); "
                       "epsilon is edge-DP for the private edges only")
                + edge_notes,
                components=edge_comp)
        if cfg.mode == "corrected":
            return dataclasses.replace(
                base, status=GuaranteeStatus.VERIFIED, events=events,
                notes=("corrected mode: one theta from public nodes shared by all nodes, so "
                       "the features compose to eps_f; EdgeRR's private node set is all "
                       "nodes (fixed publicly) and the chain targets exp(L_pub + T L_pri)",)
                + common,
                components={"epsilon_f": cfg.epsilon, **edge_comp})
        return dataclasses.replace(
            base, status=GuaranteeStatus.AUTHORS_CLAIM, events=events,
            notes=("authors' claim: theta depends on each node's own features (flaw F1); "
                   "the defensible bound is 2*eps_f; EdgeRR's private node set depends on "
                   "the data (flaw E4) and the chain alternates sub-steps (Alg. 2), so eps_e "
                   "is also the authors' claim",) + common,
            components={"epsilon_f": cfg.epsilon, **edge_comp,
                        "epsilon_upper_bound": 2.0 * cfg.epsilon})


__all__ = ["HeteroRR", "HeteroRRConfig", "combine_theta", "discretize", "kbin_mechanism",
           "kbin_probabilities", "node_minmax", "permutation_importance",
           "worst_case_log_ratio"]


