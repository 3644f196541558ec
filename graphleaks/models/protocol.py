"""The target-model protocol: what graphleaks audits, whoever built the model.

A target is anything that maps ``(x, edge_index)`` to one output row per node. It declares
what that output is (``logits``, ``probabilities`` or ``log_probabilities``, the three return
types of PyG's ``Explainer`` ``ModelConfig``) and, optionally, the names of submodules whose
outputs are its node embeddings; those are read with forward hooks, so white-box attacks work
on a model that has no ``embed()`` method. graphleaks' own :class:`~graphleaks.models.gnn.GNN`
is served through this same path (it names its hidden activations in
``GNN.embedding_layers``).

An attack that asks for an embedding layer the model does not declare gets a
:class:`~graphleaks.errors.CapabilityError`; the outputs are never substituted silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn

from graphleaks.errors import CapabilityError, InvalidConfigError

OutputKind = Literal["logits", "probabilities", "log_probabilities"]
OUTPUT_KINDS: tuple[str, ...] = ("logits", "probabilities", "log_probabilities")


@dataclass(frozen=True)
class ModelInterface:
    """How a target model is read: its output kind and its named embedding layers.

    Attributes:
        output: What the model returns: ``logits``, ``probabilities`` (rows sum to 1) or
            ``log_probabilities``.
        embedding_layers: Names of submodules (as in ``model.named_modules()``) whose
            outputs are node embeddings, first hidden layer first. Empty: the model exposes
            no embedding, and attacks that need one are skipped.
        parameters: Whether the adversary may hold the module's weights (False for a model
            only reachable through an inference runtime, e.g. ONNX).
    """

    output: str = "logits"
    embedding_layers: tuple[str, ...] = ()
    parameters: bool = True

    def check(self) -> None:
        """Validate the fields.

        Raises:
            InvalidConfigError: For an unknown output kind or a non-string layer name.
        """
        if self.output not in OUTPUT_KINDS:
            raise InvalidConfigError(f"unknown model output {self.output!r}; choose one of: "
                                     f"{', '.join(OUTPUT_KINDS)}")
        if not all(isinstance(n, str) and n for n in self.embedding_layers):
            raise InvalidConfigError("embedding_layers must be submodule names (strings), e.g. "
                                     "('conv1',); see model.named_modules()")

    @classmethod
    def of(cls, model: Any, output: str = "logits",
           embedding_layers: tuple[str, ...] | list[str] | None = None) -> ModelInterface:
        """The interface of ``model``: given layers, else the ones the class declares.

        Raises:
            InvalidConfigError: For an unknown output kind, or a layer name ``model`` lacks.
        """
        if embedding_layers is None:
            embedding_layers = tuple(getattr(model, "embedding_layers", ()) or ())
        iface = cls(output=output, embedding_layers=tuple(embedding_layers),
                    parameters=isinstance(model, nn.Module))
        iface.check()
        if iface.embedding_layers and callable(getattr(model, "expose_layers", None)):
            # a graph of operators (ONNX): the layers become extra outputs, read per run
            model.expose_layers(iface.embedding_layers)
        elif iface.embedding_layers:
            if not isinstance(model, nn.Module):
                raise InvalidConfigError(
                    f"embedding layers are read with forward hooks on a torch.nn.Module; this "
                    f"model ({type(model).__name__}) exposes its outputs only (an ONNX graph "
                    f"has no submodules to hook): {HOOKABLE_FORMATS}")
            names = dict(model.named_modules())
            missing = [n for n in iface.embedding_layers if n not in names]
            if missing:
                raise InvalidConfigError(
                    f"the model has no submodule {missing[0]!r}; name embedding layers as in "
                    f"model.named_modules(), e.g. {', '.join(list(names)[1:4]) or 'none'}")
            if isinstance(model, torch.fx.GraphModule):
                # an exported program's module runs its operators inline: a hook never fires
                called = {str(n.target) for n in model.graph.nodes if n.op == "call_module"}
                inline = [n for n in iface.embedding_layers if n not in called]
                if inline:
                    raise InvalidConfigError(
                        f"embedding layer {inline[0]!r} never runs as a submodule of this "
                        "model: a torch.export program (.pt2) runs its operators inline and "
                        "graphleaks drops the module stacks torch.export.unflatten would need "
                        "(untrusted file text), so no hook can read it; save the weights "
                        "instead, torch.save(model.state_dict(), 'model.pt'), and audit "
                        "model.pt with --model-class package.module:Class --embedding-layer "
                        f"{inline[0]} (or export to ONNX: {REEXPORT_ONNX_CALL})")
        return iface


#: The attribute a loaded model carries when its input sizes were fixed at export time.
FIXED_SHAPE_ATTR = "graphleaks_fixed_shape"

#: The call that re-exports a model for graphs of any size (as
#: :func:`graphleaks.models.foreign.export_pt2` does).
REEXPORT_CALL = ("torch.export.export(model, (x, edge_index), dynamic_shapes=({0: "
                 "torch.export.Dim('nodes', min=2)}, {1: torch.export.Dim('edges', min=2)}))")
#: The same for an ONNX file (the dynamo exporter takes the same ``dynamic_shapes``).
REEXPORT_ONNX_CALL = ("torch.onnx.export(model, (x, edge_index), 'model.onnx', dynamo=True, "
                      "dynamic_shapes=({0: torch.export.Dim('nodes', min=2)}, {1: "
                      "torch.export.Dim('edges', min=2)}))")
#: The attribute naming a loaded model's re-export call, when it is not ``REEXPORT_CALL``.
REEXPORT_ATTR = "graphleaks_reexport_call"


def reexport_call(model: Any) -> str:
    """The call that re-exports ``model`` with dynamic node and edge counts."""
    call = getattr(model, REEXPORT_ATTR, None)
    return call if isinstance(call, str) else REEXPORT_CALL

#: Where embedding layers can be read (forward hooks on submodules that run).
HOOKABLE_FORMATS = ("audit it as a state_dict with --model-class (or in Python with "
                    "audit_model(..., embedding_layers=...)), where its submodules run")

#: What graphleaks says of a model whose output is not one row per node.
NOT_NODE_LEVEL = ("graphleaks audits node classifiers only today (link prediction and graph "
                  "classification are planned)")


def fixed_shape(model: Any) -> tuple[int | None, int | None] | None:
    """The node and edge counts a loaded model was exported for, or None if it takes any.

    A ``torch.export`` program exported without ``dynamic_shapes`` (or an ONNX graph
    without dynamic axes) accepts only the graph size it was traced with: ``(nodes, edges)``,
    each None where that size is dynamic.
    """
    shape = getattr(model, FIXED_SHAPE_ATTR, None)
    if not isinstance(shape, tuple) or len(shape) != 2 or shape == (None, None):
        return None
    return shape


def check_query_shape(model: Any, num_nodes: int, num_edges: int) -> None:
    """Refuse a query on a graph of another size than a static-shape model was exported for.

    Raises:
        CapabilityError: Naming both sizes and the call that re-exports the model with
            dynamic shapes.
    """
    shape = fixed_shape(model)
    if shape is None:
        return
    nodes, edges = shape
    if (nodes is None or nodes == num_nodes) and (edges is None or edges == num_edges):
        return
    raise CapabilityError(
        f"the model was exported with static shapes ({_size(nodes)} nodes, {_size(edges)} "
        f"edges) and this query has {num_nodes} nodes and {num_edges} edges; re-export it "
        f"with dynamic shapes: {reexport_call(model)}")


def _size(n: int | None) -> str:
    return "any number of" if n is None else str(n)


def as_logits(out: torch.Tensor, output: str) -> torch.Tensor:
    """Outputs as logits: any vector whose softmax is the model's posterior.

    Probabilities become their logarithm (clamped at the smallest positive float, so a zero
    stays finite), which has exactly the model's posterior as its softmax.
    """
    if output == "logits":
        return out
    if output == "log_probabilities":
        return out
    tiny = torch.finfo(out.dtype).tiny if out.is_floating_point() else 1e-38
    return torch.log(out.clamp_min(tiny))


def forward_layers(
    model: Callable[..., torch.Tensor], iface: ModelInterface, x: torch.Tensor,
    edge_index: torch.Tensor,
) -> list[torch.Tensor]:
    """Every declared embedding layer's output, then the output as logits.

    Embedding layers are read with forward hooks during one forward pass. A layer whose
    output is not one ``[num_nodes, d]`` tensor (a tuple, or another row count) is refused.

    Raises:
        CapabilityError: If a declared layer did not run or gave no per-node tensor.
    """
    captured: dict[str, Any] = {}
    handles = []
    run_with_layers = getattr(model, "run_with_layers", None)
    if iface.embedding_layers and callable(run_with_layers):
        out, captured = run_with_layers(x, edge_index)  # an ONNX graph's extra outputs
    elif iface.embedding_layers:
        modules = dict(model.named_modules())  # type: ignore[attr-defined]
        for name in iface.embedding_layers:
            def hook(_m: nn.Module, _i: Any, out: Any, name: str = name) -> None:
                captured[name] = out
            handles.append(modules[name].register_forward_hook(hook))
    if not (iface.embedding_layers and callable(run_with_layers)):
        try:
            out = model(x, edge_index)
        finally:
            for h in handles:
                h.remove()
    n = int(x.shape[0])
    layers = []
    for name in iface.embedding_layers:
        emb = captured.get(name)
        if not isinstance(emb, torch.Tensor) or emb.dim() != 2 or emb.shape[0] != n:
            raise CapabilityError(
                f"embedding layer {name!r} gave no [num_nodes, d] tensor in the forward pass; "
                "name a submodule that outputs node embeddings")
        layers.append(emb)
    if isinstance(out, torch.Tensor) and out.dim() in (1, 2) and out.shape[0] != n:
        # one row per node pair (a link scorer) or per graph (a graph classifier)
        raise InvalidConfigError(
            f"the model returned {tuple(out.shape)} for {n} nodes: one row per pair or per "
            f"graph, not per node; it looks like a link-prediction or graph-classification "
            f"model; {NOT_NODE_LEVEL}")
    if not isinstance(out, torch.Tensor) or out.dim() != 2 or out.shape[0] != n:
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise InvalidConfigError(f"the model returned {shape} for {n} nodes; it must return one "
                                 "[num_nodes, num_classes] tensor")
    layers.append(as_logits(out, iface.output))
    return layers


def check_outputs(out: torch.Tensor, iface: ModelInterface, num_classes: int) -> None:
    """Refuse outputs that contradict the labels or the declared kind.

    Raises:
        DataError: If the width is not the number of classes, a value is not finite, or
            declared probabilities do not sum to one.
    """
    from graphleaks.errors import DataError

    if out.shape[1] != num_classes:
        raise DataError(f"the model outputs {out.shape[1]} columns but the labels have "
                        f"{num_classes} classes; give the labels the model was trained on, or, "
                        "if it returns node embeddings for a link-prediction decoder, note that "
                        f"{NOT_NODE_LEVEL}")
    if iface.output == "logits" and not bool(torch.isfinite(out).all()):
        raise DataError("the model's outputs hold NaN or infinite values; check the model and "
                        "the features")
    if iface.output in ("probabilities", "log_probabilities"):
        p = out.exp() if iface.output == "log_probabilities" else out
        sums = p.double().sum(1)
        if not bool(torch.isfinite(sums).all()) or not bool(
                torch.allclose(sums, torch.ones_like(sums), atol=1e-3)):
            worst = float((sums - 1).abs().max()) if len(sums) else math.nan
            raise DataError(f"the model's outputs declared as {iface.output} do not sum to 1 "
                            f"per node (off by up to {worst:.3g}); pass the right "
                            "output kind (logits, probabilities, log_probabilities)")


def set_eval(model: Any) -> None:
    """Put a module in eval mode; an exported program's module refuses ``eval()`` (it has no
    training mode to leave), which is fine."""
    if isinstance(model, nn.Module):
        try:
            model.eval()
        except NotImplementedError:
            pass


def reset_copy(model: nn.Module) -> nn.Module | None:
    """A fresh, untrained copy of ``model``: deep copy, then every ``reset_parameters``.

    Returns:
        The copy, or None when some parameter belongs to no submodule with a
        ``reset_parameters`` method (the copy would keep trained weights).
    """
    import copy

    fresh = copy.deepcopy(model)
    covered: set[int] = set()
    for module in fresh.modules():
        reset = getattr(module, "reset_parameters", None)
        if callable(reset):
            reset()
            covered.update(id(p) for p in module.parameters())
    if any(id(p) not in covered for p in fresh.parameters()):
        return None
    return fresh
