"""A model behind an inference API: its description, a budgeted client, and its target.

The protocol (``docs/endpoint-protocol.md``) is JSON over HTTP: ``GET {url}/info`` names
what the endpoint answers, and each ``POST {url}/query`` is one model query, for node ids
in the served graph, node ids with some feature rows replaced (a feature query on the
served graph, LinkTeller's), or features plus a submitted subgraph (an inductive API). The
endpoint description file (TOML or JSON) declares the outputs, the request modes, the sizes,
the credential's environment variable, the timeout and the retries.

:class:`EndpointClient` sends queries through ``httpx``: TLS verification on by default,
bounded retries with exponential back-off on 429 and 5xx (honouring ``Retry-After``), and a
hard :class:`QueryBudget` that refuses a query past the budget before anything is sent.
Every answered query is appended to a hash-chained :class:`QueryLog`. The credential is read
from the environment variable the caller names and kept out of every repr, message and log.

:class:`RemoteTarget` is a :class:`~graphleaks.models.target.TrainedTarget` whose outputs
come from the endpoint: the attacks read it through the same
:class:`~graphleaks.attacks.base.TargetView` as any other target. The graph, split and
labels it carries are the auditor's ground truth; the model itself is never local.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import torch

from graphleaks._limits import MAX_JSON_BYTES, input_boundary
from graphleaks.errors import CapabilityError, DataError, InvalidConfigError
from graphleaks.models.protocol import ModelInterface
from graphleaks.models.target import TrainedTarget

#: The protocol's name and version, answered by ``GET /info``.
PROTOCOL = "graphleaks-endpoint/1"
#: Outputs an endpoint may answer.
ENDPOINT_OUTPUTS: tuple[str, ...] = ("labels", "posteriors", "logits", "embeddings")
#: Request modes: node ids in the served graph; node ids with feature rows replaced (on the
#: served graph); features plus a submitted subgraph (inductive).
REQUEST_MODES: tuple[str, ...] = ("nodes", "features", "subgraph")
#: The genesis "previous hash" of a query log.
GENESIS = "0" * 64
#: Longest back-off the client ever waits between tries, whatever Retry-After says.
MAX_WAIT_S = 120.0


class QueryBudgetError(CapabilityError):
    """A query past the budget: refused before it is sent."""


# ------------------------------------------------------------------ the description file


@dataclass(frozen=True)
class EndpointDescription:
    """What an inference endpoint answers and how to reach it (``endpoint.toml``).

    Attributes:
        url: Base URL; queries go to ``{url}/query``, metadata to ``{url}/info``.
        outputs: What each answer holds: ``labels``, ``posteriors``, ``logits``,
            ``embeddings``.
        requests: Request modes it accepts: ``nodes``, ``features``, ``subgraph``.
        num_nodes: Nodes of the served graph.
        num_classes: Output classes.
        credential_env: Name of the environment variable holding the credential (None: no
            credential); ``--credential-env`` replaces it.
        credential_header: Header the credential is sent in.
        credential_scheme: Prefix of the header value (``Bearer``; empty: the bare value).
        timeout_s: Seconds per try (connect and read).
        max_retries: Tries after the first, on 429, 5xx or a transport error.
        backoff_s: First back-off; doubled on each retry (Retry-After wins when longer).
        verify_tls: Verify the server's TLS certificate (on unless turned off explicitly).
    """

    url: str
    outputs: tuple[str, ...]
    requests: tuple[str, ...] = ("nodes",)
    num_nodes: int | None = None
    num_classes: int | None = None
    credential_env: str | None = None
    credential_header: str = "Authorization"
    credential_scheme: str = "Bearer"
    timeout_s: float = 30.0
    max_retries: int = 5
    backoff_s: float = 0.5
    verify_tls: bool = True

    @property
    def safe_url(self) -> str:
        """The URL without user info, query or fragment (where keys hide): what reports and
        messages name."""
        return safe_url(self.url)


def safe_url(url: str) -> str:
    """``url`` without user info, query string or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


