"""Figures that travel: a fixed reference workload and the provenance of every bench line.

A CPU second on one machine is not a CPU second on another (or on the same machine under
load), so a bench also measures, in the same process, a fixed reference workload: 100
full-batch epochs of a seeded 2-layer GCN (64 hidden units) on the bundled Cora, written
here with plain torch and PyG so it does not change when graphleaks changes. A step's CPU
divided by the reference's CPU is its cost in *reference units*, a figure that compares
across machines and loads far better than seconds.

Every bench line also records where it came from: the commit (``git rev-parse --short
HEAD`` of the graphleaks that was imported, with a dirty flag, read when this module is
first imported so that a commit made while a long run goes on does not relabel it), the
command line and the settings that shape the figures (threads, versions).
"""

from __future__ import annotations

import importlib.util
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REFERENCE_EPOCHS = 100
REFERENCE_NAME = "cora-gcn-100ep"


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def _checkout_at_start() -> tuple[str, bool | None, str]:
    """Commit, dirty flag and folder of the checkout holding the graphleaks to be imported.

    Found without importing graphleaks (``PYTHONPATH`` may point elsewhere than the bench's
    own folder); ``"unknown"`` outside a git checkout.
    """
    spec = importlib.util.find_spec("graphleaks")
    if spec is None or spec.origin is None:
        return "unknown", None, "unknown"
    root = Path(spec.origin).resolve().parent.parent
    commit = _git(["rev-parse", "--short", "HEAD"], root) or "unknown"
    status = _git(["status", "--porcelain", "--untracked-files=no"], root)
    return commit, None if status is None else bool(status), str(root)


# Read once, when the bench starts: HEAD read at the end of a run of an hour would name a
# commit made while it ran.
_COMMIT, _DIRTY, _ROOT = _checkout_at_start()


def provenance(settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Commit, dirty flag, command and settings of this bench run.

    The commit and dirty flag are those of the checkout holding the graphleaks imported,
    as they were when this module was first imported (the start of the bench).
    """
    import torch

    return {
        "commit": _COMMIT,
        "dirty": _DIRTY,
        "graphleaks": _ROOT,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "settings": {
            "torch_threads": torch.get_num_threads(),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "cpus": os.cpu_count(),
            **(settings or {}),
        },
    }


def reference_cpu(seed: int = 0) -> dict[str, float]:
    """CPU and wall seconds of the reference workload, run in this process.

    Loading Cora is outside the timed part; only the training epochs are timed.
    """
    import torch
    from torch_geometric.nn import GCNConv

    from graphleaks.data import load_dataset

    g = load_dataset("cora")
    x, ei, y = g.x, g.edge_index, g.y
    n_classes = int(y.max()) + 1
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        conv1 = GCNConv(x.size(1), 64)
        conv2 = GCNConv(64, n_classes)
        params = list(conv1.parameters()) + list(conv2.parameters())
        opt = torch.optim.Adam(params, lr=0.01, weight_decay=5e-4)
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(REFERENCE_EPOCHS):
            opt.zero_grad()
            h = torch.relu(conv1(x, ei))
            h = torch.nn.functional.dropout(h, p=0.5, training=True)
            loss = torch.nn.functional.cross_entropy(conv2(h, ei), y)
            loss.backward()
            opt.step()
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return {"reference": REFERENCE_NAME, "reference_cpu_s": round(cpu, 3),
            "reference_wall_s": round(wall, 3)}


def in_units(cpu_s: float, ref: dict[str, float]) -> float | None:
    """``cpu_s`` in reference units (None when the reference took no measurable time)."""
    r = float(ref.get("reference_cpu_s") or 0.0)
    return round(cpu_s / r, 2) if r > 0 else None
