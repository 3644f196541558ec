"""Auditing a model graphleaks did not build: Python API, .pt2, state_dict + --model-class.

The user's model (``conftest.py``: SGConv then GINConv, its own training loop) is audited
three ways; the audits must agree on the attacks they share, and the confidence MIA must
find the overfit model's leak.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from graphleaks import audit_model
from graphleaks.cli import app
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.models.foreign import export_pt2

#: Attacks that train no model of their own: their scores depend on the target's outputs
#: only, so every way of loading the same model must give the same numbers.
SHARED = ["confidence_mia", "label_only_mia", "linkteller"]
N_BOOT = 200


def _graph_files(setup, folder: Path, labels=None) -> dict[str, Path]:  # noqa: ANN001
    g = setup.graph
    folder.mkdir(parents=True, exist_ok=True)
    ei = g.edge_index.numpy()
    (folder / "edges.csv").write_text("src,dst\n" + "\n".join(f"{a},{b}" for a, b in ei.T))
    np.save(folder / "x.npy", g.x.numpy())
    y = g.y.tolist() if labels is None else labels
    (folder / "y.csv").write_text("\n".join(str(v) for v in y))
    (folder / "members.txt").write_text("node_id\n" + "\n".join(str(i) for i in setup.members))
    (folder / "non_members.txt").write_text("node_id\n" + "\n".join(str(i) for i in
                                                                    setup.non_members))
    return {"edges": folder / "edges.csv", "features": folder / "x.npy",
            "labels": folder / "y.csv", "members": folder / "members.txt",
            "non-members": folder / "non_members.txt"}


def _cli(files: dict[str, Path], model: Path, out: Path, *extra: str):  # noqa: ANN202
    args = ["audit", "model", str(model), "--out", str(out), "--n-bootstrap", str(N_BOOT),
            "--quiet"]
    for key, path in files.items():
        args += [f"--{key}", str(path)]
    for name in SHARED:
        args += ["--attack", name]
    return CliRunner().invoke(app, [*args, *extra])


def _aucs(report: dict) -> dict[str, dict]:
    return {a["attack"]: a["metrics"]["binary"]["auc"] for a in report["attacks"]}


def test_api_pt2_and_state_dict_audits_agree_and_find_the_leak(user_setup, tmp_path):  # noqa: ANN001
    s = user_setup
    mod, kw = s.module, s.kwargs
    report = audit_model(s.model, s.graph, s.members, s.non_members, attacks=SHARED,
                         model_factory=lambda: mod.SGNet(**kw), seed=3, n_bootstrap=N_BOOT)
    api = _aucs(report.to_dict())
    assert set(api) == set(SHARED)
    # the overfit model leaks membership: the whole interval is above chance
    assert api["confidence_mia"]["ci"][0] > 0.5

    files = _graph_files(s, tmp_path / "files")
    pt2 = export_pt2(s.model, s.graph.x, s.graph.edge_index, tmp_path / "model.pt2")
    r = _cli(files, pt2, tmp_path / "out_pt2", "--seed", "3")
    assert r.exit_code == 0, r.output
    via_pt2 = _aucs(json.loads((tmp_path / "out_pt2" / "report.json").read_text()))

    torch.save(s.model.state_dict(), tmp_path / "weights.pt")
    r = _cli(files, tmp_path / "weights.pt", tmp_path / "out_sd", "--seed", "3",
             "--model-class", "usernet16:SGNet", "--model-kwargs", json.dumps(kw))
    assert r.exit_code == 0, r.output
    via_sd = _aucs(json.loads((tmp_path / "out_sd" / "report.json").read_text()))

    for name in SHARED:
        # the same class and weights: bit-identical outputs, identical metrics
        assert via_sd[name] == api[name], name
        # the exported graph runs the same ops, decomposed: equal up to float rounding
        assert via_pt2[name]["value"] == pytest.approx(api[name]["value"], abs=1e-3), name


def test_default_audit_skips_embedding_attacks_without_layers_and_runs_them_with(user_setup):  # noqa: ANN001
    s = user_setup
    fast = {"attacks": None, "suite": "quick", "n_bootstrap": 20}
    bare = audit_model(lambda x, ei: s.model(x, ei), s.graph, s.members, s.non_members,
                       **fast)
    skipped = bare.config["skipped_attacks"]
    for name in ("embedding_cluster_mia", "graph_reconstruction"):
        assert "EMBEDDINGS" in skipped[name] and "embedding layer" in skipped[name]
        assert name not in {a.attack for a in bare.attacks}
    # a plain callable: no parameters, no way to copy it: surrogate shadows, said so
    assert bare.config["target_model"]["shadow_models"] == "architecture unknown, surrogate GCN"
    assert bare.target.architecture["arch"] == "unknown"
    assert bare.target.architecture["surrogate"] == "gcn"
    conf = next(a for a in bare.attacks if a.attack == "confidence_mia")
    assert any("architecture unknown, surrogate GCN" in n for n in conf.notes)

    hooked = audit_model(s.model, s.graph, s.members, s.non_members,
                         embedding_layers=["conv1"], **fast)
    ran = {a.attack for a in hooked.attacks}
    assert {"embedding_cluster_mia", "graph_reconstruction"} <= ran
    assert hooked.config["target_model"]["shadow_models"].startswith("generic trainer")


def test_named_embedding_attack_without_layers_is_refused_by_capability(user_setup):  # noqa: ANN001
    s = user_setup
    with pytest.raises(CapabilityError, match="EMBEDDINGS"):
        audit_model(s.model, s.graph, s.members, s.non_members,
                    attacks=["embedding_cluster_mia"], n_bootstrap=20)


def test_probabilities_output_gives_the_logits_models_posteriors(user_setup):  # noqa: ANN001
    s = user_setup
    prob = s.module.ProbNet(**s.kwargs)
    prob.load_state_dict(s.model.state_dict())
    a = audit_model(s.model, s.graph, s.members, s.non_members, attacks=["confidence_mia"],
                    n_bootstrap=50)
    b = audit_model(prob.eval(), s.graph, s.members, s.non_members, output="probabilities",
                    attacks=["confidence_mia"], n_bootstrap=50)
    assert a.attacks[0].metrics.binary.auc.value == pytest.approx(
        b.attacks[0].metrics.binary.auc.value, abs=1e-9)


def test_networkx_graph_and_boolean_masks_are_accepted(user_setup):  # noqa: ANN001
    import networkx as nx

    s = user_setup
    g = s.graph
    nxg = nx.DiGraph()
    for i in range(g.num_nodes):
        nxg.add_node(i, x=g.x[i].tolist(), y=int(g.y[i]))
    nxg.add_edges_from(g.edge_index.t().tolist())
    mem = np.zeros(g.num_nodes, dtype=bool)
    mem[s.members] = True
    r1 = audit_model(s.model, nxg, mem, s.non_members, attacks=["label_only_mia"],
                     n_bootstrap=20)
    r2 = audit_model(s.model, g, s.members, s.non_members, attacks=["label_only_mia"],
                     n_bootstrap=20)
    assert r1.attacks[0].metrics.binary.auc == r2.attacks[0].metrics.binary.auc


@pytest.mark.parametrize("change,error,match", [
    ({"members": "overlap"}, DataError, "overlap"),
    ({"members": "outside"}, DataError, "0..239"),
    ({"output": "scores"}, InvalidConfigError, "unknown model output"),
    ({"embedding_layers": ["conv9"]}, InvalidConfigError, "no submodule 'conv9'"),
    ({"width": 4}, DataError, "4 columns but the labels have 3 classes"),
])
def test_bad_input_is_one_line(user_setup, change, error, match):  # noqa: ANN001
    s = user_setup
    members = s.members
    if change.get("members") == "overlap":
        members = np.r_[s.members, s.non_members[:1]]
    elif change.get("members") == "outside":
        members = np.r_[s.members, [240]]
    model = s.model
    if "width" in change:
        model = s.module.SGNet(16, 8, change["width"]).eval()
    kwargs = {k: v for k, v in change.items() if k in ("output", "embedding_layers")}
    with pytest.raises(error, match=match) as exc:
        audit_model(model, s.graph, members, s.non_members, attacks=["confidence_mia"],
                    n_bootstrap=20, **kwargs)
    assert "\n" not in str(exc.value)


def _bad_cli_cases(s, tmp: Path) -> list[tuple[str, list[str], dict[str, Path]]]:  # noqa: ANN001
    files = _graph_files(s, tmp / "files")
    torch.save(s.model.state_dict(), tmp / "w.pt")
    (tmp / "corrupt.pt2").write_bytes(b"PK\x03\x04 not really")
    (tmp / "corrupt.onnx").write_bytes(b"\x08\x07garbage")
    two_class = _graph_files(s, tmp / "two", labels=[int(v) % 2 for v in s.graph.y.tolist()])
    overlap = dict(files)
    (tmp / "overlap.txt").write_text("node_id\n" + "\n".join(str(i) for i in s.non_members[:5]))
    overlap["members"] = tmp / "overlap.txt"
    outside = dict(files)
    (tmp / "outside.txt").write_text("1\n999\n")
    outside["non-members"] = tmp / "outside.txt"
    sd = ["--model-class", "usernet16:SGNet", "--model-kwargs", json.dumps(s.kwargs)]
    export_pt2(s.model, s.graph.x, s.graph.edge_index, tmp / "m.pt2")
    narrow = dict(files)  # features of another width than the program was exported for
    np.save(tmp / "x8.npy", s.graph.x[:, :8].numpy())
    narrow["features"] = tmp / "x8.npy"
    return [
        ("pt2 input shape", [str(tmp / "m.pt2")], narrow),
        ("output width", [str(tmp / "w.pt"), *sd], two_class),
        ("corrupt pt2", [str(tmp / "corrupt.pt2")], files),
        ("corrupt onnx", [str(tmp / "corrupt.onnx")], files),
        ("unimportable class", [str(tmp / "w.pt"), "--model-class", "nope_xyz:Net"], files),
        ("unbuildable class", [str(tmp / "w.pt"), "--model-class", "usernet16:SGNet",
                               "--model-kwargs", '{"in_dim": 16}'], files),
        ("overlapping sets", [str(tmp / "w.pt"), *sd], overlap),
        ("outside the graph", [str(tmp / "w.pt"), *sd], outside),
    ]


def test_bad_cli_input_exits_2_with_one_line_and_writes_nothing(user_setup, tmp_path):  # noqa: ANN001
    pytest.importorskip("onnxruntime", reason="the corrupt-ONNX case needs graphleaks[onnx]")
    for name, model_args, files in _bad_cli_cases(user_setup, tmp_path):
        out = tmp_path / f"out-{name.replace(' ', '-')}"
        r = _cli(files, Path(model_args[0]), out, *model_args[1:])
        assert r.exit_code == 2, (name, r.output)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1, (name, r.stderr)
        assert not out.exists(), name


def test_pt2_of_a_graphleaks_gnn_audits_like_the_target_itself(tmp_path):  # noqa: ANN001
    from graphleaks.audit import run_audit, train_target
    from graphleaks.audit.model_audit import as_graph, audit_target, model_target
    from graphleaks.data.synthetic import csbm
    from graphleaks.models.foreign import load_pt2
    from graphleaks.models.gnn import ArchitectureSpec

    g = csbm(240, num_classes=3, num_features=16, seed=2)
    target = train_target(g, spec=ArchitectureSpec(epochs=60), seed=0)
    # LinkTeller reads graphleaks' exact float64 local update on the GCN and a float64 copy
    # of the exported program; attacks that train reference models (base_mia) differ by
    # design: the bundle's adversary knows the architecture, the foreign model's trains
    # surrogate GCNs on another population.
    names = SHARED
    direct = run_audit(target, names, seed=5, n_bootstrap=N_BOOT)
    served = target.edges("target")
    pt2 = export_pt2(target.model, g.x, served, tmp_path / "gnn.pt2")
    foreign = model_target(load_pt2(pt2), as_graph(g), target.split.members,
                           target.split.nonmembers, served_edge_index=served, seed=0)
    run = audit_target(foreign, attacks=names, seed=5, n_bootstrap=N_BOOT)
    for a, b in zip(direct.attacks, run.report.attacks, strict=True):
        assert a.attack == b.attack
        # the cached sparse GCN product against PyG's scatter: equal up to float rounding
        assert b.metrics.binary.auc.value == pytest.approx(
            a.metrics.binary.auc.value, abs=1e-3), a.attack


def test_onnx_model_audits_like_the_module_and_refuses_embedding_attacks(user_setup, tmp_path):  # noqa: ANN001
    pytest.importorskip("onnxruntime", reason="needs graphleaks[onnx]")
    pytest.importorskip("onnxscript", reason="torch.onnx.export(dynamo=True) needs onnxscript")
    from torch.export import Dim

    s = user_setup
    path = tmp_path / "model.onnx"
    torch.onnx.export(s.model, (s.graph.x, s.graph.edge_index), str(path), dynamo=True,
                      verbose=False,
                      dynamic_shapes=({0: Dim("n", min=2)}, {1: Dim("e", min=2)}))
    files = _graph_files(s, tmp_path / "files")
    names = ["confidence_mia", "label_only_mia"]
    args = ["audit", "model", str(path), "--out", str(tmp_path / "out"), "--quiet",
            "--n-bootstrap", "50", "--seed", "3"]
    for key, p in files.items():
        args += [f"--{key}", str(p)]
    r = CliRunner().invoke(app, [*args, *(x for n in names for x in ("--attack", n))])
    assert r.exit_code == 0, r.output
    via_onnx = _aucs(json.loads((tmp_path / "out" / "report.json").read_text()))
    api = _aucs(audit_model(s.model, s.graph, s.members, s.non_members, attacks=names,
                            seed=3, n_bootstrap=50).to_dict())
    for name in names:
        assert via_onnx[name]["value"] == pytest.approx(api[name]["value"], abs=1e-3)
    # an ONNX model has no hooks: a named embedding attack is refused, naming what is missing
    r = CliRunner().invoke(app, [*args[:4], str(tmp_path / "out2"), *args[5:],
                                 "--attack", "embedding_cluster_mia"])
    assert r.exit_code == 2
    assert "EMBEDDINGS" in r.stderr
    assert not (tmp_path / "out2").exists()


def test_a_graphleaks_gnn_through_audit_model_keeps_its_spec_for_shadows() -> None:
    from graphleaks.audit import train_target
    from graphleaks.audit.model_audit import as_graph, model_target
    from graphleaks.data.synthetic import csbm
    from graphleaks.models.gnn import ArchitectureSpec

    g = csbm(120, num_classes=3, num_features=8, seed=0)
    spec = ArchitectureSpec(arch="sage", hidden=(16,), epochs=10)
    target = train_target(g, spec=spec, seed=0)
    wrapped = model_target(target.model, as_graph(g), target.split.members,
                           target.split.nonmembers)
    assert wrapped.spec == spec
    assert wrapped.iface.embedding_layers == ("hidden_out.0",)


def test_cli_param_reaches_the_attacks_of_a_saved_model(user_setup, tmp_path):  # noqa: ANN001
    """--param works with audit model: typed, applied, and recorded as the attack used it."""
    s = user_setup
    files = _graph_files(s, tmp_path / "files")
    pt2 = export_pt2(s.model, s.graph.x, s.graph.edge_index, tmp_path / "model.pt2")
    out = tmp_path / "o"
    args = ["audit", "model", str(pt2), "--out", str(out), "--n-bootstrap", "20", "--quiet",
            "--attack", "confidence_mia", "--param", "confidence_mia.threshold=median"]
    for key, path in files.items():
        args += [f"--{key}", str(path)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    data = json.loads((out / "report.json").read_text())
    assert data["attacks"][0]["config"]["threshold"] == "median"
    assert data["config"]["params"] == {"confidence_mia": {"threshold": "median"}}
    bad_args = [str(tmp_path / "b") if a == str(out) else a for a in args]
    bad_args[bad_args.index("confidence_mia.threshold=median")] = (
        "confidence_mia.threshold=sometimes")
    bad = CliRunner().invoke(app, bad_args)
    assert bad.exit_code == 2 and "sometimes" in bad.output
    assert not (tmp_path / "b").exists()

