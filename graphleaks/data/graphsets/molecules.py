"""Molecules as graphs, through RDKit (the optional extra ``graphleaks[molecules]``).

One molecule is one graph: heavy atoms are nodes, bonds are undirected edges. Node features
(:data:`ATOM_FEATURES` columns, in this order):

* element, one-hot over :data:`ELEMENTS` (any other element: the last column, ``other``);
* heavy-atom degree, one-hot 0..5 (6 or more: the last column);
* formal charge, one-hot -1, 0, +1 (others: the nearest end);
* aromatic (0/1);
* total hydrogens, one-hot 0..4 (4 or more: the last column).

Optional bond features (``bond_features=True``, ``edge_attr`` of :data:`BOND_FEATURES`
columns): bond type one-hot (single, double, triple, aromatic), conjugated, in a ring.

Files (:data:`GRAPH_SET_READERS`, by suffix):

* ``.smi``/``.smiles``: one molecule per line, ``SMILES LABEL`` separated by white space
  (a further column is the molecule's name); blank lines and lines starting with ``#`` are
  skipped;
* ``.sdf``: an SD file whose records carry the class in the data field ``label_field``
  (default ``label``); the record title is the molecule's name.

A molecule RDKit cannot parse (or a record without a label) is refused by default, naming
its line (SMILES) or record (SDF): ``on_invalid="skip"`` drops it instead and the set
records how many were skipped (:attr:`GraphSet.skipped`). Class labels are strings, mapped
to class ids in sorted order. No message quotes a file: RDKit's own log, which echoes the
SMILES it fails on, is silenced while reading.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import torch
from torch_geometric.data import Data

from graphleaks._limits import (
    MAX_CATEGORIES,
    MAX_GRAPH_SET_FILE_BYTES,
    MAX_GRAPHS,
    check_file_size,
)
from graphleaks._readers import ReaderTable
from graphleaks.data.graphsets.record import GraphSet
from graphleaks.errors import DataError

OnInvalid = Literal["refuse", "skip"]

#: Elements with their own one-hot column (the organic subset, halogens, B, Si, Se); any
#: other element falls into the ``other`` column.
ELEMENTS: tuple[str, ...] = ("C", "N", "O", "S", "F", "Cl", "Br", "I", "P", "B", "Si", "Se")
_DEGREES, _CHARGES, _HS = 7, (-1, 0, 1), 5
#: Width of a node's feature row.
ATOM_FEATURES = len(ELEMENTS) + 1 + _DEGREES + len(_CHARGES) + 1 + _HS
#: Width of a bond's feature row (``bond_features=True``).
BOND_FEATURES = 6
#: Longest SMILES line accepted (the largest drug-like SMILES are a few hundred characters).
MAX_SMILES_LINE = 4096


#: How a refusal names the skip switch: the API's keyword and the command line's option.
_SKIP = "on_invalid='skip' (--on-invalid skip on the command line)"

def _require_rdkit(what: str) -> Any:
    try:
        from rdkit import Chem
    except ImportError:
        raise DataError(f"{what} needs RDKit: install the molecules extra "
                        "(pip install 'graphleaks[molecules]')") from None
    return Chem


@contextlib.contextmanager
def _quiet_rdkit() -> Iterator[None]:
    """Silence RDKit's log, which prints the offending SMILES (file content) on stderr."""
    from rdkit import rdBase

    rdBase.DisableLog("rdApp.*")
    try:
        yield
    finally:
        rdBase.EnableLog("rdApp.*")


def _one_hot(index: int, width: int) -> list[float]:
    row = [0.0] * width
    row[min(max(index, 0), width - 1)] = 1.0
    return row


def atom_features(atom: Any) -> list[float]:
    """The :data:`ATOM_FEATURES` values of one RDKit atom (see the module docstring)."""
    symbol = atom.GetSymbol()
    element = ELEMENTS.index(symbol) if symbol in ELEMENTS else len(ELEMENTS)
    charge = min(max(int(atom.GetFormalCharge()), _CHARGES[0]), _CHARGES[-1]) - _CHARGES[0]
    return (_one_hot(element, len(ELEMENTS) + 1) + _one_hot(atom.GetDegree(), _DEGREES)
            + _one_hot(charge, len(_CHARGES)) + [float(atom.GetIsAromatic())]
            + _one_hot(atom.GetTotalNumHs(), _HS))


def bond_features(bond: Any) -> list[float]:
    """The :data:`BOND_FEATURES` values of one RDKit bond (see the module docstring)."""
    from rdkit.Chem import BondType

    kinds = (BondType.SINGLE, BondType.DOUBLE, BondType.TRIPLE, BondType.AROMATIC)
    kind = bond.GetBondType()
    row = [float(kind == k) for k in kinds]
    return row + [float(bond.GetIsConjugated()), float(bond.IsInRing())]


