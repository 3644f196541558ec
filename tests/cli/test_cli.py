import json
import pickle
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from graphleaks.cli import app

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, list(args))


def test_list_attacks_and_datasets():
    r = _run("list", "attacks")
    assert r.exit_code == 0 and "confidence_mia" in r.stdout
    r = _run("list", "datasets", "--json")
    assert "cora" in json.loads(r.stdout)


def _main(*args, cwd=None):
    """``python -m graphleaks`` in a fresh interpreter (the one real subprocess round trip)."""
    import os

    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "graphleaks", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600, env=env)


def test_bundle_audited_in_a_new_process_reproduces(edge_files, tmp_path, monkeypatch):
    # The one real subprocess round trip: a bundle trained here is audited by
    # `python -m graphleaks` in a fresh interpreter and by the same audit in this process
    # (CliRunner); both must give the same numbers. Every other CLI test runs in-process.
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the subprocess's thread count
    d = edge_files
    files = ["--edges", str(d / "edges.csv"), "--features", str(d / "x.npy"),
             "--labels", str(d / "y.csv")]
    r = _run("train", "--out", str(tmp_path / "b"), "--epochs", "30", *files)
    assert r.exit_code == 0, r.output
    # a bundle never follows paths to user graph files: they are given again
    audit = ["audit", "--bundle", str(tmp_path / "b"), "--n-bootstrap", "100", "--seed", "7",
             *files]
    r = _main(*audit, "--out", str(tmp_path / "r0"))
    assert r.returncode == 0, r.stderr
    r1 = _run(*audit, "--out", str(tmp_path / "r1"))
    assert r1.exit_code == 0, r1.output
    outs = [json.loads((tmp_path / f"r{i}" / "report.json").read_text()) for i in range(2)]
    # the default audit (every applicable attack) reproduces across processes
    assert len(outs[0]["attacks"]) > 1
    assert [a["metrics"] for a in outs[0]["attacks"]] == [a["metrics"] for a in outs[1]["attacks"]]
    assert (tmp_path / "r0" / "report.md").exists()


def test_malicious_weights_exit_2_and_payload_never_runs(edge_files, tmp_path):
    d = edge_files
    r = _run("train", "--out", str(tmp_path / "b"), "--epochs", "5", "--edges",
             str(d / "edges.csv"), "--features", str(d / "x.npy"), "--labels", str(d / "y.csv"))
    assert r.exit_code == 0, r.stderr
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    (tmp_path / "b" / "weights.safetensors").write_bytes(pickle.dumps(Payload()))
    r = _run("audit", "--bundle", str(tmp_path / "b"), "--out", str(tmp_path / "rep"))
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error:")
    assert not marker.exists() and not (tmp_path / "rep").exists()


@pytest.mark.parametrize("args,match", [
    (["audit", "--dataset", "nope"], "unknown dataset"),
    (["audit", "--attack", "nope"], "unknown attack"),
    (["audit", "--bundle", "/nonexistent"], "does not exist"),
    (["train", "--out", "X", "--arch", "transformer"], "arch"),
    (["audit", "--edges", "/nonexistent.csv", "--features", "/x.npy"], "does not exist"),
    (["audit", "--param", "bad"], "NAME.FIELD=VALUE"),
    (["audit", "--device", "cuda:99"], "cuda:99"),
])
def test_bad_input_one_line_exit_2(args, match, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert match in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "graphleaks-report").exists()


def test_usage_error_exit_2():
    r = _run("audit", "--no-such-option")
    assert r.exit_code == 2


def test_audit_embeddings_subcommand(tmp_path):
    import numpy as np

    rng = np.random.default_rng(0)
    attr = np.arange(80) % 2
    vectors = rng.normal(size=(80, 4)) + 3.0 * attr[:, None]
    np.save(tmp_path / "emb.npy", vectors)
    (tmp_path / "attr.csv").write_text("node,attr\n" + "\n".join(f"{i},{a}" for i, a in
                                                                  enumerate(attr)))
    r = _run("audit", "embeddings", str(tmp_path / "emb.npy"), "--attributes",
             str(tmp_path / "attr.csv"), "--out", str(tmp_path / "rep"), "--n-bootstrap", "50")
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert "leak" in json.dumps(report)
    r = _run("audit", "embeddings", str(tmp_path / "emb.npy"))
    assert r.exit_code == 2 and "needs --attributes" in r.stderr


def test_heterorr_reads_the_private_column_of_an_edge_list(edge_files, tmp_path):
    d = edge_files
    rows = (d / "edges.csv").read_text().splitlines()[1:]
    flagged = [f"{r},{int(i % 3 == 0)}" for i, r in enumerate(rows)]
    (tmp_path / "e.csv").write_text("source,target,private\n" + "\n".join(flagged))
    common = ["--features", str(d / "x.npy"), "--labels", str(d / "y.csv"), "--epochs", "5",
              "--defense", "heterorr", "--param", "heterorr.edge_split=column"]
    r = _run("train", "--out", str(tmp_path / "b"), "--edges", str(tmp_path / "e.csv"), *common)
    assert r.exit_code == 0, r.stderr
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["defense_config"]["edge_split"] == "column"
    assert manifest["training"]["private_edges"] > 0 and manifest["training"]["public_edges"] > 0
    r = _run("train", "--out", str(tmp_path / "c"), "--edges", str(d / "edges.csv"), *common)
    assert r.exit_code == 2 and "edge_split" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "c").exists()
