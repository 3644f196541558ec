"""One-run canary audit of a local feature mechanism: the ``node_feature`` unit.

LPGNN (multi-bit mechanism) and HeteroRR (FeatureRR's k-bin mechanism) privatise every
node's feature vector on the node's side: their ledgers claim ε-LDP per node's features
(``defenses.md`` §2.2, §5.2). Two feature vectors of one node are neighbours, whatever they
are, so the audit plants the pair that spends the whole budget.

The game (Steinke, Nasr & Jagielski 2023, as :mod:`graphleaks.audit.canary`):

1. ``m`` canary nodes are appended to the graph's feature matrix. Canary ``i`` gets a
   pattern ``P_i`` in the mechanism's scaled input domain [0, 1]^d: ``max(1, ⌊d/2⌋)``
   coordinates at 1 chosen at random, the rest at 0. A fair seeded coin plants ``P_i``
   ("in") or its complement ``1 − P_i`` ("out"): two vectors that differ in every coordinate.
   The raw values are chosen so the defense's own scaling maps them back to exactly 0 and 1
   (LPGNN: each column's minimum and maximum, so its data-dependent column bounds do not
   move; HeteroRR: 0 and 1, which its per-node min–max scaling keeps).
2. The defense's feature mechanism runs as graphleaks runs it when it trains the target:
   the same functions, the same seed derivation, on every real node and every canary
   (:data:`MECHANISMS`; a test checks that, without canaries, it returns exactly the
   features ``Defense.fit`` serves the target). No model is trained.
3. The attacker observes each canary's released row ``r_i`` (what the server receives and
   the target is served with) and scores it along the likelihood-ratio direction of the
   pair: ``Σ_j w_j (r_ij − c_j)(2 P_ij − 1)``. For the multi-bit mechanism this is the exact
   log-likelihood ratio of "in" against "out" up to a positive factor; for the k-bin
   mechanism too, with ``w_j`` the public per-feature budget share θ_j (undoing HeteroRR's
   standardisation, which is post-processing). The score reads only the release and public
   parameters, never the coin.
4. Guesses on the top and bottom scores become an ε lower bound with
   :func:`graphleaks.metrics.one_run.one_run_bound`, compared with the ledger's feature ε
   (LPGNN ``epsilon_x``, HeteroRR ``epsilon_f``).

What is audited is the feature release, not the training pipeline: under these defenses'
threat model everything the model learns from a node's features passes through the release
(post-processing), so the release carries the claim. Two caveats the report states: the
canaries lie inside the data's column bounds, so LPGNN's data-dependent min–max bounds (a
ledger note) are not tested; and a label budget (LPGNN's ε_y) is not audited here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks._validation import validate
from graphleaks.audit.canary import CanaryConfig
from graphleaks.defenses import registry as defense_registry
from graphleaks.defenses.base import Defense
from graphleaks.defenses.hetero_rr import HeteroRR
from graphleaks.defenses.lpgnn import LPGNN, mbm_sampling_size, minmax_scale, multibit_mechanism
from graphleaks.errors import InvalidConfigError
from graphleaks.metrics.one_run import guess_count, one_run_bound
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.report.records import CanaryAudit
from graphleaks.seeding import Rngs, derive_seed

UNIT = "node_feature"


@dataclass(frozen=True)
class FeatureRelease:
    """What a feature mechanism released for the canaries, and how the attacker reads it.

    Attributes:
        released: The whole release ``[n + m, d]``, real nodes first, as the target would be
            served it.
        num_real: ``n``, the graph's own nodes; the canaries' rows follow them.
        center: Per-column value ``[d]`` the score measures deviations from (public).
        weights: Per-column weights ``[d]`` of the score (public mechanism parameters).
        claimed_epsilon: The feature ε the defense's ledger states for this configuration.
        mechanism: One line naming the mechanism as it ran.
    """

    released: torch.Tensor
    num_real: int
    center: torch.Tensor
    weights: torch.Tensor
    claimed_epsilon: float
    mechanism: str

    @property
    def rows(self) -> torch.Tensor:
        """The canaries' released rows ``[m, d]``: all the attacker reads."""
        return self.released[self.num_real:]


