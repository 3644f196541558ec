"""The reference server of the endpoint protocol (``graphleaks serve``).

A :class:`~graphleaks.models.target.TrainedTarget` served over ``docs/endpoint-protocol.md``
with the standard library's threading HTTP server: the protocol is two small JSON routes,
answers are computed under one lock (a model's caches are not thread-safe), and the audits it
serves are bounded by their query budgets, so an ASGI stack would add a dependency and no
capacity that matters here (``bench/bench_remote.py`` measures the requests per second).

Access rules: an optional rate limit (``rate_limit`` queries per ``window_s``; past it,
HTTP 429 with ``Retry-After``), an optional allow-list (only those node ids may be asked or
have their features replaced; others, and any submitted subgraph, get 403), and an optional
credential (``Authorization: Bearer ...``; else 401). It counts what it receives and answers
(:attr:`EndpointServer.counts`), so tests can compare an audit's count with the server's.
"""

from __future__ import annotations

import hmac
import json
import math
import threading
import time
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import torch

from graphleaks.models.remote import ENDPOINT_OUTPUTS, PROTOCOL, REQUEST_MODES
from graphleaks.models.target import TrainedTarget

#: Largest request body read (a subgraph of Cora's size is about 40 MB of JSON).
MAX_BODY_BYTES = 256 << 20


