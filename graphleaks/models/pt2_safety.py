"""The safe subset of ``torch.export`` archives (``.pt2``): checked before torch sees a byte.

A ``.pt2`` file from a stranger is hostile until proven otherwise. torch 2.13's own reader
(``torch.export.load``) is unsafe in four ways, each shown by an attacker against graphleaks:
it unpickles entries; it hands every symbolic size (``expr_str``) to ``sympy.sympify``, which
``eval``\\ s the text; it builds a program of *any* operator, and ordinary ATen operators are
side effects (``aten.from_file(path, shared=True)`` followed by ``aten.fill_`` rewrites a
file at the first forward pass); and it allocates what the file declares (an empty record
declaring 1 GiB becomes ``torch.zeros`` of 1 GiB; a deflated record is inflated in full).

:func:`read_safe_pt2` therefore opens the zip with Python's :mod:`zipfile`, checks the whole
archive, reads and checks the program JSON and both tensor tables itself, builds the weight
and constant tensors itself, and returns a *sanitised copy* of the program that torch's
``ExportedProgramDeserializer`` may then turn into a module. Everything below is refused
with one :class:`~graphleaks.errors.DataError` line that names the file and the kind of
problem, never the file's text (an operator outside the allow-list is not named: its name
is file content).

**The subset** (checked against torch 2.13.0, the ``torch.export.save`` format with schema
version 8, ``export_pt2`` and default ``torch.export.export`` programs of PyG GCN, GraphSAGE,
GAT, GIN, SGConv and MLP models on ``(x, edge_index)``, static and dynamic node/edge counts):

* **Archive.** At most :data:`MAX_ENTRIES` entries under one top-level folder, no duplicate
  or unsafe names, no encrypted entries, each entry's bytes inside the file and no two
  overlapping; archive version, format and little-endian byte order as torch writes them;
  exactly one program; no legacy pickled weight/constant file. The pickled sample inputs
  are never read.
* **Tensors** (weights, buffers, tensor constants). Stored uncompressed (``ZIP_STORED``);
  a record's length equals numel × element size of its declared shape and dtype (real
  dtypes and bool only, CPU, strided, contiguous, offset 0); pickled entries, custom
  (torchbind) and opaque objects refused. graphleaks builds the tensors from the bytes:
  torch's record reader, which inflates and allocates as declared, is never called.
* **Memory.** Every stored tensor plus every intermediate whose declared shape is known
  (symbolic sizes at their recorded hint) must fit :data:`MAX_DECLARED_BYTES` (2 GiB),
  summed as if all were alive at once; literal sizes of the allocating operators
  (``new_zeros``, ``arange``, ``repeat``...) are bounded the same way.
* **Program JSON.** At most :data:`MAX_PROGRAM_BYTES` after decompression, nested at most
  :data:`MAX_JSON_DEPTH` deep, at most :data:`MAX_NODES` nodes. Node metadata (stack traces,
  module stacks, ``custom``/``from_node`` JSON) is dropped; graph-module metadata, namedtuple
  definitions, custom objects and ``guards_code`` (turned into Python source and executed by
  ``ExportedProgram.module()``) must be empty; verifiers ``TRAINING``/``ATEN`` only; all
  node, tensor, parameter and module names are Python identifiers (dotted for module paths),
  so FX code generation sees no text it would have to escape.
* **Symbolic sizes** (every ``expr_str``: tensor sizes, strides and offsets, symbolic
  int/bool/float values) must parse under graphleaks' own grammar: integers of at most 20
  digits, symbols ``s<N>``/``u<N>`` (with ``integer``/``positive``/... assumptions, as
  ``Symbol('s77', positive=True, integer=True)``), ``Integer``, ``Add``, ``Mul``, ``Max``,
  ``Min``, ``FloorDiv``, ``CeilDiv``, ``Mod``, ``PythonMod``, the comparisons
  (``GreaterThan``...), ``And``/``Or``/``Not``, ``true``/``false``, and the infix
  ``+ - * //`` with parentheses; at most :data:`MAX_EXPR_CHARS` characters and
  :data:`MAX_EXPR_DEPTH` deep. Range-constraint keys must be such symbols. torch then still
  calls ``sympy.sympify``, but only on text that graphleaks *printed* from its parse tree
  (the file's text is replaced), which can only build those sympy objects from bounded
  integers: no attribute access, no other names, no ``Pow``.
* **Operators.** Exactly the ``torch.ops.aten`` overloads of :data:`PURE_OPS`,
  :data:`ALIASING_OPS` and :data:`INPLACE_OPS`, plus the symbolic-int helpers of
  :data:`SYM_OPS`: pure tensor computations. Anything else is refused: file I/O and storage
  operators (``from_file``, ``set_``, ``copy_``, ``resize_``, ``as_strided``...),
  uninitialised memory (``empty``...), ``out=`` variants, other namespaces, custom operators,
  and every higher-order operator (``torch.ops.higher_order.*``: none is needed). Arguments
  that are subgraphs, custom objects or operators are refused; string arguments must be one
  of :data:`ALLOWED_STRINGS` (an assertion's message is replaced by graphleaks' own).
* **In-place operators** (PyG's GCN normalisation exports ``pow_``, ``masked_fill_`` and
  ``scatter_add_``; its softmax ``scatter_reduce_``) may write only to a tensor the program
  itself allocated: one that is neither an input (user input, parameter, buffer, constant)
  nor reachable from one through an operator that may return its input or a view of it
  (:data:`ALIASING_OPS`, e.g. ``dropout`` in eval mode returns its input). So a program can
  never write to the caller's graph, its own weights, or any memory it did not create.
* **Signature.** Inputs are user tensors, parameters, buffers and tensor constants only;
  outputs are user outputs only (no buffer, parameter or input mutation, no tokens, no
  gradients); input/output tree specs are plain tuples, lists, dicts and leaves.

Not covered (documented residual risk): a program may still compute a large size at run time
from the *input* sizes through a chain of symbolic arithmetic; literal operands are bounded,
but the product of a chain is only bounded by the declared shapes it claims.
``item`` (a one-element tensor read as a number) is admitted because a graph classifier
needs it: its graph count is ``batch.max().item() + 1``, a size only known at run time
(:mod:`graphleaks.models.graph_export`). A program may thus also size an allocation by an
input *value*; the values are the ones graphleaks feeds it (graph ids of its own batches,
the user's features), so this too is a memory risk, never code.
"""

from __future__ import annotations

import io
import json
import math
import re
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from graphleaks.errors import DataError

#: The torch versions whose ``.pt2`` format this module was checked against.
CHECKED_TORCH_VERSIONS = ("2.13.0",)
#: Largest total of declared tensor bytes (stored tensors + declared intermediates).
MAX_DECLARED_BYTES = 2 * 1024**3
#: Largest program JSON (bytes, after decompression) and tensor-table JSON.
MAX_PROGRAM_BYTES = 16 * 1024**2
MAX_CONFIG_BYTES = 4 * 1024**2
#: Deepest JSON nesting accepted (torch 2.13 programs nest about 12 deep).
MAX_JSON_DEPTH = 64
#: Most graph nodes, archive entries.
MAX_NODES = 20_000
MAX_ENTRIES = 10_000
#: Bounds of one symbolic-size expression.
MAX_EXPR_CHARS = 2_000
MAX_EXPR_DEPTH = 32
_MAX_DIM = 2**40  # one literal dimension
_MAX_INT = 2**63  # any literal int (int64 range)

