"""Bundles of graph-classification targets (task ``graph``): save and load a TrainedGraphTarget.

The same closed box as a node bundle (:mod:`graphleaks.bundles`): a manifest, safetensors
weights, the split as JSON, every file checksummed, nothing unpickled, no path followed out of
the bundle. The manifest adds ``"task": "graph"`` and the class names; the split is a
:class:`~graphleaks.models.trained_graph_target.GraphSplit` record; the dataset is a
:class:`~graphleaks.data.graphsets.ref.GraphSetRef`. A graph set that cannot be rebuilt from
its record (a molecule file on the user's machine, a set built in memory) travels inside the
bundle as ``graph.safetensors``: every graph's nodes and edges concatenated, with offsets.

A node bundle has no ``task`` field (or ``"node"``) and loads with
:func:`graphleaks.bundles.load_bundle` exactly as before.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Data

from graphleaks._limits import MAX_JSON_BYTES, loads_bounded
from graphleaks._validation import validate
from graphleaks.bundles import (
    GRAPH,
    GRAPH_TASK,
    MANIFEST,
    SMILES,
    SPLIT,
    WEIGHTS,
    _files,
    _read_bundle_file,
    _tensors,
    read_manifest,
    write_manifest,
)
from graphleaks.bundles import bundle_task as _manifest_task
from graphleaks.data.graphsets.record import GraphSet
from graphleaks.data.graphsets.ref import GraphSetRef
from graphleaks.defenses.graph_base import graph_registry
from graphleaks.errors import BundleError, DataError, GraphleaksError
from graphleaks.models.graph_classifier import GraphClassifier, GraphClassifierSpec
from graphleaks.models.trained_graph_target import GraphSplit, TrainedGraphTarget
from graphleaks.privacy.ledger import PrivacyLedger

#: Longest SMILES string a bundle may carry (a real one is well under a thousand).
_MAX_SMILES = 10_000
#: Dataset kinds whose graphs travel inside the bundle (plus a set without a record).
CARRIED_GRAPH_KINDS = ("file",)


def bundle_task(path: str | Path) -> str:
    """The task a bundle was trained for: ``node`` (also every older bundle), ``link`` or
    ``graph``.

    Raises:
        BundleError: For a missing or malformed bundle, or an unknown task.
    """
    return _manifest_task(read_manifest(path), Path(path))


def _carried(graphs: GraphSet) -> dict[str, torch.Tensor]:
    """Every graph of the set concatenated, with node and edge offsets."""
    sizes = torch.tensor([int(g.num_nodes) for g in graphs.graphs])
    edges = torch.tensor([int(g.edge_index.shape[1]) for g in graphs.graphs])
    zero = torch.zeros(1, dtype=torch.long)
    out = {"x": torch.cat([g.x for g in graphs.graphs]),
           "edge_index": torch.cat([g.edge_index for g in graphs.graphs], dim=1),
           "node_ptr": torch.cat([zero, sizes.cumsum(0)]),
           "edge_ptr": torch.cat([zero, edges.cumsum(0)]),
           "y": graphs.y}
    if graphs.num_edge_features:
        out["edge_attr"] = torch.cat([g.edge_attr for g in graphs.graphs])
    return {k: v.detach().contiguous().cpu() for k, v in out.items()}


def _smiles(root: Path, sums: dict[str, Any]) -> list[str]:
    """The carried SMILES list, checked like user input (one string per graph is checked by
    :meth:`GraphSet.from_graphs`)."""
    where = root / SMILES
    try:
        raw = loads_bounded(_read_bundle_file(root, SMILES, sums), str(where),
                            max_bytes=MAX_JSON_BYTES, error=BundleError)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BundleError(f"{where} is not valid JSON; re-create the bundle with "
                          "`graphleaks train`") from None
    if not isinstance(raw, list) or not all(isinstance(v, str) and len(v) <= _MAX_SMILES
                                            for v in raw):
        raise BundleError(f"{where}: not a list of SMILES strings; re-create the bundle with "
                          "`graphleaks train`")
    return raw


def _uncarried(t: dict[str, torch.Tensor], class_names: list[str], where: Path,
               smiles: list[str] | None = None) -> GraphSet:
    """The graph set of ``graph.safetensors``, checked like user input."""
    def bad(what: str) -> BundleError:
        return BundleError(f"{where}: {what}; re-create the bundle with `graphleaks train`")

    need = {"x", "edge_index", "node_ptr", "edge_ptr", "y"}
    if not need <= set(t) or set(t) - need - {"edge_attr"}:
        raise bad("it does not hold a graph set (x, edge_index, node_ptr, edge_ptr, y)")
    x, ei, nptr, eptr, y = (t[k] for k in ("x", "edge_index", "node_ptr", "edge_ptr", "y"))
    ints = (torch.int64, torch.int32)
    if not x.is_floating_point() or x.dim() != 2 or any(
            v.dtype not in ints for v in (ei, nptr, eptr, y)):
        raise bad("a tensor has the wrong type")
    if nptr.dim() != 1 or eptr.shape != nptr.shape or len(nptr) < 2 or y.shape != (len(nptr) - 1,):
        raise bad("the offsets and labels disagree")
    if (int(nptr[0]) != 0 or int(eptr[0]) != 0 or bool((nptr.diff() < 1).any())
            or bool((eptr.diff() < 0).any()) or int(nptr[-1]) != x.shape[0]
            or ei.dim() != 2 or ei.shape[0] != 2 or int(eptr[-1]) != ei.shape[1]):
        raise bad("the node or edge offsets are not consistent with the tensors")
    attr = t.get("edge_attr")
    if attr is not None and (not attr.is_floating_point() or attr.dim() != 2
                             or attr.shape[0] != ei.shape[1]):
        raise bad("edge_attr is not one float row per edge")
    graphs = []
    for g in range(len(nptr) - 1):
        lo, hi = int(nptr[g]), int(nptr[g + 1])
        e_lo, e_hi = int(eptr[g]), int(eptr[g + 1])
        d = Data(x=x[lo:hi], edge_index=ei[:, e_lo:e_hi].long(), y=y[g:g + 1].long(),
                 num_nodes=hi - lo)
        if attr is not None:
            d.edge_attr = attr[e_lo:e_hi]
        graphs.append(d)
    try:  # ids in range, finite features, labels within the classes
        return GraphSet.from_graphs(graphs, class_names, source=str(where), smiles=smiles)
    except DataError as exc:
        raise BundleError(str(exc)) from None


def write_graph_bundle(target: TrainedGraphTarget, tmp: Path) -> None:
    """Write ``target``'s bundle files into the (empty, temporary) folder ``tmp``.

    Called by :func:`graphleaks.bundles.save_bundle`, which publishes the folder atomically.
    """
    from safetensors.torch import save_file

    state = {k: v.detach().contiguous().cpu() for k, v in target.model.state_dict().items()}
    save_file(state, str(tmp / WEIGHTS))
    (tmp / SPLIT).write_text(json.dumps(target.split.to_dict()))
    files = {"weights": WEIGHTS, "split": SPLIT}
    if target.dataset is None or target.dataset.kind in CARRIED_GRAPH_KINDS:
        save_file(_carried(target.graphs), str(tmp / GRAPH))
        files["graph"] = GRAPH
        if target.graphs.smiles is not None:
            (tmp / SMILES).write_text(json.dumps(list(target.graphs.smiles)))
            files["smiles"] = SMILES
    write_manifest(tmp, files, {
        "task": GRAPH_TASK,
        "defense": target.defense,
        "defense_config": target.defense_config,
        "architecture": dataclasses.asdict(target.spec),
        "in_dim": target.num_features,
        "out_dim": target.num_classes,
        "class_names": list(target.graphs.class_names),
        "dataset": None if target.dataset is None else target.dataset.to_dict(),
        "fingerprint": target.graphs.fingerprint(),
        "seed": target.seed,
        "ledger": target.ledger.to_dict(),
        "utility": target.utility,
        "training": target.training,
    })


def _spec(raw: dict[str, Any], where: Path) -> GraphClassifierSpec:
    names = {f.name for f in dataclasses.fields(GraphClassifierSpec)}
    unknown = sorted(str(k)[:40] for k in raw if k not in names)
    if unknown:
        raise BundleError(f"{where}: architecture has unknown field(s) {', '.join(unknown)}")
    try:
        return validate(GraphClassifierSpec(**raw))
    except (GraphleaksError, TypeError, ValueError) as exc:
        raise BundleError(f"{where}: {str(exc).splitlines()[0]}") from None


def load_graph_bundle(path: str | Path, *, data_root: str | Path | None = None,
                      graph_file: str | Path | None = None) -> TrainedGraphTarget:
    """Load a graph-classification bundle written by :func:`graphleaks.bundles.save_bundle`.

    Args:
        path: The bundle directory.
        data_root: Data root of a TU dataset record.
        graph_file: Unused when the bundle carries its graphs (molecule files always do);
            kept for a bundle whose record names a file it does not carry.

    Raises:
        BundleError: For a missing, corrupted or unsafe bundle, a node bundle, or a graph
            set that does not match the one the bundle was trained on.
        DataError: If the dataset record cannot be reloaded (a TU set without a data root).
    """
    root = Path(path)
    manifest = read_manifest(root)
    where = root / MANIFEST
    if manifest.get("task", "node") != GRAPH_TASK:
        raise BundleError(f"bundle {root} is a node-classification bundle; load it with "
                          "graphleaks.bundles.load_bundle")
    files, sums = _files(manifest, root), manifest["sha256"]
    state = _tensors(root, WEIGHTS, sums)
    spec = _spec(manifest["architecture"], where)
    names = manifest.get("class_names")
    if (not isinstance(names, list) or len(names) != manifest["out_dim"]
            or not all(isinstance(n, str) for n in names)):
        raise BundleError(f"{where}: class_names must list one name per output class")
    try:
        ledger = PrivacyLedger.from_dict(manifest["ledger"])
        defense = graph_registry.get(str(manifest["defense"])).name
    except (GraphleaksError, TypeError, ValueError) as exc:
        raise BundleError(f"{where}: {exc}") from None
    with torch.device("meta"):  # shapes compared before anything is allocated
        probe = GraphClassifier(manifest["in_dim"], manifest["out_dim"], spec)
    want = {k: tuple(v.shape) for k, v in probe.state_dict().items()}
    if want != {k: tuple(v.shape) for k, v in state.items()}:
        raise BundleError(f"{root / WEIGHTS} does not fit the architecture in the manifest; "
                          "re-create the bundle with `graphleaks train`")
    model = GraphClassifier(manifest["in_dim"], manifest["out_dim"], spec)
    model.load_state_dict(state)
    model.eval()
    raw_ref = manifest.get("dataset")
    try:
        ref = None if raw_ref is None else GraphSetRef.from_dict(raw_ref)
    except DataError as exc:
        raise BundleError(f"{where}: {exc}") from None
    if "graph" in files:
        graphs = _uncarried(_tensors(root, GRAPH, sums), names, root / GRAPH,
                            _smiles(root, sums) if "smiles" in files else None)
    elif ref is None or ref.kind in CARRIED_GRAPH_KINDS:
        raise BundleError(f"bundle {root} does not carry its graph set; re-create it with "
                          "`graphleaks train`")
    else:
        graphs = ref.load(data_root=data_root, path=graph_file, verify=False)
    if graphs.fingerprint() != manifest["fingerprint"]:
        raise BundleError(f"the graph set does not match bundle {root} (fingerprint "
                          f"{graphs.fingerprint()}); the bundle was trained on another set")
    if graphs.num_features != manifest["in_dim"]:
        raise BundleError(f"{where}: in_dim does not match the graph set's features")
    try:
        raw_split = loads_bounded(_read_bundle_file(root, SPLIT, sums), str(root / SPLIT),
                                  max_bytes=MAX_JSON_BYTES, error=BundleError)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BundleError(f"{root / SPLIT} is not valid JSON") from None
    try:
        split = GraphSplit.from_dict(raw_split, num_graphs=len(graphs))
    except DataError as exc:
        raise BundleError(f"{root / SPLIT}: {exc}") from None
    seed = manifest.get("seed") or 0
    return TrainedGraphTarget(
        model=model, spec=spec, graphs=graphs, split=split, seed=int(seed), ledger=ledger,
        dataset=None if ref is None else ref.pinned(graphs), defense=defense,
        defense_config=dict(manifest.get("defense_config") or {}),
        utility=dict(manifest.get("utility") or {}),
        training=dict(manifest.get("training") or {}))
