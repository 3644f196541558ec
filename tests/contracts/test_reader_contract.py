"""Contract of every file reader: forged files are refused cleanly, good files round-trip.

The tables are found by importing every graphleaks module and collecting each
:class:`~graphleaks._readers.ReaderTable` it holds, so a new table or a new entry is checked
here without being named: until it has a sample below (:data:`SAMPLES`, and for a new table
a :data:`HARNESSES` entry), ``test_every_entry_has_a_sample`` fails and says what to add.

For every entry:

* forged files (random bytes, a wrong magic, a truncated copy, a pickle that would run
  code, and a structurally valid file with a secret planted where a parser might quote it)
  are refused with exactly one :class:`DataError` whose message is one line and never
  holds the secret;
* what it reads round-trips: graph and feature readers through a trained target's bundle
  (read files, train, save, load, same graph); model readers export, load, same outputs;
  the others write, read, same values.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import pickle
import pkgutil
import struct
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch_geometric.nn import SGConv

import graphleaks
from graphleaks._readers import ReaderTable
from graphleaks.errors import DataError

SECRET = "READERSECRET7f3a"  # an identifier, so it can be planted as a key, name or token


def _tables() -> list[ReaderTable[Any]]:
    found: dict[int, ReaderTable[Any]] = {}
    for info in pkgutil.walk_packages(graphleaks.__path__, "graphleaks."):
        if info.name.endswith("__main__"):  # runs the CLI when imported
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, ReaderTable):
                found[id(value)] = value
    return sorted(found.values(), key=lambda t: t.what)


TABLES = _tables()
ENTRIES = [(t, r) for t in TABLES for r in t]


def _id(entry: tuple[ReaderTable[Any], Any]) -> str:
    return f"{entry[0].what}:{entry[1].name}"


# ---------------------------------------------------------------- tiny inputs


class Net(torch.nn.Module):
    """A foreign model: a PyG layer graphleaks does not ship."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = SGConv(4, 3, K=2)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return F.log_softmax(self.conv(x, edge_index), dim=1)


def _graph() -> Any:
    from graphleaks.data.synthetic import csbm

    return csbm(40, num_classes=2, num_features=4, seed=0)


def _net() -> Net:
    torch.manual_seed(0)
    return Net().eval()


def _model_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    g = _graph()
    return g.x, g.edge_index


def _write_edges(d: Path, g: Any) -> Path:
    (d / "edges.csv").write_text("\n".join(f"{a},{b}" for a, b in g.edge_index.T.tolist()))
    return d / "edges.csv"


def _write_labels(d: Path, g: Any) -> Path:
    (d / "y.csv").write_text("\n".join(str(v) for v in g.y.tolist()))
    return d / "y.csv"


def _structured_npy(path: Path) -> Path:
    # a well-formed .npy whose field name is the secret: a non-numeric dtype to refuse
    np.save(path, np.zeros(3, dtype=[(SECRET, "<f8")]))
    return path


