"""TrainedTarget: the model widths, read from the model or measured from its output."""

from __future__ import annotations

import dataclasses

from torch import nn


def test_widths_come_from_the_model(trained_target, small_graph):
    assert trained_target.num_features == small_graph.num_features
    assert trained_target.num_classes == int(small_graph.y.max()) + 1


class _NoWidths(nn.Module):
    """A user's model: no ``in_dim``/``out_dim`` attributes."""

    def __init__(self, in_dim: int, out_dim: int) -> None:
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)

    def forward(self, x, edge_index):
        del edge_index
        return self.lin(x)


def test_a_model_without_widths_is_measured(trained_target, small_graph):
    foreign = dataclasses.replace(trained_target,
                                  model=_NoWidths(small_graph.num_features, 3).eval(),
                                  interface=None)  # re-derived from the new model
    assert foreign.num_classes == 3
    assert foreign.num_features == small_graph.num_features
