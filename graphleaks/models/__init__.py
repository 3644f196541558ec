"""Target models, training, and saved model bundles."""

from graphleaks.models.gnn import ARCHITECTURES, GNN, ArchitectureSpec
from graphleaks.models.io import load_bundle, read_manifest, save_bundle
from graphleaks.models.target import GRAPH_VIEWS, TrainedTarget

__all__ = [
    "ARCHITECTURES",
    "GNN",
    "GRAPH_VIEWS",
    "ArchitectureSpec",
    "TrainedTarget",
    "load_bundle",
    "read_manifest",
    "save_bundle",
]
