"""Model bundles: a directory holding a JSON manifest, safetensors weights and the split.

Weights are stored with safetensors, which holds raw tensors only, so loading a bundle never
unpickles anything. A weights file that is not valid safetensors (a pickle, a truncated
file) is refused before any of its content is interpreted.

This module sits above :mod:`graphleaks.defenses` (it was ``graphleaks/models/io.py``):
reloading a bundle rebuilds the model of the defense that trained it, so the defense registry
is needed, and nothing under :mod:`graphleaks.models` may import defenses.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Data

from graphleaks._limits import MAX_JSON_BYTES, loads_bounded
from graphleaks._outputs import BUNDLE, publish_dir
from graphleaks._validation import validate
from graphleaks.data.graph import check_graph, fingerprint
from graphleaks.data.ref import CARRIED_KINDS, DatasetRef
from graphleaks.data.splits import MembershipSplit
from graphleaks.defenses import registry as defenses
from graphleaks.errors import BundleError, DataError, GraphleaksError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.link_target import LINK_TASK, TrainedLinkTarget
from graphleaks.models.target import TrainedTarget
from graphleaks.models.trained_graph_target import TrainedGraphTarget
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.versions import library_versions

BUNDLE_FORMAT = "graphleaks-bundle"
BUNDLE_SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
WEIGHTS = "weights.safetensors"
EXTRAS = "extras.safetensors"
SPLIT = "split.json"
#: A graph that cannot be rebuilt from its dataset record (user files, a graph handed over in
#: memory) travels inside the bundle, so the bundle re-audits on a machine where those files
#: (or their absolute paths) do not exist.
GRAPH = "graph.safetensors"
#: The SMILES of a carried molecule set (a graph bundle trained from a molecule file), so its
#: audits keep scaffold slices and the ``smiles`` column of ``scores.csv``.
SMILES = "smiles.json"


#: Every file a bundle may hold, by its manifest key. A manifest naming anything else is refused.
BUNDLE_FILES = {"weights": WEIGHTS, "split": SPLIT, "extras": EXTRAS, "graph": GRAPH,
                "smiles": SMILES}
#: Largest manifest read; a real one is a few kB, a hostile one may be anything.
MAX_MANIFEST_BYTES = 16 << 20
_SHA256 = re.compile(r"[0-9a-f]{64}")
_INT_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()

def write_manifest(tmp: Path, files: dict[str, str], fields: dict[str, Any]) -> None:
    """Write a bundle's manifest: ``fields`` plus the format, versions and file hashes.

    Every bundle kind (node, link, graph) goes through here, so the fields that make a
    bundle checkable (format, schema version, library versions, each file's SHA-256) are
    written one way; ``files`` must already be on disk in ``tmp``.
    """
    manifest: dict[str, Any] = {
        **fields,
        "format": BUNDLE_FORMAT,
        "schema_version": BUNDLE_SCHEMA_VERSION,
        "versions": library_versions(),
        "files": files,
        "sha256": {name: _sha256(tmp / name) for name in files.values()},
    }
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))



def _graph_tensors(graph: Data) -> dict[str, torch.Tensor]:
    out = {"x": graph.x, "edge_index": graph.edge_index}
    for key in ("y", "private_edge_index"):
        if getattr(graph, key, None) is not None:
            out[key] = getattr(graph, key)
    return {k: v.detach().contiguous().cpu() for k, v in out.items()}


def _graph_from_tensors(tensors: dict[str, torch.Tensor]) -> Data:
    graph = Data(x=tensors["x"], edge_index=tensors["edge_index"], y=tensors.get("y"))
    if "private_edge_index" in tensors:
        graph.private_edge_index = tensors["private_edge_index"]
    return graph


def save_bundle(target: TrainedTarget | TrainedLinkTarget | TrainedGraphTarget,
                path: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``target`` as a bundle directory, atomically.

    The directory is assembled under a temporary name and renamed into place, so a crash
    never leaves a half-written bundle. An existing folder is replaced only when it is a
    graphleaks bundle holding nothing but bundle files (see :mod:`graphleaks._outputs`).

    Args:
        target: The trained target (a node target, or a graph classifier's
            :class:`~graphleaks.models.trained_graph_target.TrainedGraphTarget`: task ``graph``).
        path: Destination directory.
        overwrite: Replace an existing bundle at ``path``.

    Returns:
        The bundle path.
    """
    dest = Path(path)
    if dest.exists() and not overwrite:
        raise BundleError(f"{dest} already exists; choose another path or pass --overwrite")
    if isinstance(target, TrainedLinkTarget):  # task "link": its own manifest fields
        link_target = target
        return publish_dir(dest, BUNDLE, lambda tmp: _write_link_bundle(link_target, tmp),
                           overwrite=True)
    if isinstance(target, TrainedGraphTarget):
        from graphleaks.graph_bundles import write_graph_bundle

        graph_target = target
        return publish_dir(dest, BUNDLE, lambda tmp: write_graph_bundle(graph_target, tmp),
                           overwrite=True)
    return publish_dir(dest, BUNDLE, lambda tmp: _write_bundle(target, tmp), overwrite=True)


def _write_bundle(target: TrainedTarget, tmp: Path) -> None:
    from safetensors.torch import save_file

    state = {k: v.detach().contiguous().cpu() for k, v in target.model.state_dict().items()}
    save_file(state, str(tmp / WEIGHTS))
    extras: dict[str, torch.Tensor] = {}
    if target.released_edges is not None:
        extras["released_edges"] = target.released_edges.contiguous()
    if target.features is not None:
        extras["features"] = target.features.contiguous()
    if target.public_edges is not None:
        extras["public_edges"] = target.public_edges.contiguous()
    files = {"weights": WEIGHTS, "split": SPLIT}
    if extras:
        save_file(extras, str(tmp / EXTRAS))
        files["extras"] = EXTRAS
    target.split.save(tmp / SPLIT)
    if target.dataset.kind in CARRIED_KINDS:
        save_file(_graph_tensors(target.graph), str(tmp / GRAPH))
        files["graph"] = GRAPH
    write_manifest(tmp, files, {
        "defense": target.defense,
        "defense_config": target.defense_config,
        "architecture": target.spec.to_dict(),
        "in_dim": target.num_features,
        "out_dim": target.num_classes,
        "dataset": target.dataset.to_dict(),
        "fingerprint": fingerprint(target.graph),
        "seed": target.seed,
        "ledger": target.ledger.to_dict(),
        "utility": target.utility,
        "training": target.training,
    })


def _read_regular(path: Path, what: str, *, limit: int | None = None) -> bytes:
    """The bytes of a regular file, refusing symbolic links (never followed out of a bundle)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise BundleError(f"{what}: {path} is missing; re-create the bundle with "
                          "`graphleaks train`") from None
    except OSError:
        raise BundleError(f"{what}: {path} is a symbolic link or unreadable; bundle files "
                          "must be regular files inside the bundle") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise BundleError(f"{what}: {path} is not a regular file")
        data = fh.read(limit + 1 if limit is not None else -1)
    if limit is not None and len(data) > limit:
        raise BundleError(f"{what}: {path} is larger than {limit} bytes; not a graphleaks "
                          "manifest")
    return data


# Manifest fields, their JSON types, and whether a bundle must have them.
_MANIFEST_FIELDS: dict[str, tuple[type, bool]] = {
    "architecture": (dict, True), "in_dim": (int, True), "out_dim": (int, True),
    "defense": (str, True), "fingerprint": (str, True), "files": (dict, True),
    "sha256": (dict, True), "ledger": (dict, True), "seed": (int, False),
    "dataset": (dict, False), "defense_config": (dict, False), "utility": (dict, False),
    "training": (dict, False), "task": (str, False),
}


def _check_schema_version(value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BundleError(f"{where}: schema_version must be an integer, got "
                          f"{type(value).__name__}; re-create the bundle with `graphleaks train`")
    if value != BUNDLE_SCHEMA_VERSION:
        newer = "newer than" if value > BUNDLE_SCHEMA_VERSION else "older than"
        raise BundleError(f"{where}: bundle schema version {value} is {newer} this graphleaks "
                          f"reads (version {BUNDLE_SCHEMA_VERSION}); use a matching graphleaks "
                          "or re-create the bundle")


def _check_fields(manifest: dict[str, Any], where: str) -> None:
    for key, (typ, required) in _MANIFEST_FIELDS.items():
        if key not in manifest or (not required and manifest[key] is None):
            if required:
                raise BundleError(f"{where} lacks the field {key!r}")
            continue
        value = manifest[key]
        if isinstance(value, bool) or not isinstance(value, typ):
            raise BundleError(f"{where}: field {key!r} must be a JSON {typ.__name__}, got "
                              f"{type(value).__name__}")
    for key in ("in_dim", "out_dim"):
        if manifest[key] < 1:
            raise BundleError(f"{where}: field {key!r} must be >= 1, got {manifest[key]}")


def read_manifest(path: str | Path) -> dict[str, Any]:
    """Read and type-check a bundle's manifest.

    Raises:
        BundleError: If the bundle or manifest is missing, malformed, of another format or
            of an unknown schema version, or a field has the wrong type.
    """
    root = Path(path)
    if not root.is_dir():
        raise BundleError(f"model bundle {root} does not exist or is not a directory; "
                          "create one with `graphleaks train`")
    mpath = root / MANIFEST
    if not mpath.exists() and not mpath.is_symlink():
        raise BundleError(f"{root} has no {MANIFEST}; it is not a graphleaks bundle")
    raw = _read_regular(mpath, f"bundle {root}", limit=MAX_MANIFEST_BYTES)
    try:
        manifest = loads_bounded(raw, str(mpath), max_bytes=MAX_MANIFEST_BYTES,
                                 error=BundleError)
    except (UnicodeDecodeError, json.JSONDecodeError):
        # the message stays generic: the file may not be ours and must not be quoted
        raise BundleError(f"{mpath} is not valid JSON; it is not a graphleaks bundle "
                          "manifest") from None
    if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"{mpath} is not a graphleaks bundle manifest")
    _check_schema_version(manifest.get("schema_version"), str(mpath))
    _check_fields(manifest, str(mpath))
    return manifest


def _check_name(name: Any, where: str) -> str:
    """A file name of the manifest: a plain relative path inside the bundle."""
    if (not isinstance(name, str) or not name or name.startswith("/") or "\\" in name
            or "\0" in name or any(p in ("", ".", "..") for p in name.split("/"))):
        raise BundleError(f"{where}: file name {str(name)[:80]!r} is not a plain path inside "
                          "the bundle (no absolute paths, no '..'); re-create the bundle")
    return name


def _read_bundle_file(root: Path, name: str, sums: dict[str, Any]) -> bytes:
    """The verified bytes of a bundle file: inside the bundle, regular, and checksummed.

    The checksum is checked on the bytes that are then used, so a file swapped after the
    check is never read.
    """
    where = f"{root / MANIFEST}"
    _check_name(name, where)
    expected = sums.get(name)
    if not isinstance(expected, str) or not _SHA256.fullmatch(expected):
        raise BundleError(f"{where}: no valid sha256 checksum for {name}; every file a bundle "
                          "loads must be checksummed; re-create the bundle with `graphleaks "
                          "train`")
    cur = root
    for part in name.split("/"):
        cur = cur / part
        if cur.is_symlink():
            raise BundleError(f"bundle {root}: {name} is a symbolic link; bundle files must be "
                              "regular files inside the bundle")
    data = _read_regular(root / name, f"bundle {root}")
    if hashlib.sha256(data).hexdigest() != expected:
        raise BundleError(f"{root / name} does not match the checksum in the manifest "
                          "(truncated, corrupted or replaced); re-create the bundle with "
                          "`graphleaks train`")
    return data


def _tensors(root: Path, name: str, sums: dict[str, Any]) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError
    from safetensors.torch import load

    data = _read_bundle_file(root, name, sums)
    try:
        return load(data)
    except (SafetensorError, OSError, ValueError, RuntimeError, TypeError):
        raise BundleError(f"{root / name} is not a valid safetensors file; graphleaks never "
                          "unpickles weights") from None


def _files(manifest: dict[str, Any], root: Path) -> dict[str, str]:
    files = manifest["files"]
    for key, name in files.items():
        if BUNDLE_FILES.get(key) != name:
            raise BundleError(f"{root / MANIFEST}: files.{str(key)[:40]} must be "
                              f"{BUNDLE_FILES.get(key, 'absent')!r}; a bundle holds only "
                              f"{', '.join(sorted(BUNDLE_FILES.values()))}")
    for key in ("weights", "split"):
        if key not in files:
            raise BundleError(f"{root / MANIFEST}: files.{key} is missing")
    return files


def _split(root: Path, sums: dict[str, Any]) -> MembershipSplit:
    data = _read_bundle_file(root, SPLIT, sums)
    try:
        record = loads_bounded(data, str(root / SPLIT), max_bytes=MAX_JSON_BYTES,
                               error=BundleError)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BundleError(f"{root / SPLIT} is not valid JSON") from None
    if not isinstance(record, dict):
        raise BundleError(f"{root / SPLIT} is not a split record")
    try:
        return MembershipSplit.from_dict(record)
    except DataError as exc:
        raise BundleError(f"{root / SPLIT}: {exc}") from None


def _build_model(
    manifest: dict[str, Any], root: Path, state: dict[str, torch.Tensor]
) -> tuple[torch.nn.Module, ArchitectureSpec, PrivacyLedger]:
    """The model the manifest describes, loaded with ``state``.

    The architecture is first built on the meta device (no memory), so a manifest that
    claims huge layers is refused by comparing shapes before anything is allocated.
    """
    where = root / MANIFEST
    try:
        spec = ArchitectureSpec.from_dict(manifest["architecture"])
        ledger = PrivacyLedger.from_dict(manifest["ledger"])
        defense_cls = defenses.get(manifest["defense"])
    except (GraphleaksError, TypeError, ValueError, KeyError) as exc:
        raise BundleError(f"{where}: {exc}") from None
    args = (manifest["in_dim"], manifest["out_dim"], spec,
            dict(manifest.get("defense_config") or {}))
    try:
        with torch.device("meta"):
            probe = defense_cls.build_model(*args)
    except (GraphleaksError, TypeError, ValueError, KeyError, RuntimeError) as exc:
        raise BundleError(f"{where}: the defense_config or architecture is invalid: "
                          f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                          ) from None
    want = {k: tuple(v.shape) for k, v in probe.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in state.items()}
    if want != got:
        diff = sorted(set(want) ^ set(got)) or sorted(k for k in want if want[k] != got[k])
        raise BundleError(f"{root / WEIGHTS} does not fit the architecture in the manifest "
                          f"(first difference: {diff[0]}); re-create the bundle")
    model = defense_cls.build_model(*args)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise BundleError(f"{root / WEIGHTS} does not fit the architecture in the manifest: "
                          f"{str(exc).splitlines()[0]}") from None
    model.eval()
    return model, spec, ledger


def _dataset_ref(manifest: dict[str, Any], root: Path) -> DatasetRef:
    """The manifest's dataset record, validated as untrusted input."""
    try:
        return DatasetRef.from_dict(manifest.get("dataset") or {})
    except DataError as exc:
        raise BundleError(f"{root / MANIFEST}: {exc}") from None


def _bundle_problem(where: Path, problem: str) -> BundleError:
    return BundleError(f"{where}: {problem}; the bundle is corrupted or was not written by "
                       "graphleaks (re-create it with `graphleaks train`)")


def _check_edges(t: torch.Tensor, num_nodes: int, where: Path, name: str) -> None:
    """An edge index read from a bundle: integer ``[2, E]`` with ids in ``[0, num_nodes)``."""
    if t.dtype not in _INT_DTYPES:
        raise _bundle_problem(where, f"{name} is not an integer tensor")
    if t.dim() != 2 or t.size(0) != 2:
        raise _bundle_problem(where, f"{name} does not have shape [2, E]")
    if t.numel() and (int(t.min()) < 0 or int(t.max()) >= num_nodes):
        raise _bundle_problem(where, f"{name} refers to node ids outside 0..{num_nodes - 1}")


def _check_bundle_graph(tensors: dict[str, torch.Tensor], where: Path) -> Data:
    """The graph a bundle carries, validated like user input although its checksum matched.

    A checksum proves only that the file is the one the manifest names, not that whoever
    wrote both was graphleaks: a float or out-of-range edge index, labels that are not class
    ids or NaN features would otherwise reach the audit.
    """
    x = tensors["x"]
    if not x.is_floating_point() or x.dim() != 2 or x.size(0) == 0:
        raise _bundle_problem(where, "x is not a non-empty 2-D float feature matrix")
    if not bool(torch.isfinite(x).all()):
        raise _bundle_problem(where, "x holds NaN or infinite features")
    n = int(x.size(0))
    for name in ("edge_index", "private_edge_index"):
        if name in tensors:
            _check_edges(tensors[name], n, where, name)
    y = tensors.get("y")
    if y is not None and (y.dtype not in _INT_DTYPES or y.dim() != 1 or y.numel() != n):
        raise _bundle_problem(where, "y is not one integer label per node")
    graph = _graph_from_tensors(tensors)
    try:
        return check_graph(graph, source=str(where))
    except DataError as exc:
        raise BundleError(str(exc)) from None


def _check_attached(target_graph: Data, extras: dict[str, torch.Tensor], out_dim: int,
                    root: Path) -> None:
    """Labels within the model's classes, and the extras' edges and features in range."""
    y = getattr(target_graph, "y", None)
    if y is not None and y.numel() and (int(y.min()) < 0 or int(y.max()) >= out_dim):
        raise BundleError(f"the graph's labels lie outside the {out_dim} classes of bundle "
                          f"{root}'s model; use the graph the bundle was trained on")
    where = root / EXTRAS
    n = int(target_graph.num_nodes)
    for name in ("released_edges", "public_edges"):
        if name in extras:
            _check_edges(extras[name], n, where, name)
    feats = extras.get("features")
    if feats is not None and (not feats.is_floating_point() or feats.dim() != 2
                              or feats.size(0) != n or not bool(torch.isfinite(feats).all())):
        raise _bundle_problem(where, "features is not a finite float matrix with one row per "
                                     "node")


def _bundle_graph(
    manifest: dict[str, Any], root: Path, ref: DatasetRef, data_root: str | Path | None
) -> Data:
    """Reload the bundle's graph: the copy inside the bundle, or through its dataset record.

    A dataset record never makes graphleaks read a file outside the bundle: it holds bare file
    names only, and graph files a bundle was trained on are given again on the command line
    (``--edges``...) when the bundle does not carry the graph.
    """
    if manifest["files"].get("graph") == GRAPH:  # the graph travels inside the bundle
        tensors = _tensors(root, GRAPH, manifest["sha256"])
        if "x" not in tensors or "edge_index" not in tensors:
            raise BundleError(f"{root / GRAPH} holds no graph (x, edge_index); re-create the "
                              "bundle with `graphleaks train`")
        return _check_bundle_graph(tensors, root / GRAPH)
    if ref.kind in CARRIED_KINDS:
        raise BundleError(f"bundle {root} does not carry the graph it was trained on and "
                          f"graphleaks never follows file paths out of a bundle; "
                          f"{ref.reload_hint()}")
    try:
        # the fingerprint is checked by load_bundle, with check_fingerprint
        return ref.load(data_root=data_root, verify=False)
    except DataError as exc:
        raise DataError(f"cannot reload the bundle's dataset ({ref.describe()}): {exc}"
                        ) from None


def load_bundle(
    path: str | Path,
    *,
    graph: Data | None = None,
    data_root: str | Path | None = None,
    check_fingerprint: bool = True,
) -> Any:
    """Load a bundle written by :func:`save_bundle`.

    A node bundle (no ``task`` field, or ``"node"``) gives a
    :class:`~graphleaks.models.target.TrainedTarget`; a ``"link"`` bundle a
    :class:`~graphleaks.models.link_target.TrainedLinkTarget` (:func:`load_link_bundle`).

    A bundle is a closed box: every file it loads is named in the manifest, lies inside the
    bundle as a regular file (no links, no ``..``, no absolute paths) and matches its
    checksum; its dataset record holds names and parameters only, never a path.

    Args:
        path: The bundle directory.
        graph: The graph to attach; by default the copy inside the bundle, or the graph its
            dataset record (:class:`~graphleaks.data.ref.DatasetRef`) reloads.
        data_root: Data root for datasets that need one.
        check_fingerprint: Refuse a graph whose fingerprint differs from the bundle's.

    Raises:
        BundleError: For a missing, corrupted or unsafe bundle, or a graph it was not trained on.
    """
    root = Path(path)
    manifest = read_manifest(root)
    task = bundle_task(manifest, root)
    if task == LINK_TASK:
        return load_link_bundle(root, manifest, graph=graph, data_root=data_root,
                                check_fingerprint=check_fingerprint)
    if task == GRAPH_TASK:
        raise BundleError(f"bundle {root} holds a graph-classification target; load it with "
                          "graphleaks.graph_bundles.load_graph_bundle")
    files, sums = _files(manifest, root), manifest["sha256"]
    state = _tensors(root, WEIGHTS, sums)
    extras = _tensors(root, EXTRAS, sums) if "extras" in files else {}
    split = _split(root, sums)
    model, spec, ledger = _build_model(manifest, root, state)
    ref = _dataset_ref(manifest, root)
    if graph is None:
        graph = _bundle_graph(manifest, root, ref, data_root)
    in_dim = manifest["in_dim"]
    if graph.num_features != in_dim:
        raise DataError(f"the feature matrix has {graph.num_features} columns but the bundle's "
                        f"model expects {in_dim}; use the graph the bundle was trained on")
    if check_fingerprint and fingerprint(graph) != manifest["fingerprint"]:
        raise BundleError(f"the graph does not match bundle {root} (fingerprint "
                          f"{fingerprint(graph)} != {manifest['fingerprint'][:64]}); the bundle "
                          "was trained on a different dataset")
    if split.num_nodes != graph.num_nodes:
        raise BundleError(f"bundle {root}: split covers {split.num_nodes} nodes, graph has "
                          f"{graph.num_nodes}")
    _check_attached(graph, extras, manifest["out_dim"], root)
    target = TrainedTarget(
        model=model, spec=spec, graph=graph, split=split, seed=int(manifest.get("seed") or 0),
        # a manifest an earlier version wrote may spell the defense "gap-edp": resolved once
        # here to its canonical name, so a report of this target writes only that one
        ledger=ledger, defense=defenses.get(str(manifest["defense"])).name,
        defense_config=dict(manifest.get("defense_config") or {}),
        released_edges=extras.get("released_edges"), features=extras.get("features"),
        public_edges=extras.get("public_edges"),
        dataset=ref.pinned(graph), utility=dict(manifest.get("utility") or {}),
        training=dict(manifest.get("training") or {}),
    )
    # e.g. GAP: re-arm the served release and its query ledger
    defenses.get(target.defense).on_load(target)
    return target


# --- link targets (task "link") ---------------------------------------------------------
#: The tasks a bundle may hold; a manifest without ``task`` is a node bundle (all earlier ones).
#: The task of a trained graph classifier's bundle (read by :mod:`graphleaks.graph_bundles`).
GRAPH_TASK = "graph"
BUNDLE_TASKS = ("node", LINK_TASK, GRAPH_TASK)
#: Edge-split arrays a link bundle keeps in ``extras.safetensors``, beside the served graph.
_EDGE_SPLIT_ARRAYS = ("members", "val_edges", "val_non_edges", "held_out_edges",
                      "held_out_non_edges", "context_edges", "held_out_nodes")


def bundle_task(manifest: dict[str, Any], root: Path) -> str:
    """The task of a bundle's manifest (``node`` when absent).

    Raises:
        BundleError: For a task this graphleaks does not know.
    """
    task = manifest.get("task", "node")
    if task not in BUNDLE_TASKS:
        raise BundleError(f"{root / MANIFEST}: field 'task' must be one of "
                          f"{', '.join(BUNDLE_TASKS)}; re-create the bundle")
    return str(task)


def _write_link_bundle(target: TrainedLinkTarget, tmp: Path) -> None:
    from dataclasses import asdict

    from safetensors.torch import save_file

    state = {k: v.detach().contiguous().cpu() for k, v in target.model.state_dict().items()}
    save_file(state, str(tmp / WEIGHTS))
    split = target.split
    extras = {name: torch.from_numpy(getattr(split, name).astype("int64")).contiguous()
              for name in _EDGE_SPLIT_ARRAYS}
    if target.released_edges is not None:
        extras["released_edges"] = target.released_edges.contiguous()
    if target.features is not None:
        extras["features"] = target.features.detach().contiguous().cpu()
    save_file(extras, str(tmp / EXTRAS))
    files = {"weights": WEIGHTS, "split": SPLIT, "extras": EXTRAS}
    (tmp / SPLIT).write_text(json.dumps(
        {"unit": "edge", "num_nodes": split.num_nodes, "seed": split.seed,
         "config": asdict(split.config)}, indent=2, sort_keys=True))
    if target.dataset.kind in CARRIED_KINDS:
        save_file(_graph_tensors(target.graph), str(tmp / GRAPH))
        files["graph"] = GRAPH
    write_manifest(tmp, files, {
        "task": LINK_TASK,
        "defense": target.defense, "defense_config": target.defense_config,
        "architecture": target.spec.to_dict(), "in_dim": target.num_features, "out_dim": 1,
        "dataset": target.dataset.to_dict(), "fingerprint": fingerprint(target.graph),
        "seed": target.seed, "ledger": target.ledger.to_dict(), "utility": target.utility,
        "training": target.training, "edge_split": split.record(),
    })


def _link_split(root: Path, sums: dict[str, Any],
                extras: dict[str, torch.Tensor]) -> Any:
    """The edge split of a link bundle, validated like a user's pair lists."""
    from graphleaks.data.edge_splits import EdgeMembershipSplit, EdgeSplitConfig

    data = _read_bundle_file(root, SPLIT, sums)
    try:
        record = loads_bounded(data, str(root / SPLIT), max_bytes=MAX_JSON_BYTES,
                               error=BundleError)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BundleError(f"{root / SPLIT} is not valid JSON") from None
    if (not isinstance(record, dict) or record.get("unit") != "edge"
            or not isinstance(record.get("config"), dict)):
        raise _bundle_problem(root / SPLIT, "not an edge-split record")
    num_nodes, seed = record.get("num_nodes"), record.get("seed", 0)
    if (isinstance(num_nodes, bool) or not isinstance(num_nodes, int) or num_nodes < 2
            or isinstance(seed, bool) or not isinstance(seed, int)):
        raise _bundle_problem(root / SPLIT, "num_nodes or seed is not a valid integer")
    for name in _EDGE_SPLIT_ARRAYS:
        t = extras.get(name)
        shape_ok = t is not None and (t.dim() == 1 if name == "held_out_nodes"
                                      else t.dim() == 2 and t.size(1) == 2)
        if t is None or t.dtype not in _INT_DTYPES or not shape_ok:
            raise _bundle_problem(root / EXTRAS, f"the edge split's {name} is missing or "
                                                 "not an integer array of the right shape")
    try:
        config = validate(EdgeSplitConfig(**record["config"]))
        lists = {name: extras[name].numpy().astype("int64") for name in _EDGE_SPLIT_ARRAYS}
        split = EdgeMembershipSplit.from_pairs(
            num_nodes, lists["members"], lists["held_out_edges"], lists["held_out_non_edges"],
            val_edges=lists["val_edges"], val_non_edges=lists["val_non_edges"],
            config=config, seed=seed, source=str(root / EXTRAS))
        for name in ("context_edges", "held_out_nodes"):
            arr = lists[name]
            if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= num_nodes):
                raise DataError(f"{root / EXTRAS}: {name} name nodes outside the graph")
    except (GraphleaksError, TypeError, ValueError) as exc:
        raise BundleError(f"{root / SPLIT}: {str(exc).splitlines()[0]}") from None
    from dataclasses import replace

    return replace(split, context_edges=lists["context_edges"],
                   held_out_nodes=lists["held_out_nodes"])


