"""Scores-only edge-membership audits: files, the CLI, refusals, and the same scores as the API
path for the attacks both run."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import graphleaks
from graphleaks.audit.link_audit import audit_link_scores
from graphleaks.cli import app
from graphleaks.data import tiny_graph
from graphleaks.data.pair_score_files import check_pair_scores, load_pair_scores
from graphleaks.data.pairs import undirected_pairs
from graphleaks.errors import CapabilityError, DataError
from tests.audit.link_own_model import train_user_model

FAST = {"suite": "quick", "n_bootstrap": 50}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A user's own link predictor, its members and non-members, and its exported logits."""
    g = tiny_graph()
    pairs = undirected_pairs(g.edge_index)
    perm = np.random.default_rng(0).permutation(len(pairs))
    cut = int(0.8 * len(pairs))
    members, held = pairs[perm[:cut]], pairs[perm[cut:]]
    model = train_user_model(g.x, torch.from_numpy(members).t(), epochs=150, seed=0)
    served = torch.from_numpy(members).t()
    data = g.clone()
    data.edge_index = torch.cat([served, served.flip(0)], dim=1)
    non = np.array([[0, 59], [1, 58], [2, 57], [3, 56], [4, 55], [5, 54]])
    non = non[~np.isin(non[:, 0] * 60 + non[:, 1], pairs[:, 0] * 60 + pairs[:, 1])]
    non_members = np.concatenate([held, non])
    scored = np.concatenate([members, non_members])
    with torch.no_grad():  # the user's own export: their model on their served graph
        logits = model(data.x, data.edge_index, torch.from_numpy(scored).t()).double().numpy()
    d = tmp_path_factory.mktemp("export")
    csv = d / "scores.csv"
    csv.write_text("source,target,score\n" + "".join(
        f"{a},{b},{s!r}\n" for (a, b), s in zip(scored.tolist(), logits.tolist(), strict=True)))
    np.savez(d / "scores.npz", source=scored[:, 0], target=scored[:, 1], score=logits)
    (d / "members.csv").write_text("src,dst\n" + "".join(f"{a},{b}\n" for a, b in members))
    (d / "non_members.csv").write_text("".join(f"{a} {b}\n" for a, b in non_members))
    return model, data, members, non_members, d


def test_scores_only_equals_the_api_path_for_the_shared_attack(exported):
    model, data, members, non_members, d = exported
    api = graphleaks.audit_model(model, data, members, non_members, task="link",
                                 attacks=["edge_score_threshold"], seed=3, **FAST)
    for name in ("scores.csv", "scores.npz"):
        run = audit_link_scores(load_pair_scores(d / name), members, non_members,
                                attacks=["edge_score_threshold"], seed=3, **FAST)
        a, b = api.attack("edge_score_threshold"), run.report.attack("edge_score_threshold")
        assert a.metrics.binary.auc == b.metrics.binary.auc
        ta, tb = api_tables(model, data, members, non_members), run.tables[0]
        np.testing.assert_array_equal(ta.nodes, tb.nodes)  # the same candidates
        np.testing.assert_array_equal(ta.labels, tb.labels)
        # the same scores: the user's float32 model scored the export in another batch than
        # the audit's query, so they agree to float32 rounding (bitwise for the same batch)
        np.testing.assert_allclose(ta.scores, tb.scores, rtol=1e-6, atol=1e-6)
        rank = [(e["src"], e["dst"], e["rank"]) for e in a.exposure["most_exposed"]]
        assert rank == [(e["src"], e["dst"], e["rank"]) for e in b.exposure["most_exposed"]]


def api_tables(model, data, members, non_members):
    from graphleaks.audit.link_audit import audit_link_model

    run = audit_link_model(model, data, members, non_members,
                           attacks=["edge_score_threshold"], seed=3, **FAST)
    return run.tables[0]


