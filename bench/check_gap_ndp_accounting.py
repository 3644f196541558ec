"""GAP-NDP: the ledger's ε against an independent recomputation of the executed plan (issue 15).

For each dataset (default inductive split, seed 0) and ε ∈ {1, 8}, calibrates GAP-NDP with its
defaults (B = 256, 10 + 10 epochs, K = 2) and prints the ledger's ε, Opacus' RDP accountant
applied to the executed plan (Poisson rate q = B/N, ⌈N/B⌉ steps per epoch, K full-batch
Gaussian hops), and what the former code's noise multiplier gave under the mechanism it
actually ran (Opacus' DataLoader: q = 1/⌈N/B⌉ for ⌈N/B⌉ steps, while it accounted B/N and
⌊N/B⌋). Calibration only, no training (the executed plan equals the accounted one by
construction; ``tests/defenses/test_executed_mechanism.py`` checks it step for step).

Usage: ``python bench/check_gap_ndp_accounting.py [--datasets cora,citeseer]``; needs
``GRAPHLEAKS_DATA`` for every dataset but Cora.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphleaks.data import load_dataset  # noqa: E402
from graphleaks.data.splits import MembershipSplit  # noqa: E402
from graphleaks.defenses.gap import GAPNDP, ndp_event  # noqa: E402
from graphleaks.privacy.calibration import calibrate_noise_multiplier  # noqa: E402
from graphleaks.seeding import derive_seed  # noqa: E402


def opacus_epsilon(mult: float, q: float, t_enc: int, hops: int, t_cls: int,
                   delta: float) -> float:
    """Opacus' RDP accountant on the composition ``SGM^T_enc ∘ Gaussian^K ∘ SGM^T_cls``."""
    from opacus.accountants import RDPAccountant

    acc = RDPAccountant()
    acc.history = [(mult, q, t_enc), (mult, 1.0, hops), (mult, q, t_cls)]
    return float(acc.get_epsilon(delta))


def main() -> None:
    """Print one row per (dataset, ε)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="cora,citeseer,amazon-photo,facebook-pagepage")
    args = ap.parse_args()
    logging.getLogger("absl").setLevel(logging.ERROR)
    print("| graph | N_train | q | steps/epoch | ε | ledger ε | Opacus RDP (rel. diff.) | "
          "former code, ran |")
    print("|---|---|---|---|---|---|---|---|")
    for ds in args.datasets.split(","):
        g = load_dataset(ds)
        split = MembershipSplit.draw(g.num_nodes, seed=derive_seed(0, "split"))
        n = len(split.train)
        for eps in (1.0, 8.0):
            defense = GAPNDP(epsilon=eps)
            cfg = defense.config
            _, led, _ = defense._calibrate(g, split, split.training_edges(g.edge_index))
            c = led.components
            ours = opacus_epsilon(c["noise_multiplier"], c["sample_rate"],
                                  int(c["encoder_steps"]), cfg.hops,
                                  int(c["classifier_steps"]), led.delta)
            q_old, st_old = cfg.batch_size / n, max(1, int(n / cfg.batch_size))
            q_ran, st_ran = 1 / math.ceil(n / cfg.batch_size), math.ceil(n / cfg.batch_size)
            m_old = calibrate_noise_multiplier(
                lambda m, q=q_old, t=st_old, cfg=cfg: ndp_event(
                    m, rate=q, encoder_steps=cfg.encoder_epochs * t, hops=cfg.hops,
                    classifier_steps=cfg.epochs * t), eps, led.delta, accountant="rdp")
            ran = opacus_epsilon(m_old, q_ran, cfg.encoder_epochs * st_ran, cfg.hops,
                                 cfg.epochs * st_ran, led.delta)
            print(f"| {ds} | {n} | {c['sample_rate']:.6f} | {int(c['steps_per_epoch'])} | "
                  f"{eps:g} | {led.epsilon:.6f} | {ours:.6f} "
                  f"({abs(ours - led.epsilon) / led.epsilon:.1e}) | {ran:.4f} |", flush=True)


if __name__ == "__main__":
    main()