_FIELDS = {f.name for f in dataclasses.fields(EndpointDescription)}


def parse_description(data: Mapping[str, Any], source: str = "description",
                      url: str | None = None) -> EndpointDescription:
    """Validate a decoded description; errors name the field, never its value.

    ``url`` (the command line's) replaces the description's ``url``, which may then be
    left out.

    Raises:
        InvalidConfigError: For an unknown or missing field, or a bad value.
    """
    if not isinstance(data, Mapping):
        raise InvalidConfigError(f"{source} must be a table of fields (url, outputs, ...)")
    unknown = sorted(str(k) for k in data if k not in _FIELDS)
    if unknown:
        raise InvalidConfigError(f"{source} has unknown field {unknown[0]!r}; the fields are: "
                                 f"{', '.join(sorted(_FIELDS))}")

    def bad(name: str, want: str) -> InvalidConfigError:
        return InvalidConfigError(f"{source}: field {name!r} must be {want}")

    if url is not None:
        data = {**data, "url": url}
    url = data.get("url")
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") or not \
            urlsplit(url).hostname:
        raise bad("url", "an http:// or https:// URL (or give the URL on the command line)")
    kw: dict[str, Any] = {"url": url.rstrip("/")}
    for name, choices in (("outputs", ENDPOINT_OUTPUTS), ("requests", REQUEST_MODES)):
        if name not in data:
            if name == "outputs":
                raise bad(name, f"a list of what the API answers ({', '.join(choices)})")
            continue
        value = data[name]
        if (not isinstance(value, list) or not value
                or not all(isinstance(v, str) and v in choices for v in value)):
            raise bad(name, f"a non-empty list drawn from: {', '.join(choices)}")
        kw[name] = tuple(dict.fromkeys(value))
    if not set(kw["outputs"]) & {"labels", "posteriors", "logits"}:
        raise bad("outputs", "a list naming at least one of labels, posteriors, logits (an "
                  "API answering embeddings only is audited with graphleaks audit embeddings)")
    for name in ("num_nodes", "num_classes"):
        if name in data:
            v = data[name]
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise bad(name, "a positive integer")
            kw[name] = v
    if "credential_env" in data:
        v = data["credential_env"]
        if not isinstance(v, str) or not v.replace("_", "a").isalnum():
            raise bad("credential_env", "the NAME of an environment variable (letters, digits, "
                      "_), never the credential itself")
        kw["credential_env"] = v
    for name in ("credential_header", "credential_scheme"):
        if name in data:
            v = data[name]
            if not isinstance(v, str) or any(c in v for c in "\r\n:"):
                raise bad(name, "a header name or scheme word")
            kw[name] = v
    for name, low in (("timeout_s", 0.0), ("backoff_s", 0.0)):
        if name in data:
            v = data[name]
            if (not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v)
                    or v <= low or v > 3600):
                raise bad(name, "a number of seconds in (0, 3600]")
            kw[name] = float(v)
    if "max_retries" in data:
        v = data["max_retries"]
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 20:
            raise bad("max_retries", "an integer in 0..20")
        kw["max_retries"] = v
    if "verify_tls" in data:
        if not isinstance(data["verify_tls"], bool):
            raise bad("verify_tls", "true or false")
        kw["verify_tls"] = data["verify_tls"]
    return EndpointDescription(**kw)


