"""``graphleaks audit --model FILE``: audit a saved model from another pipeline.

The model file is a ``torch.export`` program (``.pt2``), an ONNX file, or a ``state_dict``
(``.safetensors`` / ``.pt``) with ``--model-class package.module:Class`` and
``--model-kwargs JSON``; none is ever unpickled (:mod:`graphleaks.models.foreign`). The graph
comes from ``--edges/--features/--labels`` and the membership from ``--members`` and
``--non-members`` node-id files, and the adversary's auxiliary nodes from ``--population``
(default: every other node). Every check runs before any attack; on bad input nothing is
written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphleaks.errors import InvalidConfigError


def run_model_audit_cli(
    model: Path, *, model_class: str | None, model_kwargs: str | None, model_output: str,
    edges: Path | None, features: Path | None, labels: Path | None,
    members: Path | None, non_members: Path | None, out: Path, attack: list[str] | None,
    population: Path | None = None, param: list[str] | None = None,
    suite: str, n_bootstrap: int | None, seed: int, conflicting: dict[str, bool],
    before_work: Callable[[], object] | None = None,
) -> Any:
    """Load, check and audit a saved model; write the report; return the audit run.

    ``before_work`` is called once every input is checked, just before the attacks run.

    Raises:
        InvalidConfigError: For conflicting or missing options, or an unknown format/class.
        DataError: For unreadable files, bad node sets, or outputs that contradict labels.
    """
    from graphleaks._outputs import REPORT, check_output_dir
    from graphleaks.attacks import registry
    from graphleaks.audit.model_audit import audit_target, model_target
    from graphleaks.audit.suite import get_suite
    from graphleaks.cli._common import (
        check_audit_options,
        load_graph,
        params_as_run,
        resolve_cli_params,
    )
    from graphleaks.data.node_sets import read_node_ids
    from graphleaks.models.foreign import load_model_file
    from graphleaks.models.protocol import OUTPUT_KINDS
    from graphleaks.report.writers import write_report

    bad = [name for name, on in conflicting.items() if on]
    if bad:
        raise InvalidConfigError(f"--model cannot be combined with {', '.join(bad)}; drop "
                                 f"{'it' if len(bad) == 1 else 'them'}")
    check_output_dir(out, REPORT)  # an unusable --out fails before any work
    check_audit_options(n_bootstrap, "target")
    the_suite = get_suite(suite)
    if model_output not in OUTPUT_KINDS:
        raise InvalidConfigError(f"--model-output {model_output!r} is unknown; choose one of: "
                                 f"{', '.join(OUTPUT_KINDS)}")
    if edges is None or features is None or labels is None:
        raise InvalidConfigError("--model needs the graph it is served with: --edges, "
                                 "--features and --labels")
    if members is None or non_members is None:
        raise InvalidConfigError("--model needs --members and --non-members node-id files")
    names = [registry.get(a).name for a in attack] if attack else None
    # one resolution of every --param: canonical owner, declared field types (exit 2 else)
    params = resolve_cli_params(param, attacks=names or list(registry))
    graph, _ = load_graph(None, None, edges, features, labels)
    n = int(graph.num_nodes)
    mem = read_node_ids(members, n)
    non = read_node_ids(non_members, n)
    pop = read_node_ids(population, n) if population is not None else None
    loaded, factory = load_model_file(model, model_class=model_class, model_kwargs=model_kwargs)
    target = model_target(loaded, graph, mem, non, output=model_output, model_factory=factory,
                          parameters=factory is not None, seed=seed, population=pop,
                          model_class=model_class or f"{model.suffix} file")
    config = {"model": model.name, "model_class": model_class, "model_output": model_output,
              "members": members.name, "non_members": non_members.name,
              "population": population.name if population is not None
              else "every node neither member nor non-member",
              "attacks": names or "all applicable", "suite": the_suite.name,
              "n_bootstrap": n_bootstrap}
    if before_work is not None:
        before_work()  # e.g. open the MLflow store: everything else is checked by now
    run = audit_target(target, attacks=names, seed=seed, suite=the_suite,
                       n_bootstrap=n_bootstrap, config=config, params=params)
    run.report.config["params"] = params_as_run(params, run.report)
    write_report(run.report, out, html=True, scores=run.tables)  # all files or none
    return run
