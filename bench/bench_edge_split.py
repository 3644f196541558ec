"""Time and memory of drawing an edge-membership split on a large CSBM (O(E), never N×N).

Prints the graph size, wall and process CPU seconds of :meth:`EdgeMembershipSplit.draw`, and
the process's peak resident memory (``ru_maxrss``) after graph generation and after the
split.

Usage (from the repository root)::

    python bench/bench_edge_split.py [--nodes 1000000] [--avg-degree 20] [--sampling uniform]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphleaks.data.edge_splits import EdgeMembershipSplit, EdgeSplitConfig  # noqa: E402
from graphleaks.data.synthetic import csbm  # noqa: E402


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    """Generate the graph, draw one split per kind, print one JSON line each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--avg-degree", type=float, default=20.0)
    ap.add_argument("--sampling", default="uniform")
    args = ap.parse_args()
    g = csbm(args.nodes, avg_degree=args.avg_degree, seed=0)
    print(json.dumps({"nodes": args.nodes, "directed_edges": int(g.edge_index.shape[1]),
                      "peak_rss_mib_after_graph": round(_peak_mib())}), flush=True)
    for kind in ("transductive", "inductive"):
        w0, c0 = time.perf_counter(), time.process_time()
        s = EdgeMembershipSplit.draw(
            g.edge_index, g.num_nodes,
            EdgeSplitConfig(kind=kind, non_member_sampling=args.sampling), seed=0)
        print(json.dumps({"kind": kind, "wall_s": round(time.perf_counter() - w0, 2),
                          "cpu_s": round(time.process_time() - c0, 2),
                          "peak_rss_mib": round(_peak_mib()),
                          "counts": s.record()["counts"]}), flush=True)


if __name__ == "__main__":
    main()