def test_default_scores_only_audit_skips_what_needs_the_graph(exported):
    _, _, members, non_members, d = exported
    run = audit_link_scores(load_pair_scores(d / "scores.csv"), members, non_members, **FAST)
    assert [a.attack for a in run.report.attacks] == ["edge_score_threshold"]
    skipped = run.report.config["skipped_attacks"]
    assert "edge_lira" in skipped and "scores-only" in skipped["edge_lira"]
    assert run.report.target.protocol == "scores_only"
    with pytest.raises(CapabilityError, match="scores-only export"):
        audit_link_scores(load_pair_scores(d / "scores.csv"), members, non_members,
                          attacks=["edge_rmia"], **FAST)


def test_cli_writes_a_report_with_both_endpoints(exported, tmp_path):
    _, _, _, _, d = exported
    out = tmp_path / "rep"
    r = CliRunner().invoke(app, ["audit", "scores", str(d / "scores.csv"), "--task", "link",
                                 "--scores-output", "logits", "--members",
                                 str(d / "members.csv"), "--non-members",
                                 str(d / "non_members.csv"), "--suite", "quick",
                                 "--n-bootstrap", "50", "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    header = (out / "scores.csv").read_text().splitlines()[0]
    assert header.startswith("attack,task,node,src,dst")
    assert "edge membership" in (out / "report.md").read_text()


@pytest.mark.parametrize(("content", "match"), [
    ("node_id,label,p0,p1\n0,1,0.2,0.8\n", "no source and target columns"),
    ("0.5\n0.7\n", "expected three columns source, target, score"),
    ("source,target\n0,1\n", "no score column"),
    ("source,target,score\n3,3,0.1\n", "self-loop"),
    ("source,target,score\n0,1,0.1\n1,0,0.2\n", "same undirected pair"),
])
def test_pair_score_files_without_endpoints_or_bad_rows_are_refused(tmp_path, content, match):
    p = tmp_path / "s.csv"
    p.write_text(content)
    with pytest.raises(DataError, match=match) as e:
        load_pair_scores(p)
    assert "\n" not in str(e.value)


def test_npz_without_endpoints_is_refused(tmp_path):
    p = tmp_path / "s.npz"
    np.savez(p, scores=np.zeros((3, 2)), labels=np.zeros(3))
    with pytest.raises(DataError, match="needs both endpoints"):
        load_pair_scores(p)


def test_cli_refuses_bad_link_inputs_with_exit_2(exported, tmp_path):
    _, _, members, _, d = exported
    runner = CliRunner()
    base = ["audit", "scores", str(d / "scores.csv"), "--task", "link", "--scores-output",
            "logits", "--out", str(tmp_path / "o")]
    r = runner.invoke(app, [*base, "--members", str(d / "members.csv")])
    assert r.exit_code == 2 and "needs --members FILE and --non-members" in r.output
    overlap = tmp_path / "overlap.csv"
    overlap.write_text(f"{members[0][0]},{members[0][1]}\n")
    r = runner.invoke(app, [*base, "--members", str(d / "members.csv"), "--non-members",
                            str(overlap)])
    assert r.exit_code == 2 and "also a member edge" in r.output
    r = runner.invoke(app, [*base, "--members", str(d / "members.csv"), "--non-members",
                            str(d / "non_members.csv"), "--labels", str(overlap)])
    assert r.exit_code == 2 and "--labels applies to per-node scores" in r.output
    assert not (tmp_path / "o").exists()


def test_pair_scores_validation():
    with pytest.raises(DataError, match="leave \\[0, 1\\]"):
        check_pair_scores(np.array([[0, 1]]), np.array([1.5]), output="probabilities",
                          source="x")
    ps = check_pair_scores(np.array([[0, 1], [1, 2]]), np.array([0.5, 0.9]),
                           output="probabilities", source="x")
    assert ps.logits()[0] == 0.0
    with pytest.raises(DataError, match="row 0 of the member edges has no score"):
        ps.lookup(np.array([[0, 2]]), "member edges")
