"""Concurrent loads of one dataset into one shared cache never read a half-written file."""

from __future__ import annotations

import multiprocessing as mp
import shutil
from pathlib import Path

import pytest

N_PROCS = 3


def _load(data_root: str, cache: str, barrier, queue) -> None:  # noqa: ANN001
    """Child process: wait for the others, then load Cora through the shared cache."""
    import torch

    torch.set_num_threads(1)
    try:
        from graphleaks.data import fingerprint, load_dataset

        barrier.wait(timeout=120)
        queue.put(("ok", fingerprint(load_dataset("cora", data_root=data_root,
                                                  cache_dir=cache))))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


@pytest.fixture
def cora_root(data_root: Path, tmp_path: Path) -> Path:
    src = data_root / "Planetoid" / "Cora"
    if not (src / "raw").is_dir():
        pytest.skip("no Planetoid/Cora in the data root")
    root = tmp_path / "data"
    shutil.copytree(src, root / "Planetoid" / "Cora", ignore=shutil.ignore_patterns("processed"))
    return root


def test_concurrent_loads_share_one_cache(cora_root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "datasets" / "Planetoid").mkdir(parents=True)
    # a temporary folder left by a process killed mid-copy must not confuse anyone
    (cache / "datasets" / "Planetoid" / ".tmp-killed").mkdir()
    ctx = mp.get_context("fork")  # the children reuse this process's imports
    barrier, queue = ctx.Barrier(N_PROCS), ctx.Queue()
    procs = [ctx.Process(target=_load, args=(str(cora_root), str(cache), barrier, queue))
             for _ in range(N_PROCS)]
    for p in procs:
        p.start()
    outcomes = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert all(kind == "ok" for kind, _ in outcomes), outcomes
    from graphleaks.data import fingerprint, load_dataset

    expected = fingerprint(load_dataset("cora", data_root=cora_root, cache_dir=cache))
    assert {fp for _, fp in outcomes} == {expected}
    entry = cache / "datasets" / "Planetoid" / "Cora"
    assert (entry / "processed").is_dir() and (entry / "raw").is_dir()
    leftovers = [p.name for p in entry.parent.iterdir() if p.name.startswith(".tmp-")]
    assert leftovers == [".tmp-killed"]  # every loader removed its own temporary copy
