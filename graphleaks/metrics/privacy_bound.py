"""Empirical lower bounds on the privacy parameter epsilon from attack scores.

A mechanism that is (epsilon, delta)-DP bounds every membership test: for any rejection region,
``TPR <= e^epsilon * FPR + delta`` and ``TNR <= e^epsilon * FNR + delta`` (Kairouz et al. 2015).
Turning an attack's observed rates into high-confidence bounds with Clopper-Pearson intervals
and inverting these inequalities gives a statistical *lower* bound on epsilon (Jagielski et al.
2020, "Auditing differentially private machine learning"; Nasr et al. 2021). Steinke, Nasr and
Jagielski (2023, "Privacy auditing with one (1) training run") show that one training run
suffices when the audited members are chosen independently at random from the candidates.

If a model claims an epsilon *below* the returned lower bound, its guarantee (or its
implementation, or the stated privacy unit) is wrong. A small lower bound proves nothing about
the model being private.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from graphleaks.errors import InvalidConfigError
from graphleaks.metrics._core import check_binary

__all__ = ["RANDOM_MEMBER_UNITS", "TESTED_UNITS", "EpsilonBound", "clopper_pearson",
           "clopper_pearson_many", "compare_with_claim", "epsilon_lower_bound"]

#: The privacy unit each task's challenge tests: a membership challenge includes or excludes
#: one node, a link challenge one edge.
TESTED_UNITS: dict[str, str] = {"membership": "node", "link": "edge",
                                 "graph_membership": "graph", "edge_membership": "edge"}

#: Units whose challenge draws its positives at random from the candidates (the audit
#: picks the members), as the bound's first assumption needs. A link challenge's positives
#: are the graph's own edges: features and query-graph edges the mechanism never saw
#: separate them from non-edges whatever ε (link stealing on a GAP-EDP target), so an
#: optimistic bound there measures the data, not the mechanism.
RANDOM_MEMBER_UNITS: frozenset[str] = frozenset({"node", "graph"})

FloatArray = npt.NDArray[np.float64]

ASSUMPTIONS: tuple[str, ...] = (
    "Members were chosen independently at random from the candidate set, as in one-run "
    "auditing (Steinke, Nasr & Jagielski 2023); each candidate's guess is treated as an "
    "independent Bernoulli trial, which that design motivates (their own test statistic differs).",
    "The bound holds with the stated confidence: the TPR/TNR lower and FPR/FNR upper bounds are "
    "two-sided Clopper-Pearson intervals at that level, so both one-sided bounds hold jointly "
    "with at least that probability.",
    "It is a lower bound on the epsilon of the mechanism for the tested unit (the neighbouring "
    "relation under which candidates were included or excluded, e.g. one node or one edge), "
    "not an estimate of epsilon.",
    "When the threshold is maximised over the same scores (threshold=None) the bound is "
    "optimistic; it is sound only for a threshold fixed on separate data.",
)


def _check_confidence(confidence: float, owner: str) -> float:
    """Validate a confidence level in (0, 1)."""
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, (int, float, np.integer, np.floating))
        or not 0.0 < float(confidence) < 1.0
    ):
        raise InvalidConfigError(
            f"The 'confidence' parameter of {owner} must be a float in (0, 1). "
            f"Got {confidence!r} instead."
        )
    return float(confidence)


def _cp_bounds(
    k: npt.NDArray[Any], n: int | npt.NDArray[Any], confidence: float
) -> tuple[FloatArray, FloatArray]:
    """Vectorised two-sided Clopper-Pearson interval of ``k`` successes in ``n`` trials.

    ``n`` may be one count or one per ``k`` (several sets at once, e.g. slices).
    """
    from scipy.stats import beta

    k = np.asarray(k, dtype=np.float64)
    alpha = 1.0 - confidence
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = beta.ppf(alpha / 2.0, np.maximum(k, 1.0), n - k + 1.0)
        hi = beta.ppf(1.0 - alpha / 2.0, k + 1.0, np.maximum(n - k, 1.0))
    lo = np.where(k <= 0, 0.0, lo)
    hi = np.where(k >= n, 1.0, hi)
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


def clopper_pearson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """Exact (Clopper-Pearson) two-sided binomial confidence interval.

    Args:
        k: Number of successes, ``0 <= k <= n``.
        n: Number of trials, ``n >= 1``.
        confidence: Two-sided confidence level in (0, 1).

    Returns:
        ``(lo, hi)`` with ``lo = 0`` when ``k = 0`` and ``hi = 1`` when ``k = n``.

    Raises:
        InvalidConfigError: If ``n``, ``k`` or ``confidence`` is out of range.

    Example:
        >>> lo, hi = clopper_pearson(0, 10, 0.95)
        >>> lo, round(hi, 4)
        (0.0, 0.3085)
    """
    conf = _check_confidence(confidence, "clopper_pearson")
    for name, value in (("n", n), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise InvalidConfigError(
                f"The '{name}' parameter of clopper_pearson must be an int. Got {value!r} instead."
            )
    if n < 1:
        raise InvalidConfigError(
            f"The 'n' parameter of clopper_pearson must be an int in [1, inf). Got {n!r} instead."
        )
    if not 0 <= k <= n:
        raise InvalidConfigError(
            f"The 'k' parameter of clopper_pearson must be an int in [0, n={n}]. Got {k!r} instead."
        )
    lo, hi = _cp_bounds(np.array([k]), int(n), conf)
    return float(lo[0]), float(hi[0])


def clopper_pearson_many(
    k: npt.ArrayLike, n: npt.ArrayLike, confidence: float
) -> tuple[FloatArray, FloatArray]:
    """:func:`clopper_pearson` of many ``(k, n)`` pairs in one call (no validation).

    The same numbers as one :func:`clopper_pearson` call per pair, from one vectorised
    quantile call (per-call overhead dominates scipy's ``beta.ppf`` on a few values).

    Args:
        k: Successes, integers with ``0 <= k <= n``.
        n: Trials per ``k`` (``n >= 1``), or one count for all.
        confidence: Two-sided confidence level in (0, 1).

    Returns:
        ``(lo, hi)`` arrays.

    Example:
        >>> lo, hi = clopper_pearson_many([0, 10], [10, 10], 0.95)
        >>> lo.tolist()[0], round(hi.tolist()[0], 4), hi.tolist()[1]
        (0.0, 0.3085, 1.0)
    """
    k_arr = np.asarray(k, dtype=np.float64)
    n_arr = np.broadcast_to(np.asarray(n, dtype=np.float64), k_arr.shape)
    return _cp_bounds(k_arr, n_arr, float(confidence))


@dataclass(frozen=True)
class EpsilonBound:
    """A statistical lower bound on epsilon from one attack's scores.

    Attributes:
        epsilon_lb: The lower bound (>= 0; 0 means no evidence against any epsilon).
        threshold: The decision threshold (``score >= threshold`` -> member) that gives it.
        tpr_lower: Clopper-Pearson lower bound of the TPR at that threshold.
        fpr_upper: Clopper-Pearson upper bound of the FPR at that threshold.
        form: Which inequality gave the bound: ``"tpr/fpr"`` or ``"tnr/fnr"``.
        delta: The delta assumed for the mechanism.
        confidence: Confidence level of the bound.
        threshold_fixed: Whether the threshold was given (sound) rather than maximised over
            (optimistic).
        n_pos: Number of members (positives).
        n_neg: Number of non-members (negatives).
        unit: The privacy unit the test varies (``node`` for membership, ``edge`` for links);
            the bound says nothing about a guarantee stated for another unit.
        assumptions: What must hold for the bound to be valid.
    """

    epsilon_lb: float
    threshold: float
    tpr_lower: float
    fpr_upper: float
    form: str
    delta: float
    confidence: float
    threshold_fixed: bool
    n_pos: int
    n_neg: int
    unit: str = "node"
    assumptions: tuple[str, ...] = ASSUMPTIONS

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict (assumptions as a list)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["assumptions"] = list(self.assumptions)
        return out


def epsilon_lower_bound(
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    threshold: float | None = None,
    unit: str = "node",
) -> EpsilonBound:
    """Lower-bound epsilon of an (epsilon, delta)-DP mechanism from membership scores.

    For a threshold ``t`` (predict member when ``score >= t``) the observed counts give
    Clopper-Pearson bounds ``TPR_lo``, ``FPR_hi``, ``TNR_lo`` and ``FNR_hi``, and DP implies

    ``epsilon >= log((TPR_lo - delta) / FPR_hi)`` and ``epsilon >= log((TNR_lo - delta) / FNR_hi)``.

    The larger of the two, floored at 0, is returned. With ``threshold=None`` the bound is
    maximised over every score value as threshold, without a multiple-testing correction, so it
    is **optimistic**; choose the threshold on separate data (e.g. shadow models or a held-out
    half of the candidates) and pass it for a sound bound.

    Args:
        scores: 1-D membership scores, higher = more likely member.
        labels: 1-D 0/1 labels, 1 = member (included in training).
        delta: The delta of the audited guarantee, in [0, 1) (default: 0).
        confidence: Confidence level in (0, 1) (default: 0.95).
        threshold: Fixed threshold to evaluate (default: None, maximise over thresholds).
        unit: The privacy unit the candidates differ in (``node``, ``edge``, ...).

    Returns:
        The :class:`EpsilonBound`.

    Raises:
        InvalidConfigError: If ``delta`` or ``confidence`` is out of range.
        DataError: If the inputs are malformed or a class is missing.

    Example:
        >>> b = epsilon_lower_bound([1.0] * 100 + [0.0] * 100, [1] * 100 + [0] * 100)
        >>> round(b.epsilon_lb, 2), b.threshold
        (3.28, 1.0)
    """
    conf = _check_confidence(confidence, "epsilon_lower_bound")
    if (
        isinstance(delta, bool)
        or not isinstance(delta, (int, float, np.integer, np.floating))
        or not 0.0 <= float(delta) < 1.0
    ):
        raise InvalidConfigError(
            "The 'delta' parameter of epsilon_lower_bound must be a float in [0, 1). "
            f"Got {delta!r} instead."
        )
    d = float(delta)
    s, y = check_binary(scores, labels, "epsilon_lower_bound")
    pos = np.sort(s[y])
    neg = np.sort(s[~y])
    n_pos, n_neg = pos.size, neg.size
    if threshold is None:
        thresholds = np.unique(s)
    else:
        thresholds = np.array([float(threshold)])
    k_pos = n_pos - np.searchsorted(pos, thresholds, side="left")  # members flagged
    k_neg = n_neg - np.searchsorted(neg, thresholds, side="left")  # non-members flagged
    # Both forms grow with k_pos and shrink with k_neg. A threshold that flags no fewer
    # non-members than the next lower one flags as many, and at most as many members: it is
    # never better, and on a tie argmax already returns the lower one. Dropping it leaves the
    # bound and its threshold unchanged and skips the Clopper-Pearson quantiles (scipy's
    # beta.ppf, most of the cost on millions of candidates) of every such threshold.
    needed = np.ones(len(thresholds), dtype=bool)
    needed[1:] = k_neg[1:] != k_neg[:-1]
    thresholds, k_pos, k_neg = thresholds[needed], k_pos[needed], k_neg[needed]
    tpr_lo, _ = _cp_bounds(k_pos, n_pos, conf)
    _, fpr_hi = _cp_bounds(k_neg, n_neg, conf)
    # Clopper-Pearson is symmetric: the upper bound for n - k failures is 1 - (lower bound for
    # k successes), so FNR_hi = 1 - TPR_lo and TNR_lo = 1 - FPR_hi (both < 1 resp. > 0).
    fnr_hi = 1.0 - tpr_lo
    tnr_lo = 1.0 - fpr_hi

    with np.errstate(divide="ignore", invalid="ignore"):
        eps_a = np.where(tpr_lo > d, np.log((tpr_lo - d) / fpr_hi), -np.inf)
        eps_b = np.where(tnr_lo > d, np.log((tnr_lo - d) / fnr_hi), -np.inf)
    best_a = int(np.argmax(eps_a))
    best_b = int(np.argmax(eps_b))
    if eps_a[best_a] >= eps_b[best_b] - 1e-12:  # prefer the TPR/FPR form on (near) ties
        best, form, raw = best_a, "tpr/fpr", float(eps_a[best_a])
    else:
        best, form, raw = best_b, "tnr/fnr", float(eps_b[best_b])
    return EpsilonBound(
        epsilon_lb=max(raw, 0.0),
        threshold=float(thresholds[best]),
        tpr_lower=float(tpr_lo[best]),
        fpr_upper=float(fpr_hi[best]),
        form=form,
        delta=d,
        confidence=conf,
        threshold_fixed=threshold is not None,
        n_pos=int(n_pos),
        n_neg=int(n_neg),
        unit=str(unit),
    )


def compare_with_claim(
    bound: EpsilonBound, *, ledger_unit: str, claimed_epsilon: float
) -> dict[str, Any]:
    """Compare a lower bound with a ledger's claim, only when both speak of the same unit.

    A bound on the ε of one unit (say, a node's membership) contradicts nothing about a
    guarantee stated for another unit (an edge, a node's features): such a pair is reported
    as not comparable instead of as a violation.

    An *optimistic* bound (threshold chosen on the evaluation labels) is compared only for
    the units of :data:`RANDOM_MEMBER_UNITS`, whose positives the audit drew at random. For
    a link challenge the positives are the graph's own edges, and signal the mechanism did
    not produce (feature homophily, edges of the query graph) lifts the optimistic bound at
    any ε; it is reported as not compared, never as "claimed ε is below this bound". A sound
    bound (threshold fixed without the labels) is compared for every unit.

    Args:
        bound: The empirical lower bound, with its unit.
        ledger_unit: The unit the ledger's ε protects (``none`` for a non-private target).
        claimed_epsilon: The ledger's ε (``inf`` when non-private).

    Returns:
        ``{"tested_unit", "ledger_unit", "comparable", "violation", "sound", "text"}``;
        ``violation`` is None when not comparable.

    Example:
        >>> b = epsilon_lower_bound([1.0] * 100 + [0.0] * 100, [1] * 100 + [0] * 100)
        >>> compare_with_claim(b, ledger_unit="edge", claimed_epsilon=1.0)["text"]
        'not comparable: the attack tests unit node, the ledger protects unit edge'
    """
    out: dict[str, Any] = {"tested_unit": bound.unit, "ledger_unit": ledger_unit,
                           "comparable": False, "violation": None,
                           "sound": bound.threshold_fixed}
    if ledger_unit == "none" or not np.isfinite(claimed_epsilon):
        out["text"] = "no finite ε claimed: nothing to compare with"
    elif ledger_unit != bound.unit:
        out["text"] = (f"not comparable: the attack tests unit {bound.unit}, the ledger "
                       f"protects unit {ledger_unit}")
    elif not bound.threshold_fixed and bound.unit not in RANDOM_MEMBER_UNITS:
        out["text"] = (f"not compared: an optimistic bound on {bound.unit}s that were not drawn "
                       "at random also counts signal the mechanism did not produce (e.g. "
                       "feature homophily, query-graph edges)")
    else:
        violated = bound.epsilon_lb > claimed_epsilon
        out.update(comparable=True, violation=bool(violated))
        if not violated:
            out["text"] = f"consistent with the claimed ε {claimed_epsilon:g} ({ledger_unit} unit)"
        elif bound.threshold_fixed:
            out["text"] = ("VIOLATION: the claimed ε is below the measured lower bound "
                           f"({ledger_unit} unit)")
        else:
            out["text"] = ("claimed ε is below this optimistic bound; check with more data "
                           f"({ledger_unit} unit)")
    return out
