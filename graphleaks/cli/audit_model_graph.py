"""``graphleaks audit model FILE --task graph``: audit a saved graph classifier.

The model file is read as for node models (``.pt2``, ONNX, or a state_dict with
``--model-class``; nothing unpickled, :mod:`graphleaks.models.graph_export` checks it takes
``(x, edge_index, batch)``). The graph set comes from ``--dataset`` (``solubility``,
``motif`` or a TU dataset name on the data root) or ``--graphs`` (a SMILES or SDF file, or a
TU folder); ``--members`` / ``--non-members`` / ``--population`` are graph-id files (row
``i`` of the set is graph ``i``). Every check runs before any attack; on bad input nothing
is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphleaks._outputs import REPORT, check_output_dir
from graphleaks._progress import progress_display
from graphleaks.cli import options as o
from graphleaks.errors import InvalidConfigError
from graphleaks.report.writers import write_report

if TYPE_CHECKING:
    from graphleaks.data.graphsets import GraphSet, GraphSetRef

# The attacks, graph readers and model loaders import torch: imported inside the functions
# so that `graphleaks audit --help` stays torch-free.

ON_INVALID = ("refuse", "skip")


def graph_set_ref(dataset: str | None, graphs: Path | None, on_invalid: str | None, *,
                  seed: int) -> GraphSetRef:
    """The record of the graph set named by ``--dataset`` or ``--graphs``.

    ``--dataset`` names a set as ``graphleaks train --task graph`` does
    (:func:`~graphleaks.data.graphsets.named.named_graph_set`: ``solubility``, ``motif``
    drawn with ``--seed``, or a TU dataset under the data root); ``--graphs`` is a SMILES/SDF
    file or a TU folder.

    Raises:
        InvalidConfigError: For none or both of the options, or a bad ``--on-invalid``.
    """
    from graphleaks.data.graphsets import GraphSetRef
    from graphleaks.data.graphsets.named import named_graph_set

    if (dataset is None) == (graphs is None):
        raise InvalidConfigError("graphleaks audit model --task graph needs the graph set the "
                                 "model is audited on: --dataset (solubility, motif or a TU "
                                 "name) or --graphs FILE (SMILES, SDF or a TU folder), not both")
    if on_invalid is not None and on_invalid not in ON_INVALID:
        raise InvalidConfigError(f"--on-invalid {on_invalid[:20]!r} is unknown; choose refuse or "
                                 "skip")
    if on_invalid is not None and (graphs is None or graphs.is_dir()):
        raise InvalidConfigError("--on-invalid applies to a molecule file given with --graphs; "
                                 "drop it")
    if dataset is not None:
        try:
            return named_graph_set(dataset, seed=seed)
        except Exception as exc:  # DataError from the name check: a usage problem here
            raise InvalidConfigError(f"--dataset {dataset[:40]!r} is neither solubility, motif "
                                     "nor a TU dataset name; see graphleaks list datasets"
                                     ) from exc
    assert graphs is not None
    if graphs.is_dir():
        return GraphSetRef("tu", None, path=graphs)
    return GraphSetRef.file(graphs, on_invalid=on_invalid or "refuse")


def load_graph_set(ref: GraphSetRef, data_root: Path | None) -> GraphSet:
    """Load the set a :func:`graph_set_ref` record names (a TU folder read in place).

    Raises:
        DataError: For a file or folder that cannot be read.
        InvalidConfigError: For a ``--data-root`` the set does not read.
    """
    from graphleaks.data.graphsets import read_tu_folder

    if data_root is not None and not (ref.kind == "tu" and ref.name is not None):
        raise InvalidConfigError("--data-root is read only for a TU dataset named by "
                                 "--dataset; drop --data-root")
    if ref.kind == "tu" and ref.name is None:  # a folder given with --graphs
        assert ref.path is not None
        return read_tu_folder(ref.path)
    return ref.load(data_root=data_root)


def run_graph_model_audit(
    model: Path, model_class: str | None, model_kwargs: str | None, model_output: str,
    embedding_layers: tuple[str, ...], source: o.GraphSource, graphs: Path | None,
    on_invalid: str | None, membership: o.MembershipFiles, budgets: o.AuditBudgets,
    output: o.OutputOptions,
) -> Any:
    """Load, check and audit a saved graph classifier; write the report; return the run.

    Raises:
        InvalidConfigError: For missing or inapplicable options, an unknown format, class
            or attack.
        DataError: For unreadable files, bad graph ids, or outputs that are not one row per
            graph.
    """
    from graphleaks.attacks.graph_membership import graph_registry
    from graphleaks.audit.graph_audit import audit_graph_run, graph_ids, graph_target
    from graphleaks.audit.suite import get_suite
    from graphleaks.data.node_sets import read_node_ids
    from graphleaks.models.foreign import MODEL_READERS
    from graphleaks.models.graph_export import load_graph_model_file
    from graphleaks.models.protocol import OUTPUT_KINDS

    check_output_dir(output.out, REPORT)  # an unusable --out fails before any work
    if source.edges is not None or source.features is not None or source.labels is not None:
        raise InvalidConfigError("--edges/--features/--labels give one graph of a node model; "
                                 "with --task graph give the graph set with --dataset or "
                                 "--graphs")
    if model_output not in OUTPUT_KINDS:
        raise InvalidConfigError(f"--model-output {model_output[:40]!r} is unknown; choose one "
                                 f"of: {', '.join(OUTPUT_KINDS)}")
    if len(embedding_layers) > 1:
        raise InvalidConfigError("--task graph reads one pooled graph embedding: give "
                                 "--embedding-layer once (the pooling module's name)")
    if budgets.params:
        raise InvalidConfigError("--param is not supported with --task graph; drop it (the "
                                 "graph attacks run with the suite's budgets)")
    m = membership
    if m.members is None or m.non_members is None:
        raise InvalidConfigError("graphleaks audit model --task graph needs --members and "
                                 "--non-members graph-id files (row i of the set is graph i)")
    the_suite = get_suite(budgets.suite)
    names = [graph_registry.get(a).name for a in budgets.attacks] if budgets.attacks else None
    ref = graph_set_ref(source.dataset, graphs, on_invalid, seed=budgets.seed)
    gs = load_graph_set(ref, source.data_root)
    n = len(gs)
    mem = graph_ids(read_node_ids(m.members), n, "members")
    non = graph_ids(read_node_ids(m.non_members), n, "non-members")
    pop = (graph_ids(read_node_ids(m.population), n, "population")
           if m.population is not None else None)
    loaded, factory = load_graph_model_file(model, model_class=model_class,
                                            model_kwargs=model_kwargs)
    label = model_class or f"{model.name} ({MODEL_READERS.reader(model).description})"
    layer = embedding_layers[0] if embedding_layers else None
    target = graph_target(loaded, gs, mem, non, output=model_output, embedding_layer=layer,
                          model_factory=factory, population=pop,
                          parameters=factory is not None, seed=budgets.seed)
    target.model_class = label
    # a --graphs path is recorded by its name only, never where it lies
    config = {"model": model.name, "graph_set": ref.pinned(gs).to_dict(),
              **o.file_names(graphs=graphs),
              "model_class": model_class, "model_output": model_output,
              "embedding_layer": layer, "model_kwargs": model_kwargs,
              "members": m.members.name, "non_members": m.non_members.name,
              "population": m.population.name if m.population is not None
              else "every graph neither member nor non-member",
              "n_bootstrap": budgets.n_bootstrap, "target_origin": "model file"}
    output.before_work()  # e.g. open the MLflow store: everything else is checked by now
    with progress_display(output.bars):
        run = audit_graph_run(target, attacks=names, seed=budgets.seed,
                              suite=the_suite.name, n_bootstrap=budgets.n_bootstrap,
                              config=config)
    write_report(run.report, output.out, html=True, scores=run.tables)  # all files or none
    return run


__all__ = ["graph_set_ref", "load_graph_set", "run_graph_model_audit"]
