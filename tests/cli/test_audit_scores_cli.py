"""``graphleaks audit scores FILE``: scores-only audits from files, refusals, and the gate."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from graphleaks.cli import app


@pytest.fixture(scope="module")
def export(tmp_path_factory, trained_target):  # noqa: ANN001, ANN201
    """The overfit target's posteriors as files: scores.npz, scores.csv, members, non-members."""
    d = tmp_path_factory.mktemp("scores")
    t = trained_target
    nodes = np.concatenate([t.split.members, t.split.nonmembers])
    post = t.posteriors(nodes).detach().numpy()
    y = t.graph.y.numpy()[nodes]
    np.savez(d / "scores.npz", scores=post, labels=y, node_ids=nodes)
    (d / "scores.csv").write_text("node_id,label,p0,p1,p2\n" + "".join(
        f"{i},{lab},{','.join(repr(float(v)) for v in row)}\n"
        for i, lab, row in zip(nodes, y, post, strict=True)))
    (d / "members.txt").write_text("node_id\n" + "\n".join(map(str, t.split.members)) + "\n")
    (d / "non_members.txt").write_text("node_id\n" + "\n".join(map(str, t.split.nonmembers)) + "\n")
    return d


def _audit(out, scores, members, *extra):  # noqa: ANN001, ANN202
    return CliRunner().invoke(app, ["audit", "scores", str(scores), "--members",
                                    str(members), "--out", str(out), "--n-bootstrap", "100",
                                    *extra])


def test_scores_audit_writes_report_and_check_gates_it(export, tmp_path):
    out = tmp_path / "o"
    r = _audit(out, export / "scores.npz", export / "members.txt", "--non-members",
               str(export / "non_members.txt"))
    assert r.exit_code == 0, r.output
    assert "linkteller was skipped" in r.stdout
    for name in ("report.json", "report.md", "report.html", "scores.csv"):
        assert (out / name).is_file()
    data = json.loads((out / "report.json").read_text())
    [a] = data["attacks"]
    assert a["attack"] == "confidence_mia" and a["metrics"]["binary"]["auc"]["ci"][0] > 0.5
    assert "epsilon_lower_bound" in a["metrics"]
    # the files it was handed are named, never where they lie
    assert str(export) not in (out / "report.json").read_text()
    assert data["config"]["scores"] == "scores.npz"
    # the gate reads the report like any other: an overfit model fails auc <= 0.55
    failed = CliRunner().invoke(app, ["check", str(out / "report.json"), "--max", "auc=0.55"])
    assert failed.exit_code == 3, failed.output
    passed = CliRunner().invoke(app, ["check", str(out / "report.json"), "--max", "auc=0.999"])
    assert passed.exit_code == 0, passed.output


def test_csv_export_gives_the_same_auc_as_npz(export, tmp_path):
    a = _audit(tmp_path / "a", export / "scores.npz", export / "members.txt")
    b = _audit(tmp_path / "b", export / "scores.csv", export / "members.txt")
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    auc = [json.loads((tmp_path / d / "report.json").read_text())["attacks"][0]["metrics"]
           ["binary"]["auc"]["value"] for d in ("a", "b")]
    assert auc[0] == pytest.approx(auc[1], abs=1e-6)


def _one_line_exit_2(r, out):  # noqa: ANN001, ANN202
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), r.output
    assert not out.exists()
    return lines[0]


def test_named_attack_with_unmet_needs_exits_2_naming_the_capability(export, tmp_path):
    out = tmp_path / "x"
    line = _one_line_exit_2(_audit(out, export / "scores.npz", export / "members.txt",
                                   "--attack", "linkteller"), out)
    assert "linkteller needs" in line and "FEATURE_QUERIES" in line


@pytest.mark.parametrize("case,match", [
    ("nan", "NaN"), ("shape", "2-D"), ("labels", "labels must lie"),
    ("outside", "no score row"), ("overlap", "overlap"), ("kind", "sum to 1"),
])
def test_bad_input_exits_2_one_line_nothing_written(export, tmp_path, case, match):
    scores, members = export / "scores.npz", export / "members.txt"
    extra: list[str] = []
    z = dict(np.load(scores))
    if case in ("nan", "shape", "labels"):
        if case == "nan":
            z["scores"][3, 1] = np.nan
        elif case == "shape":
            z["scores"] = z["scores"][:, 0]
        else:
            z["labels"][0] = 7
        scores = tmp_path / "bad.npz"
        np.savez(scores, **z)
    elif case == "outside":
        members = tmp_path / "m.txt"
        members.write_text("node_id\n" + "0\n100000\n")
    elif case == "overlap":
        (tmp_path / "nm.txt").write_text(members.read_text().splitlines()[1] + "\n")
        extra = ["--non-members", str(tmp_path / "nm.txt")]
    else:
        extra = ["--scores-output", "log_probabilities"]
        z["scores"] = np.log(z["scores"] + 1e-9) - 1.0
        scores = tmp_path / "bad.npz"
        np.savez(scores, **z)
    out = tmp_path / "o"
    line = _one_line_exit_2(_audit(out, scores, members, *extra), out)
    assert match in line


def test_scores_refuses_model_options_and_needs_members(export, tmp_path):
    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["audit", "scores", str(export / "scores.npz"), "--out",
                                 str(out)])
    assert "--members" in _one_line_exit_2(r, out)
    r = _audit(out, export / "scores.npz", export / "members.txt", "--dataset", "cora")
    # audit model FILE takes --dataset too (--task graph: the graph set)
    assert ("--dataset belongs to graphleaks audit or graphleaks audit model FILE, not to "
            "graphleaks audit scores FILE" in _one_line_exit_2(r, out))


def test_bare_npy_with_label_and_id_files(export, tmp_path):
    z = np.load(export / "scores.npz")
    np.save(tmp_path / "s.npy", z["scores"])
    (tmp_path / "y.txt").write_text("\n".join(map(str, z["labels"])) + "\n")
    np.save(tmp_path / "ids.npy", z["node_ids"])
    r = _audit(tmp_path / "a", tmp_path / "s.npy", export / "members.txt", "--labels",
               str(tmp_path / "y.txt"), "--score-ids", str(tmp_path / "ids.npy"))
    assert r.exit_code == 0, r.output
    ref = _audit(tmp_path / "b", export / "scores.npz", export / "members.txt")
    assert ref.exit_code == 0
    a, b = (json.loads((tmp_path / d / "report.json").read_text())["attacks"][0]["metrics"]
            ["binary"] for d in ("a", "b"))
    assert a == b


def test_param_is_parsed_by_type_and_recorded_as_run(export, tmp_path):
    """--param on a scores-only audit goes through the one typed resolver."""
    out = tmp_path / "o"
    r = _audit(out, export / "scores.npz", export / "members.txt",
               "--param", "Confidence-MIA.score=max",
               "--param", "confidence_mia.compat_duddu_label_indexing=False")
    assert r.exit_code == 0, r.output
    data = json.loads((out / "report.json").read_text())
    [a] = data["attacks"]
    assert a["config"]["score"] == "max" and a["compat_flags"] == []
    assert data["config"]["params"] == {
        "confidence_mia": {"score": "max", "compat_duddu_label_indexing": False}}
    bad = _audit(tmp_path / "b", export / "scores.npz", export / "members.txt",
                 "--param", "confidence_mia.score=maxx")
    assert bad.exit_code == 2 and "maxx" in bad.output and "true_class" in bad.output
    assert not (tmp_path / "b").exists()