#: ``(defense, graph, canary inputs in [0, 1]^{m×d}, seed) → FeatureRelease``.
FeatureMechanism = Callable[[Defense, Data, torch.Tensor, int], FeatureRelease]


def _lpgnn_release(defense: Defense, graph: Data, t: torch.Tensor, seed: int) -> FeatureRelease:
    """LPGNN's step 1 as ``LPGNN._fit`` runs it: column min–max, then the multi-bit mechanism."""
    eps = float(defense.config.epsilon)
    if not math.isfinite(eps):
        raise InvalidConfigError("The epsilon parameter of LPGNN is inf: the features are "
                                 "released as they are, so the node_feature unit has no claim "
                                 "to audit. Set a finite epsilon.")
    x = graph.x.detach().to(torch.float32).cpu()
    lo, hi = x.min(0).values, x.max(0).values
    raw = lo + t * (hi - lo)  # inside every column's bounds: the real nodes' scaling is kept
    x01 = minmax_scale(torch.cat([x, raw]))
    m = mbm_sampling_size(eps, x.shape[1])
    out = multibit_mechanism(x01, eps, Rngs.from_seed(seed, "lpgnn").child("mbm").torch, m=m)
    # the rectifier maps an unsampled coordinate to (α+β)/2 = 0.5 and a sampled bit to 0.5 ± c:
    # Σ_j (r_j − 0.5)(2P_j − 1) is the log-likelihood ratio of P against 1 − P up to a factor
    # ε/(m·c); a constant column carries nothing (both patterns scale to 0)
    return FeatureRelease(
        released=out, num_real=x.shape[0], center=torch.full((x.shape[1],), 0.5),
        weights=(hi > lo).to(torch.float32), claimed_epsilon=eps,
        mechanism=f"multi-bit mechanism, eps_x={eps:g}, m={m} of d={x.shape[1]} coordinates")


def _heterorr_release(defense: Defense, graph: Data, t: torch.Tensor,
                      seed: int) -> FeatureRelease:
    """FeatureRR as ``HeteroRR._fit`` runs it: public θ, the k-bin mechanism, standardising."""
    assert isinstance(defense, HeteroRR)  # the registry maps "heterorr" here
    cfg = defense.config
    if cfg.features != "kbin":
        raise InvalidConfigError("The features parameter of HeteroRR is 'public': the features "
                                 "are released as they are and the ledger's unit is edge; audit "
                                 "the edge unit, or set features=kbin.")
    n = int(graph.num_nodes)
    rngs = Rngs.from_seed(seed, "heterorr")
    # the public nodes (θ's source) are real nodes, drawn as _fit draws them; canaries are
    # private nodes, the only ones the LDP claim is about
    pub = np.sort(rngs.child("public").numpy.choice(
        n, size=max(2, int(round(cfg.public_fraction * n))), replace=False))
    y = graph.y.detach().cpu()
    both = Data(x=torch.cat([graph.x.detach().to(torch.float32).cpu(), t]),
                y=torch.cat([y, torch.zeros(len(t), dtype=y.dtype)]))
    # the defense's own method: the exact mechanism its training runs
    z, theta = defense._feature_rr(both, pub, rngs)
    # paper mode's θ rows depend on each node's own features (flaw F1): a row of a canary
    # would tell the coin, so the score uses the real nodes' mean θ
    th = torch.as_tensor(theta if theta.ndim == 1 else theta[:n].mean(0), dtype=torch.float32)
    k = int(cfg.k)
    # LLR of output bin u under P against 1 − P: Σ_j θ_j ε/(k−1)·(2P_j − 1)(2u_j − (k−1)),
    # and the release is (u+1)/k, so the centre is (k+1)/(2k)
    center = torch.full_like(th, (k + 1) / (2 * k))
    weights = th
    if cfg.standardize:  # as _fit: post-processing of the release, undone for the score
        mu, sd = z.mean(0), z.std(0).clamp_min(1e-6)
        z = (z - mu) / sd
        center, weights = (center - mu) / sd, th * sd
    return FeatureRelease(
        released=z, num_real=n, center=center, weights=weights, claimed_epsilon=float(cfg.epsilon),
        mechanism=f"FeatureRR k-bin mechanism ({cfg.mode} mode), eps_f={cfg.epsilon:g}, "
                  f"k={k}, theta from {len(pub)} public nodes")


