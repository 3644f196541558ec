"""The verdict: one line per privacy risk, with a level, the attack behind it and a next step.

Levels come from documented thresholds on the **upper** 95 % confidence bound of each
attack's metrics, so a verdict of ``none`` means the data rule out a leak of that size, not
merely that the point estimate is small. The thresholds (also in the README):

================  =====================================  ===============================
level             membership / edges / reconstruction    attributes
                  (upper bound of TPR@1%FPR or of AUC)    (upper bound of accuracy gain
                                                          over the majority baseline)
================  =====================================  ===============================
severe            TPR@1%FPR >= 0.20 or AUC >= 0.85        gain >= 0.30
high              TPR@1%FPR >= 0.05 or AUC >= 0.70        gain >= 0.15
low               TPR@1%FPR >= 0.02 or AUC >= 0.55        gain >= 0.05
none              below all of the above                  below 0.05
miscalibrated     AUC interval entirely below 0.5         gain interval entirely below 0
inconclusive      fewer than 10 positives or negatives
================  =====================================  ===============================

``miscalibrated`` means the attack ranks members *below* non-members more often than chance:
its scores are informative but inverted or badly calibrated, which is never evidence of
"no leak". A risk's level is the highest level among its attacks; if every attack of a risk
is miscalibrated the risk is reported as miscalibrated.

Each line is computed for the target in front of it. It states whether the target's privacy
ledger covers the risk's unit (membership ↔ node, edges and reconstruction ↔ edge,
attributes ↔ node_feature): covered at ε, not covered, or no ledger. The next step follows
from that: a covered risk that still leaks gets a tighter ε of the same defense (never a
weaker one) and the audited-ε check; an uncovered risk gets the defense whose unit covers it;
a model trained outside graphleaks gets what applies to its own pipeline. A risk measured on
an artefact other than the model (attribute inference on a simulated DeepWalk release of the
graph) gets its own line naming that artefact, never the model's line. A target whose test
accuracy is within :data:`UNINFORMATIVE_MARGIN` of the majority baseline, or whose best epoch
is at most 1, opens the verdict with an ``uninformative`` line: its audit says little about a
useful model. :func:`verdict_notes` lists every attack that was skipped or not graded, with
a reason the user can act on.

The verdict reads metrics already computed by :mod:`graphleaks.metrics`; it computes none.

Example:
    >>> from graphleaks.report.records import MetricReading, Readings
    >>> r = Readings({"auc": MetricReading(0.8, (0.77, 0.83)),
    ...               "tpr@1%fpr": MetricReading(0.08, (0.04, 0.12))})
    >>> v = verdict_of([("confidence_mia", "membership", r)])
    >>> v[0].risk, v[0].level, v[0].attack
    ('membership', 'high', 'confidence_mia')
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from graphleaks._display import fmt_figure as _f
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.report.query_curves import assumed_budget
from graphleaks.report.records import (
    AttackMetrics,
    CanaryAudit,
    MetricReading,
    Readings,
    decode_readings,
)
from graphleaks.threat import ThreatModel

RISKS = ("membership", "edges", "attributes", "reconstruction")
#: The risks of a graph-classification audit (whole graphs are the records).
GRAPH_RISKS = ("graph membership",)
#: The risk of a link predictor's training edges (issue 25). Not in :data:`RISKS`: a node
#: audit never gets this line; a link audit gets it from its edge-membership attacks (and a
#: "not assessed" line when none ran, see :func:`verdict_of`'s ``risks``).
EDGE_MEMBERSHIP_RISK = "edge membership"
#: The risks of a link-prediction audit (``report.config["task"] == "link"``).
LINK_RISKS = (EDGE_MEMBERSHIP_RISK,)
#: (level, TPR@1%FPR upper bound, AUC upper bound), checked from the top.
BINARY_THRESHOLDS: tuple[tuple[str, float, float], ...] = (
    ("severe", 0.20, 0.85), ("high", 0.05, 0.70), ("low", 0.02, 0.55))
#: (level, upper bound of the accuracy gain over the majority baseline).
GAIN_THRESHOLDS: tuple[tuple[str, float], ...] = (("severe", 0.30), ("high", 0.15),
                                                  ("low", 0.05))
_RISK_OF_TASK = {"membership": "membership", "link": "edges", "attribute": "attributes",
                 "reconstruction": "reconstruction", "graph_membership": "graph membership",
                 "edge_membership": EDGE_MEMBERSHIP_RISK}
#: The graphleaks defense whose privacy unit covers each risk, for a risk the target's
#: ledger leaves open.
DEFENSE_ADVICE = {
    "membership": ("gap_ndp", "node-level DP"),
    "edges": ("gap_edp", "edge-level DP"),
    "reconstruction": ("gap_edp", "edge-level DP (the structure the model encodes)"),
    "attributes": ("lpgnn", "local DP on node features"),
    "graph membership": ("dp_sgd", "per-graph DP-SGD (graph unit)"),
    EDGE_MEMBERSHIP_RISK: ("dp_sgd", "DP-SGD over edges (per-edge clipping)"),
}
#: The privacy unit whose guarantee bounds each risk.
RISK_UNIT = {"membership": "node", "edges": "edge", "reconstruction": "edge",
             "attributes": "node_feature", "graph membership": "graph",
             EDGE_MEMBERSHIP_RISK: "edge"}
#: Risk units each ledger unit covers (node-level DP covers a node's edges and features).
LEDGER_COVERS = {
    "node": ("node", "edge", "node_feature"),
    "edge": ("edge",),
    "node_feature": ("node_feature",),
    "node_feature_and_label": ("node_feature",),
    "node_label": (),
    "graph": ("graph",),
    "none": (),
}
#: What a user's own pipeline can do per risk (a model trained outside graphleaks).
PIPELINE_ADVICE = {
    "membership": ("In your own training loop: DP-SGD with per-node gradient clipping and "
                   "bounded-degree neighbour sampling (node-level DP, e.g. Opacus on the "
                   "sampled computation graphs), or stronger regularisation and early "
                   "stopping; then re-audit the retrained model."),
    "edges": ("Edge-level DP needs a different training procedure (private aggregation): "
              "retrain with graphleaks' GAP-EDP (graphleaks train --defense gap_edp --epsilon "
              "4), or perturb the graph before your own training (EdgeRand, LapGraph); serve "
              "logits only to trusted callers meanwhile."),
    "reconstruction": ("The hidden layers encode the graph: do not expose them, or retrain with "
                       "edge-level DP (graphleaks' GAP-EDP: graphleaks train --defense gap_edp "
                       "--epsilon 4)."),
    "attributes": ("Perturb node features locally before your own training (LPGNN's multi-bit "
                   "mechanism), or drop features correlated with the sensitive attribute."),
    "graph membership": ("In your own training loop: DP-SGD with one graph per sample "
                         "(per-graph gradient clipping, e.g. torch.func per-sample gradients; "
                         "Opacus' hooks mix a batch's graphs in message passing), or stronger "
                         "regularisation and early stopping; then re-audit the retrained "
                         "model."),
    EDGE_MEMBERSHIP_RISK: (
        "In your own training loop: DP-SGD over edges (clip each training edge's gradient, "
        "with an encoder whose message passing does not reuse the edges, or a private "
        "aggregation), or fewer epochs and stronger regularisation; drop queried pairs from "
        "the served graph if a known interaction need not be visible; then re-audit."),
}
#: Fewest positives and negatives an attack needs before the verdict grades it. LinkTeller's
#: ``auto`` sampler sizes its sample to reach it (``attacks._pairs.MIN_GRADED_POSITIVES``,
#: kept equal by a test: this module stays importable without torch).
MIN_PER_SIDE = 10
#: A target whose test accuracy is below the majority baseline plus this is uninformative.
UNINFORMATIVE_MARGIN = 0.05
_RANK = {"inconclusive": -2, "miscalibrated": -1, "none": 0, "low": 1, "high": 2, "severe": 3}


class GradedAttack(Protocol):
    """What the verdict reads of one attack's outcome (a report's ``AttackReport``)."""

    @property
    def attack(self) -> str:
        """The attack's registry name."""

    @property
    def task(self) -> str:
        """Its task (``membership``, ``link``, ...)."""

    @property
    def metrics(self) -> AttackMetrics:
        """Its typed metrics."""

    @property
    def threat_model(self) -> ThreatModel:
        """The threat model it ran under."""

    @property
    def config(self) -> Mapping[str, Any]:
        """Its configuration as recorded."""

    @property
    def notes(self) -> Sequence[str]:
        """Its notes."""


