"""Audit time of a foreign model on Cora against a graphleaks-trained one of the same architecture.

The graphleaks target is a two-layer GCN trained by :func:`graphleaks.audit.train_target`.
Three audits of it run with the same split (members, non-members and the adversary's
auxiliary population, passed as ``population=``), the same served graph, the same attacks,
seed and suite:

* ``graphleaks``: the trained target audited directly (:func:`graphleaks.audit.run_audit`);
* ``wrapped``: graphleaks' own ``GNN`` object through :func:`graphleaks.audit_model` (the
  target-model protocol alone: hooks instead of ``embed()``, the spec rebuilds shadows);
* ``foreign``: a user-written class of the same architecture (two PyG ``GCNConv`` layers, no
  ``embed()``, no graphleaks code) holding the same weights, through ``audit_model`` with a
  ``model_factory`` for its shadow/reference models and its hidden layer named as an
  embedding layer.

Each attack is audited on its own, so every attack gets a CPU time (``time.process_time``)
per audit; ``--repeats`` runs the three audits of an attack back to back that many times and
reports the median. ``wrapped`` vs ``graphleaks`` is graphleaks' protocol overhead;
``foreign`` vs ``wrapped`` is the user's model being slower, which the script measures apart
as plain forward-pass and training-step CPU ratios of the two models in this process, plus,
for LinkTeller, the exact local update that only graphleaks' GCN has: an opaque model answers
each feature query with a float64 forward pass (totals are also given without LinkTeller).

Usage (from the repository root)::

    OMP_NUM_THREADS=1 python bench/bench_any_model.py [--data-root DIR] [--suite standard]
        [--seed 0] [--repeats 3] [--attacks confidence_mia linkteller]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_geometric.nn import GCNConv  # noqa: E402

from graphleaks import audit_model  # noqa: E402
from graphleaks.audit import run_audit, train_target  # noqa: E402
from graphleaks.audit.model_audit import exposure  # noqa: E402
from graphleaks.audit.suite import applicable_attacks  # noqa: E402
from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.models.protocol import ModelInterface  # noqa: E402


class UserGCN(torch.nn.Module):
    """A GCN as a user writes it: PyG layers, its own forward, nothing from graphleaks."""

    def __init__(self, in_dim: int, hidden: int, out_dim: int) -> None:
        super().__init__()
        self.conv1 = GCNConv(in_dim, hidden)
        self.act = torch.nn.ReLU()
        self.conv2 = GCNConv(hidden, out_dim)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        h = F.dropout(self.act(self.conv1(x, edge_index)), p=0.5, training=self.training)
        return self.conv2(h, edge_index)


def _timed(fn):  # noqa: ANN001, ANN202
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def _cpu_per_call(fn, reps: int) -> float:  # noqa: ANN001
    fn()  # warm caches (graphleaks' GCN keeps its normalized adjacency)
    start = time.process_time()
    for _ in range(reps):
        fn()
    return (time.process_time() - start) / reps


def forward_costs(user: torch.nn.Module, gnn: torch.nn.Module, x: torch.Tensor,
                  edges: torch.Tensor, reps: int) -> dict[str, float]:
    """CPU ms per call of each model, and user/graphleaks ratios, for what audits run most:
    an eval forward (float32 queries), a float64 eval forward (LinkTeller's foreign API) and
    a training step (forward + backward, shadow/reference models)."""
    import copy

    out: dict[str, float] = {}

    def step(m: torch.nn.Module) -> None:
        m.train()
        m.zero_grad()
        F.cross_entropy(m(x, edges), torch.zeros(x.shape[0], dtype=torch.long)).backward()

    u64, g64 = copy.deepcopy(user).double().eval(), copy.deepcopy(gnn).double().eval()
    x64 = x.double()
    cases = {
        "forward": (lambda m: lambda: m.eval()(x, edges), user, gnn),
        "forward_float64": (lambda m: lambda: m(x64, edges), u64, g64),
        "train_step": (lambda m: lambda: step(m), copy.deepcopy(user), copy.deepcopy(gnn)),
    }
    for name, (make, u, g) in cases.items():
        with torch.set_grad_enabled(name == "train_step"):
            # interleaved, three rounds, the minimum: the least disturbed by other jobs
            tu = min(_cpu_per_call(make(u), reps) for _ in range(3))
            tg = min(_cpu_per_call(make(g), reps) for _ in range(3))
        out[f"{name}_user_ms"] = round(1000 * tu, 3)
        out[f"{name}_graphleaks_ms"] = round(1000 * tg, 3)
        out[f"{name}_ratio"] = round(tu / tg, 2)
    user.eval()
    gnn.eval()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-root", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--suite", default="standard")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--attacks", nargs="*", default=None)
    args = ap.parse_args()
    graph = load_dataset("cora", data_root=args.data_root)
    target = train_target(graph, arch="gcn", seed=args.seed)
    c = target.num_classes
    hidden = target.spec.hidden[0]
    user = UserGCN(graph.num_features, hidden, c)
    sd = target.model.state_dict()
    user.load_state_dict({
        "conv1.lin.weight": sd["layers.0.lin.weight"], "conv1.bias": sd["layers.0.bias"],
        "conv2.lin.weight": sd["layers.1.lin.weight"], "conv2.bias": sd["layers.1.bias"]})
    user.eval()
    split = target.split
    served = target.edges("target")
    # every attack a foreign model with a named embedding layer allows (a DeepWalk release
    # of the graph, attribute_inference's input, is not the model's output)
    names = args.attacks or applicable_attacks(exposure(ModelInterface(embedding_layers=("act",))))
    common = {"seed": args.seed, "suite": args.suite}
    same = {"served_edge_index": served, "population": split.aux, **common}
    audits = {
        "graphleaks": lambda a: run_audit(target, [a], **common),
        "wrapped": lambda a: audit_model(target.model, graph, split.members, split.nonmembers,
                                         attacks=[a], **same),
        "foreign": lambda a: audit_model(
            user, graph, split.members, split.nonmembers, embedding_layers=["act"],
            model_factory=lambda: UserGCN(graph.num_features, hidden, c), attacks=[a],
            **same),
    }
    cpu: dict[str, dict[str, list[float]]] = {a: {k: [] for k in audits} for a in names}
    auc: dict[str, dict[str, float | None]] = {a: {} for a in names}
    for _ in range(args.repeats):
        for a in names:
            for kind, run in audits.items():
                report, t, _ = _timed(lambda run=run, a=a: run(a))
                cpu[a][kind].append(t)
                res = report.attacks[0]
                auc[a][kind] = (round(res.metrics.binary.auc.value, 6)
                                if res.metrics.binary is not None else None)
    med = {a: {k: statistics.median(v) for k, v in d.items()} for a, d in cpu.items()}
    tot = {k: sum(med[a][k] for a in names) for k in audits}
    # LinkTeller apart: graphleaks' GCN (and the wrapped GNN) answers its queries by an exact
    # local update; an opaque model needs a float64 forward pass per query.
    rest = [a for a in names if a != "linkteller"]
    tot_rest = {k: sum(med[a][k] for a in rest) for k in audits}

    def pct(num: float, den: float) -> float:
        return round(100 * (num / den - 1), 1)

    rows = {a: {**{f"{k}_cpu_s": round(v, 2) for k, v in med[a].items()},
                "foreign_overhead_pct": pct(med[a]["foreign"], med[a]["graphleaks"]),
                "protocol_overhead_pct": pct(med[a]["wrapped"], med[a]["graphleaks"]),
                "user_model_pct": pct(med[a]["foreign"], med[a]["wrapped"]),
                "auc": auc[a]} for a in names}
    print(json.dumps({
        "dataset": "cora", "suite": args.suite, "seed": args.seed, "repeats": args.repeats,
        "threads": torch.get_num_threads(), "attacks": names,
        "population": len(split.aux),
        **{f"{k}_cpu_s": round(v, 1) for k, v in tot.items()},
        "overhead_cpu_pct": pct(tot["foreign"], tot["graphleaks"]),
        "protocol_overhead_cpu_pct": pct(tot["wrapped"], tot["graphleaks"]),
        "user_model_cpu_pct": pct(tot["foreign"], tot["wrapped"]),
        "without_linkteller": {
            **{f"{k}_cpu_s": round(v, 1) for k, v in tot_rest.items()},
            "overhead_cpu_pct": pct(tot_rest["foreign"], tot_rest["graphleaks"]),
            "protocol_overhead_cpu_pct": pct(tot_rest["wrapped"], tot_rest["graphleaks"]),
            "user_model_cpu_pct": pct(tot_rest["foreign"], tot_rest["wrapped"])},
        "forward_cost": forward_costs(user, target.model, graph.x, served, reps=20),
        "per_attack": rows}, indent=1))


if __name__ == "__main__":
    main()
