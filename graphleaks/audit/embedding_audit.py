"""Audit node embeddings for attribute leakage (Duddu et al.'s attack, ``docs/attacks.md`` §4).

An adversary who knows a sensitive attribute for an auxiliary fraction of the nodes trains MLP,
random-forest and SVM classifiers on their embeddings and predicts it for the rest. The
embeddings leak the attribute only if the attack beats the trivial attacker that always guesses
the most frequent known value: the verdict comes from the bootstrap interval of the gain over
that majority baseline (:func:`graphleaks.metrics.multiclass.multiclass_metrics`). A result whose
interval is not above zero reads "no leak", whatever its F1.

Works on embeddings made by graphleaks (:class:`~graphleaks.models.embeddings.DeepWalk`,
:class:`~graphleaks.models.embeddings.Node2Vec`) and on a user's embedding file with an
attribute CSV (:func:`audit_embedding_files`).
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from graphleaks.attacks.attribute_inference import (
    CLASSIFIERS,
    encode_attribute,
    fit_predict,
    split_known,
)
from graphleaks.errors import DataError, InvalidConfigError
from graphleaks.metrics.binary import Estimate
from graphleaks.metrics.multiclass import MulticlassMetrics, multiclass_metrics
from graphleaks.report.report import json_safe
from graphleaks.seeding import derive_seed
from graphleaks.versions import library_versions

__all__ = [
    "EmbeddingAuditReport",
    "align_attributes",
    "audit_embedding_files",
    "audit_embeddings",
    "load_attribute_csv",
    "render_embedding_markdown",
    "write_embedding_report",
]

REPORT_KIND = "graphleaks-embedding-audit"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class ClassifierResult:
    """One attack classifier's outcome.

    Attributes:
        classifier: ``mlp``, ``rf`` or ``svm``.
        metrics: Its multiclass metrics against the majority baseline.
    """

    classifier: str
    metrics: MulticlassMetrics

    @property
    def verdict(self) -> str:
        """``"leak"`` when the gain interval is above zero, else ``"no leak"``."""
        return "leak" if self.metrics.leaks else "no leak"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary: ``classifier``, ``metrics`` and ``verdict``."""
        return {"classifier": self.classifier, "metrics": self.metrics.to_dict(),
                "verdict": self.verdict}


@dataclass(frozen=True)
class EmbeddingAuditReport:
    """The outcome of :func:`audit_embeddings`.

    Attributes:
        num_nodes: Nodes audited.
        dimensions: Embedding size.
        num_classes: Distinct attribute values.
        class_counts: Nodes per attribute value (keys are the values as strings).
        aux_frac: Fraction of nodes whose attribute the adversary knows.
        num_known: Number of those nodes.
        seed: Root seed.
        results: One :class:`ClassifierResult` per classifier.
        source: Where the embeddings and attribute came from (files, method, ...).
        leaks: Whether any classifier's gain interval is above zero.
    """

    num_nodes: int
    dimensions: int
    num_classes: int
    class_counts: dict[str, int]
    aux_frac: float
    num_known: int
    seed: int
    results: list[ClassifierResult]
    source: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    kind: str = REPORT_KIND
    schema_version: int = SCHEMA_VERSION

    @property
    def leaks(self) -> bool:
        """True if any classifier beats the majority baseline with confidence."""
        return any(r.metrics.leaks for r in self.results)

    def result(self, classifier: str) -> ClassifierResult:
        """The result of ``classifier``."""
        for r in self.results:
            if r.classifier == classifier:
                return r
        raise KeyError(classifier)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["results"] = [r.to_dict() for r in self.results]
        d["leaks"] = self.leaks
        return json_safe(d)




