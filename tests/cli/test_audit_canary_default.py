"""The default canary audit of a defended target trained here: once, whatever --param says.

``--canary-audit UNIT`` replaces the default audit (it runs once, not twice); ``--param``
alone does not narrow the attacks, so it keeps the default audit; ``--canary-audit none``
turns it off, and says so in the verdict notes.
"""

import json

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A 120-node CSBM as edge-list, feature and label files (small: fast training)."""
    import numpy as np

    from graphleaks.data.synthetic import csbm

    d = tmp_path_factory.mktemp("canary-default-graph")
    g = csbm(120, num_classes=3, num_features=8, seed=0)
    np.savetxt(d / "e.csv", g.edge_index.numpy().T, fmt="%d", delimiter=",", header="src,dst",
               comments="")
    np.save(d / "x.npy", g.x.numpy())
    np.savetxt(d / "y.csv", g.y.numpy(), fmt="%d")
    return ["--edges", str(d / "e.csv"), "--features", str(d / "x.npy"), "--labels",
            str(d / "y.csv"), "--defense", "edgerand", "--epsilon", "1", "--suite", "quick",
            "--n-bootstrap", "20"]


@pytest.fixture
def calls(monkeypatch):
    """Count canary audits and keep the audit itself to one attack (the list is checked)."""
    import graphleaks.audit.canary as canary_mod
    import graphleaks.audit.runner as runner_mod

    seen = {"canary": 0, "attacks": None}
    real_canary, real_audit = canary_mod.canary_audit, runner_mod.audit_with_scores

    def counting(*args, **kwargs):
        seen["canary"] += 1
        kwargs["num_canaries"] = 20 if "num_canaries" in kwargs else None
        if kwargs["num_canaries"] is None:
            del kwargs["num_canaries"]
        return real_canary(*args, **kwargs)

    def one_attack(target, attacks, **kwargs):
        seen["attacks"] = None if attacks is None else [a.name for a in attacks]
        first = [a for a in attacks or [] if a.name == "confidence_mia"] or ["confidence_mia"]
        return real_audit(target, first, **kwargs)

    monkeypatch.setattr(canary_mod, "canary_audit", counting)
    monkeypatch.setattr(runner_mod, "audit_with_scores", one_attack)
    return seen


def _report(out):
    return json.loads((out / "report.json").read_text())


def test_named_unit_replaces_the_default_canary_audit(files, calls, tmp_path):
    out = tmp_path / "r"
    r = runner.invoke(app, ["audit", *files, "--canary-audit", "edge", "--canaries", "20",
                            "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert calls["canary"] == 1  # not the default one first, then this one
    rep = _report(out)
    assert [a["unit"] for a in rep["canary_audits"]] == ["edge"]
    assert "canary_audit_skipped" not in rep["config"]
    assert "audited ε not measured" not in r.stdout


def test_param_alone_keeps_the_default_canary_audit(files, calls, tmp_path):
    out = tmp_path / "r"
    r = runner.invoke(app, ["audit", *files, "--param", "confidence_mia.score=max",
                            "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert calls["attacks"] is not None and len(calls["attacks"]) > 1  # every applicable one
    assert calls["canary"] == 1  # the defense decides, not the attack list
    rep = _report(out)
    assert [a["unit"] for a in rep["canary_audits"]] == ["edge"]
    assert rep["config"]["params"] == {"confidence_mia": {"score": "max"}}


def test_canary_audit_none_turns_it_off_and_says_so(files, calls, tmp_path):
    out = tmp_path / "r"
    r = runner.invoke(app, ["audit", *files, "--canary-audit", "none", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert calls["canary"] == 0
    rep = _report(out)
    assert not rep.get("canary_audits")
    assert "--canary-audit none" in rep["config"]["canary_audit_skipped"]
    assert "audited ε not measured: turned off with --canary-audit none" in r.stdout


@pytest.mark.parametrize("extra", [["--canary-audit", "none", "--canary-audit", "edge"],
                                   ["--canary-audit", "none", "--canaries", "50"]])
def test_canary_audit_none_with_a_unit_or_count_exit_2(files, extra, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["audit", *files, *extra])
    assert r.exit_code == 2, r.output
    assert "--canary-audit none" in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "graphleaks-report").exists()