#: The local feature mechanism of each defense whose ledger claims the node_feature unit.
MECHANISMS: dict[str, FeatureMechanism] = {LPGNN.name: _lpgnn_release,
                                           HeteroRR.name: _heterorr_release}


def feature_claim(ledger: PrivacyLedger) -> tuple[float, float]:
    """The ledger's ε and δ for the node's features alone.

    LPGNN's ledger adds ε_x and ε_y (``components["epsilon_x"]``); HeteroRR's headline is ε_f
    (``components["epsilon_f"]``); otherwise the ledger's ε.
    """
    for key in ("epsilon_x", "epsilon_f"):
        if key in ledger.components:
            return float(ledger.components[key]), float(ledger.delta)
    return float(ledger.epsilon), float(ledger.delta)


def check_feature_mechanism(defense: Defense) -> None:
    """Refuse a defense without a local feature mechanism this audit can repeat.

    Raises:
        InvalidConfigError: Naming the defenses that have one.
    """
    if defense.name not in MECHANISMS:
        raise InvalidConfigError(
            f"The unit parameter of the canary audit is node_feature, which needs a local "
            f"feature mechanism; {defense.name} has none graphleaks can repeat. Valid defenses: "
            f"{', '.join(sorted(MECHANISMS))}.")


def _patterns(m: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``[m, d]`` booleans, ``max(1, ⌊d/2⌋)`` true per row at random positions."""
    ones = max(1, d // 2)
    return np.argsort(rng.random((m, d)), axis=1) < ones


def feature_canary_audit(
    graph: Data, *, defense: str | Defense, defense_params: dict[str, Any] | None = None,
    config: CanaryConfig | None = None, seed: int,
    claimed: tuple[float, float] | None = None, mechanism: FeatureMechanism | None = None,
    **overrides: Any,
) -> CanaryAudit:
    """Plant feature canaries, run the defense's feature mechanism, bound its ε from one run.

    Args:
        graph: The graph whose real nodes the mechanism also privatises (not modified).
        defense: Registry name or instance of the defense under audit.
        defense_params: Overrides of the defense's config (with a name).
        config: The audit's parameters (``unit`` is ``node_feature``); ``overrides`` replace
            single fields. ``canary_degree`` and ``influence`` are not used.
        seed: Root seed of patterns, coins, the mechanism's randomness and tie-breaking.
        claimed: The (ε, δ) to check, e.g. :func:`feature_claim` of a trained target's ledger;
            None: the feature ε the defense's ledger states for this configuration, δ = 0.
        mechanism: The feature mechanism to run; None: the defense's (:data:`MECHANISMS`).
            Tests pass a deliberately broken one.
        **overrides: Fields of :class:`CanaryConfig`.

    Returns:
        The :class:`CanaryAudit` (unit ``node_feature``, attack ``released``).

    Raises:
        InvalidConfigError: For an invalid config, too few canaries for the confidence, or
            a defense without a local feature mechanism.

    Example:
        >>> from graphleaks.data import tiny_graph
        >>> a = feature_canary_audit(tiny_graph(), defense="lpgnn",
        ...                          defense_params={"epsilon": 2.0}, num_canaries=200, seed=0)
        >>> a.unit, a.attack, a.claimed_epsilon, a.bound.num_guesses, a.violation
        ('node_feature', 'released', 2.0, 100, False)
    """
    base = asdict(config or CanaryConfig(unit=UNIT))
    cfg = validate(CanaryConfig(**{**base, "unit": UNIT, **overrides}), "canary_audit")
    d = defense if isinstance(defense, Defense) else \
        defense_registry.get(defense)(**(defense_params or {}))
    validate(d.config, type(d).__name__)
    if mechanism is None:
        check_feature_mechanism(d)
        mechanism = MECHANISMS[d.name]
    m, dim = cfg.num_canaries, int(graph.num_features)
    rng = np.random.default_rng(derive_seed(seed, "canaries"))
    coins = rng.random(m) < 0.5
    pattern = _patterns(m, dim, rng)
    planted = torch.as_tensor(np.where(coins[:, None], pattern, ~pattern), dtype=torch.float32)
    rel = mechanism(d, graph, planted, derive_seed(seed, "mechanism"))
    sign = torch.as_tensor(pattern, dtype=torch.float64) * 2.0 - 1.0
    scores = ((rel.rows.double() - rel.center.double()) * rel.weights.double() * sign).sum(1)
    eps, delta = claimed if claimed is not None else (rel.claimed_epsilon, 0.0)
    r = guess_count(m, cfg.guess_fraction, cfg.confidence)
    bound = one_run_bound(coins, scores.numpy(), k_pos=r // 2, k_neg=r - r // 2, delta=delta,
                          confidence=cfg.confidence, seed=derive_seed(seed, "guesses"))
    return CanaryAudit(
        unit=UNIT, defense=d.name, attack="released", claimed_epsilon=float(eps),
        claimed_delta=float(delta), bound=bound, violation=bool(bound.epsilon_lb > eps),
        num_inserted=int(coins.sum()), seed=seed,
        scope=f"the feature mechanism's release ({rel.mechanism}), not the training run",
        notes=(f"{m} canary nodes, each its planted feature pattern or the complement by a "
               "fair coin, scored along the likelihood-ratio direction of its released row",
               "canaries lie inside the data's column bounds: data-dependent scaling bounds "
               "are not tested; a label budget is not audited here",
               f"{r} guesses (top {r // 2} in, bottom {r - r // 2} out), no target training",
               *(() if bound.epsilon_lb > 0 else (
                   "audited ε 0: no evidence against the claim, and none that it is tight "
                   "(each canary's release is close to noise at this budget, e.g. one split "
                   "over many features)",))),
    )


def default_feature_audit(target: Any, num_canaries: int, *,
                          seed: int) -> tuple[list[CanaryAudit], str | None]:
    """The default audit's node_feature canary audit of a trained target (see the runner).

    The target's own defense and configuration run their feature mechanism again with
    ``num_canaries`` canaries; the claim checked is the target's ledger's feature ε. Every
    guess is used: the multi-bit mechanism's score takes few values, so abstaining on half
    the canaries would only shrink the sample.

    Returns:
        The audits, and why none ran (None when one did).
    """
    if target.defense not in MECHANISMS:
        return [], (f"the node_feature canary audit needs a local feature mechanism; "
                    f"{target.defense} has none graphleaks can repeat")
    try:
        audit = feature_canary_audit(
            target.graph, defense=target.defense, defense_params=dict(target.defense_config),
            seed=seed, claimed=feature_claim(target.ledger), num_canaries=num_canaries,
            guess_fraction=1.0)
    except InvalidConfigError as exc:
        return [], (f"the node_feature canary audit could not run ({exc}); run "
                    "graphleaks.audit.canary_features.feature_canary_audit with other settings")
    return [audit], None


__all__ = ["MECHANISMS", "FeatureMechanism", "FeatureRelease", "check_feature_mechanism",
           "default_feature_audit", "feature_canary_audit", "feature_claim"]
