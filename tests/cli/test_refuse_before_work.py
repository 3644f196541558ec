"""Named attacks are refused before any training: size (TIA, Eclipse's rank) and cost
(LinkTeller's queries, timed on an untrained model of the target's architecture)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A 40-node CSBM as files."""
    import numpy as np

    from graphleaks.data.synthetic import csbm

    d = tmp_path_factory.mktemp("small-graph")
    g = csbm(40, num_classes=2, num_features=4, seed=0)
    np.savetxt(d / "e.csv", g.edge_index.numpy().T, fmt="%d", delimiter=",",
               header="src,dst", comments="")
    np.save(d / "x.npy", g.x.numpy())
    np.savetxt(d / "y.csv", g.y.numpy(), fmt="%d")
    return ["--edges", str(d / "e.csv"), "--features", str(d / "x.npy"), "--labels",
            str(d / "y.csv"), "--suite", "quick"]


@pytest.fixture
def trained(monkeypatch):
    """Epoch counts of every target trained (a cost probe trains 1 epoch)."""
    import graphleaks.audit.runner as runner_mod

    epochs: list[int] = []
    real = runner_mod.train_target

    def recording(graph, **kwargs):
        epochs.append(kwargs["spec"].epochs)
        return real(graph, **kwargs)

    monkeypatch.setattr(runner_mod, "train_target", recording)
    return epochs


def _one_line_exit_2(r, tmp_path):
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error:") and r.stderr.count("\n") == 1
    assert not (tmp_path / "graphleaks-report").exists()
    return r.stderr


def test_linkteller_over_budget_refused_from_an_untrained_probe(small, trained, tmp_path,
                                                                 monkeypatch):
    import graphleaks.audit.runner as runner_mod

    monkeypatch.chdir(tmp_path)
    # one query as dear as LPGNN's on a large graph: the estimate exceeds any suite budget
    monkeypatch.setattr(runner_mod, "query_cpu_seconds", lambda *a, **k: 50.0)
    r = CliRunner().invoke(app, ["audit", *small, "--attack", "confidence_mia",
                                 "--attack", "linkteller"])
    line = _one_line_exit_2(r, tmp_path)
    assert "linkteller: an estimated" in line and "budget of" in line
    assert "untrained model" in line and "before training" in line
    assert trained == [1]  # only the 1-epoch probe: the target itself was never trained


def test_linkteller_within_budget_passes_the_probe(small, trained, tmp_path, monkeypatch):
    import graphleaks.audit.runner as runner_mod

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner_mod, "audit_with_scores", _stop)
    r = CliRunner().invoke(app, ["audit", *small, "--attack", "linkteller"])
    assert r.exit_code == 99 and trained == [1, 200]  # the probe, then the real target


def test_attacks_without_queries_train_no_probe(small, trained, tmp_path, monkeypatch):
    import graphleaks.audit.runner as runner_mod

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner_mod, "audit_with_scores", _stop)
    r = CliRunner().invoke(app, ["audit", *small, "--attack", "confidence_mia"])
    assert r.exit_code == 99 and trained == [200]


def _stop(*args, **kwargs):
    raise SystemExit(99)  # past every pre-check: the audit itself is not under test here


def test_tia_subgraph_size_refused_before_training(small, trained, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["audit", *small, "--attack", "tia", "--param",
                                 "tia.min_size=50"])
    line = _one_line_exit_2(r, tmp_path)
    assert "min_size=50" in line and "40 nodes" in line and trained == []


def test_eclipse_rank_refused_before_training(small, trained, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["audit", *small, "--attack", "confidence_mia", "--defense",
                                 "eclipse", "--epsilon", "1", "--param", "eclipse.rank=40"])
    line = _one_line_exit_2(r, tmp_path)
    assert "rank" in line and "(40)" in line and trained == [200]  # refused inside, pre-split


def test_tia_check_scale_is_the_attack_own():
    from graphleaks.attacks.tia import TIA
    from graphleaks.errors import InvalidConfigError

    TIA(min_size=10).check_scale(10, 18)
    with pytest.raises(InvalidConfigError, match="min_size=10"):
        TIA(min_size=10).check_scale(9, 100)
    with pytest.raises(InvalidConfigError, match="min_size=10"):
        TIA(min_size=10).check_scale(100, 8)
