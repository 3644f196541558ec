"""Graphs, datasets and membership splits."""

from graphleaks.data.datasets import datasets, load_dataset
from graphleaks.data.files import from_networkx, from_pyg, load_graph_files
from graphleaks.data.graph import check_graph, fingerprint
from graphleaks.data.ref import DatasetRef
from graphleaks.data.splits import MembershipSplit, SplitConfig
from graphleaks.data.synthetic import csbm, tiny_graph

__all__ = [
    "DatasetRef",
    "MembershipSplit",
    "SplitConfig",
    "check_graph",
    "csbm",
    "datasets",
    "fingerprint",
    "from_networkx",
    "from_pyg",
    "load_dataset",
    "load_graph_files",
    "tiny_graph",
]
