"""``graphleaks train --task graph``: train a graph classifier (optionally DP-SGD), save it.

Kept apart from :mod:`graphleaks.cli.train` so the node command stays as it was: that command
hands over here when ``--task graph`` (or a graph-only option) is given. Every option and the
graph set are checked before any training, and the bundle is written only at the end.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from graphleaks.errors import InvalidConfigError

#: Node-only options of ``graphleaks train`` and their defaults (refused with --task graph).
_NODE_ONLY = ("edges", "features", "labels", "protocol", "device")


def _given(ctx: typer.Context, name: str) -> bool:
    return getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"


def train_graph(ctx: typer.Context, *, task: str, out: Path, dataset: str | None,
                data_root: Path | None, graphs: Path | None, on_invalid: str | None,
                arch: str, defense: str, train_frac: float, epochs: int,
                epsilon: float | None, delta: float | None, overwrite: bool, seed: int,
                verbose: bool, param: list[str] | None = None) -> None:
    """Train a graph-classification target and save it as a bundle (task ``graph``).

    Raises:
        InvalidConfigError: For a node-only option, an unknown defense or a bad value.
        DataError: For a graph set that cannot be read (missing extra, bad file).
    """
    from graphleaks._outputs import BUNDLE, check_output_dir
    from graphleaks.cli._common import setup_logging
    from graphleaks.errors import BundleError

    if task != "graph":
        what = "--graphs" if graphs is not None else "--on-invalid"
        raise InvalidConfigError(f"{what} is for graph classification; use --task graph"
                                 if task in ("node", "link") else
                                 f"--task must be node, link or graph, got {task[:20]!r}")
    for name in _NODE_ONLY:
        if _given(ctx, name):
            raise InvalidConfigError(f"--{name} is a node-classification option; --task graph "
                                     "reads --dataset or --graphs")
    if graphs is not None and dataset is not None:
        raise InvalidConfigError("give either --dataset or --graphs, not both")
    if on_invalid is not None and graphs is None:
        raise InvalidConfigError("--on-invalid applies to a molecule file; give --graphs")
    if on_invalid not in (None, "refuse", "skip"):
        raise InvalidConfigError(f"--on-invalid must be refuse or skip, got {on_invalid[:20]!r}")
    setup_logging(verbose)
    if out.exists() and not overwrite:
        raise BundleError(f"{out} already exists; choose another path or pass --overwrite")
    check_output_dir(out, BUNDLE, overwrite=overwrite)  # before any training

    from graphleaks.audit.task_spec import graph_cli_params, graph_spec
    from graphleaks.bundles import save_bundle
    from graphleaks.data.graphsets.named import named_graph_set
    from graphleaks.data.graphsets.ref import GraphSetRef
    from graphleaks.defenses.graph_base import graph_registry, train_graph_target
    from graphleaks.models.graph_classifier import GRAPH_ARCHITECTURES
    from graphleaks.models.trained_graph_target import GraphSplit

    d_cls = graph_registry.get(defense)
    arch = arch if _given(ctx, "arch") else "gin"
    if arch not in GRAPH_ARCHITECTURES:
        raise InvalidConfigError(f"--arch for --task graph must be one of "
                                 f"{', '.join(GRAPH_ARCHITECTURES)}, got {arch[:20]!r}")
    # --param dp_sgd.FIELD=... and gin.FIELD=...: typed and checked in one place
    dparams, over = graph_cli_params(list(param or []), defense=d_cls.name, arch=arch)
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if value is not None:
            if d_cls.name == "none":
                raise InvalidConfigError(f"defense 'none' takes no --{name}; use --defense "
                                         "dp_sgd for a private graph classifier")
            if name in dparams and dparams[name] != value:
                raise InvalidConfigError(f"--{name} and --param {d_cls.name}.{name} disagree; "
                                         "give one of them")
            dparams[name] = value
    d = d_cls(**dparams)
    d.validate()
    # defaults of the node command do not fit: fewer epochs, and half the graphs members
    if _given(ctx, "epochs"):
        if "epochs" in over:
            raise InvalidConfigError(f"--epochs and --param {arch}.epochs both set the epochs; "
                                     "give one of them")
        over["epochs"] = epochs
    frac = train_frac if _given(ctx, "train_frac") else 0.5
    spec = graph_spec(d.name, arch, over, where="--param")
    if graphs is not None:
        ref = GraphSetRef.file(graphs, on_invalid=on_invalid or "refuse")
    else:
        ref = named_graph_set(dataset or "solubility", seed=seed)
    gs = ref.load(data_root=data_root)
    split = GraphSplit.draw(len(gs), train_frac=frac, val_frac=0.1 if d.name == "none" else 0.0,
                            seed=seed)
    target = train_graph_target(gs, defense=d, spec=spec, split=split, dataset=ref, seed=seed)
    save_bundle(target, out, overwrite=overwrite)
    typer.echo(json.dumps({"bundle": str(out), "task": "graph", "dataset": ref.describe(),
                           "graphs": len(gs), "skipped": gs.skipped,
                           "members": len(split.members),
                           "non_members": len(split.non_members), "utility": target.utility,
                           "ledger": target.ledger.to_dict()}, indent=2))
