"""The graph record graphleaks works on, and its fingerprint."""

from __future__ import annotations

import hashlib

import numpy as np
import torch
from torch_geometric.data import Data

from graphleaks.errors import DataError


def fingerprint(data: Data) -> str:
    """A short content hash of a graph's features, edges and labels.

    Two graphs with the same fingerprint have identical ``x``, ``edge_index`` and ``y``; a
    bundle records it so that auditing against a different dataset is refused.
    """
    h = hashlib.sha256()
    for name in ("x", "edge_index", "y"):
        value = getattr(data, name, None)
        if value is None:
            h.update(f"{name}:none".encode())
            continue
        arr = value.detach().cpu().contiguous().numpy()
        h.update(f"{name}:{arr.dtype}:{arr.shape}".encode())
        h.update(arr.tobytes())
    return h.hexdigest()[:16]


def check_graph(data: Data, *, source: str = "graph") -> Data:
    """Validate a graph and return it with canonical dtypes.

    Checks that ``x`` is a finite float matrix, ``edge_index`` a non-empty ``[2, E]`` index
    tensor with ids in range, and ``y`` (if present) one integer label per node.

    Raises:
        DataError: Naming the first problem found and what to do about it.
    """
    if getattr(data, "x", None) is None:
        raise DataError(f"{source}: node features are missing; pass a feature matrix")
    x = torch.as_tensor(data.x)
    if x.dim() != 2:
        raise DataError(f"{source}: node features must be a 2-D matrix, got shape {tuple(x.shape)}")
    x = x.float()
    if not torch.isfinite(x).all():
        bad = int((~torch.isfinite(x)).any(dim=1).nonzero()[0, 0])  # a row, not a value
        raise DataError(f"{source}: node features contain NaN or inf (first at node {bad}); "
                        "clean or impute them before training")
    num_nodes = x.size(0)
    if num_nodes == 0:
        raise DataError(f"{source}: the graph has no nodes")
    if x.size(1) == 0:
        raise DataError(f"{source}: node features have 0 columns; give at least one feature "
                        "per node (a constant column will do)")
    edge_index = getattr(data, "edge_index", None)
    if edge_index is None or edge_index.numel() == 0:
        raise DataError(f"{source}: the edge list is empty; a graph model needs edges")
    edge_index = torch.as_tensor(edge_index).long()
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise DataError(
            f"{source}: edge_index must have shape [2, E], got {tuple(edge_index.shape)}"
        )
    lo, hi = int(edge_index.min()), int(edge_index.max())
    if lo < 0 or hi >= num_nodes:
        # the edge's column, never the id: messages do not quote what a file holds
        col = int(((edge_index < 0) | (edge_index >= num_nodes)).any(dim=0).nonzero()[0, 0])
        raise DataError(f"{source}: edge {col} refers to a node id outside 0..{num_nodes - 1}; "
                        "node ids must index rows of the feature matrix")
    out = Data(x=x, edge_index=edge_index, num_nodes=num_nodes)
    y = getattr(data, "y", None)
    if y is not None:
        y = torch.as_tensor(y)
        if y.dim() != 1 or y.numel() != num_nodes:
            raise DataError(f"{source}: expected one label per node ({num_nodes}), got shape "
                            f"{tuple(y.shape)}")
        if y.is_floating_point():
            if not torch.equal(y, y.round()):
                raise DataError(f"{source}: labels must be integer class ids")
        y = y.long()
        if int(y.min()) < 0:
            raise DataError(f"{source}: labels must be non-negative class ids")
        if int(y.max()) >= max(num_nodes, 2):
            # the model gets one output per class id: a stray huge id would allocate a
            # gigantic output layer
            raise DataError(f"{source}: a label is not a class index; labels must be class "
                            f"ids 0..K-1 with K <= {max(num_nodes, 2)} (the node count); "
                            "renumber the classes")
        out.y = y
    for key in data.keys():
        if key not in ("x", "edge_index", "y", "num_nodes"):
            out[key] = data[key]
    return out


def num_classes(data: Data) -> int:
    """Number of classes, from the largest label."""
    if getattr(data, "y", None) is None:
        raise DataError("the graph has no labels; node classification targets need labels")
    return int(data.y.max()) + 1


def induced_edges(edge_index: torch.Tensor, parts: np.ndarray) -> torch.Tensor:
    """Keep only the edges whose two endpoints lie in the same part.

    Args:
        edge_index: ``[2, E]`` edges.
        parts: One part id per node (``-1`` marks nodes whose edges are all dropped).

    Returns:
        The ``[2, E']`` sub-list of edges inside a part.
    """
    p = torch.as_tensor(parts, device=edge_index.device)
    src, dst = p[edge_index[0]], p[edge_index[1]]
    keep = (src == dst) & (src >= 0)
    return edge_index[:, keep]