class RequestError(Exception):
    """A request the server refuses: its HTTP status and a message for the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _ids(value: Any, n: int, what: str) -> np.ndarray:
    if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise RequestError(400, f"{what} must be a list of integer node ids")
    arr = np.asarray(value, dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise RequestError(400, f"{what} holds ids outside 0..{n - 1}")
    return arr


def _floats(value: Any, rows: int, cols: int, what: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise RequestError(400, f"{what} must be a [{rows}, {cols}] array of numbers") from None
    if rows == 0 and arr.size == 0:
        return np.empty((0, cols))
    if arr.shape != (rows, cols) or not np.isfinite(arr).all():
        raise RequestError(400, f"{what} must be a [{rows}, {cols}] array of finite numbers")
    return arr


class EndpointModel:
    """The transport-free part of the server: request JSON in, answer JSON out.

    Args:
        target: The served target (its model, served graph and features).
        outputs: What answers hold.
        requests: Request modes accepted.
        allow_list: Node ids that may be queried (None: all).
        noise: Standard deviation of Gaussian noise added to every answer's logits (a
            non-deterministic API, for tests of its detection); 0: deterministic.
        noise_seed: Seed of that noise.
    """

    def __init__(self, target: TrainedTarget, *, outputs: Iterable[str] = ("labels", "posteriors",
                                                                        "logits"),
                 requests: Iterable[str] = REQUEST_MODES, allow_list: Iterable[int] | None = None,
                 noise: float = 0.0, noise_seed: int = 0) -> None:
        self.target = target
        self.outputs = tuple(o for o in ENDPOINT_OUTPUTS if o in set(outputs))
        self.requests = tuple(m for m in REQUEST_MODES if m in set(requests))
        self.n = int(target.graph.num_nodes)
        self.allowed = None if allow_list is None else np.asarray(sorted(set(allow_list)),
                                                                  dtype=np.int64)
        self._x = target.served_features().float()
        self._engine: Any = None
        self._noise = float(noise)
        self._rng = np.random.default_rng(noise_seed)

    def info(self) -> dict[str, Any]:
        """The ``/info`` metadata."""
        return {"protocol": PROTOCOL, "num_nodes": self.n,
                "num_classes": int(self.target.num_classes),
                "num_features": int(self._x.shape[1]), "outputs": list(self.outputs),
                "requests": list(self.requests),
                "allow_list": self.allowed is not None}

    def _check_allowed(self, ids: np.ndarray, what: str) -> None:
        if self.allowed is not None and ids.size and not np.isin(ids, self.allowed).all():
            raise RequestError(403, f"{what} names nodes outside the allow-list")

    def answer(self, body: Any) -> dict[str, Any]:
        """Answer one query.

        Raises:
            RequestError: 400 for a malformed request, 403 for one the access rule refuses.
        """
        if not isinstance(body, dict) or not body or set(body) - {"nodes", "features",
                                                                   "subgraph"}:
            raise RequestError(400, "a query is an object with nodes, features and/or subgraph")
        if "subgraph" in body:
            return self._subgraph(body)
        if "nodes" not in body:
            raise RequestError(400, "a query names its nodes")
        nodes = _ids(body["nodes"], self.n, "nodes")
        self._check_allowed(nodes, "the query")
        if "features" in body:
            return self._features(nodes, body["features"])
        if "nodes" not in self.requests:
            raise RequestError(400, "this endpoint does not answer node-id queries")
        idx = torch.as_tensor(nodes)
        logits = self.target.logits(view="target")[idx].double()
        emb = None
        if "embeddings" in self.outputs:
            emb = self.target.embeddings(view="target", layer=0)[idx].double()
        return self._pack(logits, emb)

    def _features(self, nodes: np.ndarray, spec: Any) -> dict[str, Any]:
        if "features" not in self.requests:
            raise RequestError(400, "this endpoint does not answer feature queries")
        if not isinstance(spec, dict) or set(spec) != {"ids", "values"}:
            raise RequestError(400, "features must be an object with ids and values")
        ids = _ids(spec["ids"], self.n, "features.ids")
        if np.unique(ids).size != ids.size:
            raise RequestError(400, "features.ids lists a node twice")
        self._check_allowed(ids, "the feature query")
        values = _floats(spec["values"], len(ids), int(self._x.shape[1]), "features.values")
        return self._pack(self._feature_logits(nodes, ids, values), None)

    def _feature_logits(self, nodes: np.ndarray, ids: np.ndarray,
                        values: np.ndarray) -> torch.Tensor:
        """Float64 logits at ``nodes`` with rows ``ids`` of the served features replaced."""
        from graphleaks.models import _local_update

        model = self.target.model
        edges = self.target.edges("target")
        if (len(ids) <= 1 and isinstance(model, torch.nn.Module)
                and self.target.iface.output == "logits" and _local_update.supports(model)):
            if self._engine is None:  # exact float64 local update, as the in-process path
                self._engine = _local_update.LocalFeatureUpdate(model, self._x, edges)
            if len(ids) == 0:
                return torch.from_numpy(self._engine.logits[nodes].copy())
            return torch.from_numpy(self._engine.replaced_row_logits(int(ids[0]), values[0],
                                                                     nodes))
        z = self._x.double().clone()
        if len(ids):
            z[torch.as_tensor(ids)] = torch.from_numpy(values)
        try:  # float64 where the model allows: finite differences need it
            import copy

            model64 = copy.deepcopy(model).double() if isinstance(model, torch.nn.Module) else None
        except Exception:  # noqa: BLE001 - a module that refuses deepcopy
            model64 = None
        if model64 is not None:
            try:
                with torch.no_grad():
                    from graphleaks.models.protocol import as_logits

                    out = as_logits(model64(z, edges), self.target.iface.output)
                return out[torch.as_tensor(nodes)].double()
            except Exception:  # noqa: BLE001 - a model that cannot run in float64
                pass
        return self.target.query(z.float(), edges)[-1][torch.as_tensor(nodes)].double()

    def _subgraph(self, body: dict[str, Any]) -> dict[str, Any]:
        if "subgraph" not in self.requests:
            raise RequestError(400, "this endpoint does not answer subgraph queries")
        if self.allowed is not None:
            raise RequestError(403, "the allow-list admits queries on the served graph only")
        sub = body["subgraph"]
        if not isinstance(sub, dict) or set(sub) != {"x", "edge_index"}:
            raise RequestError(400, "subgraph must be an object with x and edge_index")
        x = sub["x"]
        rows = len(x) if isinstance(x, list) else 0
        if rows == 0:
            raise RequestError(400, "subgraph.x must hold one feature row per node")
        xs = _floats(x, rows, int(self._x.shape[1]), "subgraph.x")
        ei = sub["edge_index"]
        if (not isinstance(ei, list) or len(ei) != 2 or not all(isinstance(r, list) for r in ei)
                or len(ei[0]) != len(ei[1])):
            raise RequestError(400, "subgraph.edge_index must be two lists of node ids")
        src, dst = _ids(ei[0], rows, "subgraph.edge_index"), _ids(ei[1], rows,
                                                                  "subgraph.edge_index")
        nodes = (_ids(body["nodes"], rows, "nodes") if "nodes" in body
                 else np.arange(rows, dtype=np.int64))
        layers = self.target.query(torch.from_numpy(xs).float(),
                                   torch.from_numpy(np.stack([src, dst])))
        idx = torch.as_tensor(nodes)
        emb = layers[0][idx].double() if "embeddings" in self.outputs and len(layers) > 1 else None
        return self._pack(layers[-1][idx].double(), emb)

    def _pack(self, logits: torch.Tensor, emb: torch.Tensor | None) -> dict[str, Any]:
        if self._noise > 0:
            logits = logits + torch.from_numpy(self._rng.normal(0.0, self._noise,
                                                                tuple(logits.shape)))
        out: dict[str, Any] = {}
        if "logits" in self.outputs:
            out["logits"] = logits.tolist()
        if "posteriors" in self.outputs:
            out["posteriors"] = torch.softmax(logits, 1).tolist()
        if "labels" in self.outputs:
            out["labels"] = logits.argmax(1).tolist()
        if "embeddings" in self.outputs and emb is not None:
            out["embeddings"] = emb.tolist()
        return out


class EndpointServer:
    """Serve an :class:`EndpointModel` over HTTP on a thread; a context manager.

    Args:
        model: What answers.
        host: Interface to bind (loopback by default).
        port: Port (0: any free one; see :attr:`url`).
        rate_limit: Most queries answered per ``window_s`` (None: no limit).
        window_s: The rate limit's window.
        credential: The bearer token required (None: none).
    """

    def __init__(self, model: EndpointModel, *, host: str = "127.0.0.1", port: int = 0,
                 rate_limit: int | None = None, window_s: float = 1.0,
                 credential: str | None = None) -> None:
        self.model = model
        self.rate_limit = rate_limit
        self.window_s = float(window_s)
        self._credential = credential
        self._lock = threading.Lock()
        self._count_lock = threading.Lock()
        self.counts = {"received": 0, "answered": 0, "limited": 0, "forbidden": 0,
                       "unauthorized": 0, "bad": 0, "info": 0}
        self._window = (time.monotonic(), 0)
        self._httpd = ThreadingHTTPServer((host, port), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"EndpointServer({self.url!r})"

    @property
    def url(self) -> str:
        """The base URL clients use."""
        host, port = self._httpd.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{name}:{port}"

    def start(self) -> EndpointServer:
        """Serve on a daemon thread; returns self."""
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve on this thread until interrupted (the CLI)."""
        self._httpd.serve_forever(poll_interval=0.2)

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> EndpointServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _count(self, key: str) -> None:
        with self._count_lock:
            self.counts[key] += 1

    def authorized(self, header: str | None) -> bool:
        """Whether the ``Authorization`` header carries the credential (constant time)."""
        if self._credential is None:
            return True
        return header is not None and hmac.compare_digest(
            header.encode(), f"Bearer {self._credential}".encode())

    def admit(self) -> float | None:
        """Count a query against the rate limit: None if admitted, else seconds to wait."""
        if self.rate_limit is None:
            return None
        with self._count_lock:
            start, used = self._window
            now = time.monotonic()
            if now - start >= self.window_s:
                start, used = now, 0
            if used >= self.rate_limit:
                self._window = (start, used)
                return start + self.window_s - now
            self._window = (start, used + 1)
            return None

    def handle(self, body: bytes) -> tuple[int, dict[str, Any]]:
        """Answer a query body: (status, JSON)."""
        try:
            request = json.loads(body)
        except ValueError:
            return 400, {"error": "the body is not JSON"}
        try:
            with self._lock:
                return 200, self.model.answer(request)
        except RequestError as exc:
            return exc.status, {"error": str(exc)}