_FIX = "re-export the model with torch.export from plain tensors and PyTorch operators"

# ---------------------------------------------------------------- operator allow-list

#: Pure operators: the output is freshly allocated, the inputs are only read.
PURE_OPS = frozenset({
    # arithmetic and comparisons
    "add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar", "rsub.Tensor", "rsub.Scalar",
    "mul.Tensor", "mul.Scalar", "div.Tensor", "div.Scalar", "div.Tensor_mode", "neg.default",
    "reciprocal.default", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar",
    "sqrt.default", "rsqrt.default", "exp.default", "log.default", "log1p.default",
    "abs.default", "sign.default", "clamp.default", "clamp.Tensor", "clamp_min.default",
    "clamp_max.default", "maximum.default", "minimum.default", "where.self",
    "where.ScalarOther", "where.ScalarSelf", "eq.Scalar", "eq.Tensor", "ne.Scalar",
    "ne.Tensor", "lt.Scalar", "lt.Tensor", "le.Scalar", "le.Tensor", "gt.Scalar", "gt.Tensor",
    "ge.Scalar", "ge.Tensor", "logical_not.default", "logical_and.default",
    "logical_or.default", "isnan.default", "floor.default", "ceil.default", "round.default",
    # activations, normalisation
    "relu.default", "leaky_relu.default", "elu.default", "gelu.default", "sigmoid.default",
    "tanh.default", "softplus.default", "silu.default", "hardtanh.default", "prelu.default",
    "softmax.int", "log_softmax.int", "_softmax.default", "_log_softmax.default",
    "layer_norm.default", "native_layer_norm.default", "batch_norm.default",
    "_native_batch_norm_legit_no_training.default", "linalg_vector_norm.default",
    # linear algebra
    "linear.default", "matmul.default", "mm.default", "addmm.default", "bmm.default",
    # gather/scatter and copies
    "index_select.default", "index.Tensor", "gather.default", "scatter.src",
    "scatter.value", "scatter_add.default", "scatter_reduce.two", "index_add.default",
    "index_put.default", "masked_fill.Scalar", "masked_fill.Tensor", "cat.default",
    "stack.default", "repeat.default", "repeat_interleave.self_int", "clone.default",
    "_to_copy.default", "lift_fresh_copy.default", "embedding.default",
    # reductions
    "sum.dim_IntList", "sum.default", "mean.dim", "mean.default", "amax.default",
    "amin.default", "max.dim", "min.dim", "max.default", "min.default", "argmax.default",
    "argmin.default", "cumsum.default", "prod.default", "prod.dim_int", "all.default",
    "any.default",
    # allocation of initialised memory (sizes bounded below)
    "new_zeros.default", "new_ones.default", "new_full.default", "zeros.default",
    "ones.default", "full.default", "zeros_like.default", "ones_like.default",
    "full_like.default", "arange.default", "arange.start", "arange.start_step",
    # sizes and run-time checks
    "sym_size.int", "sym_numel.default", "sym_stride.int", "_assert_scalar.default",
    "item.default",
    "_assert_tensor_metadata.default", "sym_constrain_range_for_size.default",
})

#: Operators whose output may be (a view of) an input: a write to it may write the input.
ALIASING_OPS = frozenset({
    "view.default", "reshape.default", "_unsafe_view.default", "view_as.default",
    "reshape_as.default", "unsqueeze.default", "squeeze.dim", "squeeze.dims",
    "squeeze.default", "expand.default", "expand_as.default", "t.default", "transpose.int",
    "permute.default", "flatten.using_ints", "contiguous.default", "detach.default",
    "alias.default", "select.int", "slice.Tensor", "narrow.default", "split.Tensor",
    "split_with_sizes.default", "chunk.default", "unbind.int", "to.dtype", "to.dtype_layout",
    "to.device", "type_as.default", "dropout.default", "feature_dropout.default",
    "alpha_dropout.default",
})

#: In-place operators, allowed only on tensors the program allocated itself (see module docs).
INPLACE_OPS = frozenset({
    "pow_.Scalar", "masked_fill_.Scalar", "masked_fill_.Tensor", "scatter_add_.default",
    "scatter_reduce_.two", "scatter_.src", "scatter_.value", "index_add_.default",
    "index_put_.default", "relu_.default", "add_.Tensor", "add_.Scalar", "mul_.Tensor",
    "mul_.Scalar", "div_.Tensor", "div_.Scalar", "sub_.Tensor", "clamp_.default",
    "clamp_min_.default", "fill_.Scalar", "zero_.default",
})

#: Python-level symbolic-int helpers (operands are sizes, never tensors).
SYM_OPS = frozenset({
    "_operator.add", "_operator.sub", "_operator.mul", "_operator.floordiv", "_operator.mod",
    "_operator.eq", "_operator.ne", "_operator.le", "_operator.ge", "_operator.lt",
    "_operator.gt", "_operator.neg", "_operator.and_", "_operator.or_", "torch.sym_max",
    "torch.sym_min", "torch.sym_not",
})

#: Operators whose literal int/int-list arguments size a new tensor.
_ALLOCATING = frozenset({
    "new_zeros.default", "new_ones.default", "new_full.default", "zeros.default",
    "ones.default", "full.default", "arange.default", "arange.start", "arange.start_step",
    "repeat.default", "repeat_interleave.self_int", "expand.default",
})

#: Known operators refused with their reason (named in the message: these are known names).
_KNOWN_REFUSED = {
    "from_file": "file I/O", "save": "file I/O", "load": "file I/O",
    "_copy_from": "writes another tensor's storage", "copy_": "writes another tensor's storage",
    "set_": "swaps a tensor's storage", "resize_": "resizes a tensor's storage",
    "resize_as_": "resizes a tensor's storage", "as_strided": "raw storage access",
    "as_strided_": "raw storage access", "empty": "uninitialised memory",
    "new_empty": "uninitialised memory", "empty_like": "uninitialised memory",
    "empty_strided": "uninitialised memory", "new_empty_strided": "uninitialised memory",
}

#: String arguments allowed (reduction, rounding and approximation modes).
ALLOWED_STRINGS = frozenset({"sum", "prod", "mean", "amax", "amin", "floor", "trunc", "none",
                             "tanh"})

_ASSERT_MESSAGE = "a run-time size check of the exported program failed"

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}\Z")
_FQN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}(\.[A-Za-z0-9_]{1,200}){0,63}\Z")
_SYMBOL = re.compile(r"[su][0-9]{1,9}\Z")
_ENTRY = re.compile(r"[A-Za-z0-9_.\-]{1,200}(/[A-Za-z0-9_.\-]{1,200}){0,15}\Z")

# dtypes a record may hold (schema enum value -> torch dtype): real numbers and bool
_DTYPES: dict[int, torch.dtype] = {
    1: torch.uint8, 2: torch.int8, 3: torch.int16, 4: torch.int32, 5: torch.int64,
    6: torch.float16, 7: torch.float32, 8: torch.float64, 12: torch.bool, 13: torch.bfloat16,
}
_STRIDED = 7  # schema Layout.Strided


