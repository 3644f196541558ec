"""``graphleaks embed``: DeepWalk/node2vec embeddings of a dataset.

``embed`` writes ``embeddings.npy`` (row ``i`` = node ``i``), ``embeddings.txt`` (word2vec text
format) and ``embeddings.json`` (every setting); ``graphleaks audit embeddings FILE``
(:mod:`graphleaks.cli.audit_embeddings`) audits such a file. Bad input raises
:mod:`graphleaks.errors` exceptions (one line, exit code 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from graphleaks._outputs import EMBEDDINGS, check_output_dir, publish_dir
from graphleaks.cli._common import DataRoot, Seed, Verbose, setup_logging
from graphleaks.errors import DataError, InvalidConfigError

METHOD_DEFAULTS = {
    # phanein/deepwalk and aditya-grover/node2vec CLI defaults (docs/attacks.md §4)
    "deepwalk": {"dimensions": 64, "walk_length": 40, "walks_per_node": 10, "window": 5,
                 "negative": 0},
    "node2vec": {"dimensions": 128, "walk_length": 80, "walks_per_node": 10, "window": 10,
                 "negative": 5},
}


def embed(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for embeddings.npy, "
                                      "embeddings.txt and embeddings.json.")],
    dataset: Annotated[str, typer.Option(help="Dataset to embed.")] = "lastfm-asia",
    data_root: DataRoot = None,
    edges: Annotated[Path | None, typer.Option(
        help="Edge-list CSV of your own graph (integer node ids 0..n-1, as for graphleaks "
             "train); replaces --dataset.")] = None,
    method: Annotated[str, typer.Option(help="deepwalk or node2vec.")] = "deepwalk",
    dimensions: Annotated[int | None, typer.Option(
        help="Embedding size (default: 64 deepwalk, 128 node2vec).")] = None,
    walk_length: Annotated[int | None, typer.Option(
        help="Nodes per walk (default: 40 deepwalk, 80 node2vec).")] = None,
    walks_per_node: Annotated[int | None, typer.Option(
        help="Walks per node (default: 10).")] = None,
    window: Annotated[int | None, typer.Option(
        help="Skip-gram window (default: 5 deepwalk, 10 node2vec).")] = None,
    epochs: Annotated[int, typer.Option(help="Word2Vec passes.")] = 1,
    negative: Annotated[int | None, typer.Option(
        help="Negative samples; 0 = hierarchical softmax (default: 0 deepwalk, 5 node2vec).")]
    = None,
    p: Annotated[float, typer.Option(help="node2vec return parameter.")] = 1.0,
    q: Annotated[float, typer.Option(help="node2vec in-out parameter.")] = 1.0,
    seed: Seed = 0,
    verbose: Verbose = False,
) -> None:
    """Train DeepWalk or node2vec embeddings of a dataset; write .npy and word2vec text."""
    from graphleaks.data import load_dataset
    from graphleaks.models.embeddings import DeepWalk, EmbedderConfig, Node2Vec

    setup_logging(verbose)
    if method not in METHOD_DEFAULTS:
        raise InvalidConfigError(f"unknown embedding method {method!r}; choose deepwalk or "
                                 "node2vec")
    if method == "deepwalk" and (p != 1.0 or q != 1.0):
        raise InvalidConfigError("--p and --q apply to node2vec only; DeepWalk walks are uniform")
    defaults = METHOD_DEFAULTS[method]

    def pick(name: str, value: int | None) -> int:
        return value if value is not None else defaults[name]

    config = EmbedderConfig(
        dimensions=pick("dimensions", dimensions), walk_length=pick("walk_length", walk_length),
        walks_per_node=pick("walks_per_node", walks_per_node), window=pick("window", window),
        negative=pick("negative", negative), epochs=epochs, p=p, q=q)
    check_output_dir(out, EMBEDDINGS)  # before any training
    if edges is not None:
        import numpy as np
        import torch

        from graphleaks.data.files import load_edge_list, node_index

        pairs = load_edge_list(edges)
        index = node_index(edges)
        _check_word2vec_ids(edges, index)
        names = {i: name for name, i in index.items()}
        # walks follow edges both ways, as in load_graph_files (which makes graphs undirected)
        edge_index = torch.from_numpy(np.concatenate([pairs, pairs[:, ::-1]]).T.copy())
        num_nodes, source = int(pairs.max()) + 1, str(edges)
    else:
        names = {}
        graph = load_dataset(dataset, data_root=data_root)
        edge_index, num_nodes, source = graph.edge_index, int(graph.num_nodes), dataset
    cls = DeepWalk if method == "deepwalk" else Node2Vec
    emb = cls(config).fit(edge_index, num_nodes, seed=seed)
    npy, txt, meta = out / "embeddings.npy", out / "embeddings.txt", out / "embeddings.json"
    keyed = any(names.get(i, str(i)) != str(i) for i in range(emb.num_nodes))
    record = {"dataset": source, "method": emb.method, "seed": emb.seed,
              "num_nodes": emb.num_nodes, "dimensions": emb.dimensions, "config": emb.config}

    def fill(tmp: Path) -> None:
        emb.save_npy(tmp / npy.name)
        if keyed:  # string ids: key the word2vec file by them, so it reads back with --edges
            _write_keyed_text(tmp / txt.name, emb.vectors, names)
        else:
            emb.save_word2vec_text(tmp / txt.name)
        (tmp / meta.name).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")

    publish_dir(out, EMBEDDINGS, fill)  # the three files appear together
    typer.echo(json.dumps({"npy": str(npy), "word2vec": str(txt), "metadata": str(meta),
                           "num_nodes": emb.num_nodes, "dimensions": emb.dimensions}, indent=2))


def _check_word2vec_ids(edges: Path, index: dict[str, int]) -> None:
    """Refuse node ids that word2vec text cannot hold, before any training.

    word2vec text is one ``id v1 ... vd`` line per node split on whitespace: an id with a
    space would shift every value of its row, and one with a line break would forge a row.
    No escaping is offered, since a reader of the file could not undo it.
    """
    from graphleaks.data.files import _read_table

    if not any(_unsafe_id(name) for name in index):
        return
    rows = _read_table(edges, "edge list", edge_ids=True)[1]
    bad = next(i for i, r in enumerate(rows) if any(_unsafe_id(t) for t in r[:2]))
    # the row, never the id: messages do not quote what a file holds
    raise DataError(f"edge list {edges}: data row {bad + 1} has a node id with whitespace or "
                    "a line break, which word2vec text (embeddings.txt) cannot hold; rename "
                    "such nodes (e.g. replace spaces with _)")


def _unsafe_id(name: str) -> bool:
    return any(c.isspace() or not c.isprintable() for c in name)


def _write_keyed_text(path: str | Path, vectors: object, names: dict[int, str]) -> None:
    """word2vec text keyed by the edge list's own node ids (``user_17 v1 ... vd``)."""
    import numpy as np

    arr = np.asarray(vectors)
    if any(_unsafe_id(n) for n in names.values()):  # refused at input; never written
        raise DataError("a node id with whitespace cannot be written as word2vec text")
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(f"{arr.shape[0]} {arr.shape[1]}\n")
        for i, row in enumerate(arr.tolist()):
            fh.write(names.get(i, str(i)) + " " + " ".join(f"{v:.9g}" for v in row) + "\n")
