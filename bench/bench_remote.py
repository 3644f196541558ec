"""Remote vs in-process audit of the bundled Cora GCN, at the same queries; LinkTeller's budget.

The target is a two-layer GCN on Cora trained by :func:`graphleaks.audit.train_target`. It is
served by the reference server (:class:`graphleaks.models.remote_server.EndpointServer`, the
``graphleaks serve`` code) on a loopback port in a thread of this process, and audited:

* ``in-process``: :func:`graphleaks.audit.runner.audit_with_scores` on the target itself;
* ``remote``: :func:`graphleaks.audit.endpoint_audit.audit_endpoint` through HTTP, with the
  same attacks, seed and suite (``--recheck 0``, so both make the same queries).

It prints wall and process CPU seconds of both (the remote CPU includes the server thread's,
which runs in this process), the ratio, the queries made and the requests per second, and
checks that both audits give the same AUCs.

``--linkteller-grid`` then runs LinkTeller alone against the server at growing node samples
(``n_nodes`` k costs k + 1 queries) and prints the AUC at each budget and the smallest that
reaches ``--target-auc``.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 python bench/bench_remote.py [--suite standard] [--seed 0]
        [--attacks confidence_mia linkteller] [--linkteller-grid 10 20 50 100 200]
"""

from __future__ import annotations

import argparse
import time

from graphleaks.audit.endpoint_audit import audit_endpoint
from graphleaks.audit.runner import audit_with_scores, train_target
from graphleaks.data import load_dataset
from graphleaks.models.remote import EndpointClient, EndpointDescription, remote_target
from graphleaks.models.remote_server import EndpointModel, EndpointServer


def timed(fn):  # type: ignore[no-untyped-def]
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def remote_audit(target, server, budget, **kw):  # type: ignore[no-untyped-def]
    d = EndpointDescription(url=server.url, outputs=("labels", "posteriors", "logits"),
                            requests=("nodes", "features"))
    client = EndpointClient(d, budget)
    try:
        return audit_endpoint(remote_target(client, target, client.info()), recheck=0, **kw)
    finally:
        client.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="standard")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--attacks", nargs="+", default=["confidence_mia", "linkteller"])
    ap.add_argument("--budget", type=int, default=100_000)
    ap.add_argument("--linkteller-grid", nargs="*", type=int, default=[10, 20, 30, 50, 100])
    ap.add_argument("--target-auc", type=float, default=0.99)
    args = ap.parse_args()

    target, wall, cpu = timed(lambda: train_target(load_dataset("cora"), seed=args.seed))
    print(f"train Cora GCN: wall {wall:.1f} s, CPU {cpu:.1f} s")
    kw = dict(attacks=args.attacks, seed=args.seed, suite=args.suite)
    direct, dw, dc = timed(lambda: audit_with_scores(target, **kw))
    with EndpointServer(EndpointModel(target)) as server:
        remote, rw, rc = timed(lambda: remote_audit(target, server, args.budget, **kw))
        counts = dict(server.counts)
        q = remote.report.config["queries"]
        print(f"{'audit':<11} {'wall s':>8} {'CPU s':>8}  AUCs")
        for name, rep, w, c in (("in-process", direct.report, dw, dc),
                                ("remote", remote.report, rw, rc)):
            aucs = ", ".join(f"{a.attack} {a.metrics.binary.auc.value:.4f}" for a in rep.attacks)
            print(f"{name:<11} {w:8.2f} {c:8.2f}  {aucs}")
        same = all(a.metrics.binary.auc.value == b.metrics.binary.auc.value
                   for a, b in zip(direct.report.attacks, remote.report.attacks, strict=True))
        print(f"ratio remote/in-process: wall {rw / dw:.2f}x, CPU {rc / dc:.2f}x; same AUCs: "
              f"{same}")
        print(f"queries made {q['made']} (server answered {counts['answered']}), per attack "
              f"{q['per_attack']}; {q['made'] / rw:.1f} requests/s over the remote audit's "
              f"wall time; overhead {(rw - dw) / max(q['made'], 1) * 1e3:.1f} ms per query")

        if args.linkteller_grid:
            print(f"LinkTeller on Cora through the endpoint (target AUC >= {args.target_auc})")
            print(f"{'n_nodes':>8} {'budget':>7} {'AUC':>8} {'pairs':>7} {'edges':>6} "
                  f"{'wall s':>7}")
            smallest = None
            for k in args.linkteller_grid:
                budget = k + 1
                run, w, _ = timed(lambda k=k, budget=budget: remote_audit(
                    target, server, budget, attacks=["linkteller"], seed=args.seed,
                    suite=args.suite, params={"linkteller": {"n_nodes": k}}))
                if not run.report.attacks:
                    print(f"{k:>8} {budget:>7}  skipped: "
                          f"{run.report.config.get('skipped_attacks')}")
                    continue
                a = run.report.attacks[0]
                auc = a.metrics.binary.auc.value
                n_pos = int(run.tables[0].labels.sum()) if run.tables else -1
                n = len(run.tables[0].labels) if run.tables else -1
                print(f"{k:>8} {budget:>7} {auc:8.4f} {n:>7} {n_pos:>6} {w:7.2f}")
                if smallest is None and auc >= args.target_auc:
                    smallest = budget
            print(f"smallest budget reaching AUC >= {args.target_auc}: {smallest} queries "
                  "(grid above; n_nodes + 1 queries each)")


if __name__ == "__main__":
    main()
