"""``graphleaks train --task link``: train a (defended) link predictor and save its bundle.

Called by :func:`graphleaks.cli.train.train`; every option is checked before the graph is
read, so bad input writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from graphleaks.errors import InvalidConfigError

#: ``--param`` owner of the link predictor's own fields (``--param link.epochs=50``).
SPEC_OWNER = "link"
#: ``--param`` owner of the edge split's fields (``--param split.non_member_sampling=
#: degree_matched``; ``split.bipartite`` defaults to true on a graph with ``node_type``,
#: such as ``--dataset bipartite``, and ``--param split.bipartite=false`` turns it off).
SPLIT_OWNER = "split"


def train_link(
    *, out: Path, dataset: str | None, data_root: Path | None, edges: Path | None,
    features: Path | None, labels: Path | None, arch: str | None, defense: str,
    protocol: str | None, epochs: int | None, param: list[str] | None, device: str,
    epsilon: float | None, delta: float | None, overwrite: bool, seed: int,
) -> None:
    """Train a link target (see ``graphleaks train --help``) and write its bundle.

    Args:
        out: Bundle directory.
        dataset: Dataset name (default cora).
        data_root: Data root of the data-root datasets.
        edges: A user graph file.
        features: Its features.
        labels: Its labels (optional for a link task).
        arch: Encoder (``gcn``, ``sage``, ``gat``, ``mlp``) when given on the command line.
        defense: Link defense name.
        protocol: Edge split kind (``transductive``, ``inductive``) when given.
        epochs: Maximum epochs of the predictor when given.
        param: ``link.FIELD=VALUE`` (predictor), ``split.FIELD=VALUE`` (edge split, e.g.
            ``split.non_member_sampling=degree_matched``) and ``DEFENSE.FIELD=VALUE`` options.
        device: Torch device.
        epsilon: The defense's ε.
        delta: The defense's δ.
        overwrite: Replace an existing bundle.
        seed: Seed of the split and training.

    Raises:
        InvalidConfigError: For an unknown defense, an invalid ε or parameter.
    """
    import dataclasses

    from graphleaks._params import Owner, parse_param_items, resolve_params
    from graphleaks._validation import validate
    from graphleaks.bundles import save_bundle
    from graphleaks.cli._common import load_graph
    from graphleaks.data.edge_splits import (
        EDGE_SPLIT_KINDS,
        EdgeMembershipSplit,
        EdgeSplitConfig,
        split_params_for_graph,
    )
    from graphleaks.defenses.link import link_registry
    from graphleaks.models.link_predictor import ENCODERS, LinkPredictorSpec

    try:
        cls = link_registry.get(defense)
    except InvalidConfigError:
        raise InvalidConfigError(
            f"--defense {str(defense)[:40]!r} is not a defense for the link task; choose one "
            f"of: {', '.join(link_registry.names())}") from None
    owners = [Owner(cls.name, "defense", cls.Config),
              Owner(SPEC_OWNER, "link predictor", LinkPredictorSpec),
              Owner(SPLIT_OWNER, "edge split", EdgeSplitConfig)]
    params = resolve_params(parse_param_items(param), owners, text=True, source="--param ")
    dparams: dict[str, Any] = dict(params.get(cls.name, {}))
    fields = {f.name for f in dataclasses.fields(cls.Config)}
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if value is None:
            continue
        if name not in fields:
            raise InvalidConfigError(f"defense {cls.name!r} takes no --{name} for the link "
                                     f"task; it has no {name} parameter")
        if name in dparams and dparams[name] != value:
            raise InvalidConfigError(f"--{name} and --param {cls.name}.{name} disagree; give "
                                     "one of them")
        dparams[name] = value
    d = cls(**dparams)
    d.validate()
    over = dict(params.get(SPEC_OWNER, {}))
    if arch is not None:
        if arch not in ENCODERS:
            raise InvalidConfigError(f"--arch {str(arch)[:20]!r} is not a link encoder; choose "
                                     f"one of: {', '.join(ENCODERS)}")
        over.setdefault("encoder", arch)
    if epochs is not None:
        if "epochs" in over:
            raise InvalidConfigError("--epochs and --param link.epochs both set the epochs; "
                                     "give one of them")
        over["epochs"] = epochs
    spec = validate(dataclasses.replace(d.default_spec(), **over), "link predictor")
    if protocol is not None and protocol not in EDGE_SPLIT_KINDS:
        raise InvalidConfigError(f"--protocol must be one of {', '.join(EDGE_SPLIT_KINDS)} for "
                                 "the link task")
    sparams = dict(params.get(SPLIT_OWNER, {}))
    if protocol is not None and sparams.setdefault("kind", protocol) != protocol:
        raise InvalidConfigError("--protocol and --param split.kind disagree; give one of them")
    split_cfg = validate(EdgeSplitConfig(**sparams), "edge split")
    if cls.name in ("dp_sgd", "gap_edp"):
        import torch

        from graphleaks.models.edge_dp_sgd import check_edge_private
        from graphleaks.models.link_predictor import LinkPredictor

        with torch.device("meta"):
            check_edge_private(LinkPredictor(1, spec))  # refused before the graph is read
    graph, ref = load_graph(dataset, data_root, edges, features, labels)
    node_type = graph.get("node_type")
    if node_type is not None:  # a user-item graph: one user and one item per non-edge
        split_cfg = validate(EdgeSplitConfig(**split_params_for_graph(sparams, node_type)),
                             "edge split")
    split = EdgeMembershipSplit.draw(graph.edge_index, graph.num_nodes, split_cfg, seed=seed,
                                     node_type=node_type)
    target = d.fit(graph, split, spec=spec, seed=seed, dataset=ref, device=device)
    save_bundle(target, out, overwrite=overwrite)
    typer.echo(json.dumps({"bundle": str(out), "task": "link", "utility": target.utility,
                           "split": split.record(), "ledger": target.ledger.to_dict()},
                          indent=2))


__all__ = ["SPEC_OWNER", "train_link"]
