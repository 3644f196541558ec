"""The audit report: a data record and its JSON form (the one decoder of ``report.json``).

The renderers (:mod:`.markdown`, :mod:`.html`) and :func:`.writers.write_report` sit above
this module; they only format numbers computed in :mod:`graphleaks.metrics`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphleaks._limits import loads_bounded
from graphleaks._registry import canonical_name
from graphleaks.errors import DataError

if TYPE_CHECKING:
    from graphleaks.privacy.ledger import PrivacyLedger
    from graphleaks.report.records import AttackMetrics, CanaryAudit
    from graphleaks.threat import ThreatModel

#: The report schema this graphleaks writes, and the highest it reads. Bump it here only:
#: the runner, ``check`` and the loaders all read this one constant. Version 2 keeps the JSON
#: shape of version 1 and is decoded into typed records; both are read.
REPORT_SCHEMA_VERSION = 2
REPORT_KIND = "graphleaks-audit-report"


@dataclass(frozen=True)
class TargetSummary:
    """What was audited."""

    architecture: dict[str, Any]
    defense: str
    defense_config: dict[str, Any]
    dataset: dict[str, Any]
    fingerprint: str
    num_nodes: int
    num_edges: int
    protocol: str
    split_sizes: dict[str, int]
    utility: dict[str, float]
    training: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {f.name: json_safe(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class ServingSummary:
    """A model that adds noise at inference: what the audit's queries cost its API."""

    fresh_releases: int
    epsilon_after_queries: float
    query_budget: int | None
    policy: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return json_safe({f.name: getattr(self, f.name) for f in fields(self)})


@dataclass(frozen=True)
class AttackReport:
    """One attack's outcome; ``metrics`` and ``threat_model`` are typed records."""

    attack: str
    task: str
    threat_model: ThreatModel
    config: dict[str, Any]
    compat_flags: list[str]
    notes: list[str]
    query_graph: str
    metrics: AttackMetrics
    baseline: dict[str, float]
    runtime_s: float
    exposure: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, include_timings: bool = True) -> dict[str, Any]:
        """JSON-safe dictionary."""
        d: dict[str, Any] = {
            "attack": self.attack, "task": self.task,
            "threat_model": self.threat_model.to_dict(), "config": self.config,
            "compat_flags": list(self.compat_flags), "notes": list(self.notes),
            "query_graph": self.query_graph, "metrics": self.metrics.to_dict(),
            "baseline": self.baseline, "exposure": self.exposure}
        if include_timings:
            d["runtime_s"] = self.runtime_s
        return json_safe(d)


@dataclass(frozen=True)
class AuditReport:
    """The whole audit. ``timings`` are kept apart so reports compare equal across runs.

    ``AuditReport.from_json`` is the only place report JSON becomes objects; every reader
    (``check``, HTML, Markdown, verdict, sweeps, ``results``, tracking) reads attributes.

    Example:
        >>> r = AuditReport.from_json(Path("tests/report/data/report_v1.json").read_text())
        >>> round(r.attack("confidence_mia").metrics.binary.auc.value, 3)
        0.674
    """

    schema_version: int
    seed: int
    target: TargetSummary
    ledger: PrivacyLedger
    attacks: list[AttackReport]
    config: dict[str, Any]
    versions: dict[str, str]
    kind: str = field(default=REPORT_KIND)
    canary_audits: list[CanaryAudit] = field(default_factory=list)
    serving: ServingSummary | None = None

    def to_dict(self, *, include_timings: bool = True) -> dict[str, Any]:
        """JSON-safe dictionary; ``include_timings=False`` drops wall-clock figures."""
        from graphleaks.report.verdict import compute_verdict, verdict_dicts, verdict_notes

        ledger = self.ledger.to_dict()
        if self.serving is not None:
            ledger["serving"] = self.serving.to_dict()
        d: dict[str, Any] = {
            "schema_version": self.schema_version, "seed": self.seed,
            "target": self.target.to_dict(), "ledger": ledger,
            "attacks": [a.to_dict(include_timings=include_timings) for a in self.attacks],
            "config": self.config, "versions": self.versions, "kind": self.kind}
        if self.canary_audits:  # keep reports without canary audits as they were
            d["canary_audits"] = [c.to_dict() for c in self.canary_audits]
        d = json_safe(d)
        # the verdict is derived from the metrics; kept in the JSON for machines (CI, MLflow)
        d["verdict"] = verdict_dicts(compute_verdict(self))
        d["verdict_notes"] = verdict_notes(self)
        return d

    def to_json(self) -> str:
        """Indented JSON text."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes, *, where: str = "report") -> AuditReport:
        """The one decoder of report JSON (schema version 1 or 2) into typed records.

        Raises:
            DataError: One line naming the first problem, for text that is not JSON, not a
                graphleaks audit report, of a newer schema, or with a missing or mistyped
                field. The text itself is never quoted.
        """
        try:
            # bounded in depth, so the recursive decoders below never hit the recursion limit
            data = loads_bounded(text, where, max_bytes=MAX_REPORT_BYTES, error=DataError)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise DataError(f"{where} is not valid JSON; give a report.json written by "
                            "`graphleaks audit`") from None
        return cls.from_dict(data, where=where)

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "report") -> AuditReport:
        """Decode a parsed report (see :meth:`from_json`); version 1 is upgraded to 2."""
        if not isinstance(data, dict) or data.get("kind") != REPORT_KIND:
            raise DataError(f"{where} is not a graphleaks audit report")
        check_schema_version(data.get("schema_version"), where)
        _check_types(data, _REPORT_FIELDS, where)
        try:
            return _decode_report(data, where)
        except RecursionError:
            raise DataError(f"{where} is nested too deeply; not a graphleaks report") from None

    def attack(self, name: str) -> AttackReport:
        """The report of attack ``name``."""
        for a in self.attacks:
            if a.attack == name:
                return a
        raise KeyError(name)


def json_safe(value: Any) -> Any:
    """Make a value JSON-serialisable: numpy scalars to Python, non-finite floats to strings."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    if hasattr(value, "item") and callable(value.item):
        return json_safe(value.item())
    return value


