"""A corpus of malformed inputs, and a runner that feeds each one to the whole CLI.

Every case builds its hostile files in a fresh sandbox folder and names a command line;
the runner invokes the CLI in-process and checks the bad-input contract: exit code 2,
exactly one ``error:`` line on stderr, no traceback, no secret quoted, and no file in the
sandbox created, changed or removed.

Run it directly for a summary (``python tests/security/corpus.py``); ``test_corpus.py``
runs every case under pytest.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SECRET = "root:x:0:0:CORPUS-SECRET"
Build = Callable[[Path, Path], list[str]]


@dataclass(frozen=True)
class Case:
    """One malformed input: its kind, a name, and how to build it and the command line."""

    kind: str
    name: str
    build: Build  # (sandbox, assets) -> argv


CASES: list[Case] = []


def case(kind: str, name: str) -> Callable[[Build], Build]:
    """Register a case."""

    def deco(fn: Build) -> Build:
        CASES.append(Case(kind, name, fn))
        return fn

    return deco


# ---------------------------------------------------------------- shared valid assets

#: A small valid report (schema version 1, one attack) that the hostile cases corrupt: the
#: committed v1 report cut to its first attack (``check`` needs one to get that far).
_V1 = json.loads((Path(__file__).parents[1] / "report" / "data" / "report_v1.json").read_text())
MINIMAL_REPORT = {k: v for k, v in _V1.items() if k != "verdict"}
MINIMAL_REPORT["attacks"] = _V1["attacks"][:1]


def build_assets(root: Path) -> Path:
    """Valid inputs the cases corrupt: graph files, a bundle, a report, a store, specs."""
    from graphleaks.audit.runner import train_target
    from graphleaks.bundles import save_bundle
    from graphleaks.data.files import load_graph_files
    from graphleaks.data.synthetic import csbm
    from graphleaks.models.gnn import ArchitectureSpec
    from graphleaks.sweep.results_store import ResultsStore

    root.mkdir(parents=True, exist_ok=True)
    g = csbm(60, num_classes=3, num_features=8, avg_degree=6.0, seed=0)
    (root / "edges.csv").write_text("\n".join(f"{a},{b}" for a, b in g.edge_index.numpy().T))
    np.save(root / "x.npy", g.x.numpy())
    (root / "y.csv").write_text("\n".join(str(v) for v in g.y.tolist()))
    graph = load_graph_files(root / "edges.csv", features=root / "x.npy",
                             labels=root / "y.csv")
    record = {"name": "files", "edges": "edges.csv", "features": "x.npy", "labels": "y.csv"}
    target = train_target(graph, spec=ArchitectureSpec(hidden=(8,), epochs=3), seed=0,
                          dataset=record)
    save_bundle(target, root / "bundle")
    (root / "report.json").write_text(json.dumps(MINIMAL_REPORT))
    ResultsStore(root / "store.sqlite").close()
    return root


def _graph_opts(d: Path) -> list[str]:
    return ["--edges", str(d / "edges.csv"), "--features", str(d / "x.npy"),
            "--labels", str(d / "y.csv")]


def _train(s: Path, a: Path, **files: Path) -> list[str]:
    """``train`` on the valid graph with some of its files replaced."""
    paths = {"edges": a / "edges.csv", "features": a / "x.npy", "labels": a / "y.csv", **files}
    return ["train", "--out", str(s / "out"), "--epochs", "2", "--edges", str(paths["edges"]),
            "--features", str(paths["features"]), "--labels", str(paths["labels"])]


def _file(s: Path, name: str, content: str | bytes) -> Path:
    p = s / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


def _npy(shape: tuple[int, ...], descr: str = "<f4", body: bytes = b"\0" * 64) -> bytes:
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (118 - len(header)) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + body


# ---------------------------------------------------------------- graph files

EDGE_FILES = {
    "edges-empty": "",
    "edges-header-only": "source,target\n",
    "edges-one-column": "0\n1\n2\n",
    "edges-secret-cell": f"0,1\n{SECRET},2\n",
    "edges-negative-id": "0,1\n-1,2\n",
    "edges-fractional-id": "0,1\n0.5,2\n",
    "edges-id-past-features": "0,1\n1,999\n",
    "edges-nan": "0,1\nnan,2\n",
    "edges-huge-int": "0,1\n1e30,2\n",
    "edges-mixed-first-row": "a,1\n0,1\n",
    "edges-private-flag-2": "source,target,private\n0,1,2\n1,2,0\n",
    "edges-ragged": "0,1\n1,2,3,4\n",
}
for _name, _content in EDGE_FILES.items():
    case("graph", _name)(lambda s, a, c=_content: _train(s, a, edges=_file(s, "e.csv", c)))

case("graph", "edges-binary-garbage")(
    lambda s, a: _train(s, a, edges=_file(s, "e.csv", b"\xff\xfe\x00\x81garbage")))
case("graph", "edges-is-a-folder")(lambda s, a: _train(s, a, edges=s))
case("graph", "edges-missing")(lambda s, a: _train(s, a, edges=s / "nope.csv"))

NPY_FILES = {
    "features-npy-forged-rows": _npy((3_000_000_000, 8)),
    "features-npy-object-dtype": _npy((4, 2), "|O"),
    "features-npy-1d": _npy((60,), "<f4", b"\0" * 240),
    "features-npy-3d": _npy((60, 2, 2), "<f4", b"\0" * 960),
    "features-npy-truncated": _npy((60, 8), "<f4", b"\0" * 100),
    "features-npy-string-dtype": _npy((60, 8), "<U3", b"\0" * 5760),
    "features-npy-zero-columns": _npy((60, 0), "<f4", b""),
    "features-npy-bad-header": b"\x93NUMPY\x01\x00\x20\x00{'descr': " + SECRET.encode(),
    "features-npy-not-npy": SECRET.encode(),
}
for _name, _content in NPY_FILES.items():
    case("graph", _name)(lambda s, a, c=_content: _train(s, a, features=_file(s, "x.npy", c)))


@case("graph", "features-npy-nan")
def _features_nan(s: Path, a: Path) -> list[str]:
    x = np.load(a / "x.npy")
    x[3, 2] = np.nan
    np.save(s / "x.npy", x)
    return _train(s, a, features=s / "x.npy")


case("graph", "features-csv-ragged")(
    lambda s, a: _train(s, a, features=_file(s, "x.csv", "1,0\n1\n")))
case("graph", "features-csv-secret")(
    lambda s, a: _train(s, a, features=_file(s, "x.csv", f"1,0\n{SECRET},1\n")))
case("graph", "features-csv-one-row-short")(
    lambda s, a: _train(s, a, features=_file(s, "x.csv", "\n".join(["1,0"] * 59))))

LABEL_FILES = {
    "labels-count-mismatch": "0\n1\n",
    "labels-negative": "\n".join(["0", "1", "-1"] * 20),
    "labels-fractional": "\n".join(["0", "1", "0.5"] * 20),
    "labels-single-class": "\n".join(["1"] * 60),
    "labels-secret": "\n".join(["0"] * 59 + [SECRET]),
    "labels-id-out-of-range": "0,1\n999,0\n",
    "labels-empty": "",
    "labels-huge-class-id": "\n".join(["0", "1", "1000000000"] * 20),
    "labels-bom-single-class": "\ufeff" + "\n".join(["2"] * 60),
}
for _name, _content in LABEL_FILES.items():
    case("graph", _name)(lambda s, a, c=_content: _train(s, a, labels=_file(s, "y.csv", c)))

case("parameter", "features-without-edges")(
    lambda s, a: ["train", "--out", str(s / "out"), "--features", str(a / "x.npy")])

# ---------------------------------------------------------------- bundles


def _bundle(s: Path, a: Path, edit: Callable[[Path], object], *, graph: bool = True
            ) -> list[str]:
    b = Path(shutil.copytree(a / "bundle", s / "bundle"))
    edit(b)
    # without graph files on the command line the bundle's own dataset record is used
    return ["audit", "--bundle", str(b), "--out", str(s / "out"), "--n-bootstrap", "20",
            *(_graph_opts(a) if graph else [])]


def _manifest(edit: Callable[[dict], object]) -> Callable[[Path], object]:
    def apply(b: Path) -> None:
        m = json.loads((b / "manifest.json").read_text())
        edit(m)
        (b / "manifest.json").write_text(json.dumps(m))

    return apply


def _set(key: str, value: object) -> Callable[[dict], object]:
    return lambda m: m.__setitem__(key, value)


def _secret_dataset(m: dict) -> None:
    m["files"].pop("graph", None)  # a hostile manifest need not carry the graph inside
    m["dataset"] = {"name": "files", "edges": "../secret.csv", "features": "../secret.csv"}
    m["sha256"]["../secret.csv"] = hashlib.sha256((SECRET + "\n").encode()).hexdigest()


def _pickle_weights(b: Path) -> None:
    import pickle

    (b / "weights.safetensors").write_bytes(pickle.dumps({"w": [1, 2, 3]}))
    digest = hashlib.sha256((b / "weights.safetensors").read_bytes()).hexdigest()
    _manifest(lambda m: m["sha256"].__setitem__("weights.safetensors", digest))(b)


def _symlink_weights(b: Path) -> None:
    outside = b.parent / "other.safetensors"
    shutil.copy(b / "weights.safetensors", outside)
    (b / "weights.safetensors").unlink()
    os.symlink(outside, b / "weights.safetensors")


def _symlink_manifest(b: Path) -> None:
    shutil.move(b / "manifest.json", b.parent / "manifest-elsewhere.json")
    os.symlink(b.parent / "manifest-elsewhere.json", b / "manifest.json")


BUNDLE_EDITS: dict[str, Callable[[Path], object]] = {
    "manifest-missing": lambda b: (b / "manifest.json").unlink(),
    "manifest-not-json": lambda b: (b / "manifest.json").write_text(SECRET),
    "manifest-deep-nesting": lambda b: (b / "manifest.json").write_text("[" * 100_000),
    "manifest-a-list": lambda b: (b / "manifest.json").write_text("[1, 2]"),
    "manifest-other-format": _manifest(_set("format", "something-else")),
    "manifest-symlink": _symlink_manifest,
    "schema-version-2": _manifest(_set("schema_version", 2)),
    "schema-version-string": _manifest(_set("schema_version", "1")),
    "weights-checksum-removed": _manifest(lambda m: m["sha256"].pop("weights.safetensors")),
    "weights-checksum-not-hex": _manifest(
        lambda m: m["sha256"].__setitem__("weights.safetensors", "x" * 64)),
    "weights-truncated": lambda b: (b / "weights.safetensors").write_bytes(
        (b / "weights.safetensors").read_bytes()[:50]),
    "weights-pickle-forged-checksum": _pickle_weights,
    "weights-symlink-out": _symlink_weights,
    "split-tampered": lambda b: (b / "split.json").write_text(
        (b / "split.json").read_text().replace('"seed": ', '"seed": 9')),
    "split-checksum-removed": _manifest(lambda m: m["sha256"].pop("split.json")),
    "files-extras-dotdot": _manifest(lambda m: m["files"].__setitem__("extras", "../x")),
    "files-weights-absolute": _manifest(lambda m: m["files"].__setitem__("weights",
                                                                         "/etc/passwd")),
    "files-unknown-key": _manifest(lambda m: m["files"].__setitem__("payload", "p.bin")),
    "in-dim-string": _manifest(_set("in_dim", "8")),
    "in-dim-float": _manifest(_set("in_dim", 8.5)),
    "in-dim-huge": _manifest(_set("in_dim", 10**15)),
    "out-dim-zero": _manifest(_set("out_dim", 0)),
    "seed-string": _manifest(_set("seed", "zero")),
    "hidden-billion": _manifest(lambda m: m["architecture"].__setitem__("hidden", [10**9])),
    "architecture-unknown-field": _manifest(lambda m: m["architecture"].__setitem__("x", 1)),
    "defense-unknown": _manifest(_set("defense", "nope")),
    "ledger-malformed": _manifest(_set("ledger", {"epsilon": "many"})),
    "dataset-path-outside": _manifest(_secret_dataset),
    "dataset-unknown-name": _manifest(_set("dataset", {"name": "no-such-dataset"})),
    "fingerprint-a-number": _manifest(_set("fingerprint", 12)),
}


def _bundle_case(edit: Callable[[Path], object], graph: bool) -> Build:
    def build(s: Path, a: Path) -> list[str]:
        _file(s, "secret.csv", SECRET + "\n")  # what a hostile manifest points at
        return _bundle(s, a, edit, graph=graph)

    return build


for _name, _edit in BUNDLE_EDITS.items():
    case("bundle", _name)(_bundle_case(_edit, graph=not _name.startswith("dataset-")))
case("bundle", "dataset-user-files-not-given")(
    lambda s, a: _bundle(s, a, _manifest(lambda m: m["files"].pop("graph")), graph=False))

case("bundle", "bundle-is-a-file")(
    lambda s, a: ["audit", "--bundle", str(_file(s, "b", "x")), "--out", str(s / "out")])

# ---------------------------------------------------------------- reports


def _check(s: Path, a: Path, edit: Callable[[dict], object] | str | bytes) -> list[str]:
    if isinstance(edit, (str, bytes)):
        path = _file(s, "report.json", edit)
    else:
        report = json.loads((a / "report.json").read_text())
        edit(report)
        path = _file(s, "report.json", json.dumps(report))
    return ["check", str(path), "--max", "auc=0.9"]


REPORT_EDITS: dict[str, Callable[[dict], object] | str | bytes] = {
    "report-schema-99": _set("schema_version", 99),
    "report-schema-string": _set("schema_version", "one"),
    "report-schema-float": _set("schema_version", 1.0),
    "report-kind-missing": lambda r: r.pop("kind"),
    "report-attacks-dict": _set("attacks", {"a": 1}),
    "report-metric-string": lambda r: r["attacks"][0]["metrics"]["binary"].__setitem__(
        "auc", {"value": "high"}),
    "report-ci-one-number": lambda r: r["attacks"][0]["metrics"]["binary"].__setitem__(
        "auc", {"value": 0.5, "ci": [0.1]}),
    "report-target-null": _set("target", None),
    "report-binary-junk": b"\xff\xd8\xff\xe0" + SECRET.encode(),
    "report-empty": "",
    "report-secret-text": SECRET,
    "report-deep-nesting": "{\"a\":" * 100_000,
}
for _name, _edit in REPORT_EDITS.items():
    case("report", _name)(lambda s, a, e=_edit: _check(s, a, e))

case("report", "report-dev-zero")(lambda s, a: ["check", "/dev/zero", "--max", "auc=0.9"])
case("spec", "spec-dev-zero")(lambda s, a: ["audit", "spec", "/dev/zero", "--out",
                                            str(s / "o")])
case("graph", "edges-dev-zero")(lambda s, a: _train(s, a, edges=Path("/dev/zero")))
case("graph", "features-dev-zero-npy")(lambda s, a: ["train", "--out", str(s / "o"), "--edges",
                                                     str(a / "edges.csv"), "--features",
                                                     "/dev/zero"])
case("report", "report-is-a-folder")(lambda s, a: ["check", str(s), "--max", "auc=0.9"])
case("report", "baseline-schema-newer")(lambda s, a: [
    "check", str(a / "report.json"), "--baseline",
    str(_file(s, "b.json", (a / "report.json").read_text().replace(
        '"schema_version": 1', '"schema_version": 99'))), "--max", "auc=0.9"])

# ---------------------------------------------------------------- specs

SPECS = {
    "spec-toml-syntax": "[target\ndataset = ",
    "spec-unknown-dataset": "[target]\ndataset = \"no-such\"\n",
    "spec-unknown-attack": "[attacks.no_such_attack]\n",
    "spec-unknown-key": "[target]\nwhatever = 1\n",
    "spec-hidden-string": "[target.architecture]\nhidden = \"big\"\n",
    "spec-binary": "\x00\x01\x02" + SECRET,
    "spec-synthetic-billion-nodes": "[target]\ndataset = \"synthetic\"\n"
                                    "[target.synthetic]\nnum_nodes = 1000000000\n",
    "spec-synthetic-string-nodes": "[target]\ndataset = \"synthetic\"\n"
                                   "[target.synthetic]\nnum_nodes = \"many\"\n",
    "spec-n-bootstrap-huge": "[audit]\nn_bootstrap = 1000000000000\n",
}
for _name, _content in SPECS.items():
    case("spec", _name)(lambda s, a, c=_content: [
        "audit", "spec", str(_file(s, "spec.toml", c)), "--out", str(s / "out")])

SWEEPS = {
    "sweep-negative-epsilon": "[sweep]\ndefenses = [\"gap_edp\"]\nepsilons = [-1.0]\n",
    "sweep-seeds-string": "[sweep]\ndefenses = [\"none\"]\nseeds = \"0\"\n",
    "sweep-no-defenses": "[sweep]\ndefenses = []\n",
    "sweep-unknown-defense": "[sweep]\ndefenses = [\"no-such\"]\n",
}
for _name, _content in SWEEPS.items():
    case("spec", _name)(lambda s, a, c=_content: [
        "sweep", str(_file(s, "sweep.toml", c)), "--db", str(s / "s.sqlite")])

# ---------------------------------------------------------------- databases


def foreign_db(path: Path, *, wal: bool = False) -> Path:
    """Another program's SQLite database: one table, one row."""
    con = sqlite3.connect(path)
    if wal:
        con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE users (name TEXT)")
    con.execute("INSERT INTO users VALUES ('ann')")
    con.commit()
    con.close()
    return path


