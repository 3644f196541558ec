"""Target models and training.

Saved model bundles live one layer up, in :mod:`graphleaks.bundles`: reloading a bundle
rebuilds the defense's model, so it needs the defense registry, which sits above models.
"""

from graphleaks.models.gnn import ARCHITECTURES, GNN, ArchitectureSpec
from graphleaks.models.target import GRAPH_VIEWS, TrainedTarget

__all__ = [
    "ARCHITECTURES",
    "GNN",
    "GRAPH_VIEWS",
    "ArchitectureSpec",
    "TrainedTarget",
]
