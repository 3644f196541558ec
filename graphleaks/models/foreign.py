"""Saved models from other pipelines, loaded without unpickling anything.

Three formats, each a target of the model protocol (:mod:`graphleaks.models.protocol`):

* ``.pt2``: a ``torch.export`` program (``torch.export.save``). ``torch.export.load`` itself
  is **not** used: it unpickles entries, ``sympify``\ s (evaluates) the symbolic sizes,
  builds any operator (``aten.from_file`` is file I/O) and allocates what the file declares.
  :func:`load_pt2` first checks the file against the safe subset of
  :mod:`graphleaks.models.pt2_safety`, which also builds the tensors, and only then hands
  the sanitised program to torch's deserializer.
* ONNX, run by onnxruntime (optional extra ``graphleaks[onnx]``). An ONNX file is a
  protobuf: parsing it executes nothing. Custom-operator libraries are loaded only when the
  caller registers them (this module never does).
* A ``state_dict`` (``.safetensors``, or ``.pt`` through ``torch.load(weights_only=True)``,
  whose unpickler admits only tensors and plain containers) loaded into a class the user
  names explicitly (``package.module:Class``) and builds with JSON keyword arguments.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from graphleaks._limits import loads_bounded
from graphleaks._readers import ReaderTable
from graphleaks.errors import DataError, InvalidConfigError

#: Largest model file read (bytes); a larger one is refused before it is opened.
MAX_MODEL_BYTES = 4 * 1024**3



def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def _kind(exc: BaseException) -> str:
    """The exception's type only: a reader's message can quote the file (names, globals)."""
    return type(exc).__name__


def _check_file(path: Path, what: str) -> None:
    if not path.is_file():
        raise DataError(f"{what} {path} does not exist or is not a regular file")
    if path.stat().st_size > MAX_MODEL_BYTES:
        raise DataError(f"{what} {path} is larger than {MAX_MODEL_BYTES} bytes; refusing it")


def load_pt2(path: str | Path) -> nn.Module:
    """A ``torch.export`` program's module, checked against graphleaks' safe subset first.

    :func:`graphleaks.models.pt2_safety.read_safe_pt2` checks the archive, the program,
    its symbolic sizes, operators and tensors, and builds the tensors itself; torch's
    deserializer then sees only the sanitised program and those tensors (see that module
    for what is accepted and refused).

    A program exported with static shapes (no ``dynamic_shapes``) answers only graphs of
    the size it was traced with; the module then carries that size
    (:func:`graphleaks.models.protocol.fixed_shape`), so an audit can run only the attacks
    that query that graph and say how to re-export for the others.

    The module runs every operator inline: its submodules never run, so forward hooks
    (embedding layers) cannot read them, and the module stacks ``torch.export.unflatten``
    would need are dropped by the safety check.

    Raises:
        DataError: For a file that is not a ``.pt2`` archive or lies outside the subset,
            or that torch then fails to deserialize.
    """
    from graphleaks.models.protocol import FIXED_SHAPE_ATTR
    from graphleaks.models.pt2_safety import read_safe_pt2

    p = Path(path)
    _check_file(p, ".pt2 file")
    if not zipfile.is_zipfile(p):
        raise DataError(f".pt2 file {p} is not a torch.export archive (not a zip file); save "
                        "the model with torch.export.save")
    safe = read_safe_pt2(p)
    fix = "re-save it with torch.export.save from plain tensors"
    try:
        from torch._export.serde.schema import ExportedProgram as SerializedProgram
        from torch._export.serde.serialize import (
            ExportedProgramDeserializer,
            _dict_to_dataclass,
        )

        program = _dict_to_dataclass(SerializedProgram, safe.program)
        # example_inputs None: the pickled sample inputs are never read
        ep = ExportedProgramDeserializer(None).deserialize(
            program, safe.weights, safe.constants, None)  # type: ignore[arg-type]
        shape = _pt2_input_shape(ep)
        module: nn.Module = ep.module()
    except Exception as exc:  # torch's own checks of a program inside the subset
        # the exception text may quote the file's names: name only its type
        raise DataError(f".pt2 file {p} could not be deserialized by torch "
                        f"({type(exc).__name__}); {fix}") from exc
    if shape is not None:
        object.__setattr__(module, FIXED_SHAPE_ATTR, shape)
    return module


def _static(size: Any) -> int | None:
    """A dimension's size if it is a concrete integer (static), None if symbolic."""
    return int(size) if isinstance(size, int) else None


