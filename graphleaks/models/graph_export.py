"""Graph classifiers as files: export one with dynamic shapes, load one for a graph audit.

A graph classifier is called as ``model(x, edge_index, batch)`` (see
:mod:`graphleaks.models.graph_target`). Its exported program must accept any number of
nodes, edges *and graphs*, since the audit queries batches of up to 256 graphs of every
size. Three things make a PyG graph classifier exportable by ``torch.export``:

1. **One dynamic dimension shared by ``x`` and ``batch``** (both have one row per node),
   another for the edges: ``dynamic_shapes=({0: nodes}, {1: edges}, {0: nodes})`` with
   ``nodes = Dim("nodes", min=1)`` and ``edges = Dim("edges", min=0)``, so a one-atom
   molecule (one node, no edge) runs too.
2. **The number of graphs from** ``batch.max().item() + 1``, passed to the pooling
   (``global_mean_pool(h, batch, size)``). PyG's default, ``int(batch.max()) + 1``,
   specialises the traced program to the example's graph count, which torch refuses
   ("Could not extract specialized integer from data-dependent expression").
3. ``prefer_deferred_runtime_asserts_over_guards=True``: torch 2.13 otherwise stores the
   shape relations between ``x`` and ``batch`` as Python guard code in the program, which
   graphleaks refuses to run (:mod:`graphleaks.models.pt2_safety`); with the flag they
   become checks inside the program.

:func:`export_graph_pt2` does the three for any such module (graphleaks' own
:class:`~graphleaks.models.graph_classifier.GraphClassifier` included), and
:func:`load_graph_model_file` reads a model file through
:data:`~graphleaks.models.foreign.MODEL_READERS` and refuses, in one line, a file that
cannot serve a graph audit: a node model's two-input program, a program traced with fixed
sizes, an ONNX graph without the ``batch`` input.

Example (a user's module whose forward pools with the graph count of item 2)::

    from torch.export import Dim
    nodes, edges = Dim("nodes", min=1), Dim("edges", min=0)
    ep = torch.export.export(model.eval(), (x, edge_index, batch),
                             dynamic_shapes=({0: nodes}, {1: edges}, {0: nodes}),
                             strict=False, prefer_deferred_runtime_asserts_over_guards=True)
    torch.export.save(ep, "model.pt2")
    # ONNX, the same shapes (onnxscript installed):
    torch.onnx.export(model.eval(), (x, edge_index, batch), "model.onnx", dynamo=True,
                      dynamic_shapes=({0: nodes}, {1: edges}, {0: nodes}))
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from graphleaks.errors import DataError
from graphleaks.models.foreign import MODEL_READERS, OnnxModel
from graphleaks.models.graph_classifier import GraphClassifier
from graphleaks.models.protocol import FIXED_SHAPE_ATTR

#: How to re-export, quoted by every refusal of a file that cannot serve a graph audit.
REEXPORT_GRAPH = ("re-export it with graphleaks.models.graph_export.export_graph_pt2(model, x, "
                  "edge_index, batch, path), or torch.export.export with dynamic_shapes="
                  "({0: nodes}, {1: edges}, {0: nodes}) and the graph count from "
                  "batch.max().item() + 1 (see the README, 'Audit a molecule model')")


def num_graphs_of(batch: torch.Tensor) -> Any:
    """The number of graphs of a batch vector, kept symbolic under ``torch.export``.

    ``batch.max().item() + 1`` (an unbacked size while tracing) rather than
    ``int(batch.max()) + 1``, which would fix the exported program's graph count.
    """
    n = batch.max().item() + 1
    torch._check(n >= 1)
    return n


class ExportableGraphClassifier(nn.Module):
    """graphleaks' :class:`GraphClassifier` with the graph count taken from ``batch``
    as :func:`num_graphs_of` does (same outputs, exportable)."""

    def __init__(self, model: GraphClassifier) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor,
                batch: torch.Tensor) -> torch.Tensor:
        """Logits ``[num_graphs, C]``."""
        out: torch.Tensor = self.model(x, edge_index, batch, num_graphs_of(batch))
        return out


def export_graph_pt2(model: nn.Module, x: torch.Tensor, edge_index: torch.Tensor,
                     batch: torch.Tensor, path: str | Path) -> Path:
    """Save a graph classifier as a ``torch.export`` program with dynamic node, edge and
    graph counts (see the module docstring for what the model's forward must do).

    Args:
        model: ``model(x, edge_index, batch) -> [num_graphs, C]``; graphleaks' own
            :class:`GraphClassifier` is wrapped in :class:`ExportableGraphClassifier`.
        x: Example node features of a batch of at least two graphs.
        edge_index: Its edges.
        batch: Its batch vector.
        path: Where to write the ``.pt2`` file.
    """
    from torch.export import Dim

    module = ExportableGraphClassifier(model) if isinstance(model, GraphClassifier) else model
    nodes, edges = Dim("nodes", min=1), Dim("edges", min=0)
    ep = torch.export.export(module.eval(), (x, edge_index, batch),
                             dynamic_shapes=({0: nodes}, {1: edges}, {0: nodes}),
                             strict=False, prefer_deferred_runtime_asserts_over_guards=True)
    out = Path(path)
    torch.export.save(ep, str(out))
    return out


def _user_inputs(module: Any) -> int | None:
    """How many user inputs an exported program's module takes (None: not a program)."""
    graph = getattr(module, "graph", None)
    if graph is None or not hasattr(graph, "nodes"):
        return None
    return sum(1 for n in graph.nodes if n.op == "placeholder")


def load_graph_model_file(
    path: str | Path, *, model_class: str | None = None, model_kwargs: str | None = None,
) -> tuple[Any, Callable[[], nn.Module] | None]:
    """A graph classifier from a model file, checked to take ``(x, edge_index, batch)``.

    The file goes through :data:`~graphleaks.models.foreign.MODEL_READERS` (``.pt2``
    through the safety checks, ONNX, or a state_dict with ``model_class``): nothing is
    unpickled and the file runs no code.

    Returns:
        The model and, for a state_dict, a factory of fresh copies.

    Raises:
        InvalidConfigError: For an unknown format or a missing/extra ``model_class``.
        DataError: For a file that cannot be loaded safely, or that cannot serve a graph
            audit (node model, fixed sizes).
    """
    p = Path(path)
    model, factory = MODEL_READERS.read(p, model_class=model_class, model_kwargs=model_kwargs)
    if isinstance(model, OnnxModel):
        if model.num_inputs != 3:
            raise DataError(f"ONNX model {p} takes {model.num_inputs} inputs; a graph classifier "
                            "takes three: x [nodes, F] (float), edge_index [2, E] (int64) and "
                            f"batch [nodes] (int64); {REEXPORT_GRAPH}")
        if getattr(model, FIXED_SHAPE_ATTR, None) is not None:
            raise DataError(f"ONNX model {p} was exported with a fixed number of nodes or "
                            "edges and cannot answer batches of other graphs; export it with "
                            "dynamic_shapes=({0: nodes}, {1: edges}, {0: nodes})")
        return model, factory
    if factory is None:  # a .pt2 program
        n = _user_inputs(model)
        if n is not None and n != 3:
            raise DataError(f".pt2 file {p} takes {n} inputs; a graph classifier takes three "
                            f"(x, edge_index, batch); {REEXPORT_GRAPH}")
        if getattr(model, FIXED_SHAPE_ATTR, None) is not None:
            raise DataError(f".pt2 file {p} was exported with a fixed number of nodes or edges "
                            f"and cannot answer batches of other graphs; {REEXPORT_GRAPH}")
    return model, factory


__all__ = ["REEXPORT_GRAPH", "ExportableGraphClassifier", "export_graph_pt2",
           "load_graph_model_file", "num_graphs_of"]
