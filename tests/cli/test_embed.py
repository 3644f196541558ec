"""``embed`` and ``audit embeddings`` commands, on a private Typer app."""

import json

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from graphleaks.cli.audit_embeddings import audit_embeddings, run_embedding_audit
from graphleaks.cli.embed import embed
from graphleaks.cli.options import OutputOptions
from graphleaks.errors import DataError, GraphleaksError, InvalidConfigError
from graphleaks.models.embeddings import load_embeddings

app = typer.Typer(pretty_exceptions_enable=False)
app.command("embed")(embed)
app.command("embeddings")(audit_embeddings)
runner = CliRunner()


def _invoke(args):
    result = runner.invoke(app, args)
    if isinstance(result.exception, GraphleaksError):
        raise result.exception
    return result


def test_embed_then_audit(tmp_path):
    out = tmp_path / "emb"
    res = _invoke(["embed", "--dataset", "synthetic", "--method", "node2vec", "--dimensions",
                   "8", "--walk-length", "10", "--walks-per-node", "2", "--window", "3",
                   "--p", "0.5", "--q", "2", "--seed", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    ids_txt, vec_txt = load_embeddings(out / "embeddings.txt")
    ids_npy, vec_npy = load_embeddings(out / "embeddings.npy")
    np.testing.assert_array_equal(vec_txt, vec_npy)
    assert vec_npy.shape[1] == 8
    meta = json.loads((out / "embeddings.json").read_text())
    assert meta["method"] == "node2vec" and meta["config"]["q"] == 2.0

    from graphleaks.data import load_dataset

    y = load_dataset("synthetic").y.numpy()
    attr = tmp_path / "labels.csv"
    attr.write_text("node_id,attribute\n" + "".join(f"{i},{v}\n" for i, v in enumerate(y)))
    res = _invoke(["embeddings", str(out / "embeddings.txt"),
                   "--attributes", str(attr), "--out", str(tmp_path / "rep"),
                   "--classifier", "rf", "--aux-frac", "0.5", "--seed", "0"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert set(summary["classifiers"]) == {"rf"}
    assert (tmp_path / "rep" / "report.json").is_file()
    assert (tmp_path / "rep" / "report.md").is_file()


def test_audit_mismatched_ids_is_data_error(tmp_path):
    emb = tmp_path / "e.txt"
    emb.write_text("2 2\n0 0.1 0.2\n1 0.3 0.4\n")
    attr = tmp_path / "a.csv"
    attr.write_text("0,0\n5,1\n")
    with pytest.raises(DataError, match="do not match"):
        _invoke(["embeddings", str(emb), "--attributes", str(attr),
                 "--out", str(tmp_path / "o")])
    with pytest.raises(DataError):
        run_embedding_audit(emb, tmp_path / "missing.csv", ["rf"], 0.3, 0, 100,
                            OutputOptions(tmp_path / "o"))


def test_embed_bad_method(tmp_path):
    with pytest.raises(InvalidConfigError):
        _invoke(["embed", "--dataset", "synthetic", "--method", "line", "--out",
                 str(tmp_path)])
    with pytest.raises(InvalidConfigError):
        run_embedding_audit(tmp_path / "e.txt", tmp_path / "a.csv", ["knn"], 0.3, 0, 100,
                            OutputOptions(tmp_path))


def test_embed_a_user_edge_list(tmp_path):
    # a ring of 12 nodes, each edge listed once
    (tmp_path / "edges.csv").write_text("src,dst\n" + "".join(f"{i},{(i + 1) % 12}\n"
                                                              for i in range(12)))
    out = tmp_path / "emb"
    res = _invoke(["embed", "--edges", str(tmp_path / "edges.csv"), "--dimensions", "4",
                   "--walk-length", "6", "--walks-per-node", "2", "--window", "2",
                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    ids, vec = load_embeddings(out / "embeddings.npy")
    assert vec.shape == (12, 4) and ids.tolist() == list(range(12))
    assert json.loads((out / "embeddings.json").read_text())["dataset"].endswith("edges.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("a\n1\n2\n")  # one column: no edges
    res = runner.invoke(app, ["embed", "--edges", str(bad), "--out", str(tmp_path / "o2")])
    assert res.exit_code != 0 and not (tmp_path / "o2").exists()


def test_string_ids_map_through_the_edge_list(tmp_path):
    # two communities of users with string ids; the attribute is the community
    import itertools

    users = [f"user_{i}" for i in range(40)]
    rows = [(a, b) for a, b in itertools.combinations(range(40), 2)
            if (a < 20) == (b < 20) and (a * 7 + b) % 3 == 0]
    (tmp_path / "e.csv").write_text("source,target\n" + "".join(
        f"{users[a]},{users[b]}\n" for a, b in rows))
    out = tmp_path / "emb"
    res = _invoke(["embed", "--edges", str(tmp_path / "e.csv"), "--dimensions", "8",
                   "--walk-length", "10", "--walks-per-node", "4", "--window", "3",
                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "embeddings.txt").read_text().splitlines()[1].startswith("user_")
    attr = tmp_path / "attr.csv"
    attr.write_text("node_id,attribute\n" + "".join(f"{u},{int(i < 20)}\n"
                                                   for i, u in enumerate(users)))
    res = _invoke(["embeddings", str(out / "embeddings.txt"),
                   "--attributes", str(attr), "--edges", str(tmp_path / "e.csv"),
                   "--out", str(tmp_path / "rep"), "--classifier", "rf", "--n-bootstrap", "30"])
    assert res.exit_code == 0, res.output
    with pytest.raises(DataError, match="--edges"):
        _invoke(["embeddings", str(out / "embeddings.txt"),
                 "--attributes", str(attr), "--out", str(tmp_path / "rep2")])
