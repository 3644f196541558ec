"""Link predictors as files: export one with dynamic shapes, load one for an edge audit.

A link predictor (a pair scorer, :mod:`graphleaks.models.pair_scorer`) is called as
``model(x, edge_index, pairs)`` and returns one score per pair; ``pairs`` is ``[2, P]``
(``columns``, PyG's ``edge_label_index``) or ``[P, 2]`` (``rows``). Its exported program
must accept any number of nodes, edges *and pairs*: the audit queries batches of every
size, down to a single pair. :func:`export_link_pt2` exports with
``dynamic_shapes=({0: nodes}, {1: edges}, {1: pairs})`` (``{0: pairs}`` for rows) and
``Dim("pairs", min=1)``.

:func:`load_link_model_file` reads a model file through
:data:`~graphleaks.models.foreign.MODEL_READERS` (``.pt2`` through the safety checks, ONNX,
or a state_dict with ``model_class``; nothing is unpickled and the file runs no code) and
refuses, in one line, a file that cannot serve an edge audit: a node model's or graph
classifier's program (two inputs, or a ``batch`` vector), a program traced with fixed
sizes, one whose pairs input has the other layout than the one declared.

Example (a user's PyG link predictor taking ``edge_label_index``)::

    from torch.export import Dim
    ep = torch.export.export(model.eval(), (x, edge_index, edge_label_index),
                             dynamic_shapes=({0: Dim("nodes", min=2)},
                                             {1: Dim("edges", min=2)},
                                             {1: Dim("pairs", min=1)}), strict=False)
    torch.export.save(ep, "link.pt2")
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.models.foreign import MODEL_READERS, OnnxModel
from graphleaks.models.pair_scorer import PAIR_LAYOUTS
from graphleaks.models.protocol import FIXED_SHAPE_ATTR

#: How to re-export, quoted by every refusal of a file that cannot serve an edge audit.
REEXPORT_LINK = ("re-export it with graphleaks.models.link_export.export_link_pt2(model, x, "
                 "edge_index, pairs, path), or torch.export.export with dynamic_shapes="
                 "({0: nodes}, {1: edges}, {1: pairs}) for [2, P] pairs (see the README, "
                 "'Audit a link-prediction model')")


def export_link_pt2(model: nn.Module, x: torch.Tensor, edge_index: torch.Tensor,
                    pairs: torch.Tensor, path: str | Path, *,
                    pairs_layout: str = "columns") -> Path:
    """Save a link predictor as a ``torch.export`` program with dynamic node, edge and pair
    counts.

    Args:
        model: ``model(x, edge_index, pairs) -> [P]`` (or ``[P, 1]``) scores.
        x: Example node features (at least two nodes).
        edge_index: Example edges (at least two).
        pairs: Example pairs (at least two), in ``pairs_layout``.
        path: Where to write the ``.pt2`` file.
        pairs_layout: ``columns`` (``pairs`` is ``[2, P]``) or ``rows`` (``[P, 2]``).

    Raises:
        InvalidConfigError: For an unknown layout.
    """
    from torch.export import Dim

    if pairs_layout not in PAIR_LAYOUTS:
        raise InvalidConfigError(f"pairs_layout {pairs_layout[:20]!r} is unknown; choose "
                                 "columns ([2, P]) or rows ([P, 2])")
    nodes, edges = Dim("nodes", min=2), Dim("edges", min=2)
    # min=1: the audit's last query batch may hold a single pair
    pair_dim = {1 if pairs_layout == "columns" else 0: Dim("pairs", min=1)}
    ep = torch.export.export(model.eval(), (x, edge_index, pairs),
                             dynamic_shapes=({0: nodes}, {1: edges}, pair_dim), strict=False,
                             prefer_deferred_runtime_asserts_over_guards=True)
    out = Path(path)
    torch.export.save(ep, str(out))
    return out


def _placeholders(module: Any) -> list[Any] | None:
    """An exported program's user inputs' example values (None: not a program)."""
    graph = getattr(module, "graph", None)
    if graph is None or not hasattr(graph, "nodes"):
        return None
    return [n.meta.get("val") for n in graph.nodes if n.op == "placeholder"]


def _pairs_shape(val: Any) -> tuple[int | None, int | None] | None:
    """The pairs input's two dimensions, each a concrete size or None when symbolic."""
    shape = getattr(val, "shape", None)
    if shape is None or len(shape) != 2:
        return None
    return tuple(int(s) if isinstance(s, int) else None for s in shape)  # type: ignore[return-value]