#: Largest report read: a real one is well under a megabyte per attack.
MAX_REPORT_BYTES = 256 << 20

# Fields of a report and of its parts, with their JSON types, checked before decoding.
_REPORT_FIELDS: dict[str, type] = {"seed": int, "target": dict, "ledger": dict,
                                   "attacks": list, "config": dict, "versions": dict}
_TARGET_FIELDS: dict[str, type] = {"architecture": dict, "defense": str, "fingerprint": str,
                                   "num_nodes": int, "num_edges": int, "protocol": str,
                                   "utility": dict, "split_sizes": dict}
_ATTACK_FIELDS: dict[str, type] = {"attack": str, "task": str, "metrics": dict,
                                   "threat_model": dict, "notes": list, "compat_flags": list,
                                   "query_graph": str}


def check_schema_version(value: Any, where: str) -> int:
    """The report's ``schema_version``, refusing one this graphleaks cannot read.

    Raises:
        DataError: For a non-integer version, or one above :data:`REPORT_SCHEMA_VERSION`
            (naming both versions).
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DataError(f"{where}: schema_version must be a positive integer, got "
                        f"{type(value).__name__} {str(value)[:20]!r}; regenerate the report "
                        "with `graphleaks audit`")
    if value > REPORT_SCHEMA_VERSION:
        raise DataError(f"{where}: report schema_version {value} is newer than this graphleaks "
                        f"reads (version {REPORT_SCHEMA_VERSION}); upgrade graphleaks or "
                        "regenerate the report")
    return value


def _check_types(record: dict[str, Any], fields: dict[str, type], where: str) -> None:
    for key, typ in fields.items():
        if key not in record:
            raise DataError(f"{where} lacks the field {key!r}; regenerate it with graphleaks")
        value = record[key]
        if isinstance(value, bool) or not isinstance(value, typ):
            raise DataError(f"{where}.{key} must be a JSON {typ.__name__}, got "
                            f"{type(value).__name__}")


def _str_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"{where} must be a list of strings")
    return list(value)


def _dict(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataError(f"{where} must be a JSON object, got {type(value).__name__}")
    return value


def _decode_threat_model(d: dict[str, Any], where: str) -> ThreatModel:
    """Through ThreatModel's own constructor, so its validation and field types apply."""
    import dataclasses

    from graphleaks.threat import Output, ThreatModel

    names = {f.name for f in dataclasses.fields(ThreatModel)}
    # a field an older graphleaks wrote and this one no longer has is dropped
    kwargs = {k: v for k, v in d.items() if k in names}
    try:
        if "outputs" in kwargs:
            kwargs["outputs"] = frozenset(Output(o) for o in _str_list(kwargs["outputs"],
                                                                      f"{where}.outputs"))
        return ThreatModel(**kwargs)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{where} is malformed ({type(exc).__name__}); regenerate the report "
                        "with graphleaks") from None


