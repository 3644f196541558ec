"""Which audit controls a report's attacks test, and which they leave untested.

The one place that maps graphleaks' attacks to the controls auditors file evidence against;
the Markdown and HTML reports, the CycloneDX model card and the SARIF rules all read it.

An attack is mapped through its task (what it infers), not its name, so a new attack of a
known task is mapped without an edit here:

========================================  ==========================================
control                                   tasks that test it
========================================  ==========================================
EU AI Act Art. 15(5), confidentiality     membership, link, attribute, reconstruction
OWASP AITG-MOD-04 membership inference    membership
OWASP AITG-MOD-05 inversion attacks       link, attribute, reconstruction
NIST AI 100-2 E2025 membership inference  membership
NIST AI 100-2 E2025 data reconstruction   link, attribute, reconstruction
NIST AI 100-2 E2025 property inference    none: graphleaks has no such attack
NIST AI 100-2 E2025 model extraction      none: graphleaks has no such attack
========================================  ==========================================

Mapping choices (ours, not the frameworks'): link inference recovers edges of the training
graph and attribute inference a private feature of a training node, so both are mapped to
data reconstruction and inversion; an edge-level membership reading of link inference is
not claimed. Art. 15(5) also names data poisoning, model poisoning, adversarial examples
and model flaws: graphleaks tests none of them, and every table says so.

Example:
    >>> [c.ref for c in controls_for_task("membership")]
    ['Art. 15(5)', 'AITG-MOD-04', 'membership inference']
    >>> controls_for_task("unknown-task")
    ()
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphleaks.report.report import AuditReport

MEMBERSHIP, LINK, ATTRIBUTE, RECONSTRUCTION = "membership", "link", "attribute", "reconstruction"
#: Membership of a training edge of a link predictor: membership inference in the edge unit.
EDGE_MEMBERSHIP = "edge_membership"
_INFERS_DATA = (LINK, ATTRIBUTE, RECONSTRUCTION)
#: whole-graph membership (graph classifiers) tests the membership controls
GRAPH_MEMBERSHIP = "graph_membership"


@dataclass(frozen=True)
class Control:
    """One control (a requirement or test case of a framework).

    Attributes:
        id: Stable identifier, also a SARIF tag (no spaces).
        framework: The framework, e.g. ``OWASP AI Testing Guide``.
        ref: The control's reference within it, e.g. ``AITG-MOD-04``.
        title: What it asks for.
        tasks: The attack tasks that test it (empty: graphleaks cannot test it).
        url: Where to read the control.
        scope_note: What part of the control no graphleaks attack tests, if any.
    """

    id: str
    framework: str
    ref: str
    title: str
    tasks: tuple[str, ...]
    url: str
    scope_note: str = ""

    @property
    def label(self) -> str:
        """``framework ref``, e.g. ``OWASP AI Testing Guide AITG-MOD-04``."""
        return f"{self.framework} {self.ref}"


_NIST = "NIST AI 100-2 E2025"
_NIST_URL = "https://doi.org/10.6028/NIST.AI.100-2e2025"
_OWASP = "OWASP AI Testing Guide"
_OWASP_URL = "https://github.com/OWASP/www-project-ai-testing-guide"

#: Every control graphleaks maps, tested or not.
CONTROLS: tuple[Control, ...] = (
    Control("EU-AI-Act-Art-15(5)", "EU AI Act", "Art. 15(5)",
            "measures against attacks exploiting AI-specific vulnerabilities: confidentiality "
            "attacks",
            (MEMBERSHIP, GRAPH_MEMBERSHIP, EDGE_MEMBERSHIP, *_INFERS_DATA),
            "https://eur-lex.europa.eu/eli/reg/2024/1689/oj",
            "data poisoning, model poisoning, adversarial examples (model evasion) and model "
            "flaws, also named in Art. 15(5), are not tested by graphleaks"),
    Control("OWASP-AITG-MOD-04", _OWASP, "AITG-MOD-04", "testing for membership inference",
            (MEMBERSHIP, GRAPH_MEMBERSHIP, EDGE_MEMBERSHIP), _OWASP_URL),
    Control("OWASP-AITG-MOD-05", _OWASP, "AITG-MOD-05", "testing for inversion attacks",
            _INFERS_DATA, _OWASP_URL),
    Control("NIST-AI-100-2-membership-inference", _NIST, "membership inference",
            "privacy attack: membership inference",
            (MEMBERSHIP, GRAPH_MEMBERSHIP, EDGE_MEMBERSHIP), _NIST_URL),
    Control("NIST-AI-100-2-data-reconstruction", _NIST, "data reconstruction",
            "privacy attack: data reconstruction (here: edges and attributes of the "
            "training graph)", _INFERS_DATA, _NIST_URL),
    Control("NIST-AI-100-2-property-inference", _NIST, "property inference",
            "privacy attack: property inference", (), _NIST_URL,
            "graphleaks has no property-inference attack"),
    Control("NIST-AI-100-2-model-extraction", _NIST, "model extraction",
            "privacy attack: model extraction", (), _NIST_URL,
            "graphleaks has no model-extraction attack"),
)

#: Where the Annex IV technical documentation of a high-risk system records these tests.
ANNEX_IV_NOTE = ("EU AI Act Annex IV (technical documentation) asks for the validation and "
                 "testing procedures, metrics and results: this report, its report.json and "
                 "the CycloneDX model card of `graphleaks export` are that record for the "
                 "confidentiality tests above.")


def controls_for_task(task: str) -> tuple[Control, ...]:
    """The controls an attack of ``task`` tests (empty for a task graphleaks does not map)."""
    return tuple(c for c in CONTROLS if task in c.tasks)


def control_tags(task: str) -> list[str]:
    """SARIF rule tags of an attack of ``task``: ``privacy``, then its controls' ids."""
    return ["privacy", *(c.id for c in controls_for_task(task))]