def _check_pairs_input(shape: tuple[int | None, int | None] | None, pairs_layout: str,
                       what: str) -> None:
    """Refuse a pairs input of fixed size, or of the other layout than the declared one."""
    if shape is None:
        return
    a, b = shape
    if a is not None and b is not None:
        raise DataError(f"{what} was exported with a fixed number of pairs and cannot answer "
                        f"the audit's query batches; {REEXPORT_LINK}")
    taken = "columns" if a == 2 else "rows" if b == 2 else None
    if taken is not None and taken != pairs_layout:
        raise InvalidConfigError(
            f"{what} takes pairs as {'[2, P]' if taken == 'columns' else '[P, 2]'}; give "
            f"--pairs-layout {taken} (pairs_layout={taken!r})")


def load_link_model_file(
    path: str | Path, *, model_class: str | None = None, model_kwargs: str | None = None,
    pairs_layout: str = "columns",
) -> tuple[Any, Callable[[], nn.Module] | None]:
    """A link predictor from a model file, checked to take ``(x, edge_index, pairs)``.

    Args:
        path: The ``.pt2``, ``.onnx`` or state_dict file.
        model_class: With a state_dict: ``package.module:Class``.
        model_kwargs: Its keyword arguments as a JSON object.
        pairs_layout: How the model takes pairs, ``columns`` or ``rows`` (checked against
            a program's declared input shape).

    Returns:
        The model and, for a state_dict, a factory of fresh copies.

    Raises:
        InvalidConfigError: For an unknown format or layout, a missing/extra
            ``model_class``, or a program taking the other pairs layout.
        DataError: For a file that cannot be loaded safely, or that cannot serve an edge
            audit (node model, graph classifier, fixed sizes).
    """
    if pairs_layout not in PAIR_LAYOUTS:
        raise InvalidConfigError(f"--pairs-layout {pairs_layout[:20]!r} is unknown; choose "
                                 "columns ([2, P], PyG's edge_label_index) or rows ([P, 2])")
    p = Path(path)
    model, factory = MODEL_READERS.read(p, model_class=model_class, model_kwargs=model_kwargs)
    if isinstance(model, OnnxModel):
        if model.num_inputs != 3:
            raise DataError(f"ONNX model {p} takes {model.num_inputs} inputs; a link predictor "
                            "takes three: x [nodes, F] (float), edge_index [2, E] (int64) and "
                            f"pairs (int64); {REEXPORT_LINK}")
        if getattr(model, FIXED_SHAPE_ATTR, None) is not None:
            raise DataError(f"ONNX model {p} was exported with a fixed number of nodes or "
                            "edges and cannot answer the audit's graphs; export it with "
                            "dynamic_shapes=({0: nodes}, {1: edges}, {1: pairs})")
        dims = list(model._session.get_inputs()[2].shape or [])
        shape = (tuple(d if isinstance(d, int) else None for d in dims)
                 if len(dims) == 2 else None)
        _check_pairs_input(shape, pairs_layout, f"ONNX model {p}")  # type: ignore[arg-type]
        return model, factory
    if factory is None:  # a .pt2 program
        vals = _placeholders(model)
        if vals is not None and len(vals) != 3:
            raise DataError(f".pt2 file {p} takes {len(vals)} inputs; a link predictor takes "
                            f"three (x, edge_index, pairs); {REEXPORT_LINK}")
        if getattr(model, FIXED_SHAPE_ATTR, None) is not None:
            raise DataError(f".pt2 file {p} was exported with a fixed number of nodes or edges "
                            f"and cannot answer the audit's graphs; {REEXPORT_LINK}")
        third = getattr(vals[2], "shape", None) if vals is not None else None
        if third is not None and len(third) == 1:
            raise DataError(f".pt2 file {p} takes a one-dimensional third input (a graph "
                            "classifier's batch vector?); audit a graph classifier with --task "
                            f"graph, or {REEXPORT_LINK}")
        if vals is not None:
            _check_pairs_input(_pairs_shape(vals[2]), pairs_layout, f".pt2 file {p}")
    return model, factory


__all__ = ["REEXPORT_LINK", "export_link_pt2", "load_link_model_file"]
