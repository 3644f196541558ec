"""Bemis–Murcko scaffolds of molecules, for slicing a graph-membership audit by chemotype.

The scaffold (Bemis & Murcko, J. Med. Chem. 1996) keeps a molecule's ring systems and the
linkers between them; molecules without a ring share the empty scaffold, reported as
``acyclic``. RDKit is optional (the ``graphleaks[molecules]`` extra): without it, or for a
SMILES it cannot parse, the scaffold is None and the slice is not formed.
"""

from __future__ import annotations

from collections.abc import Sequence

#: The scaffold name of a molecule without rings.
ACYCLIC = "acyclic"


def murcko_scaffolds(smiles: Sequence[str]) -> list[str | None] | None:
    """The canonical Bemis–Murcko scaffold SMILES of each molecule; None without RDKit."""
    try:
        from rdkit import Chem, RDLogger
        from rdkit.Chem.Scaffolds import MurckoScaffold
    except ImportError:
        return None
    # a parse failure is reported as None, not on stderr
    RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]
    out: list[str | None] = []
    for s in smiles:
        mol = Chem.MolFromSmiles(s) if isinstance(s, str) and s else None
        if mol is None:
            out.append(None)
            continue
        core = MurckoScaffold.MurckoScaffoldSmiles(mol=mol)
        out.append(core if core else ACYCLIC)
    return out
