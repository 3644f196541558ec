"""Seeded molecule sets of any size: valid, distinct, reproducible mutants; ESOL classes.

Skipped without RDKit (the ``graphleaks[molecules]`` extra).
"""

from __future__ import annotations

import pytest

pytest.importorskip("rdkit")

from rdkit import Chem  # noqa: E402

from graphleaks.data.graphsets import from_smiles  # noqa: E402
from graphleaks.data.graphsets.mutants import (  # noqa: E402
    ESOL_CLASSES,
    esol_class,
    esol_log_solubility,
    mutant_smiles,
)
from graphleaks.errors import DataError  # noqa: E402

PARENTS = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "OCC", "CCN(CC)CC"]


def test_mutants_are_distinct_valid_seeded_and_follow_the_parents() -> None:
    out = mutant_smiles(PARENTS, 60, seed=3)
    assert len(out) == 60 and len(set(out)) == 60
    # parents first, deduplicated by canonical SMILES ("OCC" is "CCO")
    assert out[:4] == [Chem.MolToSmiles(Chem.MolFromSmiles(s)) for s in PARENTS[:4] if s != "OCC"
                       ] + [Chem.MolToSmiles(Chem.MolFromSmiles(PARENTS[4]))]
    assert all(Chem.MolFromSmiles(s) is not None for s in out)
    assert all(Chem.MolFromSmiles(s).GetNumAtoms() <= 50 for s in out)
    assert mutant_smiles(PARENTS, 60, seed=3) == out
    assert mutant_smiles(PARENTS, 60, seed=4) != out
    gs = from_smiles(out, [esol_class(s) for s in out])  # the project's featuriser reads them
    assert len(gs) == 60


def test_esol_estimate_and_classes() -> None:
    # Delaney's equation by hand for ethanol: logP -0.0014, MW 46.07, 0 rotatable, 0 aromatic
    assert esol_log_solubility("CCO") == pytest.approx(0.16 + 0.63 * 0.0014 - 0.0062 * 46.069,
                                                       abs=1e-3)
    assert esol_class("CCO") == "C-high" and esol_class("c1ccc2cc3ccccc3cc2c1") == "A-low"
    assert sorted(ESOL_CLASSES) == list(ESOL_CLASSES)


def test_bad_requests_are_refused() -> None:
    with pytest.raises(DataError, match="parent molecule 1"):
        mutant_smiles(["CCO", "not a smiles"], 5, seed=0)
    with pytest.raises(DataError, match="edit_probs"):
        mutant_smiles(PARENTS, 5, seed=0, edit_probs=(1.0, 0.0, 0.0))
    with pytest.raises(DataError, match="max_tries"):
        mutant_smiles(["C"], 50, seed=0, max_tries=3)
    with pytest.raises(DataError, match="ESOL"):
        esol_log_solubility("not a smiles")