def load_link_bundle(
    root: Path, manifest: dict[str, Any], *, graph: Data | None = None,
    data_root: str | Path | None = None, check_fingerprint: bool = True,
) -> TrainedLinkTarget:
    """Load a link bundle (``task: link``) whose manifest :func:`read_manifest` checked.

    Every file is verified as for a node bundle; the split's pair lists are validated like
    user input (ids in range, no self-loops, duplicates or overlapping lists).

    Raises:
        BundleError: For a missing, corrupted or unsafe bundle, or a graph it was not
            trained on.
    """
    from graphleaks.defenses.link import link_registry
    from graphleaks.models.link_predictor import LinkPredictor
    from graphleaks.models.link_target import link_spec_from_dict

    files, sums = _files(manifest, root), manifest["sha256"]
    if "extras" not in files:
        raise BundleError(f"{root / MANIFEST}: files.extras is missing; a link bundle keeps "
                          "its edge split there")
    state = _tensors(root, WEIGHTS, sums)
    extras = _tensors(root, EXTRAS, sums)
    split = _link_split(root, sums, extras)
    where = root / MANIFEST
    try:
        spec = link_spec_from_dict(manifest["architecture"])
        ledger = PrivacyLedger.from_dict(manifest["ledger"])
        defense = link_registry.get(str(manifest["defense"])).name
    except (GraphleaksError, TypeError, ValueError, KeyError) as exc:
        raise BundleError(f"{where}: {str(exc).splitlines()[0]}") from None
    with torch.device("meta"):
        probe = LinkPredictor(manifest["in_dim"], spec)
    want = {k: tuple(v.shape) for k, v in probe.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in state.items()}
    if want != got:
        diff = sorted(set(want) ^ set(got)) or sorted(k for k in want if want[k] != got[k])
        raise BundleError(f"{root / WEIGHTS} does not fit the architecture in the manifest "
                          f"(first difference: {diff[0]}); re-create the bundle")
    model = LinkPredictor(manifest["in_dim"], spec)
    model.load_state_dict(state, strict=True)
    model.eval()
    ref = _dataset_ref(manifest, root)
    if graph is None:
        graph = _bundle_graph(manifest, root, ref, data_root)
    if check_fingerprint and fingerprint(graph) != manifest["fingerprint"]:
        raise BundleError(f"the graph does not match bundle {root} (fingerprint "
                          f"{fingerprint(graph)} != {manifest['fingerprint'][:64]}); the bundle "
                          "was trained on a different dataset")
    n = int(graph.num_nodes)
    if split.num_nodes != n:
        raise BundleError(f"bundle {root}: edge split covers {split.num_nodes} nodes, graph "
                          f"has {n}")
    if "released_edges" in extras:
        _check_edges(extras["released_edges"], n, root / EXTRAS, "released_edges")
    feats = extras.get("features")
    served_dim = graph.num_features if feats is None else int(feats.shape[-1])
    if feats is not None and (not feats.is_floating_point() or feats.dim() != 2
                              or feats.size(0) != n or not bool(torch.isfinite(feats).all())):
        raise _bundle_problem(root / EXTRAS, "features is not a finite float matrix with one "
                                             "row per node")
    if served_dim != manifest["in_dim"]:
        raise DataError(f"the feature matrix has {served_dim} columns but the bundle's model "
                        f"expects {manifest['in_dim']}; use the graph the bundle was trained on")
    return TrainedLinkTarget(
        model=model, spec=spec, graph=graph, split=split, seed=int(manifest.get("seed") or 0),
        ledger=ledger, defense=defense, defense_config=dict(manifest.get("defense_config") or {}),
        released_edges=extras.get("released_edges"), features=feats,
        dataset=ref.pinned(graph), utility=dict(manifest.get("utility") or {}),
        training=dict(manifest.get("training") or {}))
