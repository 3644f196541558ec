"""Peak memory of the CLI fed hostile inputs (issue 23): no file under 1 MB may grow the
process past 1 GB.

For each hostile family, builds the file in a temporary folder, runs a fresh
``python -m graphleaks ...`` subprocess on it, and prints the file size, the child's exit
code, its peak RSS (``getrusage(RUSAGE_CHILDREN).ru_maxrss`` read around each child), its
CPU time (user + system) and its wall time, beside a baseline child that only imports
graphleaks. A family that is not yet fixed still prints its figures (no exception).

Families: a ~1 MB ``.pt2`` whose weight record deflates 1 GiB of zeros; a ~50 kB ``.pt2``
(a real export) declaring a 1 GiB weight over an empty record; a 0.5 MB ``.npz`` scores bomb for
``audit scores``; a ``.npy`` whose header declares a huge shape; ``embed --edges`` with an
edge to node 10^15; a deeply nested ``--model-kwargs``.

Usage (from the repository root)::

    python bench/bench_hostile_inputs.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GiB = 1024**3
TARGET_RSS = 1000 * 1024**2  # "no file under 1 MB grows the process past 1 GB"


def _graph(folder: Path) -> list[str]:
    import numpy as np

    rng = np.random.default_rng(0)
    n = 60
    edges = rng.integers(0, n, size=(200, 2))
    (folder / "edges.csv").write_text("\n".join(f"{a},{b}" for a, b in edges) + "\n")
    np.save(folder / "x.npy", rng.standard_normal((n, 8)).astype("float32"))
    (folder / "y.csv").write_text("\n".join(str(i % 3) for i in range(n)) + "\n")
    (folder / "m.txt").write_text("\n".join(map(str, range(20))))
    (folder / "n.txt").write_text("\n".join(map(str, range(20, 40))))
    return ["--edges", str(folder / "edges.csv"), "--features", str(folder / "x.npy"),
            "--labels", str(folder / "y.csv"), "--members", str(folder / "m.txt"),
            "--non-members", str(folder / "n.txt")]


def _clean_pt2(folder: Path) -> Path:
    import torch
    from torch_geometric.nn import GCNConv

    from graphleaks.models.foreign import export_pt2

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = GCNConv(8, 3)

        def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
            return self.c1(x, edge_index)

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    return export_pt2(Net().eval(), torch.randn(40, 8, generator=g),
                      torch.randint(0, 40, (2, 120), generator=g), folder / "clean.pt2")


def _pt2_with_weight(clean: Path, dst: Path, sizes: list[int], record: bytes | None,
                     *, deflated_zeros: int = 0) -> Path:
    """``clean`` with its first weight re-declared as ``sizes`` (float32) over ``record``;
    with ``deflated_zeros``, the record is that many zeros stored deflated."""
    with zipfile.ZipFile(clean) as zin:
        names = zin.namelist()
        cfg_name = next(n for n in names if n.endswith("model_weights_config.json"))
        cfg = json.loads(zin.read(cfg_name))
        fqn, meta = next(iter(cfg["config"].items()))
        meta["tensor_meta"]["sizes"] = [{"as_int": s} for s in sizes]
        strides, acc = [], 1
        for s in reversed(sizes):
            strides.append({"as_int": acc})
            acc *= s
        meta["tensor_meta"]["strides"] = strides[::-1]
        folder = cfg_name.rsplit("/", 1)[0] + "/"
        target = folder + meta["path_name"]
        with zipfile.ZipFile(dst, "w") as zout:
            for name in names:
                if name == cfg_name:
                    zout.writestr(name, json.dumps(cfg))
                elif name == target and deflated_zeros:
                    zout.compression = zipfile.ZIP_DEFLATED
                    zout.compresslevel = 9
                    _write_zeros(zout, name, deflated_zeros)
                    zout.compression = zipfile.ZIP_STORED
                elif name == target:
                    zout.writestr(name, record or b"")
                else:
                    zout.writestr(name, zin.read(name))
    return dst


def _write_zeros(z: zipfile.ZipFile, name: str, n: int) -> None:
    """Stream ``n`` zero bytes into entry ``name`` (deflated by ``z``), 16 MiB at a time."""
    chunk = b"\0" * (16 * 1024**2)
    with z.open(name, "w", force_zip64=True) as f:
        for _ in range(n // len(chunk)):
            f.write(chunk)


def fam_pt2_deflated(d: Path, opts: list[str]) -> list[str]:
    evil = _pt2_with_weight(_clean_pt2(d), d / "deflated.pt2", [GiB // 4], None,
                            deflated_zeros=GiB)
    return ["audit", "model", str(evil), *opts, "--out", str(d / "out")]


def fam_pt2_declared(d: Path, opts: list[str]) -> list[str]:
    evil = _pt2_with_weight(_clean_pt2(d), d / "declared.pt2", [GiB // 4], b"")
    return ["audit", "model", str(evil), *opts, "--out", str(d / "out")]


def fam_npz_bomb(d: Path, opts: list[str]) -> list[str]:
    # ~0.5 MB of deflate holding a .npy that declares and holds 512 MiB of float32 scores
    import io

    import numpy as np

    n = GiB // 2
    bio = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        bio, {"descr": "<f4", "fortran_order": False, "shape": (n // 4,)})
    path = d / "bomb.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("scores.npy", "w", force_zip64=True) as f:
            f.write(bio.getvalue())
            chunk = b"\0" * (16 * 1024**2)
            for _ in range(n // len(chunk)):
                f.write(chunk)
        z.writestr("labels.npy", _npy_bytes(np.zeros(4, dtype="int64")))
    return ["audit", "scores", str(path), *opts[-4:], "--out", str(d / "out")]


def _npy_bytes(a: object) -> bytes:
    import io

    import numpy as np

    bio = io.BytesIO()
    np.save(bio, a)
    return bio.getvalue()


def fam_npy_header(d: Path, opts: list[str]) -> list[str]:
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3000000000, 8), }"
    header += " " * (118 - len(header)) + "\n"
    path = d / "huge.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little")
                     + header.encode() + b"\0" * 64)
    return ["train", "--edges", opts[1], "--features", str(path), "--labels", opts[5],
            "--out", str(d / "out"), "--epochs", "1"]


def fam_embed_far_node(d: Path, opts: list[str]) -> list[str]:
    path = d / "far.csv"
    path.write_text("0,1\n1,2\n2,1000000000000000\n")
    return ["embed", "--edges", str(path), "--out", str(d / "out")]


def fam_nested_kwargs(d: Path, opts: list[str]) -> list[str]:
    import torch

    torch.save(torch.nn.Linear(8, 3).state_dict(), d / "w.pt")
    kwargs = '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}"
    return ["audit", "model", str(d / "w.pt"), "--model-class", "torch.nn:Linear",
            "--model-kwargs", kwargs, *opts, "--out", str(d / "out")]


FAMILIES: dict[str, tuple[Callable[[Path, list[str]], list[str]], str]] = {
    "pt2 ~1 MB, deflated 1 GiB weight": (fam_pt2_deflated, "deflated.pt2"),
    "pt2 declaring 1 GiB, empty record": (fam_pt2_declared, "declared.pt2"),
    "npz scores bomb (0.5 MB)": (fam_npz_bomb, "bomb.npz"),
    "npy header shape 3e9 x 8": (fam_npy_header, "huge.npy"),
    "embed edge to node 1e15": (fam_embed_far_node, "far.csv"),
    "--model-kwargs nested 5e4": (fam_nested_kwargs, ""),
}


def measure(argv: list[str], cwd: Path) -> tuple[int, int, float, float, str]:
    """Exit code, peak RSS (bytes), CPU s and wall s of one fresh child; its last stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(cwd),
           "GRAPHLEAKS_CACHE": str(cwd / "cache")}
    r = subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True,
                       text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # ru_maxrss of children is the largest child so far: run the biggest last or read
    # it per child in a fresh process (below, each measurement runs in its own runner)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = (r.stderr.strip().splitlines() or [""])[-1][:110]
    return r.returncode, after.ru_maxrss * 1024, cpu, wall, last