class GradedTarget(Protocol):
    """What the verdict reads of the audited target (a report's ``TargetSummary``)."""

    @property
    def defense(self) -> str:
        """The defense that trained it."""

    @property
    def dataset(self) -> Mapping[str, Any]:
        """The dataset record."""

    @property
    def protocol(self) -> str:
        """The training protocol."""

    @property
    def utility(self) -> Mapping[str, float]:
        """Utility metrics."""

    @property
    def training(self) -> Mapping[str, Any]:
        """The training record."""


class GradedReport(Protocol):
    """What the verdict reads of a report (an ``AuditReport``; the verdict sits below it,
    since the report's JSON records its verdict)."""

    @property
    def attacks(self) -> Sequence[GradedAttack]:
        """The attacks' outcomes."""

    @property
    def config(self) -> Mapping[str, Any]:
        """The audit's configuration (``sweep_rows`` and skipped attacks are read from it)."""

    @property
    def target(self) -> GradedTarget:
        """The audited target."""

    @property
    def ledger(self) -> PrivacyLedger:
        """The target's privacy ledger."""

    @property
    def canary_audits(self) -> Sequence[CanaryAudit]:
        """Canary audits of the claimed ε."""


@dataclass(frozen=True)
class AttackLevel:
    """The level one attack reaches, and the numbers behind it."""

    attack: str
    level: str
    basis: str
    #: The level the point estimates alone reach (the same thresholds on the values, not
    #: the bounds). Below ``level`` when only the interval's width reaches it: a leak that
    #: large is not ruled out, but was not measured either.
    estimate_level: str = ""

    @property
    def bound_only(self) -> bool:
        """Whether the level rests on the 95 % bound alone (the estimates are below it)."""
        return (self.estimate_level in _RANK and _RANK[self.level] > 0
                and _RANK[self.estimate_level] < _RANK[self.level])


