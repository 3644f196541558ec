"""``graphleaks audit model FILE --task link``: audit a saved link predictor (a pair scorer).

The model file is read as for node models (``.pt2``, ONNX, or a state_dict with
``--model-class``; nothing unpickled, :mod:`graphleaks.models.link_export` checks it takes
``(x, edge_index, pairs)`` with dynamic sizes). The graph it is served with comes from
``--edges``/``--features`` (or ``--dataset``); ``--members`` and ``--non-members`` are edge
files (two integer node ids per row): the model's training edges and pairs it never trained
on. ``--pairs-layout`` says how the model takes pairs (``columns``: ``[2, P]``, PyG's
``edge_label_index``; ``rows``: ``[P, 2]``). Every check, the model's probe included, runs
before any attack; on bad input nothing is written.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from graphleaks._outputs import REPORT, check_output_dir
from graphleaks._progress import progress_display
from graphleaks.cli import options as o
from graphleaks.errors import DataError, GraphleaksError, InvalidConfigError
from graphleaks.report.writers import write_report

# The attacks, graph readers and model loaders import torch: imported inside the function
# so that `graphleaks audit --help` stays torch-free.


def _probe_failed(model: Path, exc: BaseException) -> DataError:
    """The one line for a model file that raised on the probe (its text is not quoted: it
    may name the file's internals)."""
    return DataError(f"the model in {model} failed when scoring a probe of pairs "
                     f"({type(exc).__name__}); check --pairs-layout (columns: [2, P], rows: "
                     "[P, 2]), the feature width, and that it was exported with dynamic node, "
                     "edge and pair counts")


def run_link_model_audit(
    model: Path, model_class: str | None, model_kwargs: str | None, model_output: str,
    pairs_layout: str | None, embedding_layers: tuple[str, ...], source: o.GraphSource,
    membership: o.MembershipFiles, budgets: o.AuditBudgets, output: o.OutputOptions, *,
    unused: dict[str, Any],
) -> Any:
    """Load, check and audit a saved link predictor; write the report; return the run.

    Args:
        model: The model file.
        model_class: With a state_dict: ``package.module:Class``.
        model_kwargs: Its keyword arguments (JSON).
        model_output: ``logits`` or ``probabilities``.
        pairs_layout: ``columns`` (default) or ``rows``.
        embedding_layers: Node-embedding submodules (state_dict with ``--model-class`` only).
        source: The served graph (``--edges``/``--features`` or ``--dataset``).
        membership: ``--members`` and ``--non-members`` edge files.
        budgets: Attacks, suite, params, bootstrap and seed.
        output: Where and how to write.
        unused: Options of the node or graph doors the user gave (refused, never dropped).

    Raises:
        InvalidConfigError: For missing or inapplicable options, an unknown format, class,
            layout or attack, or a model that is not a pair scorer.
        DataError: For unreadable files, bad pairs (outside the graph, self-loops,
            duplicates, overlap), or a model file that cannot serve an edge audit.
    """
    from graphleaks.attacks.edge_membership import edge_registry
    from graphleaks.audit.link_audit import (
        as_edge_array,
        audit_link_target,
        build_edge_attacks,
        check_edge_sets,
        edge_protocol,
        link_graph,
        link_target,
    )
    from graphleaks.audit.suite import get_suite
    from graphleaks.data.pair_score_files import read_edge_pairs
    from graphleaks.models.foreign import MODEL_READERS
    from graphleaks.models.link_export import load_link_model_file
    from graphleaks.models.pair_scorer import PAIR_LAYOUTS, PAIR_OUTPUTS

    check_output_dir(output.out, REPORT)  # an unusable --out fails before any work
    given = [name for name, value in unused.items() if value]
    if given:
        raise InvalidConfigError(f"{given[0]} does not apply to --task link (a pair scorer "
                                 "audited for edge membership); drop it")
    if model_output not in PAIR_OUTPUTS:
        raise InvalidConfigError(f"--model-output {model_output[:40]!r} is not a pair-score "
                                 f"kind; with --task link choose one of: "
                                 f"{', '.join(PAIR_OUTPUTS)}")
    layout = pairs_layout or "columns"
    if layout not in PAIR_LAYOUTS:
        raise InvalidConfigError(f"--pairs-layout {layout[:20]!r} is unknown; choose columns "
                                 "([2, P], PyG's edge_label_index) or rows ([P, 2])")
    if embedding_layers and model_class is None:
        raise InvalidConfigError("--embedding-layer with --task link reads a submodule with a "
                                 "forward hook: give the model as a state_dict with "
                                 "--model-class (a .pt2 program runs its operators inline, an "
                                 "ONNX graph exposes its scores only)")
    if budgets.params:
        raise InvalidConfigError("--param is not supported with --task link yet; drop it (the "
                                 "edge attacks run with the suite's budgets)")
    m = membership
    if m.members is None or m.non_members is None:
        raise InvalidConfigError("graphleaks audit model --task link needs --members FILE and "
                                 "--non-members FILE (two node ids per row: the model's "
                                 "training edges and pairs it never trained on)")
    if source.edges is None and source.dataset is None:
        raise InvalidConfigError("graphleaks audit model --task link needs the graph the model "
                                 "is served with: --edges and --features (or --dataset)")
    the_suite = get_suite(budgets.suite)
    names = [edge_registry.get(a).name for a in budgets.attacks] or None
    if names:
        build_edge_attacks(names, the_suite)  # an unknown or invalid attack: before any work
    loaded_graph, ref = source.load()
    if "node_names" in loaded_graph:
        raise InvalidConfigError(f"--edges {source.edges} names its nodes by strings; --task "
                                 "link reads integer node ids (0-based rows of --features) in "
                                 "--members/--non-members: write the edge list with integer "
                                 "ids")
    graph = link_graph(loaded_graph)
    n = int(graph.num_nodes)
    members = as_edge_array(read_edge_pairs(m.members, "member edge"), "member edges", n,
                            f"--members {m.members}")
    non_members = as_edge_array(read_edge_pairs(m.non_members, "non-member pair"),
                                "non-member pairs", n, f"--non-members {m.non_members}")
    members, non_members = check_edge_sets(members, non_members, n,
                                           source=f"--non-members {m.non_members}")
    loaded, factory = load_link_model_file(model, model_class=model_class,
                                           model_kwargs=model_kwargs, pairs_layout=layout)
    try:  # the probe: a model of another kind or layout is refused before any attack
        target = link_target(loaded, graph, output=model_output, pairs_layout=layout,
                             embedding_layers=embedding_layers)
    except GraphleaksError:
        raise
    except Exception as exc:  # the user's model (or its program's shape checks) raised
        raise _probe_failed(model, exc) from exc
    # as for node models: the adversary holds the weights when the class is known
    target.scorer.interface = dataclasses.replace(target.scorer.interface,
                                                  parameters=factory is not None)
    protocol = edge_protocol(target, members, non_members)
    label = model_class or f"{model.name} ({MODEL_READERS.reader(model).description})"
    # files are recorded by name only, never where they lie
    config = {"entry": "graphleaks audit model --task link", "model": model.name,
              "graph": ref.to_dict(), "model_class": model_class,
              "model_output": model_output, "pairs_layout": layout,
              "embedding_layers": list(embedding_layers), "model_kwargs": model_kwargs,
              "members": m.members.name, "non_members": m.non_members.name,
              "n_bootstrap": budgets.n_bootstrap, "target_origin": "model file"}
    output.before_work()  # e.g. open the MLflow store: everything else is checked by now
    with progress_display(output.bars):
        run = audit_link_target(target, members, non_members, protocol=protocol,
                                attacks=names, seed=budgets.seed, suite=the_suite,
                                n_bootstrap=budgets.n_bootstrap, config=config,
                                model_label=label,
                                training={"note": "trained outside graphleaks"})
    write_report(run.report, output.out, html=True, scores=run.tables)  # all files or none
    return run


__all__ = ["run_link_model_audit"]
