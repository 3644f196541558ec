"""Shared helpers of the hostile-input suite: run the CLI, prove nothing else changed.

Every refusal is checked the same way: exit code 2, exactly one ``error:`` line on stderr,
no traceback, and a byte-for-byte identical snapshot of the surrounding folder (file
contents, links, folders, including hidden temporary names) before and after.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from typer.testing import CliRunner, Result

from graphleaks.cli import app


def _load_corpus() -> ModuleType:
    """Load ``corpus.py`` (test modules load in importlib mode and cannot import it)."""
    name = "graphleaks_hostile_corpus"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("corpus.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while it loads
        spec.loader.exec_module(module)
    return sys.modules[name]


corpus = _load_corpus()
snapshot = corpus.snapshot


@dataclass
class Hostile:
    """Runs the CLI in-process and checks the refusal contract."""

    root: Path

    # test modules are imported in importlib mode and cannot import this conftest, so the
    # file helpers travel on the fixture object
    @staticmethod
    def write_graph(folder: Path, **kwargs: object) -> list[str]:
        """See :func:`write_graph`."""
        return write_graph(folder, **kwargs)  # type: ignore[arg-type]

    @staticmethod
    def graph_opts(folder: Path) -> list[str]:
        """See :func:`graph_opts`."""
        return graph_opts(folder)

    @staticmethod
    def edit_manifest(bundle: Path, edit: Callable[[dict], object]) -> None:
        """See :func:`edit_manifest`."""
        edit_manifest(bundle, edit)

    @staticmethod
    def snapshot(folder: Path) -> dict[str, str]:
        """See ``corpus.snapshot``."""
        return snapshot(folder)

    @staticmethod
    def report(folder: Path, **changes: object) -> Path:
        """Write ``corpus.MINIMAL_REPORT`` (with ``changes``) as ``folder/report.json``."""
        import json

        path = folder / "report.json"
        path.write_text(json.dumps({**corpus.MINIMAL_REPORT, **changes}))
        return path

    @staticmethod
    def foreign_db(path: Path, *, wal: bool = False) -> Path:
        """See ``corpus.foreign_db``."""
        return corpus.foreign_db(path, wal=wal)

    def run(self, *args: str | Path) -> Result:
        """Invoke ``graphleaks ARGS`` in-process."""
        return CliRunner().invoke(app, [str(a) for a in args])

    def refused(self, *args: str | Path, match: str | None = None,
                absent: tuple[str, ...] = ()) -> str:
        """Run ``args``; assert exit 2, one line, no traceback, and no change under ``root``.

        Args:
            args: The command line.
            match: A substring the message must hold (the file or field it names).
            absent: Substrings the output must not hold (e.g. a secret file's content).

        Returns:
            The error line.
        """
        before = snapshot(self.root)
        r = self.run(*args)
        assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr, r.exception)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
        assert "Traceback" not in r.stderr + r.stdout
        if match is not None:
            assert match in lines[0], lines[0]
        for secret in absent:
            assert secret not in r.stderr + r.stdout
        assert snapshot(self.root) == before, "a refused command changed files"
        return lines[0]


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Hostile:
    """A sandbox: cwd, HOME and the dataset cache all inside ``tmp_path/work``."""
    work = tmp_path / "work"
    (work / "home").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(work / "home"))
    monkeypatch.setenv("GRAPHLEAKS_CACHE", str(work / "cache"))
    monkeypatch.chdir(work)
    return Hostile(work)


def write_graph(folder: Path, *, n: int = 60, seed: int = 0,
                labels: Callable[[np.ndarray], np.ndarray] | None = None) -> list[str]:
    """Write a small CSBM as edges.csv / x.npy / y.csv; returns the CLI options naming them."""
    from graphleaks.data.synthetic import csbm

    folder.mkdir(parents=True, exist_ok=True)
    g = csbm(n, num_classes=3, num_features=8, avg_degree=6.0, seed=seed)
    ei = g.edge_index.numpy()
    (folder / "edges.csv").write_text("\n".join(f"{a},{b}" for a, b in ei.T) + "\n")
    np.save(folder / "x.npy", g.x.numpy())
    y = g.y.numpy() if labels is None else labels(g.y.numpy())
    (folder / "y.csv").write_text("\n".join(str(v) for v in y) + "\n")
    return graph_opts(folder)


@pytest.fixture(scope="session")
def graph_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """edges.csv, x.npy and y.csv of a 60-node, 3-class CSBM (outside every sandbox)."""
    d = tmp_path_factory.mktemp("graph")
    write_graph(d)
    return d


def graph_opts(folder: Path) -> list[str]:
    """The CLI options naming the graph files in ``folder``."""
    return ["--edges", str(folder / "edges.csv"), "--features", str(folder / "x.npy"),
            "--labels", str(folder / "y.csv")]


@pytest.fixture(scope="session")
def tiny_bundle(tmp_path_factory: pytest.TempPathFactory, graph_dir: Path) -> Path:
    """A bundle of a 5-epoch GCN trained on ``graph_dir`` (a user-files dataset record)."""
    from graphleaks.audit.runner import train_target
    from graphleaks.bundles import save_bundle
    from graphleaks.data.files import load_graph_files
    from graphleaks.models.gnn import ArchitectureSpec

    g = load_graph_files(graph_dir / "edges.csv", features=graph_dir / "x.npy",
                         labels=graph_dir / "y.csv")
    record = {"name": "files", "edges": "edges.csv", "features": "x.npy", "labels": "y.csv"}
    t = train_target(g, spec=ArchitectureSpec(hidden=(8,), epochs=5), seed=0, dataset=record)
    return save_bundle(t, tmp_path_factory.mktemp("bundle") / "b")


@pytest.fixture
def bundle(hostile: Hostile, tiny_bundle: Path) -> Path:
    """A private copy of ``tiny_bundle`` inside the sandbox, free to tamper with."""
    import shutil

    return Path(shutil.copytree(tiny_bundle, hostile.root / "bundle"))


def edit_manifest(bundle: Path, edit: Callable[[dict], object]) -> None:
    """Apply ``edit`` to a bundle's manifest in place."""
    import json

    path = bundle / "manifest.json"
    m = json.loads(path.read_text())
    edit(m)
    path.write_text(json.dumps(m))