def _decode_ledger(d: dict[str, Any], where: str) -> tuple[PrivacyLedger, ServingSummary | None]:
    from graphleaks.errors import BundleError
    from graphleaks.privacy.ledger import PrivacyLedger
    from graphleaks.report.records import num

    serving = None
    if d.get("serving") is not None:
        s = _dict(d["serving"], f"{where}.serving")
        budget = s.get("query_budget")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)):
            raise DataError(f"{where}.serving.query_budget must be an integer or null")
        releases = s.get("fresh_releases")
        if isinstance(releases, bool) or not isinstance(releases, int):
            raise DataError(f"{where}.serving.fresh_releases must be an integer")
        serving = ServingSummary(releases, num(s.get("epsilon_after_queries"),
                                               f"{where}.serving.epsilon_after_queries"),
                                 budget, str(s.get("policy", "")))
    try:
        ledger = PrivacyLedger.from_dict({k: v for k, v in d.items() if k != "serving"})
    except (BundleError, AttributeError):
        raise DataError(f"{where} is not a privacy ledger (unit, epsilon, delta, status); "
                        "regenerate the report with graphleaks") from None
    return ledger, serving


def _decode_attack(a: Any, where: str) -> AttackReport:
    from graphleaks.report.records import decode_metrics, num

    if not isinstance(a, dict):
        raise DataError(f"{where} must be a JSON object")
    _check_types(a, _ATTACK_FIELDS, where)
    baseline = {str(k): num(v, f"{where}.baseline.{k}")
                for k, v in _dict(a.get("baseline", {}), f"{where}.baseline").items()}
    runtime = a.get("runtime_s", 0.0)
    return AttackReport(
        attack=a["attack"], task=a["task"],
        threat_model=_decode_threat_model(a["threat_model"], f"{where}.threat_model"),
        config=_dict(a.get("config", {}), f"{where}.config"),
        compat_flags=_str_list(a["compat_flags"], f"{where}.compat_flags"),
        notes=_str_list(a["notes"], f"{where}.notes"), query_graph=a["query_graph"],
        metrics=decode_metrics(a["metrics"], f"{where}.metrics"), baseline=baseline,
        runtime_s=num(runtime, f"{where}.runtime_s"),
        exposure=_dict(a.get("exposure", {}), f"{where}.exposure"))


def _canonical_config(config: dict[str, Any]) -> dict[str, Any]:
    """A report's ``config`` with the plug-in names an earlier version wrote made canonical.

    ``gap-edp`` becomes ``gap_edp`` in the two places a plug-in name is a value or key: the
    defense of the spec's target and the owners of ``params``. Anything else is kept as
    written (free-text notes included).
    """
    out = dict(config)
    params = out.get("params")
    if isinstance(params, dict):
        out["params"] = {canonical_name(str(k)): v for k, v in params.items()}
    spec = out.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("target"), dict):
        target = spec["target"]
        if isinstance(target.get("defense"), str):
            out["spec"] = {**spec, "target": {**target,
                                              "defense": canonical_name(target["defense"])}}
    return out


def _decode_report(data: dict[str, Any], where: str) -> AuditReport:
    t = data["target"]
    _check_types(t, _TARGET_FIELDS, f"{where}: target")
    if not isinstance(t["architecture"].get("arch"), str):
        raise DataError(f"{where}: target.architecture.arch must be a string")
    target = TargetSummary(
        architecture=t["architecture"], defense=canonical_name(t["defense"]),
        defense_config=_dict(t.get("defense_config", {}), f"{where}: target.defense_config"),
        dataset=_dict(t.get("dataset", {}), f"{where}: target.dataset"),
        fingerprint=t["fingerprint"], num_nodes=t["num_nodes"], num_edges=t["num_edges"],
        protocol=t["protocol"], split_sizes=t["split_sizes"], utility=t["utility"],
        training=_dict(t.get("training", {}), f"{where}: target.training"))
    ledger, serving = _decode_ledger(data["ledger"], f"{where}: ledger")
    attacks = [_decode_attack(a, f"{where}: attacks[{i}]") for i, a in enumerate(data["attacks"])]
    raw_canaries = data.get("canary_audits", [])
    if not isinstance(raw_canaries, list):
        raise DataError(f"{where}: canary_audits must be a list of JSON objects")
    canaries = []
    if raw_canaries:
        from graphleaks.report.records import decode_canary_audit

        canaries = [decode_canary_audit(c, f"{where}: canary_audits[{i}]")
                    for i, c in enumerate(raw_canaries)]
    return AuditReport(
        # a version-1 report is upgraded: the same JSON shape, read into the same records
        schema_version=REPORT_SCHEMA_VERSION, seed=data["seed"], target=target, ledger=ledger,
        attacks=attacks, config=_canonical_config(data["config"]), versions=data["versions"],
        canary_audits=canaries, serving=serving)


