"""The own-model path, library side (issue 24 items 5 and 7): static-shape exports are
detected at load and either run the attacks that query the exported graph or are refused
before any work; query-heavy attacks are costed before they run; string node ids reach the
report; the target card describes the user's model; unsupported model kinds are named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from graphleaks.attacks.linkteller import LinkTeller
from graphleaks.audit import runner
from graphleaks.audit.model_audit import audit_target, model_target
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.models.foreign import load_model_file, load_onnx, load_pt2
from graphleaks.models.protocol import fixed_shape
from tests.audit.own_model import OwnSetup, make_own_setup

SEED = 5


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> OwnSetup:
    return make_own_setup(tmp_path_factory.mktemp("own"))


def _static_pt2(own: OwnSetup, path: Path) -> Path:
    # what a new user writes: the default export, static shapes
    ep = torch.export.export(own.model, (own.graph.x, own.graph.edge_index))
    torch.export.save(ep, str(path))
    return path


def test_static_pt2_is_detected_and_runs_only_the_served_graph(own, tmp_path):  # noqa: ANN001
    model = load_pt2(_static_pt2(own, tmp_path / "m.pt2"))
    n, e = int(own.graph.num_nodes), int(own.graph.edge_index.shape[1])
    assert fixed_shape(model) == (n, e)
    target = model_target(model, own.graph, own.members, own.non_members, seed=SEED)
    run = audit_target(target, attacks=["confidence_mia"], seed=SEED, n_bootstrap=20)
    assert run.report.attacks[0].attack == "confidence_mia"
    assert run.report.config["target_model"]["static_shapes"] == {"nodes": n, "edges": e}
    # an attack that queries the edgeless graph is refused before any work, with the call
    with pytest.raises(CapabilityError, match="dynamic_shapes") as exc:
        audit_target(target, attacks=["gbase_mia"], seed=SEED, n_bootstrap=20)
    assert "torch.export.Dim('nodes'" in str(exc.value) and "\n" not in str(exc.value)


def test_static_pt2_default_audit_lists_what_needs_dynamic_shapes(own, tmp_path,  # noqa: ANN001
                                                                  monkeypatch):
    model = load_pt2(_static_pt2(own, tmp_path / "m.pt2"))
    target = model_target(model, own.graph, own.members, own.non_members, seed=SEED)
    ran: list[str] = []
    real = runner.run_attack

    def spy(attack, *a, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        ran.append(attack.name)
        return real(attack, *a, **kw)

    monkeypatch.setattr(runner, "run_attack", spy)
    # the default audit at quick budgets: every attack runs but those needing another size
    run = audit_target(target, attacks=None, seed=SEED, suite="quick", n_bootstrap=20)
    skipped = run.report.config["skipped_attacks"]
    for name in ("gbase_mia", "label_only_mia"):
        assert name not in ran
        assert "needs dynamic shapes" in skipped[name] and "torch.export.export(" in skipped[name]
    assert "confidence_mia" in ran


def test_static_export_of_another_graph_is_refused_before_any_work(own, tmp_path):  # noqa: ANN001
    g = own.graph
    keep = g.edge_index[:, : g.edge_index.shape[1] - 2]
    ep = torch.export.export(own.model, (g.x, keep))
    torch.export.save(ep, str(tmp_path / "other.pt2"))
    with pytest.raises(DataError, match="static shapes") as exc:
        model_target(load_pt2(tmp_path / "other.pt2"), g, own.members, own.non_members)
    assert "dynamic_shapes" in str(exc.value) and "\n" not in str(exc.value)


def test_static_onnx_is_detected(own, tmp_path):  # noqa: ANN001
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    g = own.graph
    torch.onnx.export(own.model, (g.x, g.edge_index), str(tmp_path / "m.onnx"), dynamo=True,
                      verbose=False)
    model = load_onnx(tmp_path / "m.onnx")
    assert fixed_shape(model) == (int(g.num_nodes), int(g.edge_index.shape[1]))
    target = model_target(model, g, own.members, own.non_members, seed=SEED)
    with pytest.raises(CapabilityError, match="torch.onnx.export"):
        audit_target(target, attacks=["label_only_mia"], seed=SEED, n_bootstrap=20)


def test_target_card_names_the_model_layers_protocol_and_utility(own):  # noqa: ANN001
    target = model_target(own.model, own.graph, own.members, own.non_members, seed=SEED,
                          embedding_layers=("conv1",))
    run = audit_target(target, attacks=["confidence_mia"], seed=SEED, n_bootstrap=20)
    card = run.report.target
    assert card.architecture["model"].endswith("GATJK")
    assert card.architecture["embedding_layers"] == ["conv1"]
    assert card.protocol == "transductive"  # members are served with non-members' edges
    pred = own.model(own.graph.x, own.graph.edge_index).argmax(1).numpy()
    y = own.graph.y.numpy()
    assert card.utility["train_accuracy"] == pytest.approx(
        float((pred[own.members] == y[own.members]).mean()))
    assert card.utility["test_accuracy"] == pytest.approx(
        float((pred[own.non_members] == y[own.non_members]).mean()))
    assert "own architecture" in run.report.config["target_model"]["surrogate_effect"]


def test_inductive_protocol_read_from_the_served_graph(own):  # noqa: ANN001
    g = own.graph
    non = np.zeros(int(g.num_nodes), dtype=bool)
    non[own.non_members] = True
    ei = g.edge_index
    served = ei[:, ~torch.as_tensor(non[ei[0].numpy()] | non[ei[1].numpy()])]
    target = model_target(own.model, g, own.members, own.non_members, seed=SEED,
                          served_edge_index=served)
    run = audit_target(target, attacks=["confidence_mia"], seed=SEED, n_bootstrap=20)
    assert run.report.target.protocol == "inductive"


def test_surrogate_effect_is_stated(own, tmp_path):  # noqa: ANN001
    model = load_pt2(_static_pt2(own, tmp_path / "m.pt2"))
    target = model_target(model, own.graph, own.members, own.non_members, seed=SEED)
    run = audit_target(target, attacks=["confidence_mia"], seed=SEED, n_bootstrap=20)
    assert "surrogate graphleaks GCN" in run.report.config["target_model"]["surrogate_effect"]


@pytest.mark.parametrize("cls,kwargs", [("PairScorer", {"in_dim": 8}),
                                        ("GraphClassifier", {"in_dim": 8, "out_dim": 3})])
def test_link_and_graph_models_are_sent_to_their_task(own, cls, kwargs):  # noqa: ANN001
    model = getattr(own.module, cls)(**kwargs).eval()
    with pytest.raises(InvalidConfigError, match="link-prediction or graph-classification") as e:
        model_target(model, own.graph, own.members, own.non_members)
    # the refusal names the door that does audit it
    assert "task='graph'" in str(e.value) and "task='link'" in str(e.value)


def test_pickled_module_is_named_as_one(own, tmp_path):  # noqa: ANN001
    torch.save(own.model, tmp_path / "whole.pt")
    for kw in ({}, {"model_class": "ownnet24:GATJK", "model_kwargs": '{"in_dim": 8, '
                    '"hidden": 32, "out_dim": 3}'}):
        with pytest.raises(DataError, match="pickled module") as exc:
            load_model_file(tmp_path / "whole.pt", **kw)
        assert "never unpickles" in str(exc.value) and "state_dict()" in str(exc.value)
    torch.save(own.model.state_dict(), tmp_path / "w.pt")
    with pytest.raises(InvalidConfigError, match="weights only"):
        load_model_file(tmp_path / "w.pt")


def test_string_ids_reach_scores_and_most_exposed(own):  # noqa: ANN001
    target = model_target(own.model, own.graph, own.members, own.non_members, seed=SEED)
    run = audit_target(target, attacks=["confidence_mia"], seed=SEED, n_bootstrap=20)
    [table] = run.tables
    assert table.names is not None
    exposed = run.report.attacks[0].exposure["most_exposed"]
    assert exposed and all(r["node"] in own.names for r in exposed)


def test_most_exposed_breaks_ties_by_node_index():
    from graphleaks.report.scores import CandidateTable, most_exposed

    nodes = np.array([9, 3, 7, 1])
    table = CandidateTable("a", "membership", nodes, np.array([0.5, 0.5, 0.9, 0.5]),
                           np.ones(4, dtype=np.int64), np.zeros(4, dtype=np.int64),
                           np.zeros(4, dtype=object), np.full(4, "train", dtype=object))
    rows = most_exposed(table)
    assert [r["node"] for r in rows] == [7, 1, 3, 9]
    assert [r["rank"] for r in rows] == [1, 2, 3, 4]
    # nodes named by strings: ties ordered by the name the report shows
    names = np.array([f"n{i}" for i in range(10)], dtype=object)
    names[9], names[1] = "a", "z"
    named = CandidateTable("a", "membership", nodes, np.array([0.5, 0.5, 0.9, 0.5]),
                           np.ones(4, dtype=np.int64), np.zeros(4, dtype=np.int64),
                           np.zeros(4, dtype=object), np.full(4, "train", dtype=object),
                           names=names)
    assert [r["node"] for r in most_exposed(named)] == ["n7", "a", "n3", "z"]


def test_linkteller_over_budget_is_refused_or_shrunk_before_it_runs(own,  # noqa: ANN001
                                                                     monkeypatch):
    target = model_target(own.model, own.graph, own.members, own.non_members, seed=SEED)
    # slow queries (as LinkTeller's on an LPGNN target) stand in for the measurement: no
    # timing is asserted. 61 queries x 2 CPU-s is over the quick suite's 60 CPU-s.
    monkeypatch.setattr(runner, "query_cpu_seconds", lambda *a, **k: 2.0)
    with pytest.raises(InvalidConfigError, match="estimated 122 CPU-s") as exc:
        runner.audit_with_scores(target, [LinkTeller(n_nodes=60)], seed=SEED,
                                 n_bootstrap=20, suite="quick")
    assert "linkteller.n_nodes=29 fits" in str(exc.value)
    assert "--suite thorough" in str(exc.value)
    monkeypatch.setattr(runner, "query_cpu_seconds", lambda *a, **k: 20.0)
    # the default audit: shrunk to what the budget allows (60 CPU-s / 20 = 3 queries: too
    # few, skipped); at 1 CPU-s per query it runs on 59 nodes, and says so
    atk = [LinkTeller(n_nodes=100)]
    run = runner.audit_with_scores(target, atk, seed=SEED, n_bootstrap=20, suite="quick",
                                   skip_unrunnable=True)
    assert "too few queries" in run.report.config["skipped_attacks"]["linkteller"]
    monkeypatch.setattr(runner, "query_cpu_seconds", lambda *a, **k: 1.0)
    run = runner.audit_with_scores(target, atk, seed=SEED, n_bootstrap=20, suite="quick",
                                   skip_unrunnable=True)
    [rep] = run.report.attacks
    assert rep.config["n_nodes"] == 59
    assert any("reduced budget" in note for note in rep.notes)


def test_query_cost_measurement_charges_no_release(own):  # noqa: ANN001
    """The measurement runs the real target; a model that charges its API per fresh
    release (GAP's guard) is not charged for it, and keeps its guard."""
    calls: list[int] = []

    class Guard:
        def charge(self, digest: int) -> None:
            calls.append(digest)

    class Guarded(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner
            self.release_guard: Guard | None = None

        def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
            if self.release_guard is not None:
                self.release_guard.charge(int(x.sum() * 1000))
            return self.inner(x, edge_index)

    model = Guarded(own.model).eval()
    target = model_target(model, own.graph, own.members, own.non_members, seed=SEED)
    guard = Guard()
    model.release_guard = guard
    assert runner.query_cpu_seconds(target) > 0
    assert model.release_guard is guard and not calls
    target.feature_query_rows(own.graph.x, np.arange(3), scale_node=0, scale=2.0)
    assert calls  # the guard is live again: a real query is charged


def test_report_card_renders_the_users_model(own):  # noqa: ANN001
    from graphleaks.report.html import render_html
    from graphleaks.report.markdown import render_markdown

    target = model_target(own.model, own.graph, own.members, own.non_members, seed=SEED,
                          embedding_layers=("conv1", "conv2"))
    report = audit_target(target, attacks=["confidence_mia"], seed=SEED, n_bootstrap=20,
                          model_label="ownnet24:GATJK").report
    md, page = render_markdown(report), render_html(report)
    for text in (md, page):
        assert "ownnet24:GATJK" in text and "UNKNOWN" not in text and "USER" not in text
        assert "conv1, conv2" in text and "transductive" in text
        assert "fresh copies of the model" in text
    acc = [line for line in md.splitlines() if line.startswith("| accuracy |")]
    from graphleaks._display import fmt_figure

    cells = [c.strip() for c in acc[0].split("|")]
    assert cells[2] == fmt_figure(report.target.utility["train_accuracy"])  # members
    assert cells[4] == fmt_figure(report.target.utility["test_accuracy"])  # non-members
    assert "equal scores ordered by node id" in page


def test_api_takes_string_ids_and_measures_the_surrogate(own):  # noqa: ANN001
    from graphleaks import audit_model

    names = np.asarray(own.names)
    report = audit_model(own.model, own.graph, names[own.members], names[own.non_members],
                         attacks=["confidence_mia"], seed=SEED, n_bootstrap=20,
                         compare_surrogate=True)
    exposed = report.attacks[0].exposure["most_exposed"]
    assert exposed and {r["node"] for r in exposed} <= set(names[own.members])
    both = report.config["surrogate_comparison"]["confidence_mia"]
    assert both["own_architecture"] == report.attacks[0].metrics.binary.auc.value
    assert both["surrogate_gcn"] is not None and 0.0 <= both["surrogate_gcn"] <= 1.0
    with pytest.raises(DataError, match="entry 2") as exc:
        audit_model(own.model, own.graph, [names[0], "nobody"], names[own.non_members])
    assert "nobody" not in str(exc.value)


def test_scores_api_takes_string_ids():
    from graphleaks import audit_scores

    rng = np.random.default_rng(0)
    ids = np.array([f"user_{i}" for i in rng.permutation(40)])
    scores = rng.dirichlet(np.ones(3), size=40)
    labels = rng.integers(0, 3, size=40)
    report = audit_scores(scores, labels, members=ids[:20], node_ids=ids, seed=SEED,
                          n_bootstrap=20)
    exposed = report.attacks[0].exposure["most_exposed"]
    assert exposed and {r["node"] for r in exposed} <= set(ids[:20].tolist())
    with pytest.raises(DataError, match="no score row") as exc:
        audit_scores(scores, labels, members=["user_0", "mallory"], node_ids=ids)
    assert "mallory" not in str(exc.value)