@dataclass(frozen=True)
class RiskVerdict:
    """One risk's verdict line.

    Attributes:
        risk: ``membership``, ``edges``, ``attributes`` or ``reconstruction``.
        level: ``none``, ``low``, ``high``, ``severe``, ``miscalibrated`` or
            ``not assessed`` (no attack of this risk ran).
        attack: The strongest attack behind the level (None when not assessed).
        basis: The numbers that set the level.
        advice: What to do next, for this target.
        coverage: Whether the target's ledger covers this risk's unit ("covered: edge unit
            at ε = 1", "not covered: ...", "no ledger: ..."); "" for the target line.
        artefact: What was attacked when it is not the model (e.g. "DeepWalk release of the
            graph, not the model"); None for the model itself.
    """

    risk: str
    level: str
    attack: str | None
    basis: str
    advice: str
    coverage: str = ""
    artefact: str | None = None

    @property
    def label(self) -> str:
        """The risk, with the artefact it was measured on when that is not the model."""
        return f"{self.risk} ({self.artefact})" if self.artefact else self.risk

    def line(self) -> str:
        """The verdict as one plain-text line."""
        who = f" ({self.attack}: {self.basis})" if self.attack else (
            f" ({self.basis})" if self.basis else "")
        cov = f" [{self.coverage}]" if self.coverage else ""
        return f"{self.label}: {self.level.upper()}{who}{cov}. {self.advice}"


def risk_of(attack: str, task: str) -> str:
    """The risk an attack measures: its class's ``risk`` attribute, else its task's."""
    from graphleaks.attacks import registry

    if attack in registry:
        risk = getattr(registry.get(attack), "risk", None)
        if isinstance(risk, str):
            return risk
    return _RISK_OF_TASK.get(task, task)


def _hi(est: MetricReading | None) -> float | None:
    if est is None:
        return None
    v = float(est.ci[1]) if est.ci else float(est.value)
    return v if math.isfinite(v) else None


def attack_level(name: str, readings: Readings) -> AttackLevel | None:
    """The level of one attack's metrics (None if it has no gradable metric)."""
    if readings.multiclass:
        gain = readings.get("gain_over_baseline")
        hi = _hi(gain)
        if gain is None or hi is None:
            return None
        basis = f"accuracy gain over majority baseline ≤ {_f(hi)} (95% upper bound)"
        if hi < 0:
            return AttackLevel(name, "miscalibrated", basis)
        level = next((lv for lv, t in GAIN_THRESHOLDS if hi >= t), "none")
        return AttackLevel(name, level, basis)
    auc = readings.get("auc")
    if auc is None:
        return None
    n_pos, n_neg = readings.n_pos, readings.n_neg
    if n_pos is not None and n_neg is not None and min(n_pos, n_neg) < MIN_PER_SIDE:
        # e.g. LinkTeller on a small node sample: one edge gives AUC 1.0 and means nothing
        return AttackLevel(name, "inconclusive", f"only {n_pos} positives / {n_neg} negatives "
                           f"(need {MIN_PER_SIDE} of each)")
    auc_hi = _hi(auc)
    tpr_hi = _hi(readings.get("tpr@1%fpr"))
    auc_txt = f"AUC {_f(auc.value)} ≤ {_f(auc_hi)}" if auc_hi is not None else "AUC –"
    tpr_txt = f"TPR@1%FPR ≤ {_f(tpr_hi)}" if tpr_hi is not None else "TPR@1%FPR –"
    basis = f"{auc_txt}, {tpr_txt} (95% upper bounds)"
    if auc_hi is not None and auc_hi < 0.5:
        lo = auc.ci[0] if auc.ci else auc.value
        return AttackLevel(name, "miscalibrated",
                           f"AUC interval [{_f(lo)}, {_f(auc_hi)}] lies entirely "
                           "below chance: the attack is miscalibrated, not evidence of no leak")
    tpr = readings.get("tpr@1%fpr")
    estimate = _binary_level(None if tpr is None else float(tpr.value), float(auc.value))
    return AttackLevel(name, _binary_level(tpr_hi, auc_hi), basis, estimate)


