"""Reader of the raw SNAP ego-Facebook files, with gender as the label.

PyG's ``SNAPDataset`` splits the data into ten ego graphs and drops each ego's own feature
row, so the union of all 4,039 people is read here directly from the raw files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from graphleaks._limits import check_id_range
from graphleaks.errors import DataError

GENDER_FEATURES = ("gender;anonymized feature 77", "gender;anonymized feature 78")


def read_ego_facebook(folder: Path) -> Data:
    """Read the union of the ten ego networks.

    Labels: 0 for ``gender;anonymized feature 77``, 1 for ``... 78``, 2 for neither (84
    people). Features: every other anonymised binary feature, in the union of the ego files'
    feature names.

    Args:
        folder: The ``SNAP/ego-facebook`` folder of the data root.

    Raises:
        DataError: If the raw files are missing.
    """
    raw = folder / "raw" / "facebook"
    egos = sorted(int(p.stem) for p in raw.glob("*.egofeat")) if raw.is_dir() else []
    if not egos:
        raise DataError(f"dataset 'ego-facebook': no raw ego files under {raw}")
    names: dict[str, int] = {}
    rows: dict[int, set[int]] = {}
    edges: list[np.ndarray] = []
    for ego in egos:
        featnames = [line.split(" ", 1)[1].strip()
                     for line in (raw / f"{ego}.featnames").read_text().splitlines() if line]
        cols = np.array([names.setdefault(n, len(names)) for n in featnames])
        feat = np.loadtxt(raw / f"{ego}.feat", dtype=np.int64, ndmin=2)
        egofeat = np.loadtxt(raw / f"{ego}.egofeat", dtype=np.int64, ndmin=1)
        for node, values in [(ego, egofeat)] + [(int(r[0]), r[1:]) for r in feat]:
            rows.setdefault(node, set()).update(cols[np.flatnonzero(values)].tolist())
        alters = feat[:, 0]
        edges.append(np.stack([np.full(len(alters), ego), alters]))
        e = np.loadtxt(raw / f"{ego}.edges", dtype=np.int64, ndmin=2)
        if e.size:
            edges.append(e.T)
    # ids index rows: a forged file naming node 10**15 must not size the feature matrix
    check_id_range(max(rows), len(rows), f"dataset 'ego-facebook' files under {raw}")
    num_nodes = max(rows) + 1
    gender_cols = [names[g] for g in GENDER_FEATURES if g in names]
    other = np.array([c for c in range(len(names)) if c not in gender_cols])
    remap = np.full(len(names), -1)
    remap[other] = np.arange(len(other))
    x = np.zeros((num_nodes, len(other)), dtype=np.float32)
    y = np.full(num_nodes, 2, dtype=np.int64)
    for node, cols_set in rows.items():
        for c in cols_set:
            if c in gender_cols:
                y[node] = gender_cols.index(c)
            else:
                x[node, remap[c]] = 1.0
    edge_index = torch.from_numpy(np.concatenate(edges, axis=1))
    edge_index, _ = remove_self_loops(edge_index)
    edge_index = coalesce(to_undirected(edge_index, num_nodes=num_nodes), num_nodes=num_nodes)
    return Data(x=torch.from_numpy(x), edge_index=edge_index, y=torch.from_numpy(y))