def read_report_text(path: str | Path) -> bytes:
    """The bytes of a report file, refusing devices, folders and oversized files.

    Raises:
        DataError: If the file is missing, not a regular file, or too large.
    """
    p = Path(path)
    if p.exists() and not p.is_file() and not p.is_dir():
        # a device or pipe (/dev/zero) would be read forever
        raise DataError(f"report {p} is not a regular file; give a report.json")
    try:
        if p.stat().st_size > MAX_REPORT_BYTES:
            raise DataError(f"{p} is larger than {MAX_REPORT_BYTES >> 20} MB; not a graphleaks "
                            "report")
        return p.read_bytes()
    except FileNotFoundError:
        raise DataError(f"report {p} does not exist") from None
    except IsADirectoryError:
        raise DataError(f"report {p} is a folder; give its report.json") from None
    except OSError:
        raise DataError(f"report {p} cannot be read; give a report.json written by "
                        "`graphleaks audit`") from None


def load_report(path: str | Path) -> AuditReport:
    """Read a report written by :func:`write_report` (schema version 1 or 2), typed.

    Raises:
        DataError: If the file is missing, not a graphleaks report, of a schema version this
            graphleaks cannot read, or has a missing or mistyped field.
    """
    p = Path(path)
    return AuditReport.from_json(read_report_text(p), where=f"report {p}")


def interval_methods_of(metrics: AttackMetrics) -> dict[str, list[str]]:
    """``{method: [metric paths]}`` of the interval estimates of one attack's metrics."""
    out: dict[str, list[str]] = {}
    for path, est in metrics.estimates().items():
        out.setdefault(est.method, []).append(path)
    return out


#: Footnotes of the attack table (Markdown and HTML), each shown when it applies.
MISCALIBRATED_NOTE = ("miscalibrated: the AUC interval lies entirely below 0.5, so the attack "
                      "ranks positives below negatives; its scores are inverted or badly "
                      "calibrated, which is not evidence of no leak.")
BOUNDS_NOTE = ("Sound ε lower bound: at the attack's own threshold, fixed without the "
               "evaluation labels. Optimistic ε bound: at the best threshold chosen on the "
               "evaluation labels, so an upper estimate of what the data can show; it is "
               "compared with the ledger only for membership challenges (members drawn at "
               "random), never for link challenges, whose edges are the graph's own and carry "
               "signal the mechanism did not produce (feature homophily, query-graph edges).")


def target_label(report: AuditReport) -> str:
    """What the target is, for the card: the user's model class (or the file format it came
    from) when graphleaks did not build it, else its architecture."""
    arch = report.target.architecture
    model = arch.get("model")
    return str(model) if isinstance(model, str) and model else str(arch.get("arch", "?")).upper()


def user_model_facts(report: AuditReport) -> list[tuple[str, str]]:
    """Lines of the card of a model graphleaks did not build: the hooked layers and what the
    shadow/reference models are (and what a surrogate changes); empty for its own targets."""
    tm = report.config.get("target_model")
    if not isinstance(tm, dict):
        return []
    layers = [str(n) for n in tm.get("embedding_layers") or []]
    facts = [("hooked layers", ", ".join(layers) if layers else
              "none (white-box attacks skipped; name them with --embedding-layer)")]
    effect = tm.get("surrogate_effect")
    if isinstance(effect, str):
        facts.append(("shadow/reference models", effect))
    shape = tm.get("static_shapes")
    if isinstance(shape, dict):
        facts.append(("input shapes", f"static ({shape.get('nodes')} nodes, "
                                      f"{shape.get('edges')} edges): only attacks that query "
                                      "the exported graph ran"))
    return facts


def attack_cell(a: AttackReport) -> str:
    """The attack's name, flagged when its AUC interval lies entirely below chance."""
    b = a.metrics.binary
    return f"{a.attack} (⚠ miscalibrated)" if b is not None and b.miscalibrated else a.attack


def table_footnotes(attacks: Sequence[AttackReport]) -> list[str]:
    """The notes the attack table needs: the TPR@FPR rule, the ε columns, the flags."""
    from graphleaks.metrics.binary import TPR_AT_FPR_NOTE, TPR_AT_FPR_RANDOMISED

    binaries = [a.metrics.binary for a in attacks if a.metrics.binary is not None]
    notes = []
    if any(b.tpr_at_fpr_rule == TPR_AT_FPR_RANDOMISED for b in binaries):
        notes.append(TPR_AT_FPR_NOTE)
    else:
        notes.append("TPR@x FPR: the best real threshold with FPR <= x (the rule of the "
                     "graphleaks that wrote this report).")
    notes.append(BOUNDS_NOTE)
    if any(b.miscalibrated for b in binaries):
        notes.append(MISCALIBRATED_NOTE)
    return notes