def _binary_level(tpr: float | None, auc: float | None) -> str:
    """The first level of :data:`BINARY_THRESHOLDS` that ``tpr`` or ``auc`` reaches."""
    for level, t_tpr, t_auc in BINARY_THRESHOLDS:
        if (tpr is not None and math.isfinite(tpr) and tpr >= t_tpr) or (
                auc is not None and math.isfinite(auc) and auc >= t_auc):
            return level
    return "none"


def _strength(readings: Readings) -> tuple[float, float]:
    return (_hi(readings.get("tpr@1%fpr")) or 0.0,
            _hi(readings.get("auc")) or _hi(readings.get("gain_over_baseline")) or 0.0)


@dataclass(frozen=True)
class TargetContext:
    """What the verdict needs to know of the audited target.

    Attributes:
        origin: ``graphleaks`` (trained by graphleaks: a bundle, spec or train-here audit),
            ``user`` (a model trained outside graphleaks) or ``scores`` (exported scores).
        defense: The defense that trained it (``none``).
        ledger_unit: The ledger's privacy unit (``none`` for a non-private target).
        epsilon: The ledger's claimed ε (inf for none).
        audited: Canary-audited ε lower bound per audited unit.
        violations: Units whose audited ε exceeds the claimed ε.
    """

    origin: str = "graphleaks"
    defense: str = "none"
    ledger_unit: str = "none"
    epsilon: float = math.inf
    audited: Mapping[str, float] = field(default_factory=dict)
    violations: frozenset[str] = frozenset()

    @property
    def private(self) -> bool:
        """Whether the ledger states a finite ε for some unit."""
        return self.ledger_unit != "none" and math.isfinite(self.epsilon)


def target_origin(report: GradedReport) -> str:
    """``scores``, ``user`` or ``graphleaks``: who trained the target (see TargetContext)."""
    cfg = report.config
    if "scores_only" in cfg or report.target.protocol == "scores_only":
        return "scores"
    if cfg.get("target_origin") == "user model":
        return "user"
    ds = report.target.dataset or {}
    if ds.get("kind") == "user" and ds.get("name") == "user model":
        return "user"  # reports written before the origin was recorded
    return "graphleaks"


def context_of(report: GradedReport) -> TargetContext:
    """The :class:`TargetContext` of a report."""
    led = report.ledger
    private = led.status.value != "non_private" and math.isfinite(led.epsilon)
    return TargetContext(
        origin=target_origin(report), defense=report.target.defense,
        ledger_unit=led.unit.value if private else "none",
        epsilon=float(led.epsilon) if private else math.inf,
        audited={c.unit: float(c.bound.epsilon_lb) for c in report.canary_audits},
        violations=frozenset(c.unit for c in report.canary_audits if c.violation))


def _coverage(risk: str, ctx: TargetContext, artefact: str | None) -> str:
    if artefact is not None:
        return ("not covered: measured on that release, which the model's ledger does not "
                "describe")
    if not ctx.private:
        if ctx.origin == "user":
            return "no ledger: a model trained outside graphleaks states no guarantee here"
        if ctx.origin == "scores":
            return "no ledger: scores only, the target's privacy claim is unknown"
        return "no ledger: the target is not private"
    unit = RISK_UNIT.get(risk, "node")
    if unit in LEDGER_COVERS.get(ctx.ledger_unit, ()):
        audited = ctx.audited.get(ctx.ledger_unit)
        extra = f", audited ε ≥ {audited:.3g}" if audited is not None else ""
        return f"covered: {ctx.ledger_unit} unit at ε = {ctx.epsilon:g}{extra}"
    return (f"not covered: the ledger protects the {ctx.ledger_unit} unit, not the {unit} "
            "unit")


def _train_cmd(defense: str, epsilon: float, risk: str = "") -> str:
    task = {"graph membership": "--task graph ", EDGE_MEMBERSHIP_RISK: "--task link "}.get(
        risk, "")
    return (f"graphleaks train {task}--defense {defense} --epsilon {epsilon:g} --out model-dp, "
            "then graphleaks audit --bundle model-dp")