def _foreign_db(s: Path, *, wal: bool = False) -> Path:
    return foreign_db(s / "app.sqlite", wal=wal)


def _sweep_spec(s: Path) -> str:
    return str(_file(s, "sweep.toml", "[target]\ndataset = \"synthetic\"\n[sweep]\n"
                                     "defenses = [\"none\"]\nseeds = [0]\n"))


def _store_with(s: Path, a: Path, key: str, value: str) -> Path:
    p = Path(shutil.copy(a / "store.sqlite", s / "store.sqlite"))
    con = sqlite3.connect(p)
    con.execute("UPDATE meta SET value=? WHERE key=?", (value, key))
    con.commit()
    con.close()
    return p


case("database", "results-foreign-db")(lambda s, a: ["results", str(_foreign_db(s))])
case("database", "results-foreign-wal-db")(
    lambda s, a: ["results", str(_foreign_db(s, wal=True))])
case("database", "sweep-foreign-db")(
    lambda s, a: ["sweep", _sweep_spec(s), "--db", str(_foreign_db(s))])
case("database", "results-not-sqlite")(
    lambda s, a: ["results", str(_file(s, "r.sqlite", SECRET))])
case("database", "results-empty-file")(lambda s, a: ["results", str(_file(s, "r.sqlite", ""))])
case("database", "results-a-folder")(lambda s, a: ["results", str(s)])
case("database", "sweep-db-under-a-file")(
    lambda s, a: ["sweep", _sweep_spec(s), "--db", str(_file(s, "f", "x") / "s.sqlite")])