class _Refused(Exception):
    """A construct outside the subset; the message names the kind, never the file text."""


@dataclass(frozen=True)
class SafePt2:
    """A checked ``.pt2``: the sanitised program JSON and the tensors built from its bytes.

    Attributes:
        program: The program as a JSON dict, with graphleaks-printed symbolic sizes and
            without node metadata; ready for ``_dict_to_dataclass``.
        weights: Parameters and persistent buffers by name.
        constants: Tensor constants and non-persistent buffers by name.
        declared_bytes: The memory bound that was checked against ``MAX_DECLARED_BYTES``.
    """

    program: dict[str, Any]
    weights: dict[str, torch.Tensor]
    constants: dict[str, torch.Tensor]
    declared_bytes: int


def read_safe_pt2(path: str | Path, *, max_bytes: int | None = None) -> SafePt2:
    """Check a ``.pt2`` archive against the safe subset and read it (see module docs).

    Args:
        path: The archive.
        max_bytes: Memory bound; ``MAX_DECLARED_BYTES`` when ``None``.

    Returns:
        The sanitised program and its tensors; torch has not read any of the file.

    Raises:
        DataError: For any construct outside the subset, naming the file and the kind.
    """
    p = Path(path)
    limit = MAX_DECLARED_BYTES if max_bytes is None else max_bytes
    try:
        with p.open("rb") as fh, zipfile.ZipFile(fh) as zf:
            return _Reader(zf, fh, limit).read()
    except _Refused as exc:
        raise DataError(f".pt2 file {p}: {exc}; {_FIX}") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            struct.error) as exc:
        raise DataError(f".pt2 file {p} is not a readable zip archive "
                        f"({type(exc).__name__}); save the model with torch.export.save"
                        ) from None


# ---------------------------------------------------------------- the archive

class _Reader:
    def __init__(self, zf: zipfile.ZipFile, fh: Any, limit: int) -> None:
        self.zf = zf
        self.fh = fh
        self.limit = limit
        self.infos: dict[str, zipfile.ZipInfo] = {}
        self.prefix = ""

    def read(self) -> SafePt2:
        from torch.export.pt2_archive import constants as c

        self._check_entries()
        version = self._text(c.ARCHIVE_VERSION_PATH, 64)
        if version is None or version.strip() != c.ARCHIVE_VERSION_VALUE:
            raise _Refused("it has no or another archive version (torch.export.save format "
                           f"{c.ARCHIVE_VERSION_VALUE} of torch "
                           f"{', '.join(CHECKED_TORCH_VERSIONS)})")
        fmt = self._text(c.ARCHIVE_FORMAT_PATH, 64)
        if fmt is not None and fmt.strip() != c.ARCHIVE_FORMAT_VALUE:
            raise _Refused("its archive format is not a torch.export program")
        order = self._text("byteorder", 64)
        if order is not None and order.strip() != "little":
            raise _Refused("its tensors are not stored little-endian")
        prefix, suffix = c.MODELS_FILENAME_FORMAT.split("{}")
        models = [n[len(prefix):-len(suffix)] for n in self.infos
                  if n.startswith(prefix) and n.endswith(suffix)]
        if len(models) != 1:
            raise _Refused(f"it holds {len(models)} exported programs, not exactly one")
        model = models[0]
        if not _IDENT.match(model):
            raise _Refused("its program name is not an identifier")
        for legacy in (f"{c.WEIGHTS_DIR}{model}.pt", f"{c.CONSTANTS_DIR}{model}.pt"):
            if legacy in self.infos:
                raise _Refused("it stores its weights as a pickle (legacy format), which "
                               "graphleaks never unpickles")
        weights, w_bytes = self._tensors(c.WEIGHTS_CONFIG_FILENAME_FORMAT.format(model),
                                         c.WEIGHTS_DIR, "weight", c.WEIGHT_FILENAME_PREFIX)
        constants, c_bytes = self._tensors(c.CONSTANTS_CONFIG_FILENAME_FORMAT.format(model),
                                           c.CONSTANTS_DIR, "constant",
                                           c.TENSOR_CONSTANT_FILENAME_PREFIX)
        # XL weights and AOTInductor/ExecuTorch payloads are other formats: never read
        stored = w_bytes + c_bytes
        if stored > self.limit:
            raise _Refused(f"its tensors need {stored} bytes, more than graphleaks' limit "
                           f"of {self.limit}")
        raw = self._bytes(c.MODELS_FILENAME_FORMAT.format(model), MAX_PROGRAM_BYTES, "program")
        doc = _load_json(raw, "program")
        program, intermediate = _Program(doc, set(weights), set(constants), self.limit).check()
        total = stored + intermediate
        if total > self.limit:
            raise _Refused(f"its tensors and declared intermediate results need {total} "
                           f"bytes, more than graphleaks' limit of {self.limit}")
        return SafePt2(program, weights, constants, total)

    def _check_entries(self) -> None:
        infos = self.zf.infolist()
        if not infos or len(infos) > MAX_ENTRIES:
            raise _Refused(f"it has {len(infos)} entries (1 to {MAX_ENTRIES} allowed)")
        tops = set()
        size = self.fh.seek(0, io.SEEK_END)
        spans = []
        for info in infos:
            name = info.filename
            if (not _ENTRY.match(name) or ".." in name.split("/") or name in self.infos):
                raise _Refused("it has an entry with an unsafe or duplicate name")
            if info.flag_bits & 0x1:
                raise _Refused("it has an encrypted entry")
            tops.add(name.split("/", 1)[0])
            self.infos[name] = info
            # the local header gives the real data offset; a span past the end or across
            # another entry is a forged archive (overlapping-entry zip bombs)
            self.fh.seek(info.header_offset)
            head = self.fh.read(30)
            if len(head) != 30 or head[:4] != b"PK\x03\x04":
                raise _Refused("it has an entry whose header is missing")
            name_len, extra_len = struct.unpack("<HH", head[26:30])
            start = info.header_offset
            end = info.header_offset + 30 + name_len + extra_len + info.compress_size
            if end > size:
                raise _Refused("it has an entry that runs past the end of the file")
            spans.append((start, end))
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
            if start < end:
                raise _Refused("it has overlapping entries")
        if len(tops) != 1:
            raise _Refused("its entries are not under one top-level folder")
        self.prefix = tops.pop() + "/"
        self.infos = {n[len(self.prefix):]: i for n, i in self.infos.items()}

    def _bytes(self, name: str, cap: int, what: str) -> bytes:
        info = self.infos[name] if name in self.infos else None
        if info is None:
            raise _Refused(f"it has no {what}")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _Refused(f"its {what} uses an unsupported compression")
        if info.file_size > cap:
            raise _Refused(f"its {what} is larger than {cap} bytes")
        with self.zf.open(info) as f:
            data = f.read(cap + 1)  # never inflate past the cap, whatever the header says
        if len(data) > cap:
            raise _Refused(f"its {what} is larger than {cap} bytes")
        return data

    def _text(self, name: str, cap: int) -> str | None:
        if name not in self.infos:
            return None
        try:
            return self._bytes(name, cap, "archive metadata").decode("ascii")
        except UnicodeDecodeError:
            raise _Refused("its archive metadata is not text") from None

    def _tensors(self, cfg_name: str, folder: str, what: str,
                 prefix: str) -> tuple[dict[str, torch.Tensor], int]:
        doc = _load_json(self._bytes(cfg_name, MAX_CONFIG_BYTES, f"{what} table"),
                         f"{what} table")
        config = doc.get("config") if isinstance(doc, dict) else None
        if not isinstance(config, dict) or set(doc) != {"config"}:
            raise _Refused(f"its {what} table is malformed")
        files: dict[str, tuple[torch.Tensor, tuple[int, ...], torch.dtype]] = {}
        out: dict[str, torch.Tensor] = {}
        total = 0
        for fqn, meta in config.items():
            if not isinstance(meta, dict) or not _FQN.match(fqn):
                raise _Refused(f"its {what} table has a malformed entry")
            if meta.get("use_pickle") is not False:
                raise _Refused(f"a {what} is stored as a pickled object, which graphleaks "
                               "never unpickles")
            path_name = meta.get("path_name")
            if not isinstance(path_name, str) or not _IDENT.match(path_name):
                raise _Refused(f"a {what} names a malformed record")
            if not path_name.startswith(prefix):
                raise _Refused(f"a {what} is a custom or opaque object stored as a pickled "
                               "object, which graphleaks never unpickles")
            if not isinstance(meta.get("is_param"), bool):
                raise _Refused(f"its {what} table is malformed")
            dtype, sizes, requires_grad = _record_meta(meta.get("tensor_meta"), what)
            numel = math.prod(sizes)
            nbytes = numel * _itemsize(dtype)
            if path_name in files:
                tensor, shape, dt = files[path_name]
                if shape != sizes or dt != dtype:
                    raise _Refused(f"two {what}s share a record with different shapes")
            else:
                record = f"{folder}{path_name}"
                info = self.infos.get(record)
                if info is None:
                    raise _Refused(f"a {what} record is missing")
                if info.compress_type != zipfile.ZIP_STORED:
                    raise _Refused(f"a {what} record is compressed (graphleaks reads tensors "
                                   "only stored uncompressed, as torch.export.save writes "
                                   "them)")
                if info.file_size != nbytes or info.compress_size != nbytes:
                    raise _Refused(f"a {what} record's length does not match its declared "
                                   "shape and dtype")
                total += nbytes
                if total > self.limit:
                    raise _Refused(f"its tensors need more than graphleaks' limit of "
                                   f"{self.limit} bytes")
                data = self.zf.read(info) if nbytes else b""
                if len(data) != nbytes:
                    raise _Refused(f"a {what} record is truncated")
                tensor = (torch.frombuffer(bytearray(data), dtype=dtype).reshape(sizes)
                          if nbytes else torch.zeros(sizes, dtype=dtype))
                files[path_name] = (tensor, sizes, dtype)
            if meta["is_param"]:
                out[fqn] = torch.nn.Parameter(tensor, requires_grad=requires_grad)
            else:
                out[fqn] = tensor
        return out, total