def _advice(risk: str, level: str, sweep_rows: Sequence[Mapping[str, Any]] | None,
            attacks_of_risk: set[str], ctx: TargetContext | None = None,
            artefact: str | None = None, *, bound_only: bool = False) -> str:
    text = _next_step(risk, level, sweep_rows, attacks_of_risk, ctx, artefact,
                      bound_only=bound_only)
    if bound_only:  # say what was measured before what to do about a leak not measured
        return ("Only the 95% bound reaches this level (the estimates are below it): a leak "
                "this large is not ruled out, not shown; audit more candidates (--suite "
                "thorough, larger member and non-member sets) to narrow the bound. " + text)
    return text


def _next_step(risk: str, level: str, sweep_rows: Sequence[Mapping[str, Any]] | None,
               attacks_of_risk: set[str], ctx: TargetContext | None = None,
               artefact: str | None = None, *, bound_only: bool = False) -> str:
    ctx = ctx or TargetContext()
    if level in ("none", "not assessed"):
        return "Nothing to do for this risk at this audit's budget."
    if level == "inconclusive":
        return ("Too few candidates to grade; re-run with --suite thorough (more nodes "
                "sampled) or another attack of this risk (see the verdict notes).")
    if level == "miscalibrated":
        return ("Re-run with --suite thorough or another attack of this risk before "
                "concluding anything.")
    if artefact is not None:
        return ("This leak comes from publishing node embeddings of the graph, not from the "
                "model: do not publish them, or publish embeddings trained with DP, and audit "
                "the published file with graphleaks audit-embeddings.")
    best = _best_sweep_row(sweep_rows or [], attacks_of_risk, ctx)
    if best is not None:
        return best
    none_graded = ("The sweep has no defended run of these attacks that could be graded "
                   "(other than the applied defense at a weaker ε). " if sweep_rows else "")
    if ctx.origin in ("user", "scores"):
        return none_graded + PIPELINE_ADVICE.get(risk, PIPELINE_ADVICE["membership"])
    defense, what = DEFENSE_ADVICE.get(risk, ("gap_ndp", "DP"))
    unit = RISK_UNIT.get(risk, "node")
    if ctx.private and unit in LEDGER_COVERS.get(ctx.ledger_unit, ()):
        tighter = ctx.epsilon / 2
        leaks = ("a leak at this level is not ruled out" if bound_only else
                 "it leaks at this level")
        text = (f"{none_graded}The ledger covers this risk at ε = {ctx.epsilon:g}, yet {leaks}:"
                f" retrain with a tighter budget, e.g. ε = {tighter:g} "
                f"({_train_cmd(ctx.defense, tighter, risk)})")
        if ctx.ledger_unit in ctx.violations:
            return text + (". First: the canary audit measured an ε above the claimed one, so "
                           "the implementation or its accounting is at fault, not the budget.")
        if ctx.ledger_unit in ctx.audited:
            return text + (f"; the canary audit (audited ε ≥ {ctx.audited[ctx.ledger_unit]:.3g}) "
                           "is consistent with the claim.")
        return text + (f", and check the audited ε (--canary-audit {ctx.ledger_unit} when "
                       "training here)." if ctx.ledger_unit in ("edge", "node", "graph")
                       else ".")
    if ctx.private:
        eps = ctx.epsilon
        if defense == ctx.defense:  # never the applied defense at a weaker budget
            eps = ctx.epsilon / 2
        cmd = _train_cmd(defense, eps, risk)
        return (f"{none_graded}{ctx.defense} protects the {ctx.ledger_unit} unit, which does "
                f"not bound this risk: use {what}, whose unit covers it ({cmd}).")
    return f"{none_graded}Try {what}: {_train_cmd(defense, 4.0, risk)}."


def _best_sweep_row(rows: Sequence[Mapping[str, Any]], attacks: set[str],
                    ctx: TargetContext | None = None) -> str | None:
    """The defended sweep unit with the lowest level on ``attacks``, then the best utility.

    The applied defense at the target's ε or a weaker one (a larger ε) is never proposed.
    """
    ctx = ctx or TargetContext()
    base_util = [float(r["utility"]["test_accuracy"]) for r in rows
                 if r.get("defense") == "none" and isinstance(
                     (r.get("utility") or {}).get("test_accuracy"), (int, float))]
    best: tuple[int, float, str] | None = None
    for r in rows:
        if r.get("defense") in (None, "none") or r.get("attack") not in attacks:
            continue
        if ctx.private and r.get("defense") == ctx.defense:
            eps = r.get("epsilon")
            if not isinstance(eps, (int, float)) or float(eps) >= ctx.epsilon:
                continue
        lv = attack_level(str(r["attack"]), decode_readings(r.get("metrics") or {},
                                                             "sweep row metrics"))
        if lv is None or _RANK[lv.level] < 0:
            continue
        # a row whose run measured no utility (None, or no key) states that, never crashes
        raw_util = (r.get("utility") or {}).get("test_accuracy")
        util = float(raw_util) if isinstance(raw_util, (int, float)) else float("nan")
        cost = ((f"test accuracy {_f(util)}" + (f" vs {_f(base_util[0])} undefended"
                                                if base_util else "")) if util == util
                else "utility not measured")
        text = (f"In the sweep, {r['defense']} at ε = {r.get('epsilon')} brought "
                f"{r['attack']} to {lv.level.upper()}" + (f" at {cost}" if cost else "") + ".")
        key = (_RANK[lv.level], -util if util == util else 0.0, text)
        if best is None or key < best:
            best = key
    return best[2] if best else None