def audit_embeddings(
    vectors: npt.ArrayLike,
    attributes: npt.ArrayLike,
    *,
    classifiers: Sequence[str] = CLASSIFIERS,
    aux_frac: float = 0.3,
    seed: int,
    n_bootstrap: int = 1000,
    source: dict[str, Any] | None = None,
) -> EmbeddingAuditReport:
    """Run the attribute-inference attack on embeddings and judge the leak.

    Args:
        vectors: ``[n, d]`` embeddings; row ``i`` belongs to the node with attribute
            ``attributes[i]``.
        attributes: ``[n]`` attribute values (any sortable values; at least 2 distinct).
        classifiers: Attack classifiers among ``mlp``, ``rf``, ``svm``.
        aux_frac: Fraction of nodes whose attribute the adversary knows, in (0, 1).
        seed: Root seed of the known-node draw, the classifiers and the bootstrap.
        n_bootstrap: Bootstrap replicates of every interval.
        source: Provenance recorded in the report.

    Returns:
        The report; ``report.result("mlp").metrics.f1_micro.value`` is the paper's F1.

    Raises:
        DataError: On mismatched shapes, non-finite values or a single-class attribute.
        InvalidConfigError: On an unknown classifier or an ``aux_frac`` outside (0, 1).

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> y = np.arange(60) % 2
        >>> x = y[:, None] * 3.0 + rng.normal(size=(60, 4))
        >>> r = audit_embeddings(x, y, classifiers=("rf",), seed=0, n_bootstrap=50)
        >>> r.result("rf").verdict
        'leak'
    """
    x = np.asarray(vectors)
    if x.ndim != 2 or not (np.issubdtype(x.dtype, np.number) and x.dtype != np.bool_):
        raise DataError(f"embeddings must be a numeric [n, d] array; got shape {x.shape} "
                        f"and dtype {x.dtype}")
    x = x.astype(np.float64)
    if not np.isfinite(x).all():
        raise DataError("embeddings hold a non-finite value (NaN or inf)")
    raw = np.asarray(attributes).reshape(-1)
    if len(raw) != len(x):
        raise DataError(f"{len(x)} embedding rows but {len(raw)} attribute values")
    if not classifiers:
        raise InvalidConfigError("audit_embeddings needs at least one classifier")
    for name in classifiers:
        if name not in CLASSIFIERS:
            raise InvalidConfigError(f"unknown attack classifier {name!r}; choose one of: "
                                     f"{', '.join(CLASSIFIERS)}")
    if isinstance(aux_frac, bool) or not 0.0 < float(aux_frac) < 1.0:
        raise InvalidConfigError(f"aux_frac must be in (0, 1); got {aux_frac!r}")
    y = encode_attribute(raw)
    values, counts = np.unique(raw, return_counts=True)
    known, rest = split_known(len(x), float(aux_frac), seed=seed)
    if len(np.unique(y[known])) < 2:
        raise DataError(f"the {len(known)} known nodes hold a single attribute value; raise "
                        "aux_frac or use more nodes")
    results = []
    for name in classifiers:
        pred = fit_predict(name, x[known], y[known], x[rest],
                           seed=derive_seed(seed, "classifier", name))
        mc = multiclass_metrics(y[rest], pred, y_train=y[known], n_bootstrap=n_bootstrap,
                                seed=derive_seed(seed, "bootstrap", name))
        results.append(ClassifierResult(name, mc))
    return EmbeddingAuditReport(
        num_nodes=int(len(x)), dimensions=int(x.shape[1]), num_classes=int(len(values)),
        class_counts={str(v.item() if hasattr(v, "item") else v): int(c)
                      for v, c in zip(values, counts, strict=True)},
        aux_frac=float(aux_frac), num_known=int(len(known)), seed=int(seed), results=results,
        source=dict(source or {}), versions=library_versions(),
    )


