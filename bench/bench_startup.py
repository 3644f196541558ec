"""CPU time of short ``graphleaks`` commands, each in a fresh interpreter (start-up included).

CI privacy gates run ``graphleaks check`` after every build, so its start-up is the cost that
matters: reading a report must not import torch. Each command runs ``--repeats`` times as
``python -m graphleaks ...`` in the current directory (so it measures the graphleaks found
there); the figure is the child's user + system CPU time (median, and min), from
``resource.getrusage(RUSAGE_CHILDREN)``, which other jobs sharing the machine do not inflate
the way they inflate wall time.

Usage: OMP_NUM_THREADS=1 python bench/bench_startup.py [--report ci/privacy-baseline.json]
       [--repeats 5]
Run from the checkout to measure (``python -m`` imports the package of the working
directory first). Prints figures only.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_seconds(args: list[str], repeats: int) -> list[float]:
    """CPU seconds of ``python -m graphleaks ARGS``, once per repeat (exit 0 or 3 accepted)."""
    times = []
    for _ in range(repeats):
        before = _cpu_children()
        proc = subprocess.run([sys.executable, "-m", "graphleaks", *args],
                              capture_output=True, text=True)
        times.append(_cpu_children() - before)
        if proc.returncode not in (0, 3):  # 3: a threshold crossed, still a full gate run
            raise SystemExit(f"graphleaks {' '.join(args)} failed ({proc.returncode}): "
                             f"{proc.stderr.strip()[-300:]}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--report", default="ci/privacy-baseline.json")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    where = subprocess.run([sys.executable, "-c", "import graphleaks; print(graphleaks.__file__)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    print(f"graphleaks from {where}; {args.repeats} runs each; CPU s = user + system")
    commands = {
        "--help": ["--help"],
        "check --max auc=0.9": ["check", args.report, "--max", "auc=0.9"],
        "check --max ATTACK.auc=0.9": ["check", args.report, "--max",
                                       "confidence_mia.auc=0.9"],
        "check --baseline": ["check", args.report, "--baseline", args.report],
    }
    for label, cmd in commands.items():
        t = cpu_seconds(cmd, args.repeats)
        print(f"{label:28s} CPU median {statistics.median(t):.2f} s  min {min(t):.2f} s")


if __name__ == "__main__":
    main()