case("database", "sweep-db-a-folder")(lambda s, a: ["sweep", _sweep_spec(s), "--db", str(s)])
case("database", "store-version-99")(
    lambda s, a: ["results", str(_store_with(s, a, "store_version", "99"))])
case("database", "store-other-marker")(
    lambda s, a: ["results", str(_store_with(s, a, "store_format", "other-tool"))])
case("database", "sqlite-header-only")(
    lambda s, a: ["results", str(_file(s, "h.sqlite", b"SQLite format 3\x00" + b"\0" * 84))])

# ---------------------------------------------------------------- parameters and outputs


def _citeseer_root(s: Path) -> Path:
    """A data root with (fake) CiteSeer files, and a cache path that is a file."""
    raw = s / "data" / "Planetoid" / "CiteSeer" / "raw"
    raw.mkdir(parents=True)
    _file(raw, "ind.citeseer.x", "x")
    _file(s, "cache", "a file where the cache folder should be")  # GRAPHLEAKS_CACHE
    return s / "data"


def _user_folder(s: Path) -> Path:
    d = s / "my-project"
    d.mkdir()
    _file(d, "thesis.tex", "years of work")
    return d


PARAMS: dict[str, Callable[[Path, Path], list[str]]] = {
    "param-no-equals": lambda s, a: ["audit", "--out", str(s / "o"), "--param", "x"],
    "param-unknown-owner": lambda s, a: ["audit", "--out", str(s / "o"), "--param",
                                         "nobody.x=1"],
    "param-unknown-attack": lambda s, a: ["audit", "--out", str(s / "o"), "--attack", "nope"],
    "param-bad-seed": lambda s, a: ["train", "--out", str(s / "o"), "--seed", "abc"],
    "param-unknown-option": lambda s, a: ["train", "--out", str(s / "o"), "--bogus"],
    "param-n-bootstrap-negative": lambda s, a: ["audit", "--out", str(s / "o"),
                                                "--n-bootstrap", "-5"],
    "param-query-graph-unknown": lambda s, a: ["audit", "--out", str(s / "o"),
                                               "--query-graph", "nope"],
    "param-train-frac-1": lambda s, a: ["train", "--out", str(s / "o"), "--train-frac", "1.5"],
    "param-epochs-zero": lambda s, a: ["train", "--out", str(s / "o"), "--epochs", "0"],
    "param-unknown-arch": lambda s, a: ["train", "--out", str(s / "o"), "--arch", "nope"],
    "param-unknown-dataset": lambda s, a: ["train", "--out", str(s / "o"), "--dataset", "nope"],
    "param-epsilon-negative": lambda s, a: ["train", "--out", str(s / "o"), "--defense",
                                            "gap_edp", "--epsilon", "-1"],
    "param-hidden-billion": lambda s, a: ["train", "--out", str(s / "o"), "--param",
                                          "gcn.hidden=[1000000000]", *_graph_opts(a)],
    "param-hidden-many-layers": lambda s, a: ["train", "--out", str(s / "o"), "--param",
                                              f"gcn.hidden={[8] * 1000}", *_graph_opts(a)],
    "param-n-bootstrap-huge": lambda s, a: ["audit", "--out", str(s / "o"), "--n-bootstrap",
                                            str(10**21)],
    "param-embed-dimensions-huge": lambda s, a: ["embed", "--out", str(s / "o"), "--dataset",
                                                 "synthetic", "--dimensions", str(10**9)],
    "embeddings-text-forged-header": lambda s, a: [
        "audit", "embeddings", str(_file(s, "e.txt", "1 1000000000000\n0 0.1\n")),
        "--attributes", str(_file(s, "a.csv", "0,1\n")), "--out", str(s / "o")],
    "cache-is-a-file": lambda s, a: ["train", "--out", str(s / "o"), "--dataset", "citeseer",
                                     "--data-root", str(_citeseer_root(s))],
    "param-results-format": lambda s, a: ["results", str(a / "store.sqlite"), "--format",
                                          "xml"],
    "param-check-bad-max": lambda s, a: ["check", str(a / "report.json"), "--max",
                                         "auc=high"],
    "out-overwrite-user-folder": lambda s, a: ["train", "--out", str(_user_folder(s)),
                                               "--overwrite", *_graph_opts(a)],
    "out-overwrite-cwd": lambda s, a: ["train", "--out", ".", "--overwrite", *_graph_opts(a)],
    "out-is-a-file": lambda s, a: ["audit", "--out", str(_file(s, "f", "x")),
                                   *_graph_opts(a)],
    "out-under-a-file": lambda s, a: ["audit", "--out", str(_file(s, "f", "x") / "sub"),
                                      *_graph_opts(a)],
    "out-home": lambda s, a: ["embed", "--out", str(Path.home()), "--dataset", "synthetic"],
    "out-audit-into-user-folder": lambda s, a: ["audit", "--out", str(_user_folder(s)),
                                                *_graph_opts(a)],
    "junit-foreign-file": lambda s, a: ["check", str(a / "report.json"), "--max", "auc=0.9",
                                        "--junit", str(_file(s, "ci.yml", "jobs: {}"))],
    "results-out-foreign-file": lambda s, a: ["results", str(a / "store.sqlite"), "--out",
                                              str(_file(s, "data.csv", "a,b\n"))],
    "embeddings-attributes-mismatch": lambda s, a: [
        "audit", "embeddings", str(_file(s, "e.txt", "2 2\n0 0.1 0.2\n1 0 1\n")),
        "--attributes", str(_file(s, "a.csv", f"0,1\n{SECRET}\n")), "--out", str(s / "o")],
    "embeddings-forged-npy": lambda s, a: [
        "audit", "embeddings", str(_file(s, "e.npy", _npy((10**10, 64)))),
        "--attributes", str(_file(s, "a.csv", "0,1\n1,0\n")), "--out", str(s / "o")],
}
for _name, _build in PARAMS.items():
    case("parameter", _name)(_build)


