"""The audit report: a data record, its JSON form, and a Markdown rendering.

Renderers only format numbers computed in :mod:`graphleaks.metrics`; they compute nothing.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from graphleaks._io import write_texts_atomically
from graphleaks.errors import DataError


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

    def to_dict(self, *, include_timings: bool = True) -> dict[str, Any]:
        """JSON-safe dictionary; ``include_timings=False`` drops wall-clock figures."""
        d = asdict(self)
        if not include_timings:
            for a in d["attacks"]:
                a.pop("runtime_s", None)
        return json_safe(d)

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


def load_report(path: str | Path) -> dict[str, Any]:
    """Read a report written by :func:`write_report` as a dictionary.

    Raises:
        DataError: If the file is missing or not a graphleaks report.
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise DataError(f"report {p} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"report {p} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("kind") != "graphleaks-audit-report":
        raise DataError(f"{p} is not a graphleaks audit report")
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


_KNOWN_KINDS = ("binary", "multiclass")


def _binary_rows(attacks: list[dict[str, Any]]) -> list[str]:
    """Table of the attacks with binary metrics (membership, link, reconstruction)."""
    rows = [a for a in attacks if "binary" in a["metrics"]]
    if not rows:
        return []
    lines = [
        "| attack | members / non-members | AUC | TPR@0.1%FPR | TPR@1%FPR | max advantage "
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
            f"| {a['attack']} | {b['n_pos']} / {b['n_neg']} | {_est(b['auc'])} | "
            f"{_est(b['tpr_at_fpr'].get('0.001'))} | {_est(b['tpr_at_fpr'].get('0.01'))} | "
            f"{_est(b['max_advantage'])} | {acc} | "
            f"{_fmt(lb['epsilon_lb']) if lb else '–'} |"
        )
    return lines + ["", "Trivial baseline: AUC 0.5, advantage 0, TPR@FPR equal to the FPR.", ""]


def _multiclass_rows(attacks: list[dict[str, Any]]) -> list[str]:
    """Table of the attacks with multiclass metrics (attribute inference)."""
    rows = [a for a in attacks if "multiclass" in a["metrics"]]
    if not rows:
        return []
    lines = [
        "| attack | n | accuracy | F1 macro | majority baseline | gain over baseline | leaks |",
        "|---|---|---|---|---|---|---|",
    ]
    for a in rows:
        m = a["metrics"]["multiclass"]
        lines.append(
            f"| {a['attack']} | {m.get('n', '–')} | {_est(m.get('accuracy'))} | "
            f"{_est(m.get('f1_macro'))} | {_fmt(m.get('majority_baseline'))} | "
            f"{_est(m.get('gain_over_baseline'))} | {'yes' if m.get('leaks') else 'no'} |"
        )
    return lines + ["", "An attribute attack leaks only when the whole interval of its gain "
                        "over the majority baseline is above 0.", ""]


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
    lines = [
        "# graphleaks audit report",
        "",
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
    lines += [
        "",
        "## Attacks",
        "",
        "Intervals are 95% intervals; the method of each is listed under the tables. "
        "Scores: higher = more likely positive.",
        "",
    ]
    lines += _binary_rows(report["attacks"])
    lines += _multiclass_rows(report["attacks"])
    lines += _other_rows(report["attacks"])
    lines += _interval_methods(report["attacks"])
    lines.append("")
    for a in report["attacks"]:
        lines.append(f"### {a['attack']}")
        lines.append("")
        tm = a["threat_model"]
        lines.append(f"- threat model: {tm['access']}, outputs {', '.join(tm['outputs'])}; "
                     f"queries evaluated in the `{a['query_graph']}` graph")
        o = a["metrics"].get("oracle_balanced_accuracy")
        if o:
            lines.append(f"- oracle balanced accuracy (threshold chosen on the evaluation "
                         f"labels, an upper bound): {_fmt(o['value'])}")
        pm = a["metrics"].get("paper_metric")
        if pm:
            lines.append(f"- {pm['name']}: {_fmt(pm['value'])}")
        lb = a["metrics"].get("epsilon_lower_bound")
        lb_max = a["metrics"].get("epsilon_lower_bound_max_over_thresholds")
        claimed = led["epsilon"]
        if lb:
            flag = ""
            if claimed != "inf" and lb["epsilon_lb"] > float(claimed):
                flag = " — **VIOLATION: the claimed ε is below the measured lower bound**"
            lines.append(f"- empirical ε lower bound {_fmt(lb['epsilon_lb'])} at the attack's "
                         f"own threshold (claimed ε {claimed}){flag}")
        if lb_max:
            flag = ""
            if claimed != "inf" and lb_max["epsilon_lb"] > float(claimed):
                flag = " — claimed ε is below this optimistic bound; check with more data"
            lines.append(f"- optimistic ε bound (best threshold chosen on the evaluation "
                         f"labels): {_fmt(lb_max['epsilon_lb'])}{flag}")
        if lb or lb_max:
            for assumption in (lb or lb_max).get("assumptions", []):
                lines.append(f"  - assumption: {assumption}")
        if a["compat_flags"]:
            lines.append(f"- **compatibility flags on:** {', '.join(a['compat_flags'])} "
                         "(reproduces the original code, not the correct protocol)")
        for note in a["notes"]:
            lines.append(f"- {note}")
        lines.append("")
    return "\n".join(lines)


def write_report(report: AuditReport, out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``report.json`` and ``report.md`` into ``out_dir`` without partial files.

    Both files are first written to temporary names in the same directory, then renamed.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = report.to_dict()
    texts = {
        out / "report.json": json.dumps(data, indent=2, sort_keys=True, allow_nan=False),
        out / "report.md": render_markdown(data),
    }
    write_texts_atomically({dest: text + "\n" for dest, text in texts.items()})
    return out / "report.json", out / "report.md"
