"""TrainedTarget: the model widths it reads from the model."""

from __future__ import annotations

import dataclasses

import pytest
from torch import nn


def test_widths_come_from_the_model(trained_target, small_graph):
    assert trained_target.num_features == small_graph.num_features
    assert trained_target.num_classes == int(small_graph.y.max()) + 1


def test_a_model_without_int_widths_is_named(trained_target):
    foreign = dataclasses.replace(trained_target, model=nn.Linear(4, 2))  # no in_dim/out_dim
    with pytest.raises(TypeError, match="Linear.out_dim"):
        _ = foreign.num_classes