def read_description(path: str | Path, url: str | None = None) -> EndpointDescription:
    """Read an endpoint description file (``.toml`` or ``.json``); ``url`` replaces its
    ``url``.

    Raises:
        InvalidConfigError: For a missing, oversized or malformed file, or a bad field.
    """
    p = Path(path)
    where = f"--description {p.name}"
    if not p.is_file():
        raise InvalidConfigError(f"{where} does not exist or is not a regular file; give the "
                                 "endpoint description (TOML or JSON, see "
                                 "docs/endpoint-protocol.md)")
    if p.stat().st_size > MAX_JSON_BYTES:
        raise InvalidConfigError(f"{where} is larger than {MAX_JSON_BYTES} bytes; an endpoint "
                                 "description is a few lines")
    raw = p.read_bytes()
    with input_boundary(where, InvalidConfigError):
        # JSON or TOML by content, not by name: a JSON description always opens with "{"
        if raw.lstrip()[:1] == b"{":
            try:
                data = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                raise InvalidConfigError(f"{where} is not valid JSON; fix its syntax") from None
        else:
            try:
                import tomllib
            except ImportError:  # pragma: no cover - Python 3.10
                import tomli as tomllib  # type: ignore[no-redef]
            try:
                data = tomllib.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                raise InvalidConfigError(f"{where} is not valid TOML (a JSON description opens "
                                         "with '{{'); fix its syntax") from None
    return parse_description(data, where, url)


# ------------------------------------------------------------------ budget and log


@dataclass
class QueryBudget:
    """A hard count of model queries: the one past ``limit`` is refused before it is sent.

    Attributes:
        limit: Most queries allowed.
        used: Queries charged so far.
        per_attack: Queries charged per attack name (``audit`` outside any attack).
    """

    limit: int
    used: int = 0
    per_attack: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.limit, int) or isinstance(self.limit, bool) or self.limit <= 0:
            raise InvalidConfigError("--budget must be a positive number of queries; give "
                                     "--budget N with N >= 1")

    @property
    def left(self) -> int:
        """Queries still allowed."""
        return self.limit - self.used

    def charge(self, who: str) -> None:
        """Count one query for ``who``.

        Raises:
            QueryBudgetError: When the budget is spent (nothing is counted then).
        """
        if self.used >= self.limit:
            raise QueryBudgetError(f"{who}: query budget of {self.limit} spent; no request "
                                   "sent (raise --budget, or run fewer or smaller attacks)")
        self.used += 1
        self.per_attack[who] = self.per_attack.get(who, 0) + 1


def digest(data: bytes) -> str:
    """SHA-256 of ``data`` in hex."""
    return hashlib.sha256(data).hexdigest()


def canonical(obj: Any) -> bytes:
    """The canonical JSON bytes of ``obj`` (sorted keys, no spaces, floats as repr)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def entry_hash(entry: Mapping[str, Any]) -> str:
    """Hash of a log entry: SHA-256 of its canonical JSON without the ``hash`` field."""
    return digest(canonical({k: v for k, v in entry.items() if k != "hash"}))


@dataclass
class QueryLog:
    """The hash chain of answered queries: request digest, response digest, time, and the
    previous entry's hash, so that no entry can be changed or dropped unnoticed."""

    entries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def head(self) -> str:
        """Hash of the last entry (the genesis hash when empty)."""
        return self.entries[-1]["hash"] if self.entries else GENESIS

    def append(self, who: str, request: bytes, response: bytes, tries: int) -> dict[str, Any]:
        """Chain one answered query onto the log."""
        entry: dict[str, Any] = {
            "index": len(self.entries), "attack": who,
            "time": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
            "request_sha256": digest(request), "response_sha256": digest(response),
            "tries": tries, "prev": self.head}
        entry["hash"] = entry_hash(entry)
        self.entries.append(entry)
        return entry

    def write(self, path: str | Path) -> str:
        """Write the log as JSON lines; returns the head hash."""
        with Path(path).open("w", encoding="utf-8") as fh:
            for e in self.entries:
                fh.write(json.dumps(e, sort_keys=True) + "\n")
        return self.head


def verify_log(path: str | Path) -> str:
    """Check a ``queries.jsonl`` chain; its head hash.

    Raises:
        DataError: At the first entry whose hash or link does not match.
    """
    prev = GENESIS
    with Path(path).open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            try:
                entry = json.loads(line)
            except ValueError:
                raise DataError(f"query log line {i} is not JSON") from None
            if not isinstance(entry, dict) or entry.get("prev") != prev or entry.get(
                    "hash") != entry_hash(entry):
                raise DataError(f"query log line {i} breaks the hash chain: the log was "
                                "changed after it was written")
            prev = entry["hash"]
    return prev