def _zip_with_secret(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{SECRET}.npy", SECRET)
        z.writestr(SECRET, SECRET)
    return path


@dataclass(frozen=True)
class Sample:
    """A valid file of one format, and a file with the secret planted inside.

    ``write(folder) -> (path, expected, options)``: the valid file, what reading it must
    give (checked by the table's harness), and the reader's other options (companion files).
    ``plant(folder) -> (path, options)``: a well-formed file holding the secret where a
    parser might quote it (a field name, a cell, a header), which the reader must refuse.
    """

    write: Callable[[Path], tuple[Path, Any, dict[str, Any]]]
    plant: Callable[[Path], tuple[Path, dict[str, Any]]]
    #: Line-oriented text: a copy cut at any line is another valid file, so truncation
    #: cannot be detected (it still must never crash or quote the file).
    text_lines: bool = False
    needs: tuple[str, ...] = field(default=())  # optional modules the format needs


def _graph_npz(d: Path) -> tuple[Path, Any, dict[str, Any]]:
    g = _graph()
    np.savez(d / "graph.npz", edge_index=g.edge_index.numpy(), x=g.x.numpy(), y=g.y.numpy())
    return d / "graph.npz", g, {}


def _graph_edge_list(d: Path) -> tuple[Path, Any, dict[str, Any]]:
    g = _graph()
    np.save(d / "x.npy", g.x.numpy())
    return _write_edges(d, g), g, {"features": d / "x.npy", "labels": _write_labels(d, g)}


def _edge_list_plant(d: Path) -> tuple[Path, dict[str, Any]]:
    (d / "e.csv").write_text(f"0,1\n2,{SECRET}\n")
    np.save(d / "x.npy", _graph().x.numpy())
    return d / "e.csv", {"features": d / "x.npy"}


def _features(suffix: str) -> Callable[[Path], tuple[Path, Any, dict[str, Any]]]:
    def write(d: Path) -> tuple[Path, Any, dict[str, Any]]:
        g = _graph()
        path = d / f"x{suffix}"
        if suffix == ".npy":
            np.save(path, g.x.numpy())
        else:
            np.savetxt(path, g.x.numpy(), fmt="%.9g", delimiter=",")
        return path, g, {"edges": _write_edges(d, g), "labels": _write_labels(d, g)}

    return write


def _features_plant(suffix: str) -> Callable[[Path], tuple[Path, dict[str, Any]]]:
    def plant(d: Path) -> tuple[Path, dict[str, Any]]:
        g = _graph()
        path = d / f"x{suffix}"
        if suffix == ".npy":
            _structured_npy(path)
        else:
            path.write_text(f"1,2,3,4\n{SECRET},1,2,3\n")
        return path, {"edges": _write_edges(d, g)}

    return plant


def _state_dict(suffix: str) -> Callable[[Path], tuple[Path, Any, dict[str, Any]]]:
    def write(d: Path) -> tuple[Path, Any, dict[str, Any]]:
        from safetensors.torch import save_file

        state = _net().state_dict()
        path = d / f"w{suffix}"
        if suffix == ".safetensors":
            save_file(state, str(path))
        else:
            torch.save(state, path)
        return path, state, {}

    return write


@functools.cache
def _exported(suffix: str) -> tuple[bytes, torch.Tensor]:
    """A model file's bytes and its outputs, exported once (an ONNX export takes seconds)."""
    from graphleaks.models.foreign import export_pt2

    net, (x, ei) = _net(), _model_inputs()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"model{suffix}"
        if suffix == ".pt2":
            export_pt2(net, x, ei, path)
        elif suffix == ".onnx":
            from torch.export import Dim

            torch.onnx.export(net, (x, ei), str(path), dynamo=True, verbose=False,
                              dynamic_shapes=({0: Dim("n", min=2)}, {1: Dim("e", min=2)}))
        else:
            path = _state_dict(suffix)(Path(tmp))[0]
        return path.read_bytes(), net(x, ei).detach()


def _model(suffix: str) -> Callable[[Path], tuple[Path, Any, dict[str, Any]]]:
    def write(d: Path) -> tuple[Path, Any, dict[str, Any]]:
        content, expected = _exported(suffix)
        path = d / f"model{suffix}"
        path.write_bytes(content)
        needs_class = suffix not in (".pt2", ".onnx")
        return path, expected, {"model_class": f"{__name__}:Net"} if needs_class else {}

    return write


class READERSECRET7f3a:  # noqa: N801 - its name is the secret a refusal must not quote
    """A class a planted pickle names: the weights-only unpickler must refuse it unquoted."""


def _pt_plant(d: Path) -> tuple[Path, dict[str, Any]]:
    torch.save({"w": READERSECRET7f3a()}, d / "w.pt")
    return d / "w.pt", {}


def _safetensors_plant(d: Path) -> tuple[Path, dict[str, Any]]:
    # a well-formed header whose dtype and tensor name are the secret
    header = json.dumps({SECRET: {"dtype": SECRET, "shape": [1],
                                  "data_offsets": [0, 4]}}).encode()
    (d / "w.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)
    return d / "w.safetensors", {}


def _model_plant(suffix: str) -> Callable[[Path], tuple[Path, dict[str, Any]]]:
    def plant(d: Path) -> tuple[Path, dict[str, Any]]:
        if suffix == ".pt2":
            return _zip_with_secret(d / "model.pt2"), {}
        if suffix == ".onnx":
            (d / "model.onnx").write_text(f"ir_version: 8\ngraph {{ name: \"{SECRET}\" }}\n")
            return d / "model.onnx", {}
        path, _ = (_safetensors_plant if suffix == ".safetensors" else _pt_plant)(d)
        return path.rename(d / f"model{suffix}"), {"model_class": f"{__name__}:Net"}

    return plant


def _ids(suffix: str) -> Callable[[Path], tuple[Path, Any, dict[str, Any]]]:
    def write(d: Path) -> tuple[Path, Any, dict[str, Any]]:
        ids = np.array([7, 0, 3, 12, 5], dtype=np.int64)
        path = d / f"ids{suffix}"
        if suffix == ".npy":
            np.save(path, ids)
        else:
            path.write_text("# members\n" + "\n".join(map(str, ids)) + "\n")
        return path, ids, {}

    return write


def _ids_plant(suffix: str) -> Callable[[Path], tuple[Path, dict[str, Any]]]:
    def plant(d: Path) -> tuple[Path, dict[str, Any]]:
        if suffix == ".npy":
            return _structured_npy(d / "ids.npy"), {}
        (d / f"ids{suffix}").write_text(f"1\n{SECRET}\n")
        return d / f"ids{suffix}", {}

    return plant


_SCORES = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
_LABELS = np.array([0, 1, 1])
_NODES = np.array([4, 0, 9])


def _scores(suffix: str) -> Callable[[Path], tuple[Path, Any, dict[str, Any]]]:
    def write(d: Path) -> tuple[Path, Any, dict[str, Any]]:
        path, options = d / f"scores{suffix}", {}
        if suffix == ".npz":
            np.savez(path, scores=_SCORES, labels=_LABELS, node_ids=_NODES)
        elif suffix == ".npy":
            np.save(path, _SCORES)
            (d / "labels.csv").write_text("\n".join(map(str, _LABELS)))
            (d / "rows.txt").write_text("\n".join(map(str, _NODES)))
            options = {"labels": d / "labels.csv", "node_ids": d / "rows.txt"}
        else:
            rows = zip(_NODES, _LABELS, _SCORES, strict=True)
            path.write_text("node_id,label,p0,p1\n" + "\n".join(
                f"{i},{y},{float(a)!r},{float(b)!r}" for i, y, (a, b) in rows))
        return path, (_NODES, _SCORES, _LABELS), options

    return write


def _scores_plant(suffix: str) -> Callable[[Path], tuple[Path, dict[str, Any]]]:
    def plant(d: Path) -> tuple[Path, dict[str, Any]]:
        path = d / f"scores{suffix}"
        if suffix == ".npz":  # the required 'labels' array is missing; a secret one is not
            np.savez(path, scores=_SCORES, **{SECRET: _LABELS})
            return path, {}
        if suffix == ".npy":
            (d / "labels.csv").write_text("0\n1\n1\n")
            return _structured_npy(path), {"labels": d / "labels.csv"}
        path.write_text(f"node_id,label,p0,p1\n0,1,{SECRET},0.5\n")
        return path, {}

    return plant


_PAIRS = np.array([[0, 1], [2, 5], [7, 3]], dtype=np.int64)
_PAIR_SCORES = np.array([0.25, -1.5, 3.125])


def _pair_scores(suffix: str) -> Callable[[Path], tuple[Path, Any, dict[str, Any]]]:
    def write(d: Path) -> tuple[Path, Any, dict[str, Any]]:
        path = d / f"pair_scores{suffix}"
        if suffix == ".npz":
            np.savez(path, source=_PAIRS[:, 0], target=_PAIRS[:, 1], score=_PAIR_SCORES)
        else:
            path.write_text("source,target,score\n" + "\n".join(
                f"{a},{b},{float(v)!r}" for (a, b), v in zip(_PAIRS, _PAIR_SCORES,
                                                            strict=True)))
        return path, (_PAIRS, _PAIR_SCORES), {}

    return write


def _pair_scores_plant(suffix: str) -> Callable[[Path], tuple[Path, dict[str, Any]]]:
    def plant(d: Path) -> tuple[Path, dict[str, Any]]:
        path = d / f"pair_scores{suffix}"
        if suffix == ".npz":  # the required 'score' array is missing; a secret one is not
            np.savez(path, source=_PAIRS[:, 0], target=_PAIRS[:, 1], **{SECRET: _PAIR_SCORES})
            return path, {}
        path.write_text(f"source,target,score\n0,1,{SECRET}\n")
        return path, {}

    return plant


_VECTORS = np.array([[0.5, -1.25, 2.0], [1.0, 0.0, -0.5]], dtype=np.float32)


def _embeddings(kind: str) -> Callable[[Path], tuple[Path, Any, dict[str, Any]]]:
    def write(d: Path) -> tuple[Path, Any, dict[str, Any]]:
        if kind == "npy":
            np.save(d / "emb.npy", _VECTORS)
            return d / "emb.npy", (np.arange(2), _VECTORS), {}
        from gensim.models import KeyedVectors

        kv = KeyedVectors(vector_size=3)
        kv.add_vectors(["3", "1"], _VECTORS)
        path = d / ("emb.bin" if kind == "bin" else "emb.txt")
        kv.save_word2vec_format(str(path), binary=kind == "bin")
        return path, (np.array([3, 1]), _VECTORS), {}

    return write


def _embeddings_plant(kind: str) -> Callable[[Path], tuple[Path, dict[str, Any]]]:
    def plant(d: Path) -> tuple[Path, dict[str, Any]]:
        if kind == "npy":
            return _structured_npy(d / "emb.npy"), {}
        if kind == "bin":  # a binary body whose node id is the secret
            body = f"{SECRET} ".encode() + np.zeros(3, np.float32).tobytes() + b"\n"
            (d / "emb.bin").write_bytes(b"1 3\n" + body)
            return d / "emb.bin", {}
        (d / "emb.txt").write_text(f"1 3\n{SECRET} 1 2 3\n")
        return d / "emb.txt", {}

    return plant


_MOLECULES = (("CCO", "1"), ("c1ccccc1", "0"), ("CC(=O)O", "1"), ("C", "0"))


def _molecules_smi(d: Path) -> tuple[Path, Any, dict[str, Any]]:
    path = d / "mols.smi"
    path.write_text("".join(f"{s} {lab} m{i}\n" for i, (s, lab) in enumerate(_MOLECULES)))
    return path, _MOLECULES, {}


def _molecules_sdf(d: Path) -> tuple[Path, Any, dict[str, Any]]:
    from rdkit import Chem

    path = d / "mols.sdf"
    writer = Chem.SDWriter(str(path))
    for i, (s, lab) in enumerate(_MOLECULES):
        mol = Chem.MolFromSmiles(s)
        mol.SetProp("_Name", f"m{i}")
        mol.SetProp("label", lab)
        writer.write(mol)
    writer.close()
    return path, _MOLECULES, {}


def _smiles_plant(d: Path) -> tuple[Path, dict[str, Any]]:
    (d / "mols.smi").write_text(f"CCO 1\nC1CC({SECRET} 0\n")  # the secret is the bad SMILES
    return d / "mols.smi", {}


def _sdf_plant(d: Path) -> tuple[Path, dict[str, Any]]:
    path, _, _ = _molecules_sdf(d)
    blocks = path.read_text().split("$$$$\n")  # the secret is a broken record's title
    blocks[1] = f"{SECRET}\n  x\n\n  9  9  0  0  0  0  0  0  0  0999 V2000\nM  END\n"
    path.write_text("$$$$\n".join(blocks))
    return path, {}


#: One valid sample and one planted file per table entry: ``(table.what, reader.name)``.
SAMPLES: dict[tuple[str, str], Sample] = {
    ("graph file", "npz"): Sample(_graph_npz, lambda d: (_zip_with_secret(d / "g.npz"), {})),
    ("graph file", "edge_list"): Sample(_graph_edge_list, _edge_list_plant, text_lines=True),
    ("feature file", "npy"): Sample(_features(".npy"), _features_plant(".npy")),
    ("feature file", "table"): Sample(_features(".csv"), _features_plant(".csv"),
                                      text_lines=True),
    ("model file", "pt2"): Sample(_model(".pt2"), _model_plant(".pt2")),
    ("model file", "onnx"): Sample(_model(".onnx"), _model_plant(".onnx"),
                                   needs=("onnxruntime", "onnxscript")),
    ("model file", "safetensors"): Sample(_model(".safetensors"), _model_plant(".safetensors")),
    ("model file", "pt"): Sample(_model(".pt"), _model_plant(".pt")),
    ("state_dict file", "safetensors"): Sample(_state_dict(".safetensors"),
                                               _safetensors_plant),
    ("state_dict file", "pt"): Sample(_state_dict(".pt"), _pt_plant),
    ("node-id file", "npy"): Sample(_ids(".npy"), _ids_plant(".npy")),
    ("node-id file", "text"): Sample(_ids(".txt"), _ids_plant(".txt"), text_lines=True),
    ("score file", "npz"): Sample(_scores(".npz"), _scores_plant(".npz")),
    ("score file", "npy"): Sample(_scores(".npy"), _scores_plant(".npy")),
    ("score file", "table"): Sample(_scores(".csv"), _scores_plant(".csv"), text_lines=True),
    ("pair score file", "npz"): Sample(_pair_scores(".npz"), _pair_scores_plant(".npz")),
    ("pair score file", "table"): Sample(_pair_scores(".csv"), _pair_scores_plant(".csv"),
                                         text_lines=True),
    ("embedding file", "npy"): Sample(_embeddings("npy"), _embeddings_plant("npy")),
    ("embedding file", "word2vec_binary"): Sample(_embeddings("bin"), _embeddings_plant("bin"),
                                                  needs=("gensim",)),
    ("embedding file", "word2vec"): Sample(_embeddings("txt"), _embeddings_plant("txt"),
                                           text_lines=True),
    ("graph-set file", "smiles"): Sample(_molecules_smi, _smiles_plant, text_lines=True,
                                         needs=("rdkit",)),
    # an SD file is line-oriented too: a copy cut between records is a shorter valid file
    ("graph-set file", "sdf"): Sample(_molecules_sdf, _sdf_plant, text_lines=True,
                                      needs=("rdkit",)),
}


# ---------------------------------------------------------------- harnesses


def _read(table: ReaderTable[Any], path: Path, options: dict[str, Any]) -> Any:
    """Read through the public entry point of the table's input kind."""
    return HARNESSES[table.what][0](table, path, options)


def _read_graph(table: ReaderTable[Any], path: Path, options: dict[str, Any]) -> Any:
    from graphleaks.data.ref import DatasetRef

    if table.what == "feature file":
        ref = DatasetRef.files(options["edges"], path, options.get("labels"))
    else:
        ref = DatasetRef.files(path, options.get("features"), options.get("labels"))
    return ref.load(), ref


def _same_graph_through_a_bundle(read: tuple[Any, Any], expected: Any, tmp: Path) -> None:
    from graphleaks.audit.runner import train_target
    from graphleaks.bundles import load_bundle, save_bundle
    from graphleaks.data.graph import fingerprint
    from graphleaks.models.gnn import ArchitectureSpec

    graph, ref = read
    for name in ("x", "edge_index", "y"):
        assert torch.equal(getattr(graph, name), getattr(expected, name)), name
    target = train_target(graph, spec=ArchitectureSpec(hidden=(8,), epochs=2), seed=0,
                          dataset=ref)
    loaded = load_bundle(save_bundle(target, tmp / "bundle"))
    assert loaded.dataset == target.dataset and loaded.dataset.kind == "files"
    assert fingerprint(loaded.graph) == fingerprint(graph)
    for name in ("x", "edge_index", "y"):
        assert torch.equal(getattr(loaded.graph, name), getattr(graph, name)), name


def _same_outputs(model: tuple[Any, Any], expected: torch.Tensor, tmp: Path) -> None:
    out = model[0](*_model_inputs())
    torch.testing.assert_close(torch.as_tensor(out), expected, rtol=1e-4, atol=1e-5)


def _same_tensors(state: Any, expected: dict[str, torch.Tensor], tmp: Path) -> None:
    assert state.keys() == expected.keys()
    for k, v in expected.items():
        assert torch.equal(state[k], v), k


def _same_scores(ns: Any, expected: tuple[np.ndarray, ...], tmp: Path) -> None:
    ids, scores, labels = expected
    np.testing.assert_array_equal(ns.node_ids, ids)
    np.testing.assert_array_equal(ns.scores, scores)
    np.testing.assert_array_equal(ns.labels, labels)


def _same_arrays(got: Any, expected: Any, tmp: Path) -> None:
    for a, b in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,), strict=True):
        np.testing.assert_array_equal(a, b)


