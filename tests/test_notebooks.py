"""Execute every notebook in notebooks/ (``pytest -m notebooks``; needs the notebooks extra).

Each notebook runs top to bottom in a fresh ``python3`` kernel of this interpreter; a cell that
raises fails the test with the cell's traceback. The notebooks are committed without
outputs, and nothing is written back.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
TIME_LIMIT_S = 600  # per cell; the notebooks themselves aim at < 2 minutes on 2 cores


@pytest.fixture(scope="module")
def kernel_dirs(tmp_path_factory) -> list[str]:
    """A ``python3`` kernelspec that runs this interpreter, whatever is installed globally."""
    pytest.importorskip("nbclient", reason="needs the notebooks extra "
                        "(pip install 'graphleaks[notebooks]')")
    kernelspec = pytest.importorskip("ipykernel.kernelspec", reason="needs ipykernel "
                                     "(pip install 'graphleaks[notebooks]')")
    prefix = tmp_path_factory.mktemp("kernel")
    kernelspec.install(prefix=str(prefix), kernel_name="python3")
    return [str(prefix / "share" / "jupyter" / "kernels")]


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path: Path, tmp_path: Path, kernel_dirs: list[str]) -> None:
    nbformat = pytest.importorskip("nbformat", reason="needs the notebooks extra "
                                   "(pip install 'graphleaks[notebooks]')")
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        f"{path.name} is committed with outputs; clear them")
    t0 = time.perf_counter()
    km = KernelManager(kernel_name="python3",
                       kernel_spec_manager=KernelSpecManager(kernel_dirs=kernel_dirs))
    NotebookClient(nb, km=km, timeout=TIME_LIMIT_S,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    elapsed = time.perf_counter() - t0
    print(f"{path.name}: {elapsed:.1f} s")


def test_notebooks_found() -> None:
    assert len(NOTEBOOKS) >= 3, NOTEBOOKS