def _itemsize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def _record_meta(meta: Any, what: str) -> tuple[torch.dtype, tuple[int, ...], bool]:
    if not isinstance(meta, dict):
        raise _Refused(f"a {what} has no tensor description")
    dtype = _DTYPES.get(meta.get("dtype"))  # type: ignore[arg-type]
    if dtype is None or isinstance(meta.get("dtype"), bool):
        raise _Refused(f"a {what} has a dtype outside graphleaks' subset (real numbers "
                       "and bool)")
    if meta.get("layout") != _STRIDED or meta.get("device") != {"type": "cpu", "index": None}:
        raise _Refused(f"a {what} is not a strided CPU tensor (export on the CPU)")
    sizes = meta.get("sizes")
    strides = meta.get("strides")
    if not isinstance(sizes, list) or not isinstance(strides, list) or len(sizes) > 16:
        raise _Refused(f"a {what} has a malformed shape")
    dims = tuple(_literal_dim(s, what) for s in sizes)
    expect, acc = [], 1
    for d in reversed(dims):
        expect.append(acc)
        acc *= max(d, 1)
    if ([_literal_dim(s, what) for s in strides] != expect[::-1]
            or meta.get("storage_offset") != {"as_int": 0}):
        raise _Refused(f"a {what} is not stored contiguously from offset 0")
    if not isinstance(meta.get("requires_grad"), bool):
        raise _Refused(f"a {what} has a malformed tensor description")
    return dtype, dims, meta["requires_grad"]


def _literal_dim(s: Any, what: str) -> int:
    if (not isinstance(s, dict) or set(s) != {"as_int"} or type(s["as_int"]) is not int
            or not 0 <= s["as_int"] <= _MAX_DIM):
        raise _Refused(f"a {what} has a symbolic or out-of-range size")
    return int(s["as_int"])


def _load_json(raw: bytes, what: str) -> Any:
    try:
        doc = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise _Refused(f"its {what} is nested too deeply") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise _Refused(f"its {what} is not valid JSON") from None
    # json.loads recurses to Python's limit; the walk below bounds what torch will recurse on
    stack = [(doc, 1)]
    while stack:
        obj, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise _Refused(f"its {what} is nested more than {MAX_JSON_DEPTH} deep")
        if isinstance(obj, dict):
            stack.extend((v, depth + 1) for v in obj.values())
        elif isinstance(obj, list):
            stack.extend((v, depth + 1) for v in obj)
    return doc


# ---------------------------------------------------------------- symbolic sizes

_TOKEN = re.compile(r"\s*(?:(?P<int>[0-9]{1,20})|(?P<name>[A-Za-z_][A-Za-z0-9_]{0,30})"
                    r"|(?P<str>'[su][0-9]{1,9}')|(?P<op>//|[-+*(),=]))")

#: Expression heads (call form): name -> (min args, max args).
_HEADS = {
    "Integer": (1, 1), "Add": (2, 64), "Mul": (2, 64), "Max": (2, 64), "Min": (2, 64),
    "FloorDiv": (2, 2), "CeilDiv": (2, 2), "Mod": (2, 2), "PythonMod": (2, 2),
    "GreaterThan": (2, 2), "LessThan": (2, 2), "StrictGreaterThan": (2, 2),
    "StrictLessThan": (2, 2), "Eq": (2, 2), "Ne": (2, 2), "Equality": (2, 2),
    "Unequality": (2, 2), "And": (2, 64), "Or": (2, 64), "Not": (1, 1),
}
_ASSUMPTIONS = frozenset({"integer", "positive", "nonnegative", "real", "finite"})
_CONSTANTS = frozenset({"true", "false"})


@dataclass(frozen=True)
class _Expr:
    """A parsed symbolic size: ``kind`` is 'int', 'sym', 'const', a head, or an infix op."""

    kind: str
    value: Any = None  # int, symbol name, or constant name
    args: tuple[_Expr, ...] = ()
    assumptions: tuple[tuple[str, bool], ...] | None = None  # None: a bare symbol name


