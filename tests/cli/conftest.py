"""Fixtures of the CLI tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def edge_files(tmp_path_factory):  # noqa: ANN001, ANN201
    """A 120-node user graph as files: ``edges.csv``, ``x.npy`` and ``y.csv``."""
    import numpy as np

    from graphleaks.data.synthetic import csbm

    d = tmp_path_factory.mktemp("g")
    g = csbm(120, num_classes=3, num_features=8, seed=0)
    ei = g.edge_index.numpy()
    (d / "edges.csv").write_text("src,dst\n" + "\n".join(f"{a},{b}" for a, b in ei.T))
    np.save(d / "x.npy", g.x.numpy())
    (d / "y.csv").write_text("\n".join(str(v) for v in g.y.tolist()))
    return d