@dataclass(frozen=True)
class Coverage:
    """One control and the attacks of a report that test it.

    Attributes:
        control: The control.
        attacks: Names of the report's attacks that test it (empty: not covered here).
        why_not: Why it is not covered, when ``attacks`` is empty.
    """

    control: Control
    attacks: tuple[str, ...]
    why_not: str = ""

    @property
    def status(self) -> str:
        """``covered``, ``partly covered`` (a scope note applies) or ``not covered``."""
        if not self.attacks:
            return "not covered"
        return "partly covered" if self.control.scope_note else "covered"

    def detail(self) -> str:
        """Which attacks cover it (and what they leave out), or why none does."""
        if not self.attacks:
            return self.why_not
        out = f"by {', '.join(self.attacks)}"
        return f"{out}; {self.control.scope_note}" if self.control.scope_note else out

    def text(self) -> str:
        """The coverage in words, e.g. ``covered by confidence_mia, shadow_mia``."""
        sep = ": " if not self.attacks else " "
        return f"{self.status}{sep}{self.detail()}"


def coverage(report: AuditReport) -> list[Coverage]:
    """Each control of :data:`CONTROLS` with the report's attacks that test it."""
    out = []
    for c in CONTROLS:
        attacks = tuple(a.attack for a in report.attacks if a.task in c.tasks)
        if attacks:
            out.append(Coverage(c, attacks))
        elif not c.tasks:
            out.append(Coverage(c, (), c.scope_note))
        else:
            out.append(Coverage(c, (), "this audit ran no attack of task "
                                       f"{' or '.join(c.tasks)}"))
    return out


def unmapped_attacks(report: AuditReport) -> list[str]:
    """Attacks of a task no control maps (e.g. from a newer graphleaks)."""
    return [a.attack for a in report.attacks if not controls_for_task(a.task)]


_INTRO = ("Which attack of this report tests which control. Evidence, not certification: a "
          "control is covered when an attack of its kind ran; whether the measured leakage "
          "is acceptable is the gate's and the auditor's call.")


def render_controls_markdown(report: AuditReport) -> list[str]:
    """The control-mapping table of a report, as Markdown lines."""
    lines = ["## Controls", "", _INTRO, "", "| control | what it asks | coverage in this report |",
             "|---|---|---|"]
    for cov in coverage(report):
        c = cov.control
        lines.append(f"| {c.label} | {c.title} | {cov.text()} |")
    lines.append("")
    lines += [f"- {t}" for t in _footer(report)]
    return [*lines, ""]


def render_controls_html(report: AuditReport) -> str:
    """The control-mapping table of a report, as an HTML section."""
    e = html.escape
    rows = []
    for cov in coverage(report):
        c = cov.control
        badge = {"covered": "ok", "partly covered": "warn"}.get(cov.status, "bad")
        # the source as a tooltip, not a link: the page references nothing outside itself
        rows.append(f'<tr><td title="{e(c.url)}">{e(c.label)}</td><td>{e(c.title)}</td>'
                    f'<td><span class="badge {badge}">{e(cov.status)}</span> '
                    f"{e(cov.detail())}"
                    "</td></tr>")
    items = "".join(f"<li>{e(t)}</li>" for t in _footer(report))
    return (f"<h2>Controls</h2><p>{e(_INTRO)}</p><table><tr><th>control</th>"
            "<th>what it asks</th><th>coverage in this report</th></tr>"
            + "".join(rows) + f"</table><ul>{items}</ul>")


def _footer(report: AuditReport) -> Sequence[str]:
    notes = [ANNEX_IV_NOTE]
    unmapped = unmapped_attacks(report)
    if unmapped:
        notes.append(f"mapped to no control (task unknown to this graphleaks): "
                     f"{', '.join(unmapped)}")
    return notes