def _same_molecules(gs: Any, expected: Any, tmp: Path) -> None:
    from rdkit import Chem

    assert len(gs) == len(expected) and gs.names == tuple(f"m{i}" for i in range(len(gs)))
    assert list(gs.smiles) == [Chem.CanonSmiles(s) for s, _ in expected]
    assert [gs.class_names[int(y)] for y in gs.y] == [lab for _, lab in expected]


def _public(fn: Callable[..., Any]) -> Callable[[ReaderTable[Any], Path, dict[str, Any]], Any]:
    return lambda table, path, options: fn(path, **options)


def _node_ids(path: Path, **options: Any) -> Any:
    from graphleaks.data.node_sets import read_node_ids

    return read_node_ids(path, **options)


def _score_file(path: Path, **options: Any) -> Any:
    from graphleaks.data.score_files import load_scores

    return load_scores(path, **options)


def _pair_score_file(path: Path, **options: Any) -> Any:
    from graphleaks.data.pair_score_files import load_pair_scores

    return load_pair_scores(path, **options)


def _same_pair_scores(ps: Any, expected: tuple[np.ndarray, ...], tmp: Path) -> None:
    np.testing.assert_array_equal(ps.pairs, expected[0])
    np.testing.assert_array_equal(ps.scores, expected[1])


