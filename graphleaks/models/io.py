"""Model bundles: a directory holding a JSON manifest, safetensors weights and the split.

Weights are stored with safetensors, which holds raw tensors only, so loading a bundle never
unpickles anything. A weights file that is not valid safetensors (a pickle, a truncated
file) is refused before any of its content is interpreted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Data

from graphleaks.data.graph import fingerprint
from graphleaks.data.splits import MembershipSplit
from graphleaks.errors import BundleError, DataError, GraphleaksError
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.target import TrainedTarget
from graphleaks.privacy.ledger import PrivacyLedger
from graphleaks.versions import library_versions

BUNDLE_FORMAT = "graphleaks-bundle"
BUNDLE_SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
WEIGHTS = "weights.safetensors"
EXTRAS = "extras.safetensors"
SPLIT = "split.json"
#: A graph read from user files travels inside the bundle, so the bundle re-audits on a
#: machine where those files (or their absolute paths) do not exist.
GRAPH = "graph.safetensors"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


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


def save_bundle(target: TrainedTarget, path: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``target`` as a bundle directory, atomically.

    The directory is assembled under a temporary name and renamed into place, so a crash
    never leaves a half-written bundle.

    Args:
        target: The trained target.
        path: Destination directory.
        overwrite: Replace an existing bundle at ``path``.

    Returns:
        The bundle path.
    """
    from safetensors.torch import save_file

    dest = Path(path)
    if dest.exists() and not overwrite:
        raise BundleError(f"{dest} already exists; choose another path or pass --overwrite")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.tmp-"))
    try:
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
        if (target.dataset or {}).get("name") == "files":
            save_file(_graph_tensors(target.graph), str(tmp / GRAPH))
            files["graph"] = GRAPH
        manifest: dict[str, Any] = {
            "format": BUNDLE_FORMAT,
            "schema_version": BUNDLE_SCHEMA_VERSION,
            "defense": target.defense,
            "defense_config": target.defense_config,
            "architecture": target.spec.to_dict(),
            "in_dim": target.num_features,
            "out_dim": target.num_classes,
            "dataset": target.dataset,
            "fingerprint": fingerprint(target.graph),
            "seed": target.seed,
            "ledger": target.ledger.to_dict(),
            "utility": target.utility,
            "training": target.training,
            "versions": library_versions(),
            "files": files,
            "sha256": {name: _sha256(tmp / name) for name in files.values()},
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def read_manifest(path: str | Path) -> dict[str, Any]:
    """Read and check a bundle's manifest.

    Raises:
        BundleError: If the bundle or manifest is missing, malformed or of another format.
    """
    root = Path(path)
    if not root.is_dir():
        raise BundleError(f"model bundle {root} does not exist or is not a directory; "
                          "create one with `graphleaks train`")
    mpath = root / MANIFEST
    try:
        manifest = json.loads(mpath.read_text())
    except FileNotFoundError:
        raise BundleError(f"{root} has no {MANIFEST}; it is not a graphleaks bundle") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BundleError(f"{mpath} is not valid JSON: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"{mpath} is not a graphleaks bundle manifest")
    if manifest.get("schema_version") != BUNDLE_SCHEMA_VERSION:
        raise BundleError(f"{root} has bundle schema version {manifest.get('schema_version')}; "
                          f"this graphleaks reads version {BUNDLE_SCHEMA_VERSION}")
    for key in ("architecture", "in_dim", "out_dim", "defense", "fingerprint", "files", "sha256"):
        if key not in manifest:
            raise BundleError(f"{mpath} lacks the field {key!r}")
    return manifest


def _load_tensors(root: Path, name: str, expected_sha: str | None) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path = root / name
    if not path.is_file():
        raise BundleError(f"bundle {root} is missing {name}")
    if expected_sha is not None and _sha256(path) != expected_sha:
        raise BundleError(f"{path} does not match the checksum in the manifest (truncated, "
                          "corrupted or replaced); re-create the bundle with `graphleaks train`")
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise BundleError(f"{path} is not a valid safetensors file ({exc}); graphleaks never "
                          "unpickles weights") from exc


def load_bundle(
    path: str | Path,
    *,
    graph: Data | None = None,
    data_root: str | Path | None = None,
    check_fingerprint: bool = True,
) -> TrainedTarget:
    """Load a bundle written by :func:`save_bundle`.

    Args:
        path: The bundle directory.
        graph: The graph to attach; by default it is reloaded from the manifest's dataset spec.
        data_root: Data root for datasets that need one.
        check_fingerprint: Refuse a graph whose fingerprint differs from the bundle's.

    Raises:
        BundleError: For a missing, corrupted or unsafe bundle, or a graph it was not trained on.
    """
    from graphleaks.data.datasets import load_dataset
    from graphleaks.data.files import load_graph_files
    from graphleaks.defenses import registry as defenses

    root = Path(path)
    manifest = read_manifest(root)
    files, sums = manifest["files"], manifest["sha256"]
    if not isinstance(files, dict) or not isinstance(sums, dict):
        raise BundleError(f"{root / MANIFEST}: malformed 'files' or 'sha256' field")
    weights_name = files.get("weights", WEIGHTS)
    if weights_name != WEIGHTS:
        raise BundleError(f"{root / MANIFEST}: weights must be stored in {WEIGHTS}")
    state = _load_tensors(root, WEIGHTS, sums.get(WEIGHTS))
    extras = _load_tensors(root, EXTRAS, sums.get(EXTRAS)) if "extras" in files else {}
    try:
        spec = ArchitectureSpec.from_dict(manifest["architecture"])
        in_dim, out_dim = int(manifest["in_dim"]), int(manifest["out_dim"])
        ledger = PrivacyLedger.from_dict(manifest["ledger"])
        defense_cls = defenses.get(str(manifest["defense"]))
    except GraphleaksError as exc:
        raise BundleError(f"{root / MANIFEST}: {exc}") from exc
    model = defense_cls.build_model(in_dim, out_dim, spec, dict(manifest.get("defense_config", {})))
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        first = str(exc).splitlines()[0]
        raise BundleError(f"{root / WEIGHTS} does not fit the architecture in the manifest: "
                          f"{first}") from exc
    model.eval()
    split = MembershipSplit.load(root / SPLIT)
    if graph is None and "graph" in files:
        graph = _graph_from_tensors(_load_tensors(root, GRAPH, sums.get(GRAPH)))
    if graph is None:
        spec_ds = manifest.get("dataset") or {}
        try:
            if spec_ds.get("name") == "files":
                graph = load_graph_files(spec_ds["edges"], features=spec_ds["features"],
                                         labels=spec_ds.get("labels"))
            elif "name" in spec_ds:
                graph = load_dataset(spec_ds["name"], data_root=data_root)
            else:
                raise BundleError(f"bundle {root} records no dataset; pass the graph explicitly")
        except DataError as exc:
            raise DataError(f"cannot reload the bundle's dataset: {exc}") from exc
    if graph.num_features != in_dim:
        raise DataError(f"the feature matrix has {graph.num_features} columns but the bundle's "
                        f"model expects {in_dim}; use the graph the bundle was trained on")
    if check_fingerprint and fingerprint(graph) != manifest["fingerprint"]:
        raise BundleError(f"the graph does not match bundle {root} (fingerprint "
                          f"{fingerprint(graph)} != {manifest['fingerprint']}); the bundle was "
                          "trained on a different dataset")
    if split.num_nodes != graph.num_nodes:
        raise BundleError(f"bundle {root}: split covers {split.num_nodes} nodes, graph has "
                          f"{graph.num_nodes}")
    return TrainedTarget(
        model=model, spec=spec, graph=graph, split=split, seed=int(manifest.get("seed", 0)),
        ledger=ledger, defense=str(manifest["defense"]),
        defense_config=dict(manifest.get("defense_config", {})),
        released_edges=extras.get("released_edges"), features=extras.get("features"),
        public_edges=extras.get("public_edges"),
        dataset=dict(manifest.get("dataset", {})), utility=dict(manifest.get("utility", {})),
        training=dict(manifest.get("training", {})),
    )