def artefact_of(attack: str, outputs: Sequence[str], config: Mapping[str, Any]) -> str | None:
    """What an attack measured when it is not the model, or None.

    Attribute inference on released embeddings attacks a (simulated) DeepWalk or node2vec
    release of the whole graph, which is the same whatever defense trained the model.
    """
    if "released_embeddings" in outputs:
        embedder = str(config.get("embedder", "deepwalk"))
        name = {"deepwalk": "DeepWalk", "node2vec": "node2vec"}.get(embedder, embedder)
        return f"{name} release of the graph, not the model"
    return None


def uninformative_line(report: GradedReport) -> RiskVerdict | None:
    """The verdict's first line for a target that learned too little to be worth auditing.

    Uninformative: test accuracy below the majority baseline plus
    :data:`UNINFORMATIVE_MARGIN`, or the best epoch at most 1. None otherwise (or when the
    report lacks the figures).
    """
    u, tr = report.target.utility, report.target.training
    why = []
    acc, base = u.get("test_accuracy"), u.get("test_majority_baseline")
    if isinstance(acc, (int, float)) and isinstance(base, (int, float)) \
            and acc < base + UNINFORMATIVE_MARGIN:
        why.append(f"test accuracy {acc:.3f} vs majority baseline {base:.3f} "
                   f"(< baseline + {UNINFORMATIVE_MARGIN:g})")
    best = tr.get("best_epoch", tr.get("classifier_best_epoch"))
    if isinstance(best, int) and not isinstance(best, bool) and best <= 1:
        why.append(f"best epoch {best}")
    if not why:
        return None
    return RiskVerdict(
        "target", "uninformative", None, "; ".join(why),
        "The model learned little, so its audit says little about a useful model: fix "
        "training first (hyperparameters, a larger ε, more epochs), then re-audit.")


def compute_verdict(
    report: GradedReport, *, sweep_rows: Sequence[Mapping[str, Any]] | None = None
) -> list[RiskVerdict]:
    """One :class:`RiskVerdict` per risk, in the order of :data:`RISKS`, for this target.

    An uninformative target's line comes first; a risk measured on another artefact than
    the model (see :func:`artefact_of`) gets its own line after the model's.

    Args:
        report: The report.
        sweep_rows: Results-store rows of a sweep on this graph (``defense``, ``epsilon``,
            ``attack``, ``metrics``, ``utility``); when given, the advice names the defended
            unit that lowered the risk most, with its utility cost. By default, the rows the
            report recorded in its config (``sweep_rows``), if any.
    """
    if sweep_rows is None:
        sweep_rows = report.config.get("sweep_rows")
    artefacts = {a.attack: art for a in report.attacks
                 if (art := artefact_of(a.attack, [o.value for o in a.threat_model.outputs],
                                         a.config)) is not None}
    lines = verdict_of([(a.attack, a.task, a.metrics.readings()) for a in report.attacks],
                       sweep_rows=sweep_rows, context=context_of(report), artefacts=artefacts,
                       risks=GRAPH_RISKS if report.config.get("task") == "graph" else
                       LINK_RISKS if report.config.get("task") == "link" else RISKS)
    first = uninformative_line(report)
    return [first, *lines] if first is not None else lines


