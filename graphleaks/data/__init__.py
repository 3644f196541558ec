"""Graphs, datasets, membership splits (node and edge) and synthetic generators."""

from graphleaks.data.datasets import datasets, load_dataset
from graphleaks.data.edge_splits import EdgeMembershipSplit, EdgeSplitConfig
from graphleaks.data.files import from_networkx, from_pyg, load_graph_files
from graphleaks.data.graph import check_graph, fingerprint
from graphleaks.data.ref import DatasetRef
from graphleaks.data.splits import MembershipSplit, SplitConfig
from graphleaks.data.synthetic import bipartite_interactions, csbm, tiny_graph

__all__ = [
    "DatasetRef",
    "EdgeMembershipSplit",
    "EdgeSplitConfig",
    "MembershipSplit",
    "SplitConfig",
    "bipartite_interactions",
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
