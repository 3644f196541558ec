"""Audit time of a foreign model on Cora against a graphleaks-trained one of the same architecture.

The graphleaks target is a two-layer GCN trained by :func:`graphleaks.audit.train_target`.
The foreign model is a user-written class of the same architecture (two PyG ``GCNConv``
layers, no ``embed()``, no graphleaks code) holding the same weights, audited through
:func:`graphleaks.audit_model` with the same members, non-members and served graph, a
``model_factory`` for its shadow/reference models, and its hidden layer named as an
embedding layer. Both audits run the same attacks with the same seed and suite; the script
prints CPU and wall time of each, the overhead in %, and per-attack runtimes. A third run
audits graphleaks' own GNN object through ``audit_model`` (the protocol path alone: same
model, hooks instead of ``embed()``, a reset deep copy for shadow models).

Usage (from the repository root)::

    python bench/bench_any_model.py [--data-root DIR] [--suite standard] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-root", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--suite", default="standard")
    ap.add_argument("--seed", type=int, default=0)
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
    # every attack a foreign model with a named embedding layer allows (a DeepWalk release
    # of the graph, attribute_inference's input, is not the model's output)
    names = applicable_attacks(exposure(ModelInterface(embedding_layers=("act",))))
    native, native_cpu, native_wall = _timed(
        lambda: run_audit(target, names, seed=args.seed, suite=args.suite))
    foreign, foreign_cpu, foreign_wall = _timed(lambda: audit_model(
        user, graph, target.split.members, target.split.nonmembers,
        served_edge_index=target.edges("target"), embedding_layers=["act"],
        model_factory=lambda: UserGCN(graph.num_features, hidden, c), attacks=names,
        seed=args.seed, suite=args.suite))
    # the protocol path alone: graphleaks' own GNN object through audit_model
    _, wrapped_cpu, wrapped_wall = _timed(lambda: audit_model(
        target.model, graph, target.split.members, target.split.nonmembers,
        served_edge_index=target.edges("target"), attacks=names, seed=args.seed,
        suite=args.suite))
    rows = {a.attack: {"graphleaks_s": round(a.runtime_s, 2)} for a in native.attacks}
    for a in foreign.attacks:
        rows.setdefault(a.attack, {})["foreign_s"] = round(a.runtime_s, 2)
        rows[a.attack]["auc_graphleaks"] = next(
            (round(b.metrics.binary.auc.value, 3) for b in native.attacks
             if b.attack == a.attack and b.metrics.binary is not None), None)
        if a.metrics.binary is not None:
            rows[a.attack]["auc_foreign"] = round(a.metrics.binary.auc.value, 3)
    print(json.dumps({
        "dataset": "cora", "suite": args.suite, "attacks": names,
        "threads": torch.get_num_threads(),
        "graphleaks_cpu_s": round(native_cpu, 1), "graphleaks_wall_s": round(native_wall, 1),
        "foreign_cpu_s": round(foreign_cpu, 1), "foreign_wall_s": round(foreign_wall, 1),
        "overhead_cpu_pct": round(100 * (foreign_cpu / native_cpu - 1), 1),
        "overhead_wall_pct": round(100 * (foreign_wall / native_wall - 1), 1),
        "graphleaks_gnn_via_audit_model_cpu_s": round(wrapped_cpu, 1),
        "graphleaks_gnn_via_audit_model_wall_s": round(wrapped_wall, 1),
        "protocol_overhead_cpu_pct": round(100 * (wrapped_cpu / native_cpu - 1), 1),
        "per_attack": rows}, indent=1))


if __name__ == "__main__":
    main()
