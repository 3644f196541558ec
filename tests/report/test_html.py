"""The self-contained HTML report."""

from __future__ import annotations

import base64
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from graphleaks.attacks import registry
from graphleaks.attacks.harness import run_attack
from graphleaks.audit.runner import run_audit
from graphleaks.audit.spec import build_target, parse_spec
from graphleaks.report.gates import GateSpec, Threshold
from graphleaks.report.html import render_html, roc_points, write_html
from graphleaks.report.records import RocCurve
from graphleaks.report.regression import check_report


@pytest.fixture(scope="module")
def audited():
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    spec = parse_spec({"target": {"dataset": "synthetic",
                                  "synthetic": {"num_nodes": 80, "num_features": 8},
                                  "architecture": {"epochs": 30}},
                       "audit": {"n_bootstrap": 30},
                       "attacks": {"confidence_mia": {"threshold": "none"},
                                   "link_stealing": {}}})
    target = build_target(spec.target, seed=spec.seed)
    attacks = [registry.get(n)(**p) for n, p in spec.attacks.items()]
    report = run_audit(target, attacks, seed=0, n_bootstrap=spec.n_bootstrap)
    res = [run_attack(attacks[0], target, seed=0)]
    torch.set_num_threads(n)
    return report, res


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.links = [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a["src"])
        for k in ("href", "src"):
            if a.get(k) and not a[k].startswith("data:"):
                self.links.append(a[k])


def test_self_contained_with_figures(audited, tmp_path):
    report, res = audited
    rows = [{"defense": "gap_edp", "attack": "confidence_mia", "epsilon": e,
             "metrics": report.attacks[0].metrics.to_dict(),
             "utility": {"test_accuracy": 0.5 + e / 20}} for e in (1.0, 4.0)]
    rows.append({**rows[0], "defense": "none", "epsilon": None})
    gate = check_report(report, GateSpec(thresholds=(Threshold("auc", 0.99),)))
    path = write_html(report, tmp_path / "r.html", results=res, tradeoff=rows, gate=gate)
    text = path.read_text()
    p = _Collector()
    p.feed(text)
    assert p.links == []  # nothing fetched from the network
    assert len(p.imgs) == 3  # estimates, ROC, privacy-utility
    for src in p.imgs:
        assert base64.b64decode(src.split(",", 1)[1])[:4] == b"\x89PNG"
    for needle in ("confidence_mia", "link_stealing", "Privacy ledger", "trivial baseline",
                   "log–log", "Privacy–utility", "Privacy gate"):
        assert needle in text
    assert "<script" not in text


def _with_roc(report, roc):
    return replace(report, attacks=[replace(a, metrics=replace(a.metrics, roc=roc))
                                    for a in report.attacks])


def test_roc_sources(audited):
    report, res = audited
    # the runner stores a compact ROC in the report; it is preferred over results
    assert set(roc_points(report)) == {"confidence_mia", "link_stealing"}
    fake = _with_roc(report, RocCurve((0.0, 0.01, 1.0), (0.0, 0.2, 1.0)))
    assert roc_points(fake, res)["confidence_mia"] == ([0.0, 0.01, 1.0], [0.0, 0.2, 1.0])
    # without the field, curves come from AttackResult objects (when given)
    bare = _with_roc(report, None)
    assert set(roc_points(bare, res)) == {"confidence_mia"}
    assert roc_points(bare) == {}
    assert "No ROC curves" in render_html(bare)


def test_escapes_text(audited):
    report, _ = audited
    rep = replace(report, ledger=replace(report.ledger, notes=("<b>x</b> & y",)),
                  attacks=[])  # no figures: keep the test fast
    assert "&lt;b&gt;x&lt;/b&gt; &amp; y" in render_html(rep)
