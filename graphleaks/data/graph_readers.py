"""The graph-source table: which reader builds a graph from the file given as ``--edges``.

An edge list needs ``--features`` (and takes ``--labels``); a self-contained graph file
(``.npz``) holds all three. :meth:`graphleaks.data.ref.FilesRef.load` and the CLI read every
user graph through :data:`GRAPH_READERS`. Add a graph format as one reader module (copy
:mod:`graphleaks.data.npz_graph`) and one ``register`` line here.
"""

from __future__ import annotations

from pathlib import Path

from torch_geometric.data import Data

from graphleaks._readers import ReaderTable
from graphleaks.data.files import load_graph_files
from graphleaks.data.npz_graph import read_npz_graph
from graphleaks.errors import DataError


def _edge_list(edges: Path, *, features: Path | None = None,
               labels: Path | None = None) -> Data:
    if features is None:
        raise DataError(f"--edges and --features must be given together for an edge list: "
                        f"{edges} needs a feature file with one row per node")
    return load_graph_files(edges, features=features, labels=labels)


#: Formats of the graph file given as ``--edges``; each reader takes ``features=`` and
#: ``labels=`` (paths or None) and returns a validated, undirected graph.
GRAPH_READERS: ReaderTable[Data] = ReaderTable("graph file", option="--edges")
GRAPH_READERS.register("npz", (".npz",), read_npz_graph,
                       "numpy archive with edge_index, x and optional y; no --features")
GRAPH_READERS.register("edge_list", (), _edge_list,
                       "CSV/TSV edge list of source,target ids, with --features",
                       fallback=True)