def mol_to_graph(mol: Any, label: int, *, with_bonds: bool = False) -> Data:
    """One RDKit molecule as a graph with class ``label``.

    Raises:
        DataError: For a molecule without atoms (an empty graph).
    """
    if mol.GetNumAtoms() == 0:
        raise DataError("the molecule has no atoms")
    x = torch.tensor([atom_features(a) for a in mol.GetAtoms()], dtype=torch.float32)
    pairs: list[tuple[int, int]] = []
    attrs: list[list[float]] = []
    for bond in mol.GetBonds():
        u, v = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        pairs += [(u, v), (v, u)]
        if with_bonds:
            f = bond_features(bond)
            attrs += [f, f]
    ei = (torch.tensor(pairs, dtype=torch.long).t() if pairs
          else torch.empty(2, 0, dtype=torch.long))
    g = Data(x=x, edge_index=ei, y=torch.tensor([label]), num_nodes=int(x.shape[0]))
    if with_bonds:
        g.edge_attr = (torch.tensor(attrs, dtype=torch.float32) if attrs
                       else torch.empty(0, BOND_FEATURES))
    return g


def _class_ids(labels: Sequence[str], what: str,
               classes: Sequence[str] | None = None) -> tuple[list[int], list[str]]:
    names = sorted(set(labels)) if classes is None else [str(c) for c in classes]
    if classes is not None and not set(labels) <= set(names):
        raise DataError(f"{what}: a label is not one of the {len(names)} classes given; "
                        "check the label field or the classes")
    if len(names) > MAX_CATEGORIES:
        raise DataError(f"{what}: {len(names)} distinct labels, over the limit of "
                        f"{MAX_CATEGORIES}; the label column must hold classes")
    if len(names) < 2:
        raise DataError(f"{what}: every molecule has the same label; graph classification "
                        "needs at least two classes")
    index = {n: i for i, n in enumerate(names)}
    return [index[lab] for lab in labels], names


def _check_count(records: list[tuple[Any, str, str, str]], what: str) -> None:
    # refused while reading, before millions of RDKit molecules are held in memory
    if len(records) > MAX_GRAPHS:
        raise DataError(f"{what} holds more than {MAX_GRAPHS} molecules; give a smaller file")


def _check_on_invalid(on_invalid: str) -> None:
    if on_invalid not in ("refuse", "skip"):
        raise DataError(f"on_invalid must be 'refuse' or 'skip', got {str(on_invalid)[:20]!r}")


def _assemble(records: list[tuple[Any, str, str, str]], what: str, skipped: int, *,
              bond_features: bool, classes: Sequence[str] | None = None) -> GraphSet:
    """A graph set from (mol, label, canonical SMILES, name) records."""
    if not records:
        raise DataError(f"{what} holds no valid molecule")
    ids, names = _class_ids([r[1] for r in records], what, classes)
    graphs = [mol_to_graph(r[0], k, with_bonds=bond_features)
              for r, k in zip(records, ids, strict=True)]
    return GraphSet.from_graphs(graphs, names, source=what, smiles=[r[2] for r in records],
                                names=[r[3] for r in records], skipped=skipped)


def from_smiles(smiles: Sequence[str], labels: Sequence[object], *,
                on_invalid: OnInvalid = "refuse", bond_features: bool = False,
                source: str = "SMILES list") -> GraphSet:
    """Molecules given as SMILES strings (in memory), one class label each.

    Args:
        smiles: One SMILES per molecule.
        labels: One class label per molecule (any values; compared as strings).
        on_invalid: ``refuse`` (the default) or ``skip`` a SMILES RDKit cannot parse.
        bond_features: Add bond features as ``edge_attr``.
        source: How messages name the input.

    Raises:
        DataError: For an unparseable SMILES (naming its position) under ``refuse``, no
            valid molecule, or fewer than two classes.
    """
    Chem = _require_rdkit(source)
    _check_on_invalid(on_invalid)
    if len(smiles) != len(labels):
        raise DataError(f"{source}: {len(smiles)} SMILES for {len(labels)} labels")
    records: list[tuple[Any, str, str, str]] = []
    skipped = 0
    with _quiet_rdkit():
        for i, (s, lab) in enumerate(zip(smiles, labels, strict=True)):
            mol = Chem.MolFromSmiles(s) if isinstance(s, str) and s else None
            if mol is None or mol.GetNumAtoms() == 0:
                if on_invalid == "refuse":
                    raise DataError(f"{source}: molecule {i} is not a SMILES RDKit can parse; "
                                    f"fix it, or pass {_SKIP} to drop such molecules")
                skipped += 1
                continue
            records.append((mol, str(lab), Chem.MolToSmiles(mol), str(i)))
    return _assemble(records, source, skipped, bond_features=bond_features)


