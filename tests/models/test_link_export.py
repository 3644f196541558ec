"""Link predictors as files: ``export_link_pt2`` keeps the pair count dynamic in either
layout, and ``load_link_model_file`` refuses programs that cannot serve an edge audit."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.export import Dim

from graphleaks.data import tiny_graph
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.link_export import export_link_pt2, load_link_model_file
from graphleaks.models.pair_scorer import PairScorer
from tests.audit.link_own_model import UserLinkModel


class RowsModel(torch.nn.Module):
    """The user's model taking pairs as rows, ``[P, 2]``."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.inner = UserLinkModel(8)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor,
                pairs: torch.Tensor) -> torch.Tensor:
        return self.inner(x, edge_index, pairs.t())


def test_rows_export_scores_like_the_module_and_its_layout_is_checked(tmp_path):
    g = tiny_graph()
    model = RowsModel().eval()
    path = export_link_pt2(model, g.x, g.edge_index, torch.tensor([[0, 1], [2, 3], [4, 5]]),
                           tmp_path / "rows.pt2", pairs_layout="rows")
    loaded, factory = load_link_model_file(path, pairs_layout="rows")
    assert factory is None
    pairs = np.array([[0, 7], [3, 9], [11, 2], [5, 6], [1, 40]])
    a = PairScorer(model, pairs_layout="rows").logits(g.x, g.edge_index, pairs)
    b = PairScorer(loaded, pairs_layout="rows").logits(g.x, g.edge_index, pairs)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    one = PairScorer(loaded, pairs_layout="rows").logits(g.x, g.edge_index, pairs[:1])
    np.testing.assert_allclose(one, a[:1], rtol=1e-6, atol=1e-6)  # a batch of one pair runs
    with pytest.raises(InvalidConfigError, match=r"takes pairs as \[P, 2\]; give "
                                                 "--pairs-layout rows"):
        load_link_model_file(path, pairs_layout="columns")
    with pytest.raises(InvalidConfigError, match="--pairs-layout 'diagonal' is unknown"):
        load_link_model_file(path, pairs_layout="diagonal")


def test_a_program_with_a_fixed_pair_count_is_refused(tmp_path):
    g = tiny_graph()
    torch.manual_seed(0)
    model = UserLinkModel(8).eval()
    ep = torch.export.export(model, (g.x, g.edge_index, torch.tensor([[0, 1, 2], [3, 4, 5]])),
                             dynamic_shapes=({0: Dim("nodes", min=2)}, {1: Dim("edges", min=2)},
                                             None), strict=False)
    torch.export.save(ep, str(tmp_path / "fixed.pt2"))
    with pytest.raises(DataError, match="fixed number of pairs") as e:
        load_link_model_file(tmp_path / "fixed.pt2")
    assert "export_link_pt2" in str(e.value) and "\n" not in str(e.value)