def _embedding_file(path: Path, **options: Any) -> Any:
    from graphleaks.models.embeddings import load_embeddings

    return load_embeddings(path, **options)


def _model_file(path: Path, **options: Any) -> Any:
    from graphleaks.models.foreign import load_model_file

    return load_model_file(path, **options)


def _state_dict_file(path: Path, **options: Any) -> Any:
    from graphleaks.models.foreign import read_state_dict

    return read_state_dict(path, **options)


def _graph_set_file(path: Path, **options: Any) -> Any:
    from graphleaks.data.graphsets.ref import GraphSetRef

    return GraphSetRef.file(path, **options).load()


#: Per table: how its files are read (through the public function that dispatches on the
#: table) and how a round trip is checked.
HARNESSES: dict[str, tuple[Callable[..., Any], Callable[[Any, Any, Path], None]]] = {
    "graph file": (_read_graph, _same_graph_through_a_bundle),
    "feature file": (_read_graph, _same_graph_through_a_bundle),
    "model file": (_public(_model_file), _same_outputs),
    "state_dict file": (_public(_state_dict_file), _same_tensors),
    "node-id file": (_public(_node_ids), _same_arrays),
    "score file": (_public(_score_file), _same_scores),
    "pair score file": (_public(_pair_score_file), _same_pair_scores),
    "embedding file": (_public(_embedding_file), _same_arrays),
    "graph-set file": (_public(_graph_set_file), _same_molecules),
}