# ------------------------------------------------------------------ the client


class EndpointClient:
    """Sends budgeted, logged queries to an endpoint of the protocol.

    Args:
        description: The endpoint description.
        budget: Most model queries (``POST /query``) this client may send.
        credential_env: Environment variable holding the credential (overrides the
            description's); its value is read once here and never shown.
        transport: An ``httpx`` transport (tests); None: the network.
        sleep: The back-off's sleep (tests).

    Raises:
        InvalidConfigError: For a budget <= 0 or a credential variable that is not set.
    """

    def __init__(self, description: EndpointDescription, budget: int, *,
                 credential_env: str | None = None, transport: Any = None,
                 sleep: Any = time.sleep) -> None:
        import httpx

        self.description = description
        self.budget = QueryBudget(budget)
        self.log = QueryLog()
        self._attack = "audit"
        self._sleep = sleep
        self.requests_sent = 0  # every try of a query, retries included
        self.retries = 0  # of queries and /info
        self._bodies: list[tuple[str, bytes, str]] = []  # (who, request, response digest)
        env = credential_env or description.credential_env
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        self.credential_env = env
        if env is not None:
            secret = os.environ.get(env)
            if not secret:
                raise InvalidConfigError(f"the credential variable {env} is not set (or empty); "
                                         f"export {env}=... before the audit, or name another "
                                         "with --credential-env")
            scheme = description.credential_scheme
            headers[description.credential_header] = f"{scheme} {secret}" if scheme else secret
        self._client = httpx.Client(verify=description.verify_tls, headers=headers,
                                    timeout=description.timeout_s, transport=transport,
                                    follow_redirects=False)

    def __repr__(self) -> str:
        # never the headers: they hold the credential
        return (f"EndpointClient({self.description.safe_url!r}, budget={self.budget.limit}, "
                f"used={self.budget.used})")

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    @contextlib.contextmanager
    def attributed_to(self, who: str) -> Iterator[None]:
        """Charge the queries made inside to ``who`` (an attack's name)."""
        before, self._attack = self._attack, who
        try:
            yield
        finally:
            self._attack = before

    def _send(self, method: str, path: str, body: bytes | None) -> Any:
        """One logical request with bounded retries; the final response."""
        import httpx

        d = self.description
        url = f"{d.url}/{path}"
        where = d.safe_url
        tries = 0
        while True:
            tries += 1
            if method == "POST":  # model queries' tries; /info is metadata
                self.requests_sent += 1
            try:
                resp = self._client.request(method, url, content=body)
            except httpx.TransportError as exc:
                if tries > d.max_retries:
                    raise DataError(
                        f"the endpoint {where} does not answer ({type(exc).__name__}) after "
                        f"{tries} tries; check the URL, that the server runs and is reachable, "
                        "or raise timeout_s/max_retries in the description") from None
                self.retries += 1
                self._sleep(min(d.backoff_s * 2 ** (tries - 1), MAX_WAIT_S))
                continue
            if resp.status_code == 429 or resp.status_code >= 500:
                if tries > d.max_retries:
                    raise DataError(
                        f"the endpoint {where} kept answering HTTP {resp.status_code} after "
                        f"{tries} tries; raise max_retries/backoff_s in the description, or "
                        "audit when the server is less loaded")
                self.retries += 1
                wait = d.backoff_s * 2 ** (tries - 1)
                after = _retry_after(resp.headers.get("Retry-After"))
                self._sleep(min(max(wait, after), MAX_WAIT_S))
                continue
            return resp, tries

    def info(self) -> dict[str, Any]:
        """``GET /info`` (metadata, not a model query: not charged, not logged).

        Raises:
            DataError: If the endpoint does not answer, or answers no protocol metadata.
        """
        resp, _ = self._send("GET", "info", None)
        where = self.description.safe_url
        if resp.status_code in (401, 403):
            raise DataError(f"the endpoint {where} refused /info (HTTP {resp.status_code}); "
                            "check the credential variable (--credential-env)")
        if resp.status_code != 200:
            raise DataError(f"the endpoint {where} answered /info with HTTP "
                            f"{resp.status_code}; check the URL (it must be the base URL of an "
                            "endpoint of docs/endpoint-protocol.md)")
        try:
            info = json.loads(resp.content)
        except ValueError:
            info = None
        if not isinstance(info, dict) or info.get("protocol") != PROTOCOL:
            raise DataError(f"the endpoint {where} answered /info with no {PROTOCOL} metadata; "
                            "check the URL (docs/endpoint-protocol.md)")
        return info

    def query(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """One model query: charged to the budget first (refused past it, nothing sent),
        then sent, logged, and decoded.

        Raises:
            QueryBudgetError: Past the budget.
            DataError: For an endpoint that does not answer, refuses, or answers no JSON
                object.
        """
        who = self._attack
        self.budget.charge(who)
        request = canonical(body)
        resp, tries = self._send("POST", "query", request)
        where = self.description.safe_url
        if resp.status_code in (401, 403):
            raise DataError(f"the endpoint {where} refused a query (HTTP {resp.status_code}): "
                            "check the credential (--credential-env), or its access rule (an "
                            "allow-list admits only some nodes)")
        if resp.status_code != 200:
            raise DataError(f"the endpoint {where} rejected a query (HTTP {resp.status_code}); "
                            "check that it speaks docs/endpoint-protocol.md and that the "
                            "description's requests and sizes match it")
        try:
            with input_boundary(f"the response of {where}"):
                answer = json.loads(resp.content)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise DataError(f"the endpoint {where} answered a query with no JSON object; check "
                            "that it speaks docs/endpoint-protocol.md")
        try:
            response = canonical(answer)
        except ValueError:  # NaN or infinity in the answer
            raise DataError(f"the endpoint {where} answered NaN or infinite values; fix the "
                            "model or the server, then audit again") from None
        self.log.append(who, request, response, tries)
        self._bodies.append((who, request, digest(response)))
        return answer

    def recheck(self, count: int, seed: int) -> dict[str, Any]:
        """Send ``count`` earlier queries (a seeded sample) again, charged as ``recheck``, and
        compare the answers' digests: a non-deterministic API is reported, never averaged.

        Returns:
            ``{"rechecked", "differing", "deterministic"}``.
        """
        count = min(count, len(self._bodies))
        if count <= 0:
            return {"rechecked": 0, "differing": 0, "deterministic": None}
        rng = np.random.default_rng(seed)
        picks = sorted(rng.choice(len(self._bodies), size=count, replace=False).tolist())
        differing = 0
        with self.attributed_to("recheck"):
            for i in picks:
                _, request, first = self._bodies[i]
                again = self.query(json.loads(request))
                differing += int(digest(canonical(again)) != first)
        return {"rechecked": count, "differing": differing, "deterministic": differing == 0}


def _retry_after(value: str | None) -> float:
    """Seconds of a ``Retry-After`` header (delta-seconds or an HTTP date), 0 if absent."""
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return 0.0
        return max(0.0, when.timestamp() - time.time())


# ------------------------------------------------------------------ answers


def _matrix(answer: Mapping[str, Any], key: str, rows: int, cols: int | None,
            where: str) -> np.ndarray:
    """``answer[key]`` as a finite ``[rows, cols]`` float64 array, or DataError."""
    value = answer.get(key)
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        arr = np.empty(0)
    if arr.ndim != 2 or arr.shape[0] != rows or (cols is not None and arr.shape[1] != cols):
        want = f"[{rows}, {cols if cols is not None else 'd'}]"
        raise DataError(f"the endpoint {where} answered {key!r} of the wrong shape (want "
                        f"{want}, one row per node asked); fix the server or the description's "
                        "num_classes")
    if not np.isfinite(arr).all():
        raise DataError(f"the endpoint {where} answered NaN or infinite {key}; fix the model or "
                        "the server, then audit again")
    return arr


def decode_answer(answer: Mapping[str, Any], outputs: Sequence[str], rows: int,
                  num_classes: int, where: str) -> dict[str, np.ndarray]:
    """Check an answer holds every declared output, of the right shape and finite.

    Raises:
        DataError: Naming the output and the fix.
    """
    out: dict[str, np.ndarray] = {}
    for key in outputs:
        if key not in answer:
            raise DataError(f"the endpoint {where} does not return {key!r}, which the "
                            f"description names in outputs; remove it from outputs (the "
                            "endpoint's /info lists what it returns)")
        if key == "labels":
            try:
                lab = np.asarray(answer[key], dtype=np.float64)
            except (TypeError, ValueError):
                lab = np.empty((0, 0))
            if (lab.shape != (rows,) or not np.isfinite(lab).all()
                    or (lab != np.round(lab)).any() or (lab < 0).any()
                    or (lab >= num_classes).any()):
                raise DataError(f"the endpoint {where} answered 'labels' that are not one class "
                                f"id in 0..{num_classes - 1} per node asked; fix the server or "
                                "the description's num_classes")
            out[key] = lab.astype(np.int64)
        elif key == "embeddings":
            out[key] = _matrix(answer, key, rows, None, where)
        else:
            out[key] = _matrix(answer, key, rows, num_classes, where)
            if key == "posteriors":
                p = out[key]
                if (p < -1e-6).any() or not np.allclose(p.sum(1), 1.0, atol=1e-3):
                    raise DataError(f"the endpoint {where} answered 'posteriors' whose rows do "
                                    "not sum to 1; declare them as logits in outputs, or fix "
                                    "the server")
    return out


class RemoteModel:
    """Stands for the model behind the endpoint; never called locally."""

    def __init__(self, in_dim: int, out_dim: int, where: str) -> None:
        self.in_dim, self.out_dim, self.where = in_dim, out_dim, where

    def __call__(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        raise CapabilityError(f"the model lives behind {self.where}; it is queried through "
                              "the endpoint, never run here")

    def __repr__(self) -> str:
        return f"RemoteModel({self.where!r})"


@dataclass(frozen=True)
class RemoteTarget(TrainedTarget):
    """A target whose outputs come from an inference endpoint, within a query budget.

    The graph, split and labels are the auditor's ground truth (an attack never reads them
    unless its threat model grants it); the model is behind ``endpoint``. Outputs of the
    served graph are read with one ``nodes`` query for every node and kept (an adversary
    keeps what it paid for); feature queries are ``features`` requests; queries on another
    graph are ``subgraph`` requests, or refused when the endpoint accepts none.

    Attributes:
        endpoint: The budgeted client (shared by copies of the record).
    """

    endpoint: EndpointClient | None = None

    @property
    def client(self) -> EndpointClient:
        """The endpoint client (never None after :func:`remote_target`)."""
        assert self.endpoint is not None
        return self.endpoint

    @property
    def query_budget(self) -> QueryBudget:
        """The budget the audit plans against (the runner skips its CPU-time fit for it)."""
        return self.client.budget

    def attributed_to(self, who: str) -> contextlib.AbstractContextManager[None]:
        """Charge the queries made inside to attack ``who`` (the harness calls this)."""
        return self.client.attributed_to(who)

    @property
    def num_classes(self) -> int:
        """Output classes (the description's, else the ground truth's)."""
        return int(getattr(self.model, "out_dim"))  # noqa: B009 - a RemoteModel, typed nn.Module

    @property
    def num_features(self) -> int:
        """Feature width of the ground-truth graph."""
        return int(self.graph.x.shape[1])

    def _where(self) -> str:
        return self.client.description.safe_url

    def _decode(self, answer: Mapping[str, Any], rows: int) -> list[torch.Tensor]:
        """Embeddings (if exposed), then logits (or their stand-in) of an answer."""
        d = self.client.description
        got = decode_answer(answer, d.outputs, rows, self.num_classes, self._where())
        layers = []
        if "embeddings" in got:
            layers.append(torch.from_numpy(got["embeddings"]).float())
        if "logits" in got:
            logits = torch.from_numpy(got["logits"]).float()
        elif "posteriors" in got:
            # their logarithm has exactly the answered posterior as its softmax
            logits = torch.log(torch.from_numpy(got["posteriors"]).float().clamp_min(1e-38))
        else:  # labels only: a score whose argmax is the label and that says nothing else
            logits = torch.full((rows, self.num_classes), -1.0)
            logits[torch.arange(rows), torch.from_numpy(got["labels"])] = 0.0
        layers.append(logits)
        return layers

    def _needs_mode(self, mode: str, what: str) -> None:
        if mode not in self.client.description.requests:
            raise CapabilityError(f"{what} needs '{mode}' requests, which the endpoint does not "
                                  f"accept (its description lists "
                                  f"{', '.join(self.client.description.requests)})")

    def _layers(self, view: str) -> list[torch.Tensor]:
        cache = self._caches.layers
        if view not in cache:
            if view == "target":
                self._needs_mode("nodes", "reading the served graph's outputs")
                n = int(self.graph.num_nodes)
                answer = self.client.query({"nodes": list(range(n))})
                cache[view] = self._decode(answer, n)
            else:  # another graph view: submitted as a subgraph, where the API takes one
                cache[view] = self.query(self.served_features(), self.edges(view))
        return cache[view]

    @torch.no_grad()
    def query(self, x: torch.Tensor, edge_index: torch.Tensor) -> list[torch.Tensor]:
        """Outputs for features ``x`` on a submitted graph (``subgraph`` request); on the
        served graph itself, a ``features`` request of the rows that differ."""
        n = int(x.shape[0])
        if edge_index is self.edges("target") and n == int(self.graph.num_nodes):
            out = self.feature_query_rows(x, np.arange(n))
            return [out.float()]
        self._needs_mode("subgraph", "a query on a graph of the adversary's choosing")
        body = {"subgraph": {"x": x.detach().cpu().double().tolist(),
                             "edge_index": edge_index.detach().cpu().long().tolist()}}
        return self._decode(self.client.query(body), n)

    def _overrides(self, x: torch.Tensor) -> np.ndarray:
        """Rows where ``x`` differs from the served features (kept per ``x`` tensor)."""
        entry = self._caches.local.get("overrides")
        key = (x._version, tuple(x.shape))
        if entry is not None and entry[0]() is x and entry[1] == key:
            return entry[2]
        served = self.served_features()
        if tuple(x.shape) != tuple(served.shape):
            raise CapabilityError(f"a feature query on the served graph sends one row per node "
                                  f"({tuple(served.shape)}); got {tuple(x.shape)}")
        rows = torch.nonzero((x.double() != served.double()).any(1)).reshape(-1).numpy()
        self._caches.local["overrides"] = (weakref.ref(x), key, rows)
        return rows

    def feature_query_rows(
        self, x: torch.Tensor, rows: np.ndarray, *, view: str = "target",
        scale_node: int | None = None, scale: float = 1.0, local: bool = True,
    ) -> torch.Tensor:
        """One ``features`` request: logits at ``rows`` with the rows of ``x`` that differ
        from the served features, and row ``scale_node`` scaled (in float64), sent.

        ``local`` is the server's business: it answers at its own precision.
        """
        del local
        if view != "target":
            raise CapabilityError(f"an endpoint answers feature queries on its served graph "
                                  f"only, not in the {view!r} view")
        self._needs_mode("features", "a feature query (LinkTeller's)")
        changed = [int(i) for i in self._overrides(x) if scale_node is None or i != scale_node]
        values = [x[i].double().tolist() for i in changed]
        if scale_node is not None:
            changed.append(int(scale_node))
            values.append((x[int(scale_node)].double() * scale).tolist())
        idx = np.asarray(rows, dtype=np.int64)
        body = {"nodes": idx.tolist(), "features": {"ids": changed, "values": values}}
        answer = self.client.query(body)
        outs = self.client.description.outputs
        best = next(o for o in ("logits", "posteriors", "labels") if o in outs or o == "labels")
        got = decode_answer(answer, [best], len(idx), self.num_classes, self._where())
        if "logits" in got:
            return torch.from_numpy(got["logits"])
        if "posteriors" in got:
            return torch.log(torch.from_numpy(got["posteriors"]).clamp_min(1e-300))
        out = torch.full((len(idx), self.num_classes), -1.0, dtype=torch.float64)
        out[torch.arange(len(idx)), torch.from_numpy(got["labels"])] = 0.0
        return out


def remote_exposure(description: EndpointDescription) -> frozenset[str]:
    """Output names (``graphleaks.threat.Output`` values) an endpoint exposes."""
    outs = set(description.outputs)
    exposed = {"labels"}
    if "posteriors" in outs or "logits" in outs:
        exposed.add("posteriors")
    if "logits" in outs:
        exposed.add("logits")
    if "embeddings" in outs:
        exposed.add("embeddings")
    if "features" in description.requests:
        exposed.add("feature_queries")
    return frozenset(exposed)


def remote_target(client: EndpointClient, base: TrainedTarget,
                  info: Mapping[str, Any] | None = None) -> RemoteTarget:
    """The remote target of ``client`` with ``base``'s graph, split, spec and truth.

    ``base`` is the auditor's ground truth (a bundle, or a user graph with its membership
    sets); its model is never queried. ``info`` (the endpoint's ``/info``) is checked
    against the description and the graph.

    Raises:
        DataError: For sizes or outputs on which the description, the endpoint and the
            graph disagree.
    """
    d = client.description
    n = int(base.graph.num_nodes)
    where = d.safe_url
    classes = d.num_classes
    if classes is None:
        classes = int(base.graph.y.max()) + 1 if base.graph.y.numel() else 1
    if d.num_nodes is not None and d.num_nodes != n:
        raise DataError(f"the description says the endpoint serves {d.num_nodes} nodes but the "
                        f"ground-truth graph has {n}; give the graph the endpoint serves")
    if info is not None:
        declared = info.get("outputs")
        if isinstance(declared, list):
            missing = [o for o in d.outputs if o not in declared]
            if missing:
                raise DataError(f"the description names output {missing[0]!r}, which the "
                                f"endpoint {where} does not return (its /info lists "
                                f"{', '.join(str(o) for o in declared if o in ENDPOINT_OUTPUTS)}"
                                "); remove it from outputs")
        modes = info.get("requests")
        if isinstance(modes, list):
            missing = [m for m in d.requests if m not in modes]
            if missing:
                raise DataError(f"the description names request mode {missing[0]!r}, which the "
                                f"endpoint {where} does not accept; remove it from requests")
        for key, want in (("num_nodes", n), ("num_classes", classes)):
            got = info.get(key)
            if isinstance(got, int) and got != want:
                raise DataError(f"the endpoint {where} reports a different {key} than the "
                                "description or the ground-truth graph; give the graph it "
                                "serves, or fix the description")
    output = "logits" if "logits" in d.outputs else "probabilities"
    iface = ModelInterface(output=output, embedding_layers=("remote",)
                           if "embeddings" in d.outputs else (), parameters=False)
    model = RemoteModel(int(base.graph.x.shape[1]), int(classes), where)
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(TrainedTarget)
              if f.init}
    fields.update(model=model, interface=iface, endpoint=client)
    return RemoteTarget(**fields)


__all__ = ["ENDPOINT_OUTPUTS", "GENESIS", "PROTOCOL", "REQUEST_MODES", "EndpointClient",
           "EndpointDescription", "QueryBudget", "QueryBudgetError", "QueryLog", "RemoteModel",
           "RemoteTarget", "decode_answer", "parse_description", "read_description",
           "remote_exposure", "remote_target", "safe_url", "verify_log"]