def _pt2_input_shape(ep: Any) -> tuple[int | None, int | None] | None:
    """``(nodes, edges)`` the program's two user inputs were fixed to, or None if dynamic."""
    user = list(ep.graph_signature.user_inputs)
    vals = {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}
    inputs = [vals.get(name) for name in user]
    if len(inputs) < 2 or not all(isinstance(v, torch.Tensor) for v in inputs[:2]):
        return None
    x, ei = inputs[0], inputs[1]
    assert isinstance(x, torch.Tensor) and isinstance(ei, torch.Tensor)
    nodes = _static(x.shape[0]) if x.dim() >= 1 else None
    edges = _static(ei.shape[1]) if ei.dim() >= 2 else None
    return None if nodes is None and edges is None else (nodes, edges)


class OnnxModel:
    """An ONNX graph run by onnxruntime, called as ``model(x, edge_index)``.

    The graph's first input takes the float features, its second the int64 edge index;
    its first output is the per-node output. It holds no torch parameters: the adversary of
    an ONNX model reads outputs only.
    """

    def __init__(self, session: Any, path: Path) -> None:
        self._session = session
        self._path = path
        inputs = session.get_inputs()
        self._inputs = [i.name for i in inputs]
        if len(self._inputs) != 2:
            raise DataError(f"ONNX model {path} takes {len(self._inputs)} inputs; it must take "
                            "two: node features [N, F] (float) and edge_index [2, E] (int64)")
        # a concrete dimension (an int, not a name) was fixed at export: only that size runs
        x_shape, ei_shape = list(inputs[0].shape or []), list(inputs[1].shape or [])
        nodes = x_shape[0] if x_shape and isinstance(x_shape[0], int) else None
        edges = ei_shape[1] if len(ei_shape) > 1 and isinstance(ei_shape[1], int) else None
        if nodes is not None or edges is not None:
            from graphleaks.models.protocol import (
                FIXED_SHAPE_ATTR,
                REEXPORT_ATTR,
                REEXPORT_ONNX_CALL,
            )

            setattr(self, FIXED_SHAPE_ATTR, (nodes, edges))
            setattr(self, REEXPORT_ATTR, REEXPORT_ONNX_CALL)

    #: The named intermediate values exposed as extra outputs (:meth:`expose_layers`).
    layer_names: tuple[str, ...] = ()
    _layer_session: Any = None
    _layer_index: tuple[int, ...] = ()

    def __call__(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """Outputs for every node."""
        return self._run(self._session, x, edge_index)[0]

    def run_with_layers(self, x: torch.Tensor,
                        edge_index: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The output and every exposed layer's value, from one inference run."""
        if self._layer_session is None:
            return self(x, edge_index), {}
        out = self._run(self._layer_session, x, edge_index)
        return out[0], {n: out[i] for n, i in zip(self.layer_names, self._layer_index,
                                                   strict=True)}

    def _run(self, session: Any, x: torch.Tensor,
             edge_index: torch.Tensor) -> list[torch.Tensor]:
        feeds = {self._inputs[0]: x.detach().cpu().float().numpy(),
                 self._inputs[1]: edge_index.detach().cpu().long().numpy()}
        try:
            outs = session.run(None, feeds)
        except Exception as exc:  # onnxruntime raises its own exception types
            raise DataError(f"ONNX model {self._path} rejected the graph "
                            f"({_kind(exc)}); check the feature width and that the "
                            "model was exported with dynamic node and edge counts") from exc
        return [torch.from_numpy(np.asarray(o, dtype=np.float32)) for o in outs]

    def expose_layers(self, names: tuple[str, ...]) -> None:
        """Read the named submodules' outputs as extra outputs of the graph (in memory).

        A name is a submodule as in ``model.named_modules()`` (``conv1``,
        ``encoder.conv1``): its output is the last value computed inside that module's
        scope, as the exporter records scopes (``pkg.torch.onnx.name_scopes`` of
        ``torch.onnx.export(..., dynamo=True)``, or ``/conv1/...`` node names of the
        TorchScript exporter); or the exact name of a value of the graph. The file is parsed
        with ``onnx`` (a protobuf: nothing runs), the values are appended to the graph's
        outputs, and onnxruntime runs that copy; the file is never changed.

        Raises:
            InvalidConfigError: For a name the graph has no value for.
            DataError: For a file that does not parse as ONNX.
        """
        if not names:
            return
        import onnx

        try:
            model = onnx.load(str(self._path), load_external_data=False)
        except Exception as exc:  # a protobuf parse error: the file was read by ORT, though
            raise DataError(f"ONNX file {self._path} could not be parsed to expose "
                            f"embedding layers ({_kind(exc)})") from exc
        values = [_layer_value(model.graph, n) for n in names]
        missing = [n for n, v in zip(names, values, strict=True) if v is None]
        if missing:
            raise InvalidConfigError(
                f"the ONNX model has no submodule or value {missing[0]!r}; name a submodule "
                "as in model.named_modules() (e.g. conv1), exported with "
                "torch.onnx.export(..., dynamo=True), which records module scopes")
        present = [o.name for o in model.graph.output]
        for v in dict.fromkeys(values):
            if v not in present:
                model.graph.output.append(onnx.helper.make_empty_tensor_value_info(str(v)))
        outputs = [o.name for o in model.graph.output]
        self._layer_index = tuple(outputs.index(str(v)) for v in values)
        # weights in external files stay onnxruntime's to read, from the model's folder,
        # exactly as when it loads the file itself
        self._layer_session = _session(model.SerializeToString(), self._path,
                                       folder=self._path.resolve().parent)
        self.layer_names = tuple(names)


#: Longest exporter scope record read (characters); a longer one is ignored, not parsed.
MAX_SCOPE_CHARS = 4096


def _scopes(node: Any) -> list[str]:
    """The module scopes the dynamo exporter recorded for ``node`` (outermost first)."""
    import ast

    for prop in node.metadata_props:
        if prop.key == "pkg.torch.onnx.name_scopes" and len(prop.value) <= MAX_SCOPE_CHARS:
            try:  # a literal list of strings; literal_eval builds literals only, runs nothing
                scopes = ast.literal_eval(prop.value)
            except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
                return []
            if isinstance(scopes, list) and all(isinstance(v, str) for v in scopes):
                return scopes[:-1]  # the last entry names the node itself
    return []


def _layer_value(graph: Any, name: str) -> str | None:
    """The graph value a submodule ``name`` outputs: the last value computed in its scope
    (dynamo exporter scopes, or the TorchScript exporter's ``/conv1/...`` node names), or
    a value of that exact name; None if there is none."""
    prefix = "/" + name.replace(".", "/") + "/"
    last = None
    for node in graph.node:
        if node.output and (name in _scopes(node) or node.name.startswith(prefix)):
            last = node.output[0]
    if last is not None:
        return str(last)
    values = {o for node in graph.node for o in node.output}
    return name if name in values else None


def _session(model: str | bytes, path: Path, folder: Path | None = None) -> Any:
    """An onnxruntime CPU session of ``model`` (a path, or the bytes of a model whose
    external weights, if any, lie in ``folder``)."""
    import onnxruntime as ort

    try:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        if folder is not None:
            opts.add_session_config_entry(
                "session.model_external_initializers_file_folder_path", str(folder))
        return ort.InferenceSession(model, sess_options=opts,
                                    providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        raise DataError(f"ONNX file {path} could not be loaded by onnxruntime ({_kind(exc)}); "
                        "export the model with torch.onnx.export") from exc


def load_onnx(path: str | Path) -> OnnxModel:
    """An ONNX model, run with onnxruntime's CPU provider.

    Raises:
        InvalidConfigError: If onnxruntime is not installed.
        DataError: For a file onnxruntime cannot parse.
    """
    p = Path(path)
    _check_file(p, "ONNX file")
    try:
        import onnxruntime  # noqa: F401 - the optional extra, checked before any work
    except ImportError as exc:
        raise InvalidConfigError("auditing an ONNX model needs onnxruntime; install "
                                 "graphleaks[onnx]") from exc
    return OnnxModel(_session(str(p), p), p)


def import_class(spec: str) -> type[nn.Module]:
    """The class named ``package.module:Class``.

    Raises:
        InvalidConfigError: If the name is malformed, cannot be imported, or is no module class.
    """
    import importlib

    module_name, sep, qualname = spec.partition(":")
    if not sep or not module_name or not qualname:
        raise InvalidConfigError(f"--model-class {spec!r} must be package.module:Class")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # the user's code: any import-time error
        raise InvalidConfigError(f"--model-class {spec!r} cannot be imported "
                                 f"({_first_line(exc)}); check the name and PYTHONPATH") from exc
    if not (isinstance(obj, type) and issubclass(obj, nn.Module)):
        raise InvalidConfigError(f"--model-class {spec!r} is not a torch.nn.Module class")
    return obj


def read_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """Tensors of a ``.safetensors`` file, or of a ``.pt`` file loaded with
    ``weights_only=True`` (only tensors and plain containers are admitted).

    Raises:
        DataError: For an unreadable file, a refused object, or a non-tensor entry.
    """
    p = Path(path)
    _check_file(p, "state_dict file")
    try:
        state = STATE_DICT_READERS.read(p)
    except DataError:
        raise
    except Exception as exc:  # the unpickler's refusal or a corrupt file
        if _pickled_module(p):
            raise DataError(f"{p} is a pickled module (torch.save(model)), which graphleaks "
                            "never unpickles; save model.state_dict() (with --model-class) or "
                            "a torch.export program (.pt2)") from exc
        raise DataError(f"state_dict file {p} could not be loaded safely ({_kind(exc)}: not "
                        "plain tensors, or corrupt); save model.state_dict() with torch.save or "
                        "safetensors") from exc
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"],
                                                                         dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise DataError(f"state_dict file {p} does not hold a name -> tensor mapping; save "
                        "model.state_dict()")
    return state


#: Largest pickle stream scanned for the marks of a pickled module (its tensors are stored
#: apart, so a whole model's pickle is small).
MAX_PICKLE_SCAN_BYTES = 16 * 1024 * 1024


def _pickled_module(path: Path) -> bool:
    """Whether a ``torch.save`` archive pickles a whole ``nn.Module`` rather than tensors.

    The pickle's opcodes are listed with :func:`pickletools.genops`, which parses and never
    executes: a pickled module carries the ``_modules`` and ``_parameters`` attribute names
    of ``nn.Module.__dict__``, a state_dict never does.
    """
    import pickletools

    try:
        with zipfile.ZipFile(path) as zf:
            entry = next((i for i in zf.infolist() if i.filename.endswith("/data.pkl")
                          or i.filename == "data.pkl"), None)
            if entry is None or entry.file_size > MAX_PICKLE_SCAN_BYTES:
                return False
            data = zf.read(entry)
        marks = {arg for _op, arg, _pos in pickletools.genops(data)
                 if isinstance(arg, str) and arg in ("_modules", "_parameters")}
    except Exception:  # not an archive, or a pickle that does not parse: no verdict
        return False
    return marks == {"_modules", "_parameters"}


def build_model_factory(model_class: str, model_kwargs: str | None) -> Callable[[], nn.Module]:
    """A factory ``model_class(**json.loads(model_kwargs))``, checked by building one.

    Raises:
        InvalidConfigError: For bad JSON, an import failure, or a constructor failure.
    """
    cls = import_class(model_class)
    try:
        kwargs = loads_bounded(model_kwargs, "--model-kwargs") if model_kwargs else {}
    except json.JSONDecodeError as exc:
        raise InvalidConfigError(f"--model-kwargs is not valid JSON ({exc.msg}); give an "
                                 "object such as '{\"hidden\": 64}'") from exc
    if not isinstance(kwargs, dict):
        raise InvalidConfigError("--model-kwargs must be a JSON object of keyword arguments")

    def factory() -> nn.Module:
        try:
            return cls(**kwargs)
        except Exception as exc:  # the user's constructor
            raise InvalidConfigError(f"{model_class}(**{json.dumps(kwargs)[:80]}) failed "
                                     f"({_first_line(exc)}); check --model-kwargs") from exc

    factory()
    return factory


def load_state_dict_model(path: str | Path, model_class: str,
                          model_kwargs: str | None = None) -> tuple[nn.Module,
                                                                    Callable[[], nn.Module]]:
    """The user's class built with its keyword arguments and the saved weights loaded.

    Returns:
        The model (eval mode) and a factory of fresh copies (for shadow models).

    Raises:
        InvalidConfigError: For a class that cannot be imported or built.
        DataError: For weights that do not fit the class.
    """
    factory = build_model_factory(model_class, model_kwargs)
    state = read_state_dict(path)
    model = factory()
    try:
        model.load_state_dict(state, strict=True)
    except Exception as exc:  # missing/unexpected keys or shape mismatch
        # counted, not listed: the unexpected names are the file's text
        own = model.state_dict()
        missing = len(own.keys() - state.keys())
        unexpected = len(state.keys() - own.keys())
        shapes = sum(1 for k in own.keys() & state.keys() if own[k].shape != state[k].shape)
        raise DataError(f"the weights in {path} do not fit {model_class} ({missing} missing, "
                        f"{unexpected} unexpected, {shapes} of another shape); check "
                        "--model-kwargs") from exc
    model.eval()
    return model, factory


def load_model_file(
    path: str | Path, *, model_class: str | None = None, model_kwargs: str | None = None,
) -> tuple[Any, Callable[[], nn.Module] | None]:
    """Load a saved model of any supported format; also a factory when the class is known.

    Raises:
        InvalidConfigError: For an unknown format or a missing/extra ``--model-class``.
        DataError: For a file that cannot be loaded safely.
    """
    return MODEL_READERS.read(path, model_class=model_class, model_kwargs=model_kwargs)


LoadedModel = tuple[Any, Callable[[], nn.Module] | None]


def _state_dict_entry(path: Path, *, model_class: str | None = None,
                      model_kwargs: str | None = None) -> LoadedModel:
    if model_class is None:
        if _pickled_module(path):  # only a torch.save archive can be one
            raise DataError(f"--model {path} is a pickled module (torch.save(model)), which "
                            "graphleaks never unpickles; save model.state_dict() (with "
                            "--model-class) or a torch.export program (.pt2)")
        raise InvalidConfigError(f"--model {path} holds weights only (a state_dict); name its "
                                 "class with --model-class package.module:Class")
    return load_state_dict_model(path, model_class, model_kwargs)


def _self_contained(load: Callable[[Path], Any]) -> Callable[..., LoadedModel]:
    """A table entry for a format that holds its own graph of operations (no class named)."""

    def read(path: Path, *, model_class: str | None = None,
             model_kwargs: str | None = None) -> LoadedModel:
        if model_class is not None or model_kwargs is not None:
            raise InvalidConfigError(f"--model-class/--model-kwargs apply to state_dict files, "
                                     f"not {path.suffix.lower()}")
        return load(path), None

    return read


def _load_safetensors(path: Path) -> Any:
    from safetensors.torch import load_file

    return load_file(str(path))


def _load_torch_weights(path: Path) -> Any:
    # weights_only: the unpickler admits tensors and plain containers, never code
    return torch.load(path, map_location="cpu", weights_only=True)


#: How a state_dict file's tensors are read; :func:`read_state_dict` checks what comes out.
STATE_DICT_READERS: ReaderTable[Any] = ReaderTable("state_dict file", option="--model")
STATE_DICT_READERS.register("safetensors", (".safetensors",), _load_safetensors,
                            "safetensors state_dict")
STATE_DICT_READERS.register("pt", (".pt",), _load_torch_weights,
                            "torch.save state_dict, loaded with weights_only=True")

#: Formats of saved foreign models (``graphleaks audit-model --model``). Every reader takes
#: ``model_class``/``model_kwargs`` and returns the model and, when its class is known, a
#: factory of fresh copies.
MODEL_READERS: ReaderTable[LoadedModel] = ReaderTable("model file", option="--model",
                                                      error=InvalidConfigError)
MODEL_READERS.register("pt2", (".pt2",), _self_contained(load_pt2),
                       "torch.export program, loaded without pickle")
MODEL_READERS.register("onnx", (".onnx",), _self_contained(load_onnx),
                       "ONNX graph run by onnxruntime (graphleaks[onnx])")
MODEL_READERS.register("safetensors", (".safetensors",), _state_dict_entry,
                       "safetensors state_dict, with --model-class")
MODEL_READERS.register("pt", (".pt",), _state_dict_entry,
                       "torch state_dict (weights_only), with --model-class")
#: The model file suffixes, in the order the CLI lists them.
MODEL_FORMATS: tuple[str, ...] = MODEL_READERS.suffixes()


def export_pt2(model: nn.Module, x: torch.Tensor, edge_index: torch.Tensor,
               path: str | Path) -> Path:
    """Save ``model`` as a ``torch.export`` program with dynamic node and edge counts.

    graphleaks' own :class:`~graphleaks.models.gnn.GNN` is exported through PyG's layers
    (its cached sparse GCN product is an in-process optimisation, not exportable).
    """
    from torch.export import Dim

    from graphleaks.models.gnn import GNN

    module: nn.Module = _ExportableGNN(model) if isinstance(model, GNN) else model
    nodes, edges = Dim("nodes", min=2), Dim("edges", min=2)
    ep = torch.export.export(module.eval(), (x, edge_index),
                             dynamic_shapes=({0: nodes}, {1: edges}), strict=False)
    out = Path(path)
    torch.export.save(ep, str(out))
    return out


class _ExportableGNN(nn.Module):
    """A :class:`GNN` run through PyG's own convolutions (same outputs, exportable)."""

    def __init__(self, gnn: nn.Module) -> None:
        super().__init__()
        self.gnn = gnn

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """Logits; hidden activations after ReLU pass through ``gnn.hidden_out``."""
        import torch.nn.functional as F

        gnn: Any = self.gnn
        h = x
        for i, layer in enumerate(gnn.layers):
            h = layer(h) if isinstance(layer, nn.Linear) else layer(h, edge_index)
            if i < len(gnn.layers) - 1:
                h = gnn.hidden_out[i](F.relu(h))
        return h