def verdict_of(
    attacks: Sequence[tuple[str, str, Readings]], *,
    sweep_rows: Sequence[Mapping[str, Any]] | None = None,
    context: TargetContext | None = None,
    artefacts: Mapping[str, str] | None = None,
    risks: Sequence[str] = RISKS,
) -> list[RiskVerdict]:
    """The verdict of ``(attack, task, readings)`` triples; see :func:`compute_verdict`.

    ``artefacts`` maps an attack to what it measured when that is not the model. ``risks``
    are the lines shown even when no attack of them ran (a graph audit's
    :data:`GRAPH_RISKS`, a link audit's :data:`LINK_RISKS`).
    """
    ctx = context or TargetContext()
    artefacts = artefacts or {}
    by_risk: dict[tuple[str, str | None], list[tuple[AttackLevel, Readings]]] = {
        (r, None): [] for r in risks}
    for name, task, readings in attacks:
        lv = attack_level(name, readings)
        if lv is not None:
            by_risk.setdefault((risk_of(lv.attack, task), artefacts.get(name)), []).append(
                (lv, readings))
    order = {r: i for i, r in enumerate(dict.fromkeys((*risks, *RISKS, *GRAPH_RISKS)))}
    out: list[RiskVerdict] = []
    for (risk, artefact), items in sorted(by_risk.items(), key=lambda kv: (
            order.get(kv[0][0], len(order)), kv[0][1] is not None, kv[0][1] or "")):
        names = {lv.attack for lv, _ in items}
        coverage = _coverage(risk, ctx, artefact)
        if not items:
            elsewhere = sorted({lv.attack for (r, art), its in by_risk.items()
                                if r == risk and art for lv, _ in its})
            why = (f"No attack of the model's {risk} ran; {', '.join(elsewhere)} measured "
                   "another artefact (its own line)." if elsewhere else
                   "No attack of this risk ran (narrowed with --attack, or the target does "
                   "not expose what it needs; the verdict notes say which were skipped and "
                   "why).")
            out.append(RiskVerdict(risk, "not assessed", None, "", why, coverage))
            continue
        graded = [(lv, a) for lv, a in items if _RANK[lv.level] >= 0]
        pool = graded or items
        lv, _ = max(pool, key=lambda p: (_RANK[p[0].level], _strength(p[1])))
        out.append(RiskVerdict(risk, lv.level, lv.attack, lv.basis,
                               _advice(risk, lv.level, sweep_rows, names, ctx, artefact,
                                       bound_only=lv.bound_only),
                               coverage, artefact))
    return out


def verdict_notes(report: GradedReport) -> list[str]:
    """Every attack skipped or not graded, and the audited-ε status, with what to do.

    Nothing is lost silently: an attack the target could not serve, a challenge too small
    to grade, a miscalibrated attack and a defended target without a canary audit each get
    a line.
    """
    notes = []
    for name, why in (report.config.get("skipped_attacks") or {}).items():
        notes.append(f"{name} was skipped: {why}")
    for a in report.attacks:
        lv = attack_level(a.attack, a.metrics.readings())
        if lv is None:
            notes.append(f"{a.attack} has no metric the verdict grades (see report.json)")
        elif lv.level == "inconclusive":
            sample = next((n for n in a.notes if n.startswith("node sampler")), "")
            more = (" or raise its sample (--param linkteller.n_nodes=500)"
                    if a.attack == "linkteller" else "")
            notes.append(f"{a.attack} was not graded: {lv.basis}" + (
                f"; {sample}" if sample else "") + f"; re-run with --suite thorough{more}")
        elif lv.level == "miscalibrated":
            notes.append(f"{a.attack} is miscalibrated ({lv.basis}); re-run with --suite "
                         "thorough before reading it")
    notes += query_budget_notes(report.config)
    ctx = context_of(report)
    skipped_canary = report.config.get("canary_audit_skipped")
    if isinstance(skipped_canary, str):
        notes.append(f"audited ε not measured: {skipped_canary}")
    elif ctx.origin == "user":
        notes.append("audited ε not measured: graphleaks cannot retrain a model from another "
                     "pipeline with canaries; to check a DP claim, plant canaries in your own "
                     "training run (the one-run protocol of graphleaks.audit.canary) or train "
                     "the model here with graphleaks audit --defense ... --canary-audit edge")
    elif ctx.origin == "scores":
        notes.append("audited ε not measured: a scores-only audit cannot retrain the model; "
                     "audit the model itself (--model) or train it here with --canary-audit")
    return notes


def query_budget_notes(config: Mapping[str, Any]) -> list[str]:
    """The budget the verdict assumed and, per query-budget curve, the smallest budget at
    which each level is reached; none for an audit without a budget or curves (its report
    stays as it was)."""
    from graphleaks.report.query_curves import CONFIG_KEY, curves_of

    queries = config.get("queries")
    if config.get(CONFIG_KEY) is None and not (isinstance(queries, Mapping)
                                               and queries.get("budget") is not None):
        return []
    notes = [f"query budget: {assumed_budget(config)}"]
    curves = curves_of(config)
    if curves is None:
        return notes
    for c in curves.curves:
        if c.skipped:
            notes.append(f"{c.attack} has no query-budget curve: {c.skipped}")
            continue
        top = f"{curves.budgets[-1]:,}"
        reached = "; ".join(f"{lv} from {b:,} queries" if b is not None
                            else f"{lv} not reached within {top}"
                            for lv, b in c.levels_reached().items())
        notes.append(f"{c.attack} ({c.risk}) against queries: {reached}")
    return notes


