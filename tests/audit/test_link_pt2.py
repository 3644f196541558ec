"""A user's own link predictor exported with torch.export (.pt2) is audited like the module."""

from __future__ import annotations

import numpy as np
import torch
from torch.export import Dim

from graphleaks.audit.link_audit import audit_link_model
from graphleaks.data import tiny_graph
from graphleaks.data.pairs import undirected_pairs
from graphleaks.models.foreign import load_model_file
from tests.audit.link_own_model import train_user_model


def test_pt2_export_gives_the_same_threshold_audit_as_the_module(tmp_path):
    g = tiny_graph()
    pairs = undirected_pairs(g.edge_index)
    members, held = pairs[:130], pairs[130:]
    model = train_user_model(g.x, torch.from_numpy(members).t(), epochs=100, seed=0)
    served = torch.from_numpy(members).t()
    data = g.clone()
    data.edge_index = torch.cat([served, served.flip(0)], dim=1)
    example = torch.from_numpy(pairs[:4]).t().contiguous()
    ep = torch.export.export(model.eval(), (data.x, data.edge_index, example), dynamic_shapes=(
        {0: Dim("nodes", min=2)}, {1: Dim("edges", min=2)}, {1: Dim("pairs", min=2)}),
        strict=False)
    torch.export.save(ep, str(tmp_path / "link.pt2"))
    loaded, _ = load_model_file(tmp_path / "link.pt2")
    kw = {"attacks": ["edge_score_threshold"], "seed": 1, "suite": "quick", "n_bootstrap": 50}
    a = audit_link_model(model, data, members, held, **kw)
    b = audit_link_model(loaded, data, members, held, **kw)
    np.testing.assert_array_equal(a.tables[0].nodes, b.tables[0].nodes)
    np.testing.assert_allclose(a.tables[0].scores, b.tables[0].scores, rtol=1e-6, atol=1e-6)
    assert a.report.attacks[0].metrics.binary.auc == b.report.attacks[0].metrics.binary.auc
