"""The command line's per-process savings: a deferred import and a frozen heap."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphleaks import _process


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A throwaway package whose submodule records in ``sys`` that its code ran."""
    name = f"gl_defer_{tmp_path.name.replace('-', '_')}"
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "heavy.py").write_text(
        "import sys\nsys.gl_heavy_runs = getattr(sys, 'gl_heavy_runs', 0) + 1\nVALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "gl_heavy_runs", 0, raising=False)
    yield name
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]
    sys.meta_path[:] = [f for f in sys.meta_path
                        if getattr(f, "name", "").split(".")[0] != name]


def test_a_deferred_module_runs_on_first_use_once(package: str) -> None:
    import importlib

    assert _process.defer(f"{package}.heavy")
    assert not _process.defer(f"{package}.heavy")  # already deferred: no second finder
    mod = importlib.import_module(f"{package}.heavy")
    assert sys.gl_heavy_runs == 0  # type: ignore[attr-defined] # imported, not yet run
    assert mod.VALUE == 42  # first use runs it, with its real contents
    assert sys.gl_heavy_runs == 1  # type: ignore[attr-defined]
    assert importlib.import_module(f"{package}.heavy").VALUE == 42
    assert sys.gl_heavy_runs == 1  # type: ignore[attr-defined]
    # one shot: the finder left the import system when it found the module
    assert not any(getattr(f, "name", None) == f"{package}.heavy" for f in sys.meta_path)


def test_a_loaded_module_is_not_deferred(package: str) -> None:
    import importlib

    importlib.import_module(f"{package}.heavy")
    assert sys.gl_heavy_runs == 1  # type: ignore[attr-defined]
    assert not _process.defer(f"{package}.heavy")


def test_defer_dynamo_names_torch_dynamo() -> None:
    assert _process.DEFERRED == "torch._dynamo"
    if _process.DEFERRED in sys.modules:  # a test run imported it already: nothing to do
        assert not _process.defer_dynamo()


def test_freeze_heap_only_while_claimed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_process, "_owner", [])
    monkeypatch.setattr(_process, "_at_exit", [True])  # no exit hook from a test run
    before = gc.get_freeze_count()
    assert _process.freeze_heap() == 0  # a library call in someone else's process: no-op
    assert gc.get_freeze_count() == before
    try:
        with _process.claimed("test"):
            assert _process.freeze_heap() > 0
            assert gc.get_freeze_count() > 0
        assert _process.freeze_heap() == 0  # released with the command
    finally:
        gc.unfreeze()  # the test run's objects go back to the collector


def test_frozen_imports_pause_the_collector_and_freeze_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_process, "_owner", [])
    monkeypatch.setattr(_process, "_at_exit", [True])
    assert gc.isenabled()
    with _process.frozen_imports():  # not claimed: the collector is left alone
        assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    try:
        with _process.claimed("test"):
            with _process.frozen_imports():
                assert not gc.isenabled()
            assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()


def test_huge_pages_are_asked_for_unless_the_environment_decided(monkeypatch) -> None:
    monkeypatch.delenv(_process.HUGE_PAGES, raising=False)
    assert _process.prefer_huge_pages() is True
    assert os.environ[_process.HUGE_PAGES] == "1"
    monkeypatch.setenv(_process.HUGE_PAGES, "0")  # the user's explicit choice is kept
    assert _process.prefer_huge_pages() is False
    assert os.environ[_process.HUGE_PAGES] == "0"


def test_importing_graphleaks_leaves_the_environment_alone() -> None:
    env = {k: v for k, v in os.environ.items() if k != "THP_MEM_ALLOC_ENABLE"}
    out = subprocess.run([sys.executable, "-c", "import os, graphleaks; "
                          "print(os.environ.get('THP_MEM_ALLOC_ENABLE'))"],
                         env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None"
