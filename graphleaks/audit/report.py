"""The audit report: a data record, its JSON form, and a Markdown rendering.

Renderers only format numbers computed in :mod:`graphleaks.metrics`; they compute nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphleaks.errors import DataError

if TYPE_CHECKING:
    from graphleaks.audit.scores import CandidateTable

#: The report schema this graphleaks writes, and the highest it reads. Bump it here only:
#: the runner, ``check`` and the loaders all read this one constant.
REPORT_SCHEMA_VERSION = 1


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


@dataclass(frozen=True)
class AttackReport:
    """One attack's outcome."""

    attack: str
    task: str
    threat_model: dict[str, Any]
    config: dict[str, Any]
    compat_flags: list[str]
    notes: list[str]
    query_graph: str
    metrics: dict[str, Any]
    baseline: dict[str, float]
    runtime_s: float
    exposure: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditReport:
    """The whole audit. ``timings`` are kept apart so reports compare equal across runs."""

    schema_version: int
    seed: int
    target: TargetSummary
    ledger: dict[str, Any]
    attacks: list[AttackReport]
    config: dict[str, Any]
    versions: dict[str, str]
    kind: str = field(default="graphleaks-audit-report")
    canary_audits: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self, *, include_timings: bool = True) -> dict[str, Any]:
        """JSON-safe dictionary; ``include_timings=False`` drops wall-clock figures."""
        from graphleaks.audit.verdict import compute_verdict, verdict_dicts

        d = asdict(self)
        if not d["canary_audits"]:  # keep reports without canary audits as they were
            d.pop("canary_audits")
        if not include_timings:
            for a in d["attacks"]:
                a.pop("runtime_s", None)
        d = json_safe(d)
        # the verdict is derived from the metrics; kept in the JSON for machines (CI, MLflow)
        d["verdict"] = verdict_dicts(compute_verdict(d))
        return d

    def to_json(self) -> str:
        """Indented JSON text."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, allow_nan=False)

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

# Fields of a report and of its parts, with their JSON types. Only what readers rely on is
# listed; other fields are kept as they are.
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


def check_report_fields(data: dict[str, Any], where: str) -> None:
    """Type-check the fields of an audit report dictionary.

    Raises:
        DataError: Naming the first missing or mistyped field.
    """
    check_schema_version(data.get("schema_version"), where)
    _check_types(data, _REPORT_FIELDS, where)
    _check_types(data["target"], _TARGET_FIELDS, f"{where}: target")
    if not isinstance(data["target"]["architecture"].get("arch"), str):
        raise DataError(f"{where}: target.architecture.arch must be a string")
    for i, attack in enumerate(data["attacks"]):
        if not isinstance(attack, dict):
            raise DataError(f"{where}: attacks[{i}] must be a JSON object")
        _check_types(attack, _ATTACK_FIELDS, f"{where}: attacks[{i}]")


def load_report(path: str | Path) -> dict[str, Any]:
    """Read a report written by :func:`write_report` as a dictionary, type-checked.

    Raises:
        DataError: If the file is missing, not a graphleaks report, of a schema version this
            graphleaks cannot read, or has a missing or mistyped field.
    """
    p = Path(path)
    if p.exists() and not p.is_file() and not p.is_dir():
        # a device or pipe (/dev/zero) would be read forever
        raise DataError(f"report {p} is not a regular file; give a report.json")
    try:
        if p.stat().st_size > MAX_REPORT_BYTES:
            raise DataError(f"{p} is larger than {MAX_REPORT_BYTES >> 20} MB; not a graphleaks "
                            "report")
        data = json.loads(p.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise DataError(f"report {p} does not exist") from None
    except IsADirectoryError:
        raise DataError(f"report {p} is a folder; give its report.json") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        # no detail: the file may not be ours, and its content must not be quoted
        raise DataError(f"report {p} is not valid JSON; give a report.json written by "
                        "`graphleaks audit`") from None
    if not isinstance(data, dict) or data.get("kind") != "graphleaks-audit-report":
        raise DataError(f"{p} is not a graphleaks audit report")
    check_report_fields(data, str(p))
    return data


def _fmt(x: Any, digits: int = 3) -> str:
    if isinstance(x, str):
        return x
    if x is None:
        return "–"
    return f"{x:.{digits}f}"


def _est(e: dict[str, Any] | None) -> str:
    if not e:
        return "–"
    lo, hi = e["ci"]
    return f"{_fmt(e['value'])} [{_fmt(lo)}, {_fmt(hi)}]"


def _verdict(bound: dict[str, Any]) -> str:
    """The ledger comparison computed by the runner (same unit only), as a suffix."""
    cmp = bound.get("ledger_comparison")
    if not cmp or cmp.get("ledger_unit") == "none":
        return ""
    text = cmp["text"]
    return f" — **{text}**" if cmp.get("violation") and cmp.get("sound") else f" — {text}"


_KNOWN_KINDS = ("binary", "multiclass")


def _binary_rows(attacks: list[dict[str, Any]]) -> list[str]:
    """Table of the attacks with binary metrics (membership, link, reconstruction)."""
    from graphleaks.audit.risk_sections import candidates_cell

    rows = [a for a in attacks if "binary" in a["metrics"]]
    if not rows:
        return []
    lines = [
        "| attack | candidates | AUC | TPR@0.1%FPR | TPR@1%FPR | max advantage "
        "| accuracy at attack threshold | ε lower bound |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for a in rows:
        b = a["metrics"]["binary"]
        at = b.get("at_threshold")
        acc = _est(at["accuracy"]) if at else "no threshold"
        lb = (a["metrics"].get("epsilon_lower_bound")
              or a["metrics"].get("epsilon_lower_bound_max_over_thresholds"))
        lines.append(
            f"| {a['attack']} | {candidates_cell(a)} | {_est(b['auc'])} | "
            f"{_est(b['tpr_at_fpr'].get('0.001'))} | {_est(b['tpr_at_fpr'].get('0.01'))} | "
            f"{_est(b['max_advantage'])} | {acc} | "
            f"{_fmt(lb['epsilon_lb']) if lb else '–'} |"
        )
    return lines + ["", "Trivial baseline: AUC 0.5, advantage 0, TPR@FPR equal to the FPR.", ""]


def _other_rows(attacks: list[dict[str, Any]]) -> list[str]:
    """Attacks whose metrics are of a kind this writer has no table for: listed, never lost."""
    rows = [a for a in attacks if not any(k in a["metrics"] for k in _KNOWN_KINDS)]
    if not rows:
        return []
    lines = ["| attack | metrics |", "|---|---|"]
    for a in rows:
        lines.append(f"| {a['attack']} | {', '.join(sorted(a['metrics'])) or '–'} "
                     "(see report.json) |")
    return lines + [""]


def interval_methods_of(node: Any, path: str, out: dict[str, list[str]]) -> None:
    """Collect ``{method: [metric paths]}`` from the estimates of a metrics dictionary."""
    if not isinstance(node, dict):
        return
    if "method" in node and "ci" in node:
        out.setdefault(str(node["method"]), []).append(path)
        return
    for key, value in node.items():
        interval_methods_of(value, f"{path}.{key}" if path else str(key), out)


def _interval_methods(attacks: list[dict[str, Any]]) -> list[str]:
    """One line per attack naming the interval method of each metric (e.g. at a boundary)."""
    lines = []
    for a in attacks:
        found: dict[str, list[str]] = {}
        for kind in _KNOWN_KINDS:
            interval_methods_of(a["metrics"].get(kind), "", found)
        if found:
            listed = "; ".join(f"{m}: {', '.join(paths)}" for m, paths in sorted(found.items()))
            lines.append(f"- interval methods of {a['attack']}: {listed}")
    return lines + [""] if lines else []


def render_markdown(report: dict[str, Any]) -> str:
    """A Markdown summary of a report dictionary."""
    t, led = report["target"], report["ledger"]
    ds = t["dataset"].get("name", "user graph") if t["dataset"] else "user graph"
    from graphleaks.audit.risk_sections import (
        render_attribute_markdown,
        render_slices_markdown,
    )
    from graphleaks.audit.verdict import render_verdict_markdown

    lines = [
        "# graphleaks audit report",
        "",
        render_verdict_markdown(report),
        f"Target: **{t['architecture']['arch'].upper()}** on **{ds}** "
        f"({t['num_nodes']} nodes, {t['num_edges'] // 2} undirected edges), "
        f"{t['protocol']} protocol, defense **{t['defense']}**. Seed {report['seed']}.",
        "",
        "| utility | train | val | test |",
        "|---|---|---|---|",
    ]
    u = t["utility"]
    for m in ("accuracy", "f1_macro"):
        lines.append(f"| {m} | " + " | ".join(_fmt(u.get(f"{p}_{m}")) for p in
                                              ("train", "val", "test")) + " |")
    eps = led["epsilon"]
    lines += [
        "",
        f"Privacy ledger: unit **{led['unit']}**, claimed ε = **{eps}**, δ = {led['delta']}, "
        f"accountant `{led['accountant']}`, status {led['status']}.",
    ]
    for note in led.get("notes", []):
        lines.append(f"- {note}")
    serving = led.get("serving")
    if serving:
        lines.append(f"- served model: {serving['fresh_releases']} fresh release(s) of the "
                     f"private data answered during this audit; the API's ε after them is "
                     f"{_fmt(serving['epsilon_after_queries'])} ({serving['policy']})")
    lines += [
        "",
        "## Attacks",
        "",
        "Intervals are 95% intervals; the method of each is listed under the tables. "
        "Scores: higher = more likely positive.",
        "",
    ]
    lines += _binary_rows(report["attacks"])
    lines.append(render_attribute_markdown(report))
    lines += _other_rows(report["attacks"])
    lines += _interval_methods(report["attacks"])
    lines += _canary_lines(report.get("canary_audits", []))
    for a in report["attacks"]:
        lines.append(f"### {a['attack']}")
        lines.append("")
        tm = a["threat_model"]
        aware = ("knows the defense" if tm.get("defense_knowledge", True)
                 else "defense-unaware (compare mode)")
        lines.append(f"- threat model: {tm['access']}, outputs {', '.join(tm['outputs'])}, "
                     f"{aware}; queries evaluated in the `{a['query_graph']}` graph")
        o = a["metrics"].get("oracle_balanced_accuracy")
        if o:
            lines.append(f"- oracle balanced accuracy (threshold chosen on the evaluation "
                         f"labels, an upper bound): {_fmt(o['value'])}")
        pm = a["metrics"].get("paper_metric")
        if pm:
            lines.append(f"- {pm['name']}: {_fmt(pm['value'])}")
        lb = a["metrics"].get("epsilon_lower_bound")
        lb_max = a["metrics"].get("epsilon_lower_bound_max_over_thresholds")
        if lb:
            lines.append(f"- empirical ε lower bound {_fmt(lb['epsilon_lb'])} "
                         f"({lb.get('unit', 'node')} unit) at the attack's own threshold "
                         f"(claimed ε {led['epsilon']}, {led['unit']} unit){_verdict(lb)}")
        if lb_max:
            lines.append(f"- optimistic ε bound (best threshold chosen on the evaluation "
                         f"labels): {_fmt(lb_max['epsilon_lb'])}{_verdict(lb_max)}")
        if lb or lb_max:
            for assumption in (lb or lb_max).get("assumptions", []):
                lines.append(f"  - assumption: {assumption}")
        if a["compat_flags"]:
            lines.append(f"- **compatibility flags on:** {', '.join(a['compat_flags'])} "
                         "(reproduces the original code, not the correct protocol)")
        for note in a["notes"]:
            lines.append(f"- {note}")
        lines.append("")
    lines.append(render_slices_markdown(report))
    return "\n".join(lines)


def _canary_lines(audits: list[dict[str, Any]]) -> list[str]:
    """Claimed beside audited ε per unit (one-run canary audits), violations flagged."""
    if not audits:
        return []
    lines = ["## Canary audits (one run)", "",
             "Audited ε and GDP μ are lower bounds at the stated confidence: ε from Steinke, "
             "Nasr & Jagielski (2023), μ from the one-run f-DP analysis of Mahloujifar, Melis & "
             "Chaudhuri (2025); each audit trained one extra target with the canaries.", "",
             "| unit | canaries (inserted) | attack | guesses / correct | claimed ε | audited ε "
             "| audited μ | verdict |", "|---|---|---|---|---|---|---|---|"]
    for a in audits:
        b = a["bound"]
        verdict = "**VIOLATION: audited ε above claimed ε**" if a["violation"] else "consistent"
        lines.append(f"| {a['unit']} | {b['num_canaries']} ({a['num_inserted']}) | {a['attack']} "
                     f"| {b['num_guesses']} / {b['num_correct']} | {_fmt(a['claimed_epsilon'])} | "
                     f"{_fmt(b['epsilon_lb'])} | {_fmt(b['mu_lb'])} | {verdict} |")
    return [*lines, ""]


def write_report(report: AuditReport, out_dir: str | Path, *, html: bool = False,
                 scores: Sequence[CandidateTable] | None = None) -> tuple[Path, Path]:
    """Write ``report.json``, ``report.md`` (``report.html``, ``scores.csv``) as one folder.

    The files are written into a temporary sibling folder that is then renamed into place,
    so readers see all of them or none (a kill between two files leaves no report without
    its page). An existing ``out_dir`` is replaced only if it is a graphleaks audit report.

    Args:
        report: The report.
        out_dir: The report folder.
        html: Also write the self-contained ``report.html``.
        scores: Every candidate's score, written as ``scores.csv`` when given.

    Returns:
        The paths of ``report.json`` and ``report.md``.
    """
    from graphleaks._outputs import REPORT, publish_dir

    out = Path(out_dir)
    data = report.to_dict()

    def fill(tmp: Path) -> None:
        (tmp / "report.json").write_text(
            json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n", encoding="utf-8")
        (tmp / "report.md").write_text(render_markdown(data) + "\n", encoding="utf-8")
        if html:
            from graphleaks.audit.html import render_html

            (tmp / "report.html").write_text(render_html(data), encoding="utf-8")
        if scores is not None:
            from graphleaks.audit.scores import scores_csv

            (tmp / "scores.csv").write_text(scores_csv(scores), encoding="utf-8")

    publish_dir(out, REPORT, fill)
    return out / "report.json", out / "report.md"