def load_attribute_csv(
    path: str | os.PathLike[str], *, node_index: Mapping[str, int] | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Read ``node_id,attribute`` rows (an optional header line is skipped).

    Attribute values must be integers (class ids, e.g. a country id). Node ids are integers,
    or any strings when ``node_index`` (from the edge list) maps them to indices.

    Returns:
        ``(ids, values)`` in file order.

    Raises:
        DataError: If the file is missing or empty, a row is malformed, a value is not an
            integer, or a node id repeats.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: attribute file not found.")
    try:
        text = p.read_text(encoding="utf-8-sig")  # a BOM must not hide the first row
    except UnicodeDecodeError as exc:
        raise DataError(f"{p}: not a UTF-8 text file ({exc.reason}).") from exc
    ids: list[int] = []
    vals: list[int] = []
    for no, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = [c.strip() for c in row]
        if not cells or all(not c for c in cells):
            continue
        if len(cells) != 2:
            raise DataError(f"{p}:{no}: expected 'node_id,attribute', got {len(cells)} fields.")
        try:
            val = int(cells[1])
            mapped = node_index.get(cells[0]) if node_index is not None else None
            node = int(cells[0]) if node_index is None else mapped
        except ValueError:
            if no == 1 and not ids and not any(_is_int(c) for c in cells):
                continue  # a header line: no cell is a number, so no data row is dropped
            # the cells are not quoted: the file may be any file on the machine
            raise DataError(f"{p}:{no}: non-numeric node id or attribute; both must be "
                            "integers (string node ids need the edge list, --edges).") from None
        if node is None:
            raise DataError(f"{p}:{no}: the node id is not in the edge list (--edges).")
        if node < 0:
            raise DataError(f"{p}:{no}: the node id is negative.")
        if node >= 2**62 or abs(val) >= 2**62:  # would overflow the int64 arrays below
            raise DataError(f"{p}:{no}: node id or attribute out of range.")
        ids.append(node)
        vals.append(val)
    if not ids:
        raise DataError(f"{p}: no node_id,attribute rows.")
    id_arr = np.asarray(ids, dtype=np.int64)
    uniq, cnt = np.unique(id_arr, return_counts=True)
    if (cnt > 1).any():
        # the row, never the id: messages do not quote what a file holds
        first = next(i for i, v in enumerate(ids) if v in set(uniq[cnt > 1].tolist()))
        raise DataError(f"{p}: a node id appears more than once (data row {first + 1} and a "
                        "later one).")
    return id_arr, np.asarray(vals, dtype=np.int64)


def _is_int(cell: str) -> bool:
    try:
        int(cell)
    except ValueError:
        return False
    return True


def align_attributes(
    emb_ids: npt.NDArray[np.int64],
    attr_ids: npt.NDArray[np.int64],
    attr_values: npt.NDArray[np.int64],
    *,
    emb_name: str = "embeddings",
    attr_name: str = "attributes",
) -> npt.NDArray[np.int64]:
    """Attribute value of every embedding row, in embedding-file order.

    Raises:
        DataError: If the two files do not hold exactly the same node ids.
    """
    e, a = np.asarray(emb_ids), np.asarray(attr_ids)
    missing = np.setdiff1d(e, a)
    extra = np.setdiff1d(a, e)
    if len(missing) or len(extra):
        parts = []
        if len(missing):
            parts.append(f"{len(missing)} embedded node(s) have no attribute")
        if len(extra):
            parts.append(f"{len(extra)} attribute row(s) have no embedding")
        raise DataError(f"{emb_name} and {attr_name} do not match: {'; '.join(parts)}.")
    order = np.argsort(a)
    return np.asarray(attr_values)[order[np.searchsorted(a[order], e)]]


def audit_embedding_files(
    embeddings: str | os.PathLike[str],
    attributes: str | os.PathLike[str],
    *,
    classifiers: Sequence[str] = CLASSIFIERS,
    aux_frac: float = 0.3,
    seed: int,
    n_bootstrap: int = 1000,
    edges: str | os.PathLike[str] | None = None,
) -> EmbeddingAuditReport:
    """Audit a user's embedding file (``.npy`` or word2vec text) against an attribute CSV.

    With ``edges``, node ids in both files may be strings (``user_17``), mapped to indices
    through that edge list (:func:`graphleaks.data.files.node_index`).

    Raises:
        DataError: On a malformed file, mismatched node ids or a single-class attribute.
    """
    from graphleaks.models.embeddings import load_embeddings

    ep, ap = Path(embeddings), Path(attributes)
    index = None
    if edges is not None:
        from graphleaks.data.files import node_index

        index = node_index(Path(edges))
    emb_ids, vectors = load_embeddings(ep, node_index=index)
    attr_ids, attr_vals = load_attribute_csv(ap, node_index=index)
    y = align_attributes(emb_ids, attr_ids, attr_vals, emb_name=str(ep), attr_name=str(ap))
    if len(np.unique(y)) < 2:
        raise DataError(f"{ap}: the attribute has a single class; attribute inference needs "
                        "at least 2.")
    return audit_embeddings(vectors, y, classifiers=classifiers, aux_frac=aux_frac, seed=seed,
                            n_bootstrap=n_bootstrap,
                            source={"embeddings": str(ep.resolve()),
                                    "attributes": str(ap.resolve())})


def _fmt(x: Any) -> str:
    return x if isinstance(x, str) else f"{x:.3f}"


def _est(e: Estimate) -> str:
    return f"{_fmt(e.value)} [{_fmt(e.lo)}, {_fmt(e.hi)}]"


def render_embedding_markdown(report: EmbeddingAuditReport) -> str:
    """A Markdown summary of a report (formats numbers only)."""
    lines = [
        "# graphleaks embedding audit: attribute inference",
        "",
        f"{report.num_nodes} nodes, {report.dimensions}-d embeddings, "
        f"{report.num_classes} attribute values. The adversary knows the attribute of "
        f"{report.num_known} nodes ({report.aux_frac:.0%}) and infers it for the rest. "
        f"Seed {report.seed}.",
        "",
    ]
    for k, v in report.source.items():
        lines.append(f"- {k}: `{v}`")
    lines += [
        "",
        "Intervals are 95% bootstrap intervals. The majority baseline always guesses the most "
        "frequent known value; a leak needs the whole gain interval above zero.",
        "",
        "| classifier | micro-F1 | macro-F1 | majority baseline | gain over baseline | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for r in report.results:
        m = r.metrics
        verdict = "**leak**" if r.verdict == "leak" else "no leak"
        lines.append(f"| {r.classifier} | {_est(m.f1_micro)} | {_est(m.f1_macro)} | "
                     f"{_fmt(m.majority_baseline)} | {_est(m.gain_over_baseline)} | "
                     f"{verdict} |")
    overall = ("the embeddings leak the attribute" if report.leaks
               else "no leak: no classifier beats the majority baseline")
    lines += ["", f"Verdict: {overall}.", ""]
    return "\n".join(lines)


def write_embedding_report(
    report: EmbeddingAuditReport, out_dir: str | os.PathLike[str]
) -> tuple[Path, Path]:
    """Write ``report.json`` and ``report.md`` as one folder (temporary sibling + rename).

    An existing ``out_dir`` is replaced only if it is a graphleaks embedding audit report.
    """
    from graphleaks._outputs import EMBEDDING_REPORT, publish_dir

    out = Path(out_dir)
    data = report.to_dict()

    def fill(tmp: Path) -> None:
        (tmp / "report.json").write_text(
            json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n", encoding="utf-8")
        (tmp / "report.md").write_text(render_embedding_markdown(report) + "\n", encoding="utf-8")

    publish_dir(out, EMBEDDING_REPORT, fill)
    return out / "report.json", out / "report.md"
