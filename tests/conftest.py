"""Shared fixtures: tiny seeded graphs and a trained tiny target."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from graphleaks.audit.runner import train_target
from graphleaks.data.synthetic import csbm, tiny_graph
from graphleaks.models.gnn import ArchitectureSpec
from graphleaks.models.target import TrainedTarget

REPO = Path(__file__).resolve().parents[1]

# Tiny graphs gain nothing from intra-op threads, and on a busy 2-core machine two threads
# per process slow each op by an order of magnitude.
torch.set_num_threads(1)


def _seeds() -> list[int]:
    env = os.environ.get("GRAPHLEAKS_TEST_SEED", "0")
    if env == "all":
        return list(range(10))
    if "-" in env:
        lo, hi = env.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(env)]


@pytest.fixture(params=_seeds())
def seed(request: pytest.FixtureRequest) -> int:
    """The test seed (GRAPHLEAKS_TEST_SEED: one seed, a range such as 0-9, or all)."""
    return int(request.param)


@pytest.fixture
def graph():  # noqa: ANN201 - a PyG Data
    """A 60-node, 3-class CSBM."""
    return tiny_graph(0)


@pytest.fixture(scope="session")
def small_graph():  # noqa: ANN201
    """A 300-node CSBM with enough members for meaningful confidence intervals."""
    return csbm(300, num_classes=3, num_features=32, feature_signal=1.0, avg_degree=6, seed=1)


@pytest.fixture(scope="session")
def trained_target(small_graph) -> TrainedTarget:  # noqa: ANN001
    """An overfit GCN on ``small_graph`` (no early stopping, no dropout)."""
    spec = ArchitectureSpec(hidden=(64,), dropout=0.0, weight_decay=0.0, epochs=150, patience=0)
    return train_target(small_graph, spec=spec, seed=0, dataset={"name": "synthetic-test"})


@pytest.fixture
def data_root() -> Path:
    """The offline datasets (tests using it are marked ``dataset``)."""
    root = Path(os.environ.get("GRAPHLEAKS_DATA", REPO.parent / "shared" / "datasets"))
    if not root.is_dir():
        pytest.skip(f"no data root at {root}")
    return root


@pytest.fixture
def record_seeds(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 - a patching function
    """Patch ``module.name`` to record the ``seed`` keyword of every call, then call it.

    Returns a function ``patch(module, name) -> list`` whose list grows with each call: the
    pool tests count trainings with it.
    """

    def patch(module: object, name: str) -> list[int]:
        calls: list[int] = []
        real = getattr(module, name)

        def counted(*args: object, **kwargs: object) -> object:
            calls.append(kwargs["seed"])  # type: ignore[arg-type]
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
        return calls

    return patch