# ---------------------------------------------------------------- the runner


def snapshot(folder: Path) -> dict[str, str]:
    """Relative path -> content hash (files), link target (links) or "dir", for a whole tree."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(folder))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            else:
                out[rel] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run_case(c: Case, assets: Path, sandbox: Path) -> str | None:
    """Run one case in ``sandbox`` (the cwd and HOME); return a failure message or None."""
    from typer.testing import CliRunner

    from graphleaks.cli import app

    sandbox.mkdir(parents=True)
    home = sandbox / "home"
    home.mkdir()
    old = os.getcwd(), os.environ.get("HOME"), os.environ.get("GRAPHLEAKS_CACHE")
    os.chdir(sandbox)
    os.environ["HOME"], os.environ["GRAPHLEAKS_CACHE"] = str(home), str(sandbox / "cache")
    try:
        argv = c.build(sandbox, assets)
        before = snapshot(sandbox)
        r = CliRunner().invoke(app, argv)
        after = snapshot(sandbox)
    finally:
        os.chdir(old[0])
        for key, value in (("HOME", old[1]), ("GRAPHLEAKS_CACHE", old[2])):
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    lines = r.stderr.strip().splitlines()
    problems = []
    if r.exit_code != 2:
        problems.append(f"exit {r.exit_code} ({type(r.exception).__name__}: {r.exception})")
    if len(lines) != 1 or not lines[0].startswith("error: "):
        problems.append(f"stderr is not one error line: {r.stderr[:300]!r}")
    if "Traceback" in r.stderr + r.stdout:
        problems.append("traceback printed")
    if "CORPUS-SECRET" in r.stderr + r.stdout:
        problems.append("quoted a secret file's content")
    if after != before:
        changed = sorted(set(after.items()) ^ set(before.items()))[:3]
        problems.append(f"files changed: {changed}")
    return "; ".join(problems) or None


def main() -> int:
    """Run the whole corpus; print one line per failure and a summary."""
    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        assets = build_assets(Path(tmp) / "assets")
        failures = 0
        for i, c in enumerate(CASES):
            msg = run_case(c, assets, Path(tmp) / f"case-{i}")
            if msg:
                failures += 1
                print(f"FAIL {c.kind}/{c.name}: {msg}")
    kinds = sorted({c.kind for c in CASES})
    counts = ", ".join(f"{k} {sum(c.kind == k for c in CASES)}" for k in kinds)
    print(f"{len(CASES)} malformed inputs ({counts}): {len(CASES) - failures} refused "
          f"correctly, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
