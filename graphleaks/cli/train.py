"""``graphleaks train``: train a target (optionally defended) and save it as a bundle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from graphleaks.cli._common import (
    DataRoot,
    Seed,
    Verbose,
    defense_params,
    load_graph,
    resolve_cli_params,
    setup_logging,
)


def train(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", "-o", help="Bundle directory to write.")],
    dataset: Annotated[str | None, typer.Option(help="Dataset name (default: cora).")] = None,
    data_root: DataRoot = None,
    edges: Annotated[Path | None, typer.Option(help="Edge-list CSV of a user graph.")] = None,
    features: Annotated[Path | None, typer.Option(help="Feature CSV or .npy.")] = None,
    labels: Annotated[Path | None, typer.Option(help="Label CSV.")] = None,
    arch: Annotated[str, typer.Option(help="gcn, sage, gat, tagcn or mlp.")] = "gcn",
    defense: Annotated[str, typer.Option(help="Defense name (graphleaks list defenses).")] = "none",
    protocol: Annotated[str, typer.Option(help="inductive or transductive.")] = "inductive",
    train_frac: Annotated[float, typer.Option(help="Fraction of nodes that are members.")] = 0.2,
    epochs: Annotated[int, typer.Option(help="Maximum training epochs.")] = 200,
    param: Annotated[list[str] | None, typer.Option(
        help="Defense or architecture parameter, e.g. gcn.hidden=[16] or none.x=1 "
             "(NAME.FIELD=VALUE, repeatable).")] = None,
    device: Annotated[str, typer.Option(help="Torch device; cpu needs no GPU.")] = "cpu",
    epsilon: Annotated[float | None, typer.Option(
        help="Privacy budget ε of the defense (must be > 0).")] = None,
    delta: Annotated[float | None, typer.Option(help="δ of the defense, in (0, 1).")] = None,
    overwrite: Annotated[bool, typer.Option(
        help="Replace an existing bundle (only a graphleaks bundle folder is ever replaced).")]
    = False,
    seed: Seed = 0,
    verbose: Verbose = False,
    task: Annotated[str, typer.Option(
        help="node (a node classifier), link (a link predictor: pair scores, edge "
             "membership) or graph (graph classification: --dataset solubility, motif or a "
             "TU name, or --graphs FILE; defenses none, dp_sgd).")] = "node",
    graphs: Annotated[Path | None, typer.Option(
        help="--task graph: a molecule file (.smi/.smiles or .sdf, needs "
             "graphleaks[molecules]).")] = None,
    on_invalid: Annotated[str | None, typer.Option(
        help="--task graph with --graphs: refuse (default) or skip a molecule RDKit cannot "
             "parse.")] = None,
) -> None:
    """Train a target on a dataset and save it as a model bundle."""
    if task == "graph" or graphs is not None or on_invalid is not None:
        from graphleaks.cli.train_graph import train_graph

        return train_graph(ctx, task=task, out=out, dataset=dataset, data_root=data_root,
                           graphs=graphs, on_invalid=on_invalid, arch=arch, defense=defense,
                           train_frac=train_frac, epochs=epochs, epsilon=epsilon, delta=delta,
                           overwrite=overwrite, seed=seed, verbose=verbose, param=param)
    from graphleaks._outputs import BUNDLE, check_output_dir
    from graphleaks._validation import validate
    from graphleaks.audit.runner import train_target
    from graphleaks.bundles import save_bundle
    from graphleaks.data.splits import SplitConfig
    from graphleaks.defenses import registry as defenses
    from graphleaks.errors import BundleError
    from graphleaks.models.gnn import ArchitectureSpec

    setup_logging(verbose)
    if out.exists() and not overwrite:
        raise BundleError(f"{out} already exists; choose another path or pass --overwrite")
    check_output_dir(out, BUNDLE, overwrite=overwrite)  # before any training
    if task not in ("node", "link"):
        from graphleaks.errors import InvalidConfigError

        raise InvalidConfigError(f"--task must be node, link or graph; got {str(task)[:20]!r}")
    if task == "link":
        from graphleaks.cli.train_link import train_link

        def given(name: str) -> bool:
            return getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"

        if given("train_frac"):
            from graphleaks.errors import InvalidConfigError

            raise InvalidConfigError("--train-frac splits nodes; the link task splits edges "
                                     "(85/5/10 members/validation/held-out); drop it")

        train_link(out=out, dataset=dataset, data_root=data_root, edges=edges,
                   features=features, labels=labels, arch=arch if given("arch") else None,
                   defense=defense, protocol=protocol if given("protocol") else None,
                   epochs=epochs if given("epochs") else None, param=param, device=device,
                   epsilon=epsilon, delta=delta, overwrite=overwrite, seed=seed)
        return
    from graphleaks.plugins import architecture_owner, check_used

    arch = architecture_owner(arch).name
    # One resolution: canonical owners, values of the fields' declared types.
    params = resolve_cli_params(param, defense=defense, arch=arch)
    if "epochs" in params.get(arch, {}) and getattr(
            ctx.get_parameter_source("epochs"), "name", None) == "COMMANDLINE":
        from graphleaks.errors import InvalidConfigError

        raise InvalidConfigError(f"--epochs and --param {arch}.epochs both set the epochs; "
                                 "give one of them")
    spec = validate(ArchitectureSpec(**{"arch": arch, "epochs": epochs,
                                        **params.pop(arch, {})}))
    split = SplitConfig(kind=protocol, train_frac=train_frac, test_frac=train_frac)
    dparams = defense_params(defense, params, epsilon, delta)
    # every option is checked before the graph is read (a data-root load writes the cache)
    validate(split)
    defense_obj = defenses.get(defense)(**dparams)
    validate(defense_obj.config, type(defense_obj).__name__)
    check_used(defense_obj, dparams)  # --param fields and --epsilon/--delta alike
    validate(spec)
    graph, ds = load_graph(dataset, data_root, edges, features, labels)
    target = train_target(graph, spec=spec, split=split, defense=defense,
                          defense_params=dparams, dataset=ds, device=device, seed=seed)
    save_bundle(target, out, overwrite=overwrite)
    typer.echo(json.dumps({"bundle": str(out), "utility": target.utility,
                           "ledger": target.ledger.to_dict()}, indent=2))