# ---------------------------------------------------------------- the contract


def test_the_tables_are_found() -> None:
    # the walk really sees the tables the package holds (not an empty parametrisation)
    assert {t.what for t in TABLES} >= set(HARNESSES) and len(ENTRIES) >= len(SAMPLES)


def test_every_entry_has_a_sample() -> None:
    missing = [_id(e) for e in ENTRIES if (e[0].what, e[1].name) not in SAMPLES]
    unknown = sorted({t.what for t in TABLES} - set(HARNESSES))
    assert not missing, f"add a Sample to SAMPLES in {__file__} for: {', '.join(missing)}"
    assert not unknown, f"add a harness to HARNESSES in {__file__} for: {', '.join(unknown)}"


def _sample(table: ReaderTable[Any], reader: Any) -> Sample:
    sample = SAMPLES.get((table.what, reader.name))
    if sample is None:
        pytest.fail(f"no sample for {table.what}:{reader.name} (see test_every_entry_has_a_sample)")
    for module in sample.needs:
        pytest.importorskip(module)
    return sample


def _refused(table: ReaderTable[Any], path: Path, options: dict[str, Any]) -> str:
    with pytest.raises(DataError) as exc:
        _read(table, path, options)
    message = str(exc.value)
    assert "\n" not in message, message
    assert SECRET not in message and SECRET.lower() not in message.lower(), message
    return message


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_forged_files_are_refused_without_quoting_them(entry: Any, tmp_path: Path) -> None:
    table, reader = entry
    sample = _sample(table, reader)
    good, _, options = sample.write(tmp_path)
    suffix = good.suffix
    valid = good.read_bytes()
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 256, 600, dtype=np.uint8).tobytes()
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return (open, (str(marker), "w"))

    forged = {
        "random": b"\xff" + noise[:300] + SECRET.encode() + noise[300:],
        "magic": b"\xff" + SECRET.encode() + valid[len(SECRET) + 1:],
        "pickle": pickle.dumps(Payload()),
        "truncated": valid[: len(valid) // 2],
    }
    for name, content in forged.items():
        bad = tmp_path / f"forged_{name}{suffix}"
        bad.write_bytes(content)
        if name == "truncated" and sample.text_lines:
            # a cut line-oriented file may still be a valid, shorter file
            try:
                _read(table, bad, options)
            except DataError as exc:
                assert "\n" not in str(exc)
            continue
        _refused(table, bad, options)
    assert not marker.exists()  # no reader ever unpickled the payload


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_a_planted_secret_is_refused_unquoted(entry: Any, tmp_path: Path) -> None:
    table, reader = entry
    sample = _sample(table, reader)
    planted, options = sample.plant(tmp_path)
    assert table.reader(planted) is reader  # the plant exercises this very entry
    assert SECRET.encode() in planted.read_bytes()  # the plant really holds the secret
    _refused(table, planted, options)


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_what_it_reads_round_trips(entry: Any, tmp_path: Path) -> None:
    table, reader = entry
    sample = _sample(table, reader)
    path, expected, options = sample.write(tmp_path)
    assert table.reader(path) is reader  # the sample exercises this very entry
    HARNESSES[table.what][1](_read(table, path, options), expected, tmp_path)


@pytest.mark.parametrize("table", [t for t in TABLES if t.fallback is None],
                         ids=lambda t: t.what)
def test_unknown_suffixes_are_refused_listing_the_known_ones(table: Any, tmp_path: Path) -> None:
    path = tmp_path / "thing.unknownsuffix"
    path.write_bytes(SECRET.encode())
    with pytest.raises(table.error) as exc:
        table.reader(path)
    message = str(exc.value)
    assert "\n" not in message and SECRET not in message
    assert all(s in message for s in table.suffixes()), message


def test_callers_never_dispatch_on_suffixes_themselves() -> None:
    import re

    root = Path(graphleaks.__file__).parent
    chain = re.compile(r"suffix(\.lower\(\))?\s*(==|!=|in\b|not in\b)")
    hits = [f"{p.relative_to(root)}:{i}" for p in sorted(root.rglob("*.py"))
            if p.name != "_readers.py"
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if chain.search(line)]
    assert not hits, "dispatch on suffixes through a ReaderTable: " + ", ".join(hits)


def test_a_new_entry_is_picked_up(tmp_path: Path) -> None:
    # what a new format costs: one register call makes it readable by its suffix
    table: ReaderTable[str] = ReaderTable("toy file")
    table.register("toy", (".toy",), lambda p: p.read_text(), "toy text")
    (tmp_path / "a.TOY").write_text("hi")
    assert table.read(tmp_path / "a.TOY") == "hi" and len(table) == 1
    with pytest.raises(RuntimeError, match="already belongs"):
        table.register("other", (".toy",), lambda p: "", "clash")
    assert dataclasses.is_dataclass(table.reader("a.toy"))