def parse_sym_expr(text: str) -> _Expr:
    """Parse one symbolic size under graphleaks' grammar (see module docs).

    Raises:
        _Refused: For anything outside the grammar (the text is never echoed).
    """
    if not isinstance(text, str) or len(text) > MAX_EXPR_CHARS:
        raise _Refused("a symbolic size is too long or not text")
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _Refused("a symbolic size uses a construct outside graphleaks' grammar")
        kind = m.lastgroup or ""
        tokens.append((kind, m.group(kind)))
        pos = m.end()
    parser = _Parser(tokens)
    expr = parser.expr(0)
    if parser.i != len(tokens):
        raise _Refused("a symbolic size uses a construct outside graphleaks' grammar")
    return expr


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.t = tokens
        self.i = 0

    def _bad(self) -> _Refused:
        return _Refused("a symbolic size uses a construct outside graphleaks' grammar")

    def peek(self) -> tuple[str, str]:
        return self.t[self.i] if self.i < len(self.t) else ("end", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok[0] == "end" or (value is not None and tok[1] != value):
            raise self._bad()
        self.i += 1
        return tok

    def expr(self, depth: int) -> _Expr:
        # infix: sum of products; '//' binds like '*'
        left = self.term(depth)
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            left = _Expr(op, args=(left, self.term(depth)))
        return left

    def term(self, depth: int) -> _Expr:
        left = self.unary(depth)
        while self.peek()[1] in ("*", "//"):
            op = self.take()[1]
            left = _Expr(op, args=(left, self.unary(depth)))
        return left

    def unary(self, depth: int) -> _Expr:
        if depth > MAX_EXPR_DEPTH:
            raise _Refused(f"a symbolic size is nested more than {MAX_EXPR_DEPTH} deep")
        kind, value = self.peek()
        if value == "-":
            self.take()
            return _Expr("neg", args=(self.unary(depth + 1),))
        if value == "(":
            self.take()
            inner = self.expr(depth + 1)
            self.take(")")
            return inner
        if kind == "int":
            self.take()
            return _Expr("int", int(value))
        if kind != "name":
            raise self._bad()
        self.take()
        if _SYMBOL.match(value):
            return _Expr("sym", value)
        if value in _CONSTANTS:
            return _Expr("const", value)
        if value == "Symbol":
            return self.symbol()
        if value not in _HEADS:
            raise self._bad()
        self.take("(")
        args = [self.expr(depth + 1)]
        while self.peek()[1] == ",":
            self.take()
            args.append(self.expr(depth + 1))
        self.take(")")
        lo, hi = _HEADS[value]
        if not lo <= len(args) <= hi:
            raise self._bad()
        if value == "Integer":
            if args[0].kind == "int":
                return args[0]
            if args[0].kind == "neg" and args[0].args[0].kind == "int":
                return _Expr("int", -args[0].args[0].value)
            raise self._bad()
        return _Expr(value, args=tuple(args))

    def symbol(self) -> _Expr:
        self.take("(")
        kind, value = self.take()
        if kind != "str":
            raise self._bad()
        name = value[1:-1]
        assumptions = []
        while self.peek()[1] == ",":
            self.take()
            key = self.take()
            self.take("=")
            flag = self.take()
            if (key[0] != "name" or key[1] not in _ASSUMPTIONS
                    or flag[1] not in ("True", "False")):
                raise self._bad()
            assumptions.append((key[1], flag[1] == "True"))
        self.take(")")
        return _Expr("sym", name, assumptions=tuple(assumptions))


def print_sym_expr(e: _Expr) -> str:
    """The text torch will ``sympify``: printed by graphleaks from a parse tree."""
    if e.kind == "int":
        return f"Integer({int(e.value)})"
    if e.kind == "sym":
        if e.assumptions is None:
            return str(e.value)
        flags = "".join(f", {k}={bool(v)}" for k, v in e.assumptions)
        return f"Symbol('{e.value}'{flags})"
    if e.kind == "const":
        return str(e.value)
    if e.kind == "neg":
        return f"(-{print_sym_expr(e.args[0])})"
    if e.kind in ("+", "-", "*", "//"):
        return f"({print_sym_expr(e.args[0])} {e.kind} {print_sym_expr(e.args[1])})"
    return f"{e.kind}({', '.join(print_sym_expr(a) for a in e.args)})"


def _symbols(e: _Expr) -> set[str]:
    out = {str(e.value)} if e.kind == "sym" else set()
    for a in e.args:
        out |= _symbols(a)
    return out


def _evaluate(e: _Expr, env: dict[str, int]) -> int | None:
    """The value of an integer expression at the symbols' hints; None if unknown."""
    if e.kind == "int":
        return int(e.value)
    if e.kind == "sym":
        return env.get(str(e.value))
    vals = [_evaluate(a, env) for a in e.args]
    if any(v is None for v in vals):
        return None
    v = [int(x) for x in vals if x is not None]
    try:
        if e.kind in ("+", "Add"):
            return sum(v)
        if e.kind == "-":
            return v[0] - v[1]
        if e.kind == "neg":
            return -v[0]
        if e.kind in ("*", "Mul"):
            return math.prod(v)
        if e.kind in ("//", "FloorDiv"):
            return v[0] // v[1]
        if e.kind == "CeilDiv":
            return -(-v[0] // v[1])
        if e.kind in ("Mod", "PythonMod"):
            return v[0] % v[1]
        if e.kind == "Max":
            return max(v)
        if e.kind == "Min":
            return min(v)
    except ZeroDivisionError:
        return None
    return None


# ---------------------------------------------------------------- the program

_TOP_KEYS = {"graph_module", "opset_version", "range_constraints", "schema_version",
             "verifiers", "torch_version", "guards_code"}
_GM_KEYS = {"graph", "signature", "module_call_graph", "metadata", "treespec_namedtuple_fields"}
_GRAPH_KEYS = {"inputs", "outputs", "nodes", "tensor_values", "sym_int_values",
               "sym_bool_values", "is_single_tensor_return", "custom_obj_values",
               "sym_float_values"}
_TENSOR_ARGS = ("as_tensor", "as_tensors", "as_optional_tensor", "as_optional_tensors")
_SCALAR_ARGS = {"as_none", "as_int", "as_ints", "as_float", "as_floats", "as_bool", "as_bools",
                "as_scalar_type", "as_memory_format", "as_layout", "as_device", "as_string",
                "as_sym_int", "as_sym_ints", "as_sym_bool", "as_sym_bools", "as_sym_float",
                "as_sym_floats"}
_OUTPUT_ARGS = {"as_tensor", "as_tensors", "as_sym_int", "as_sym_bool", "as_sym_float",
                "as_none", "as_optional_tensors"}


def _refuse_target(target: str) -> _Refused:
    if target.startswith("torch.ops.aten."):
        op = target[len("torch.ops.aten."):].split(".")[0]
        if op in _KNOWN_REFUSED:
            return _Refused(f"operator aten.{op} is not allowed ({_KNOWN_REFUSED[op]})")
        if op.endswith("_") and _IDENT.match(op):
            return _Refused("it has an in-place ATen operator outside graphleaks' allow-list")
        if target.endswith(".out"):
            return _Refused("it has an out= operator variant (writes a given tensor)")
        return _Refused("it has an ATen operator outside graphleaks' allow-list")
    if target.startswith("torch.ops.higher_order."):
        return _Refused("it has a higher-order operator (torch.ops.higher_order), which "
                        "graphleaks does not load")
    if target.startswith("torch.ops."):
        return _Refused("it has a custom operator (a namespace other than aten)")
    return _Refused("it has an operator outside graphleaks' allow-list")


class _Program:
    """Checks and sanitises the program JSON (see module docs)."""

    def __init__(self, doc: Any, weights: set[str], constants: set[str], limit: int) -> None:
        self.doc = doc
        self.weights = weights
        self.constants = constants
        self.limit = limit
        self.hints: dict[str, int] = {}

    def check(self) -> tuple[dict[str, Any], int]:
        from torch._export.serde.schema import SCHEMA_VERSION

        doc = self.doc
        if not isinstance(doc, dict) or not set(doc) <= _TOP_KEYS or "graph_module" not in doc:
            raise _Refused("its program is not a torch.export program")
        sv = doc.get("schema_version")
        if not isinstance(sv, dict) or sv.get("major") != SCHEMA_VERSION[0]:
            raise _Refused(f"its program has another schema version (torch "
                           f"{', '.join(CHECKED_TORCH_VERSIONS)} writes {SCHEMA_VERSION[0]})")
        if doc.get("guards_code", []) != []:
            raise _Refused("its program carries guard code, which torch would execute")
        verifiers = doc.get("verifiers", [])
        if not isinstance(verifiers, list) or not set(verifiers) <= {"TRAINING", "ATEN"}:
            raise _Refused("its program names a verifier other than TRAINING or ATEN")
        opset = doc.get("opset_version", {})
        if (not isinstance(opset, dict) or not set(opset) <= {"aten"}
                or not all(type(v) is int for v in opset.values())):
            raise _Refused("its program uses an operator set other than aten")
        ranges = doc.get("range_constraints", {})
        if not isinstance(ranges, dict):
            raise _Refused("its range constraints are malformed")
        for key, r in ranges.items():
            if (not _SYMBOL.match(key) or not isinstance(r, dict)
                    or set(r) != {"min_val", "max_val"}
                    or not all(v is None or (type(v) is int and abs(v) <= _MAX_INT)
                               for v in r.values())):
                raise _Refused("a range constraint is outside graphleaks' grammar")
        if not isinstance(doc.get("torch_version", ""), str):
            raise _Refused("its torch version is malformed")
        gm = doc["graph_module"]
        if not isinstance(gm, dict) or not set(gm) <= _GM_KEYS:
            raise _Refused("its graph module is malformed")
        if gm.get("treespec_namedtuple_fields", {}) != {}:
            raise _Refused("its inputs or outputs are namedtuples, which graphleaks does not "
                           "load")
        graph = gm.get("graph")
        if not isinstance(graph, dict) or not set(graph) <= _GRAPH_KEYS:
            raise _Refused("its graph is malformed")
        if graph.get("custom_obj_values", {}) != {}:
            raise _Refused("it holds custom (torchbind) objects, which graphleaks does not "
                           "load")
        out = dict(doc)
        out["torch_version"] = str(doc.get("torch_version", ""))[:40]
        gm_out = dict(gm)
        gm_out["metadata"] = {}
        gm_out["treespec_namedtuple_fields"] = {}
        gm_out["module_call_graph"] = self._call_graph(gm.get("module_call_graph"))
        intermediate, graph_out = self._graph(graph)
        gm_out["graph"] = graph_out
        self._signature(gm.get("signature"), graph_out)
        out["graph_module"] = gm_out
        return out, intermediate

    # -- symbolic values

    def _sym_expr(self, v: Any, kind: str) -> tuple[dict[str, Any], int | None]:
        if not isinstance(v, dict) or not set(v) <= {"expr_str", "hint"}:
            raise _Refused("a symbolic size is malformed")
        expr = parse_sym_expr(v.get("expr_str"))  # type: ignore[arg-type]
        hint = v.get("hint")
        out: dict[str, Any] = {"expr_str": print_sym_expr(expr), "hint": None}
        value = None
        if hint is not None:
            if not isinstance(hint, dict) or len(hint) != 1:
                raise _Refused("a symbolic size has a malformed hint")
            (hk, hv), = hint.items()
            ok = {"as_int": lambda x: type(x) is int and abs(x) <= _MAX_INT,
                  "as_bool": lambda x: type(x) is bool,
                  "as_float": lambda x: type(x) in (float, int) and math.isfinite(x)}
            if hk not in ok or not ok[hk](hv) or (kind == "int" and hk != "as_int"):
                raise _Refused("a symbolic size has a malformed hint")
            out["hint"] = {hk: hv}
            if hk == "as_int":
                value = int(hv)
                if expr.kind == "sym":
                    self.hints.setdefault(str(expr.value), value)
        if value is None and kind == "int":
            value = _evaluate(expr, self.hints)
        return out, value

    def _sym(self, s: Any, kind: str) -> tuple[dict[str, Any], int | None]:
        """A SymInt/SymBool/SymFloat union: a literal or an expression."""
        literal = {"int": "as_int", "bool": "as_bool", "float": "as_float"}[kind]
        if not isinstance(s, dict) or len(s) != 1:
            raise _Refused("a symbolic value is malformed")
        (k, v), = s.items()
        if k == "as_expr":
            expr, value = self._sym_expr(v, kind)
            return {"as_expr": expr}, value
        if k != literal:
            raise _Refused("a symbolic value is malformed")
        if kind == "int":
            if type(v) is not int or abs(v) > _MAX_INT:
                raise _Refused("a literal size is out of range")
            return s, int(v)
        if kind == "bool" and type(v) is not bool:
            raise _Refused("a symbolic value is malformed")
        if kind == "float":
            _check_float(v)
        return s, None

    def _tensor_meta(self, meta: Any) -> tuple[dict[str, Any], int]:
        if not isinstance(meta, dict) or set(meta) != {"dtype", "sizes", "requires_grad",
                                                         "device", "strides",
                                                         "storage_offset", "layout"}:
            raise _Refused("a tensor description is malformed")
        dtype = _DTYPES.get(meta["dtype"]) if type(meta["dtype"]) is int else None
        if dtype is None:
            raise _Refused("a tensor has a dtype outside graphleaks' subset (real numbers "
                           "and bool)")
        if meta["layout"] != _STRIDED or meta["device"] != {"type": "cpu", "index": None}:
            raise _Refused("a tensor is not a strided CPU tensor (export on the CPU)")
        if not isinstance(meta["requires_grad"], bool):
            raise _Refused("a tensor description is malformed")
        if (not isinstance(meta["sizes"], list) or not isinstance(meta["strides"], list)
                or len(meta["sizes"]) > 16 or len(meta["strides"]) != len(meta["sizes"])):
            raise _Refused("a tensor has a malformed shape")
        sizes, known = [], True
        numel = 1
        for s in meta["sizes"]:
            s_out, value = self._sym(s, "int")
            sizes.append(s_out)
            if value is None:
                known = False
            elif not 0 <= value <= _MAX_DIM:
                raise _Refused("a tensor declares a size out of range")
            else:
                numel *= value
        strides = [self._sym(s, "int")[0] for s in meta["strides"]]
        offset = self._sym(meta["storage_offset"], "int")[0]
        out = dict(meta, sizes=sizes, strides=strides, storage_offset=offset)
        return out, (numel * _itemsize(dtype) if known else 0)

    # -- graph

    def _graph(self, graph: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        out = dict(graph)
        total = 0
        tv = graph.get("tensor_values", {})
        if not isinstance(tv, dict):
            raise _Refused("its tensor table is malformed")
        out["tensor_values"] = {}
        # symbols first, so that sizes written as expressions evaluate at their hints
        for key, kind in (("sym_int_values", "int"), ("sym_bool_values", "bool"),
                          ("sym_float_values", "float")):
            table = graph.get(key, {})
            if not isinstance(table, dict):
                raise _Refused("its symbolic values are malformed")
            out[key] = {}
            for name, v in table.items():
                _name(name)
                out[key][name] = self._sym(v, kind)[0]
        for name, meta in tv.items():
            _name(name)
            out["tensor_values"][name], nbytes = self._tensor_meta(meta)
            total += nbytes
            if total > self.limit:
                raise _Refused(f"its declared intermediate results need more than "
                               f"graphleaks' limit of {self.limit} bytes")
        inputs = graph.get("inputs")
        if not isinstance(inputs, list):
            raise _Refused("its graph inputs are malformed")
        defined: set[str] = set()
        for a in inputs:
            if not isinstance(a, dict) or set(a) != {"as_tensor"}:
                raise _Refused("its graph takes an input that is not a tensor")
            defined.add(_tensor_name(a["as_tensor"]))
        # every input (user tensor, weight, buffer, constant) is something a write must not reach
        tainted = set(defined)
        nodes = graph.get("nodes")
        if not isinstance(nodes, list) or len(nodes) > MAX_NODES:
            raise _Refused(f"its graph has more than {MAX_NODES} nodes or none")
        out["nodes"] = [self._node(n, defined, tainted) for n in nodes]
        outputs = graph.get("outputs")
        if not isinstance(outputs, list):
            raise _Refused("its graph outputs are malformed")
        for a in outputs:
            self._arg(a, defined, _OUTPUT_ARGS)
        if not isinstance(graph.get("is_single_tensor_return", False), bool):
            raise _Refused("its graph is malformed")
        out["custom_obj_values"] = {}
        return total, out

    def _node(self, node: Any, defined: set[str], tainted: set[str]) -> dict[str, Any]:
        if not isinstance(node, dict) or not set(node) <= {"target", "inputs", "outputs",
                                                           "metadata", "name",
                                                           "is_hop_single_tensor_return"}:
            raise _Refused("a graph node is malformed")
        target = node.get("target")
        if not isinstance(target, str):
            raise _Refused("a graph node is malformed")
        op = target[len("torch.ops.aten."):] if target.startswith("torch.ops.aten.") else None
        if not ((op is not None and (op in PURE_OPS or op in ALIASING_OPS
                                     or op in INPLACE_OPS)) or target in SYM_OPS):
            raise _refuse_target(target)
        if node.get("name") is not None:
            _name(node["name"])
        if node.get("is_hop_single_tensor_return") not in (None, False):
            raise _Refused("a graph node is malformed")
        inputs = node.get("inputs")
        outputs = node.get("outputs")
        if not isinstance(inputs, list) or not isinstance(outputs, list):
            raise _Refused("a graph node is malformed")
        new_inputs, read = [], set()
        for ni in inputs:
            if (not isinstance(ni, dict) or not set(ni) <= {"name", "arg", "kind"}
                    or not isinstance(ni.get("name"), str) or not _IDENT.match(ni["name"])
                    or not (ni.get("kind") is None or type(ni.get("kind")) is int)):
                raise _Refused("a graph node has a malformed argument")
            arg: dict[str, Any] = ni["arg"] if isinstance(ni.get("arg"), dict) else {}
            names = self._arg(arg, defined, _SCALAR_ARGS | set(_TENSOR_ARGS))
            read |= names
            (key, value), = arg.items()
            if key == "as_string":
                if op == "_assert_scalar.default":
                    arg = {"as_string": _ASSERT_MESSAGE}
                elif value not in ALLOWED_STRINGS:
                    raise _Refused("a graph node has a string argument outside graphleaks' "
                                   "allow-list")
            if op in _ALLOCATING:
                self._bound_literal(key, value)
            if op == "dropout.default" and ni["name"] == "train" and value is not False:
                raise _Refused("it applies dropout at evaluation time (random outputs)")
            if op in INPLACE_OPS and ni["name"] == "self":
                if key != "as_tensor" or names & tainted:
                    raise _Refused(f"operator aten.{op.split('.')[0]} writes to an input, a "
                                   "weight or a view of one (graphleaks allows in-place "
                                   "operators only on tensors the program allocates)")
            new_inputs.append({**ni, "arg": arg})
        produced = set()
        for a in outputs:
            produced |= self._arg(a, None, _OUTPUT_ARGS)
        # an aliasing op's output may be its input; an in-place op's output is its target
        if op in ALIASING_OPS and read & tainted:
            tainted |= produced
        if op in INPLACE_OPS:
            pass  # its target was checked untainted, and its output is that target
        for name in produced:
            if name in defined:
                raise _Refused("a graph node redefines a value")
        defined |= produced
        return {**node, "inputs": new_inputs, "metadata": {}}

    def _bound_literal(self, key: str, value: Any) -> None:
        if key == "as_int":
            size = abs(int(value))
        elif key == "as_ints":
            size = math.prod(abs(int(v)) for v in value)
        elif key == "as_sym_ints":
            size = math.prod(abs(int(v["as_int"])) for v in value if "as_int" in v)
        else:
            return
        if size * 8 > self.limit:
            raise _Refused(f"an operator allocates a tensor larger than graphleaks' limit of "
                           f"{self.limit} bytes")

    def _arg(self, arg: Any, defined: set[str] | None, allowed: set[str]) -> set[str]:
        """Check one Argument union; returns the tensor/symbol names it reads or defines."""
        if not isinstance(arg, dict) or len(arg) != 1:
            raise _Refused("a graph node has a malformed argument")
        (key, v), = arg.items()
        if key not in allowed:
            if key in ("as_graph", "as_custom_obj", "as_operator"):
                raise _Refused("a graph node passes a subgraph, custom object or operator as "
                               "an argument")
            raise _Refused("a graph node has an argument kind outside graphleaks' subset")
        names: set[str] = set()
        if key == "as_tensor":
            names.add(_tensor_name(v))
        elif key == "as_tensors":
            if not isinstance(v, list):
                raise _Refused("a graph node has a malformed argument")
            names |= {_tensor_name(t) for t in v}
        elif key in ("as_optional_tensor", "as_optional_tensors"):
            for t in (v if key == "as_optional_tensors" else [v]):
                if not isinstance(t, dict) or len(t) != 1:
                    raise _Refused("a graph node has a malformed argument")
                if "as_tensor" in t:
                    names.add(_tensor_name(t["as_tensor"]))
                elif t != {"as_none": True}:
                    raise _Refused("a graph node has a malformed argument")
        elif key in ("as_sym_int", "as_sym_bool", "as_sym_float"):
            names |= _sym_arg(v)
        elif key in ("as_sym_ints", "as_sym_bools", "as_sym_floats"):
            if not isinstance(v, list):
                raise _Refused("a graph node has a malformed argument")
            for s in v:
                names |= _sym_arg(s)
        elif key == "as_int":
            if type(v) is not int or abs(v) > _MAX_INT:
                raise _Refused("a graph node has an out-of-range integer")
        elif key in ("as_ints", "as_bools", "as_floats"):
            if not isinstance(v, list) or len(v) > 64:
                raise _Refused("a graph node has a malformed argument")
            for x in v:
                if key == "as_ints" and (type(x) is not int or abs(x) > _MAX_INT):
                    raise _Refused("a graph node has an out-of-range integer")
                if key == "as_bools" and type(x) is not bool:
                    raise _Refused("a graph node has a malformed argument")
                if key == "as_floats":
                    _check_float(x)
        elif key == "as_float":
            _check_float(v)
        elif key == "as_bool":
            if type(v) is not bool:
                raise _Refused("a graph node has a malformed argument")
        elif key == "as_none":
            if v is not True:
                raise _Refused("a graph node has a malformed argument")
        elif key in ("as_scalar_type", "as_memory_format", "as_layout"):
            if type(v) is not int or not 0 <= v <= 64:
                raise _Refused("a graph node has a malformed argument")
        elif key == "as_device":
            if v != {"type": "cpu", "index": None}:
                raise _Refused("a graph node names a device other than the CPU")
        elif key == "as_string" and not isinstance(v, str):
            raise _Refused("a graph node has a malformed argument")
        if defined is not None and not names <= defined:
            raise _Refused("a graph node reads a value defined nowhere before it")
        return names

    # -- signature and call graph

    def _signature(self, sig: Any, graph: dict[str, Any]) -> None:
        if not isinstance(sig, dict) or set(sig) != {"input_specs", "output_specs"}:
            raise _Refused("its signature is malformed")
        for spec in sig["input_specs"] if isinstance(sig["input_specs"], list) else [None]:
            if not isinstance(spec, dict) or len(spec) != 1:
                raise _Refused("its signature is malformed")
            (kind, v), = spec.items()
            if not isinstance(v, dict):
                raise _Refused("its signature is malformed")
            if kind == "user_input":
                if not isinstance(v.get("arg"), dict) or set(v["arg"]) != {"as_tensor"}:
                    raise _Refused("it takes an input that is not a tensor")
                _tensor_name(v["arg"]["as_tensor"])
            elif kind in ("parameter", "buffer", "tensor_constant"):
                field = {"parameter": "parameter_name", "buffer": "buffer_name",
                         "tensor_constant": "tensor_constant_name"}[kind]
                target = v.get(field)
                _tensor_name(v.get("arg"))
                if not isinstance(target, str) or not _FQN.match(target):
                    raise _Refused("its signature names a malformed weight")
                known = (self.weights if kind == "parameter" else
                         self.constants if kind == "tensor_constant"
                         else self.weights | self.constants)
                if target not in known:
                    raise _Refused(f"its signature names a {kind.replace('_', ' ')} that the "
                                   "archive does not store")
                if kind == "buffer" and not isinstance(v.get("persistent"), bool):
                    raise _Refused("its signature is malformed")
            else:
                raise _Refused("it takes custom objects, tokens or constant inputs, which "
                               "graphleaks does not load")
        for spec in sig["output_specs"] if isinstance(sig["output_specs"], list) else [None]:
            if not isinstance(spec, dict) or len(spec) != 1 or "user_output" not in spec:
                raise _Refused("it mutates a buffer, parameter or input, or returns "
                               "something other than outputs (graphleaks loads "
                               "programs that only compute outputs)")
            v = spec["user_output"]
            if not isinstance(v, dict) or set(v) != {"arg"}:
                raise _Refused("its signature is malformed")
            self._arg(v["arg"], None, _OUTPUT_ARGS)

    def _call_graph(self, entries: Any) -> list[dict[str, Any]]:
        if not isinstance(entries, list) or len(entries) > MAX_NODES:
            raise _Refused("its module call graph is malformed")
        out = []
        for e in entries:
            if not isinstance(e, dict) or not set(e) <= {"fqn", "signature"}:
                raise _Refused("its module call graph is malformed")
            fqn = e.get("fqn")
            if not isinstance(fqn, str) or (fqn and not _FQN.match(fqn)):
                raise _Refused("its module call graph names a malformed module")
            sig = e.get("signature")
            if sig is not None:
                if (not isinstance(sig, dict)
                        or not set(sig) <= {"inputs", "outputs", "in_spec", "out_spec",
                                            "forward_arg_names"}
                        or sig.get("inputs") != [] or sig.get("outputs") != []):
                    raise _Refused("its module call graph is malformed")
                for key in ("in_spec", "out_spec"):
                    _treespec(sig.get(key))
                names = sig.get("forward_arg_names")
                if names is not None and (not isinstance(names, list) or not all(
                        isinstance(n, str) and _IDENT.match(n) for n in names)):
                    raise _Refused("its module call graph names a malformed argument")
            out.append({"fqn": fqn, "signature": sig})
        return out


def _name(name: Any) -> str:
    if not isinstance(name, str) or not _IDENT.match(name):
        raise _Refused("a value or node name is not a Python identifier")
    return name


def _tensor_name(v: Any) -> str:
    if not isinstance(v, dict) or set(v) != {"name"}:
        raise _Refused("a tensor reference is malformed")
    return _name(v["name"])


def _sym_arg(v: Any) -> set[str]:
    if not isinstance(v, dict) or len(v) != 1:
        raise _Refused("a graph node has a malformed argument")
    (k, x), = v.items()
    if k == "as_name":
        return {_name(x)}
    if k == "as_int" and (type(x) is not int or abs(x) > _MAX_INT):
        raise _Refused("a graph node has an out-of-range integer")
    if k == "as_bool" and type(x) is not bool:
        raise _Refused("a graph node has a malformed argument")
    if k == "as_float":
        _check_float(x)
    if k not in ("as_int", "as_bool", "as_float"):
        raise _Refused("a graph node has a malformed argument")
    return set()


def _check_float(v: Any) -> None:
    # torch's serializer writes inf/nan as these strings
    if not (type(v) in (float, int) or v in ("Infinity", "-Infinity", "NaN")):
        raise _Refused("a graph node has a malformed number")


def _treespec(text: Any) -> None:
    """An input/output tree spec: plain tuples, lists, string-keyed dicts and leaves only."""
    if not isinstance(text, str) or len(text) > 100_000:
        raise _Refused("its input/output structure is malformed")
    doc = _load_json(text.encode(), "input/output structure")
    if not (isinstance(doc, list) and len(doc) == 2 and type(doc[0]) is int):
        raise _Refused("its input/output structure is malformed")
    stack = [doc[1]]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or set(node) != {"type", "context", "children_spec"}:
            raise _Refused("its input/output structure is malformed")
        kind, ctx, children = node["type"], node["context"], node["children_spec"]
        if not isinstance(children, list):
            raise _Refused("its input/output structure is malformed")
        if kind is None:
            ok = ctx is None and children == []
        elif kind in ("builtins.tuple", "builtins.list"):
            ok = ctx == "null"
        elif kind == "builtins.dict":
            keys = _load_json(ctx.encode(), "input/output structure") if isinstance(
                ctx, str) else None
            ok = (isinstance(keys, list) and len(keys) == len(children)
                  and all(isinstance(k, str) and _IDENT.match(k) for k in keys))
        else:
            ok = False
        if not ok:
            raise _Refused("its inputs or outputs are not plain tuples, lists, dicts and "
                           "tensors")
        stack.extend(children)