def compact_sweep_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Results-store rows cut to what the verdict reads, to record in a report's config."""
    out = []
    for r in rows:
        readings = decode_readings(r.get("metrics") or {}, "results store metrics")
        wanted = ("auc", "tpr@1%fpr", "gain_over_baseline")
        keep = Readings({m: v for m in wanted if (v := readings.get(m)) is not None},
                        readings.n_pos, readings.n_neg, readings.multiclass).to_dict()
        out.append({"defense": r.get("defense"), "epsilon": r.get("epsilon"),
                    "attack": r.get("attack"), "seed": r.get("seed"), "metrics": keep,
                    "utility": {"test_accuracy": (r.get("utility") or {}).get("test_accuracy")}})
    return out


def verdict_dicts(verdict: Sequence[RiskVerdict]) -> list[dict[str, Any]]:
    """JSON form of a verdict."""
    return [asdict(v) for v in verdict]


def render_verdict_markdown(report: GradedReport) -> str:
    """The verdict as a Markdown section for the top of ``report.md``."""
    lines = ["## Verdict", ""]
    verdict = compute_verdict(report)
    if verdict and verdict[0].risk == "target":
        first = verdict.pop(0)
        lines += [f"**Uninformative target**: {first.basis}. {first.advice}", ""]
    lines += ["| risk | level | strongest attack | basis | ledger | next step |",
              "|---|---|---|---|---|---|"]
    for v in verdict:
        lines.append(f"| {v.label} | **{v.level}** | {v.attack or '–'} | {v.basis or '–'} | "
                     f"{v.coverage or '–'} | {v.advice} |")
    lines += ["", "Levels use the upper 95% confidence bound of TPR@1%FPR and AUC (accuracy "
              "gain for attributes); thresholds are in the README.", ""]
    lines += [f"Query budget: {assumed_budget(report.config)}.", ""]
    lines += _audited_lines(report)
    notes = verdict_notes(report)
    if notes:
        lines += ["Notes:", "", *(f"- {n}" for n in notes), ""]
    return "\n".join(lines)


def _audited_lines(report: GradedReport) -> list[str]:
    """Claimed beside audited ε, one line per canary audit."""
    return [f"Claimed ε {a.claimed_epsilon:.3g} ({a.unit} unit) beside canary-audited ε ≥ "
            f"{a.bound.epsilon_lb:.3g} ({a.bound.num_canaries} canaries"
            + (f"; audited: {a.scope}" if a.scope else "") + "): "
            + ("**VIOLATION: audited ε above claimed ε**" if a.violation else "consistent")
            + "." for a in report.canary_audits] + ([""] if report.canary_audits else [])


_COLOURS = {"inconclusive": "warn", "none": "ok", "low": "warn", "high": "bad", "severe": "bad",
            "miscalibrated": "warn", "not assessed": "", "uninformative": "warn"}


def render_verdict_html(report: GradedReport) -> str:
    """The verdict as an HTML section for the top of ``report.html``."""
    e = html.escape
    out = ["<h2>Verdict</h2>"]
    verdict = compute_verdict(report)
    if verdict and verdict[0].risk == "target":
        first = verdict.pop(0)
        out.append(f'<p><span class="badge warn">uninformative target</span> {e(first.basis)}. '
                   f"{e(first.advice)}</p>")
    out.append("<table><tr><th>risk</th><th>level</th><th>strongest attack</th>"
               "<th>basis</th><th>ledger</th><th>next step</th></tr>")
    for v in verdict:
        out.append(f"<tr><td><b>{e(v.label)}</b></td><td><span class=\"badge "
                   f"{_COLOURS.get(v.level, '')}\">{e(v.level)}</span></td>"
                   f"<td>{e(v.attack or '–')}</td><td>{e(v.basis or '–')}</td>"
                   f"<td>{e(v.coverage or '–')}</td><td>{e(v.advice)}</td></tr>")
    out.append("</table><p class=\"sub\">Levels use the upper 95% confidence bound of "
               "TPR@1%FPR and AUC (accuracy gain over the majority baseline for attributes); "
               "thresholds are documented in the README.</p>")
    out.append(f'<p class="sub">Query budget: {e(assumed_budget(report.config))}.</p>')
    audited = [x for x in _audited_lines(report) if x]
    if audited:
        out.append("<p>" + "<br>".join(e(x.replace("**", "")) for x in audited) + "</p>")
    notes = verdict_notes(report)
    if notes:
        out.append("<p><b>Notes</b></p><ul>" + "".join(f"<li>{e(n)}</li>" for n in notes)
                   + "</ul>")
    return "".join(out)