def _runner(argv: list[str], cwd: Path) -> tuple[int, int, float, float, str]:
    """Measure in a fresh runner process, so RUSAGE_CHILDREN's max is this child's alone."""
    spec = cwd / "argv.json"
    spec.write_text(json.dumps(argv))
    code = (f"import json,sys;sys.path.insert(0,{str(ROOT)!r});"
            "from bench.bench_hostile_inputs import measure;from pathlib import Path;"
            f"p=Path({str(spec)!r});"
            "print(json.dumps(measure(json.loads(p.read_text()), p.parent)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True, cwd=ROOT)
    rc, rss, cpu, wall, last = json.loads(r.stdout.strip().splitlines()[-1])
    return int(rc), int(rss), float(cpu), float(wall), str(last)


def main() -> None:
    """Build each family, measure it, print one table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, default=None, help="Keep the files in this folder.")
    args = ap.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="graphleaks-hostile-"))
    base.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, target: files under 1 MB stay under "
          f"{TARGET_RSS / 1024**2:.0f} MiB peak RSS")
    print(f"{'family':36} {'file':>10} {'exit':>4} {'peak RSS':>10} {'CPU s':>6} "
          f"{'wall s':>6}  last stderr line")
    for label, code in (("baseline: import graphleaks.cli", "import graphleaks.cli"),
                        ("baseline: + torch, torch_geometric",
                         "import graphleaks.cli, torch, torch_geometric")):
        rc, rss, cpu, wall, _ = _runner(["-c", code], base)
        print(f"{label:36} {'-':>10} {rc:>4} {rss / 1024**2:>7.0f} MiB {cpu:>6.2f} "
              f"{wall:>6.2f}")
    worst = 0
    for name, (build, fname) in FAMILIES.items():
        d = base / name.split()[0].replace("-", "") / str(abs(hash(name)) % 10_000)
        d.mkdir(parents=True, exist_ok=True)
        opts = _graph(d)
        try:
            argv = ["-m", "graphleaks", *build(d, opts)]
        except Exception as exc:  # a family that cannot be built is reported, not fatal
            print(f"{name:36} could not be built ({type(exc).__name__}: {exc})")
            continue
        size = (d / fname).stat().st_size if fname else len(argv[-1 - len(opts) - 2])
        rc, rss, cpu, wall, last = _runner(argv, d)
        if size < 1024**2:
            worst = max(worst, rss)
        flag = "" if rss <= TARGET_RSS else "  <-- past 1 GB"
        print(f"{name:36} {size / 1024:>7.0f} kB {rc:>4} {rss / 1024**2:>7.0f} MiB "
              f"{cpu:>6.2f} {wall:>6.2f}  {last}{flag}")
    print(f"largest peak RSS for a file under 1 MB: {worst / 1024**2:.0f} MiB "
          f"({'within' if worst <= TARGET_RSS else 'PAST'} the 1 GB target)")


if __name__ == "__main__":
    main()