def _handler(server: EndpointServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # no request log on stderr: the audit keeps its own

        def _reply(self, status: int, payload: Mapping[str, Any],
                   headers: Mapping[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/") != "/info":
                self._reply(404, {"error": "routes: GET /info, POST /query"})
                return
            if not server.authorized(self.headers.get("Authorization")):
                server._count("unauthorized")
                self._reply(401, {"error": "missing or wrong credential"})
                return
            server._count("info")
            self._reply(200, server.model.info())

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/") != "/query":
                self._reply(404, {"error": "routes: GET /info, POST /query"})
                return
            server._count("received")
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if length < 0 or length > MAX_BODY_BYTES:
                server._count("bad")
                self.close_connection = True
                self._reply(413, {"error": f"bodies are at most {MAX_BODY_BYTES} bytes"})
                return
            body = self.rfile.read(length)
            if not server.authorized(self.headers.get("Authorization")):
                server._count("unauthorized")
                self._reply(401, {"error": "missing or wrong credential"})
                return
            wait = server.admit()
            if wait is not None:
                server._count("limited")
                self._reply(429, {"error": "rate limit"},
                            {"Retry-After": str(max(1, math.ceil(wait)))})
                return
            status, payload = server.handle(body)
            server._count({200: "answered", 403: "forbidden"}.get(status, "bad"))
            self._reply(status, payload)

    return Handler


__all__ = ["EndpointModel", "EndpointServer", "MAX_BODY_BYTES", "RequestError"]