def read_smiles(path: str | Path, *, on_invalid: OnInvalid = "refuse",
                bond_features: bool = False) -> GraphSet:
    """Read a SMILES file: ``SMILES LABEL [NAME]`` per line (see the module docstring).

    Raises:
        DataError: For a missing, oversized or non-UTF-8 file, a line without a label, or an
            unparseable SMILES under ``refuse`` (naming the line, never its text).
    """
    p = Path(path)
    what = f"SMILES file {p}"
    Chem = _require_rdkit(what)
    _check_on_invalid(on_invalid)
    check_file_size(p, MAX_GRAPH_SET_FILE_BYTES, what)
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        raise DataError(f"{what} is not a UTF-8 text file of SMILES lines") from None
    records: list[tuple[Any, str, str, str]] = []
    skipped = 0
    with _quiet_rdkit():
        for number, line in enumerate(text.splitlines(), start=1):
            cells = line.split()
            if not cells or cells[0].startswith("#"):
                continue
            fix = f"fix it, or pass {_SKIP} to drop such lines"
            if len(line) > MAX_SMILES_LINE or len(cells) < 2:
                problem = (f"is over {MAX_SMILES_LINE} characters" if len(line) > MAX_SMILES_LINE
                           else "has no label (expected 'SMILES LABEL [NAME]')")
                if on_invalid == "refuse":
                    raise DataError(f"{what}: line {number} {problem}; {fix}")
                skipped += 1
                continue
            mol = Chem.MolFromSmiles(cells[0])
            if mol is None or mol.GetNumAtoms() == 0:
                if on_invalid == "refuse":
                    raise DataError(f"{what}: line {number} is not a SMILES RDKit can parse; "
                                    f"{fix}")
                skipped += 1
                continue
            name = " ".join(cells[2:]) if len(cells) > 2 else f"line {number}"
            records.append((mol, cells[1], Chem.MolToSmiles(mol), name))
            _check_count(records, what)
    gs = _assemble(records, what, skipped, bond_features=bond_features)
    return replace(gs, source=f"SMILES file {p.name}")  # the report records the name only


def read_sdf(path: str | Path, *, label_field: str = "label", on_invalid: OnInvalid = "refuse",
             bond_features: bool = False, classes: Sequence[str] | None = None) -> GraphSet:
    """Read an SD file whose records carry their class in the data field ``label_field``.

    ``classes`` fixes the class order (class id k is ``classes[k]``, so two splits of one
    dataset agree even if one lacks a class); by default the distinct labels, sorted.

    Raises:
        DataError: For a missing, oversized file, a record RDKit cannot parse or one without
            the label field under ``refuse`` (naming the record by its 1-based position), no
            valid molecule, or fewer than two classes.
    """
    p = Path(path)
    what = f"SD file {p}"
    Chem = _require_rdkit(what)
    _check_on_invalid(on_invalid)
    check_file_size(p, MAX_GRAPH_SET_FILE_BYTES, what)
    records: list[tuple[Any, str, str, str]] = []
    skipped = 0
    try:
        fh = p.open("rb")
    except OSError:
        raise DataError(f"{what} cannot be read") from None
    with fh, _quiet_rdkit():
        supplier = Chem.ForwardSDMolSupplier(fh)
        number = 0
        while True:
            try:
                mol = next(supplier)
            except StopIteration:
                break
            except Exception:  # RDKit raises its own errors on broken blocks
                mol = None
            number += 1
            problem = None
            if mol is None or mol.GetNumAtoms() == 0:
                problem = "is not a molecule RDKit can parse"
            elif not mol.HasProp(label_field):
                problem = f"has no {label_field!r} data field (the class label)"
            if problem is not None:
                if on_invalid == "refuse":
                    raise DataError(f"{what}: record {number} {problem}; fix it, or pass "
                                    f"{_SKIP} to drop such records")
                skipped += 1
                continue
            title = mol.GetProp("_Name") if mol.HasProp("_Name") else ""
            records.append((mol, mol.GetProp(label_field).strip(), Chem.MolToSmiles(mol),
                            title or f"record {number}"))
            _check_count(records, what)
    gs = _assemble(records, what, skipped, bond_features=bond_features, classes=classes)
    return replace(gs, source=f"SD file {p.name}")  # the report records the name only


#: Formats of a graph-set file (molecules); each reader takes ``on_invalid=`` and
#: ``bond_features=`` and returns a checked :class:`GraphSet`.
GRAPH_SET_READERS: ReaderTable[GraphSet] = ReaderTable("graph-set file", option="--graphs")
GRAPH_SET_READERS.register("smiles", (".smi", ".smiles"), read_smiles,
                           "SMILES LABEL [NAME] per line, through RDKit")
GRAPH_SET_READERS.register("sdf", (".sdf",), read_sdf,
                           "SD file with a 'label' data field per record, through RDKit")
