"""An embedded SQLite store of sweep runs: one row per run.

A row is keyed by the hash of its run configuration. Rows are first written as
``pending``; a finished run replaces its row with ``done`` (or ``failed``) and its metrics
in a single transaction, so a process killed at any point (even by ``kill -9``) leaves every
row either finished or still to do: a resumed sweep reruns exactly the unfinished ones and
never duplicates a run. Only the coordinating process writes; workers return results.

Example:
    >>> store = ResultsStore(":memory:")
    >>> store.add_pending([{"config_hash": "h1", "defense": "none", "epsilon": None,
    ...                     "attack": "confidence_mia", "seed": 0, "config": {}}])
    1
    >>> store.record_done("h1", metrics={"binary": {}}, utility={}, ledger={},
    ...                   train_s=0.1, attack_s=0.2)
    >>> [r["status"] for r in store.rows()]
    ['done']
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from graphleaks._io import csv_cell
from graphleaks._limits import read_json_bounded
from graphleaks._registry import canonical_name, normalize_name
from graphleaks.errors import DataError

STORE_VERSION = 1
#: The marker a graphleaks results store carries in its ``meta`` table.
STORE_FORMAT = "graphleaks-results"
STATUSES = ("pending", "done", "failed")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    config_hash TEXT PRIMARY KEY,
    defense TEXT NOT NULL,
    epsilon REAL,
    attack TEXT NOT NULL,
    seed INTEGER NOT NULL,
    config_json TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
    metrics_json TEXT,
    utility_json TEXT,
    ledger_json TEXT,
    error TEXT,
    train_s REAL,
    attack_s REAL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    finished_at REAL,
    worker_pid INTEGER
);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status);
"""

#: Columns a comparison of two sweeps should look at (timings, pids and dates excluded).
RESULT_COLUMNS = ("config_hash", "defense", "epsilon", "attack", "seed", "status",
                  "metrics_json", "utility_json", "ledger_json")


_SQLITE_MAGIC = b"SQLite format 3\x00"


def _foreign(path: Path, why: str) -> DataError:
    return DataError(f"{path} is not a graphleaks results store ({why}); graphleaks never "
                     "modifies other programs' databases: choose another --db")


def _ro_uri(path: Path) -> str:
    """A read-only URI that leaves no ``-wal``/``-shm`` files next to the database.

    A read-only connection to a WAL-mode database creates those files when they are
    missing; when they are (nobody is writing, the WAL is checkpointed), the file is
    complete and is opened as immutable instead.
    """
    with path.open("rb") as fh:
        header = fh.read(20)
    wal_mode = len(header) == 20 and header[18] == 2
    idle = not Path(f"{path}-wal").exists()
    return f"{path.absolute().as_uri()}?" + ("immutable=1" if wal_mode and idle else "mode=ro")


def inspect_store(path: str | Path) -> str:
    """Whether ``path`` is ``"new"`` (absent, empty file or empty database) or ``"ours"``.

    The file is only read, through a read-only connection, so a foreign database is left
    exactly as it was (no tables added, no WAL switch).

    Raises:
        DataError: For a folder, a file that is not SQLite, a database without graphleaks'
            marker or with other tables, or a store of another version.
    """
    p = Path(path)
    if not p.exists():
        return "new"
    if not p.is_file():
        raise DataError(f"results store {p} is not a regular file; choose another --db")
    if p.stat().st_size == 0:
        return "new"
    with p.open("rb") as fh:
        if fh.read(16) != _SQLITE_MAGIC:
            raise _foreign(p, "not a SQLite database")
    try:
        con = sqlite3.connect(_ro_uri(p), uri=True)
        try:
            tables = {r[0] for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
            if not tables:
                return "new"
            if tables != {"meta", "runs"}:
                raise _foreign(p, "it holds other tables")
            meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN "
                                    "('store_format', 'store_version')").fetchall())
        finally:
            con.close()
    except sqlite3.DatabaseError:
        raise _foreign(p, "unreadable or corrupt SQLite file") from None
    # stores written before the marker existed carry only store_version (and only our tables)
    if meta.get("store_format", STORE_FORMAT) != STORE_FORMAT or "store_version" not in meta:
        raise _foreign(p, "no graphleaks marker")
    if str(meta["store_version"]) != str(STORE_VERSION):
        raise DataError(f"results store {p} has store_version {str(meta['store_version'])[:20]}"
                        f"; this graphleaks reads version {STORE_VERSION}")
    return "ours"


def _make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        raise DataError(f"results store {path}: cannot create its folder {path.parent} (a file "
                        "is in the way or it is not writable); choose another --db") from None


class ResultsStore:
    """A SQLite results database (created on first use).

    Args:
        path: The database file, or ``":memory:"``.
        readonly: Open an existing store for queries only (``graphleaks results``): the
            connection is read-only, so nothing in the file can change.

    Raises:
        DataError: If ``path`` exists and is not a graphleaks store (see
            :func:`inspect_store`), or ``readonly`` and it holds no store.
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = str(path)
        memory = self.path == ":memory:"
        state = "new" if memory else inspect_store(self.path)
        if readonly and state != "ours":
            raise DataError(f"results store {self.path} does not exist or holds no runs; run "
                            "`graphleaks sweep` first")
        try:
            if readonly:
                self._con = sqlite3.connect(_ro_uri(Path(self.path)), uri=True, timeout=30.0,
                                            isolation_level=None)
            else:
                if not memory:
                    _make_parent(Path(self.path))
                self._con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._con.row_factory = sqlite3.Row
            if not readonly:
                self._init_schema(memory)
        except sqlite3.DatabaseError as exc:
            raise DataError(f"results store {self.path} cannot be opened: {exc}") from None

    def _init_schema(self, memory: bool) -> None:
        """Create the tables and the marker (only on a new or already-ours database)."""
        if not memory:
            self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("PRAGMA synchronous=FULL")
        self._con.executescript(_SCHEMA)
        self._con.execute("INSERT OR IGNORE INTO meta VALUES ('store_version', ?)",
                          (str(STORE_VERSION),))
        self._con.execute("INSERT OR IGNORE INTO meta VALUES ('store_format', ?)",
                          (STORE_FORMAT,))

    def close(self) -> None:
        """Close the connection."""
        self._con.close()

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON value under ``key`` (e.g. the sweep spec)."""
        self._con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                          (key, json.dumps(value, sort_keys=True)))

    def _json(self, raw: Any, what: str) -> Any:
        """A JSON column, bounded: the store may be a file from anywhere."""
        return read_json_bounded(raw if isinstance(raw, (str, bytes)) else str(raw),
                                 f"results store {self.path}: {what}")

    def get_meta(self, key: str) -> Any:
        """The JSON value stored under ``key``, or None."""
        row = self._con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else self._json(row[0], f"meta {key!r}")

    def add_pending(self, runs: Iterable[Mapping[str, Any]]) -> int:
        """Insert runs not yet in the store as ``pending``; returns how many were new."""
        now = time.time()
        with self._tx():
            before = self._count()
            self._con.executemany(
                "INSERT OR IGNORE INTO runs (config_hash, defense, epsilon, attack, seed, "
                "config_json, status, created_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)",
                [(r["config_hash"], r["defense"], r["epsilon"], r["attack"], int(r["seed"]),
                  json.dumps(r["config"], sort_keys=True), now) for r in runs])
            return self._count() - before

    def _count(self) -> int:
        return int(self._con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])

    def _tx(self) -> Any:
        con = self._con

        class _Tx:
            def __enter__(self) -> None:
                con.execute("BEGIN IMMEDIATE")

            def __exit__(self, exc_type: Any, *rest: Any) -> None:
                con.execute("ROLLBACK" if exc_type else "COMMIT")

        return _Tx()

    def todo(self, hashes: Sequence[str] | None = None, *, retry_failed: bool = False
             ) -> list[str]:
        """Hashes of runs still to do (pending, and failed when ``retry_failed``)."""
        statuses = ("pending", "failed") if retry_failed else ("pending",)
        q = f"SELECT config_hash FROM runs WHERE status IN ({','.join('?' * len(statuses))})"
        found = {r[0] for r in self._con.execute(q, statuses)}
        return [h for h in (hashes if hashes is not None else sorted(found)) if h in found]

    def record_many(self, outcomes: Sequence[Mapping[str, Any]]) -> None:
        """Finish several runs in one transaction (all or none are recorded)."""
        now = time.time()
        with self._tx():
            for o in outcomes:
                cur = self._con.execute(
                    "UPDATE runs SET status=?, metrics_json=?, utility_json=?, ledger_json=?, "
                    "error=?, train_s=?, attack_s=?, attempts=attempts+1, finished_at=?, "
                    "worker_pid=? WHERE config_hash=? AND status != 'done'",
                    (o["status"], _dump(o.get("metrics")), _dump(o.get("utility")),
                     _dump(o.get("ledger")), o.get("error"), o.get("train_s"),
                     o.get("attack_s"), now, o.get("worker_pid", os.getpid()),
                     o["config_hash"]))
                if cur.rowcount != 1:
                    raise DataError(f"run {o['config_hash']} is not a pending run of this store")

    def record_done(self, config_hash: str, *, metrics: Any, utility: Any, ledger: Any,
                    train_s: float, attack_s: float) -> None:
        """Finish one run successfully."""
        self.record_many([{"config_hash": config_hash, "status": "done", "metrics": metrics,
                           "utility": utility, "ledger": ledger, "train_s": train_s,
                           "attack_s": attack_s}])

    def rows(self, *, status: str | None = None, defense: str | None = None,
             attack: str | None = None) -> list[dict[str, Any]]:
        """Rows as dictionaries with JSON columns decoded (``metrics``, ``utility``, ...) and
        the run's ``task`` (``node``, ``link`` or ``graph``, from its config).

        ``defense`` and ``attack`` match any spelling of a plug-in name (``gap-edp`` finds
        ``gap_edp``), and a row an earlier version stored under a kebab-case name is returned
        under its canonical name.
        """
        q, args = "SELECT * FROM runs WHERE 1=1", []
        if status is not None:
            q += " AND status=?"
            args.append(status)
        q += " ORDER BY defense, epsilon IS NULL, epsilon, attack, seed, config_hash"
        out = []
        for r in self._con.execute(q, args):
            d = dict(r)
            d["defense"] = canonical_name(str(d["defense"]))
            if any(want is not None and normalize_name(want) != normalize_name(str(d[col]))
                   for col, want in (("defense", defense), ("attack", attack))):
                continue
            for k in ("config", "metrics", "utility", "ledger"):
                raw = d.get(f"{k}_json")
                d[k] = self._json(raw, f"a run's {k}") if raw else None
            # the task lives in the run's config (a node run's, before tasks, names none)
            target = (d["config"] or {}).get("target") if isinstance(d["config"], dict) else None
            d["task"] = str((target if isinstance(target, dict) else {}).get("task", "node"))
            out.append(d)
        return out

    def counts(self) -> dict[str, int]:
        """Number of rows per status."""
        out = dict.fromkeys(STATUSES, 0)
        for status, n in self._con.execute("SELECT status, COUNT(*) FROM runs GROUP BY status"):
            out[status] = int(n)
        return out


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, allow_nan=False)


def flat_row(row: Mapping[str, Any], metrics: Sequence[str]) -> dict[str, Any]:
    """A flat record of one row: identifiers, chosen metric values/CIs, utility, timings."""
    from graphleaks.report.records import decode_readings

    out: dict[str, Any] = {k: row.get(k) for k in ("config_hash", "defense", "epsilon",
                                                    "attack", "seed", "status")}
    readings = decode_readings(row.get("metrics") or {}, "results store metrics")
    for m in metrics:
        est = readings.get(m)
        out[m] = None if est is None else est.value
        out[f"{m}_lo"] = None if est is None or est.ci is None else est.ci[0]
        out[f"{m}_hi"] = None if est is None or est.ci is None else est.ci[1]
    util = row.get("utility") or {}
    out["test_accuracy"] = util.get("test_accuracy")
    out["claimed_epsilon"] = (row.get("ledger") or {}).get("epsilon")
    out["train_s"], out["attack_s"] = row.get("train_s"), row.get("attack_s")
    out["error"] = row.get("error")
    # last, so the columns before them stay where they were: the task, and a link
    # predictor's utility (its test link AUC; it has no accuracy)
    out["task"] = row.get("task", "node")
    out["test_link_auc"] = util.get("test_auc")
    return out


def to_csv(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> str:
    """CSV text of :func:`flat_row` records."""
    flat = [flat_row(r, metrics) for r in rows]
    buf = io.StringIO()
    cols = list(flat[0]) if flat else ["config_hash"]
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    # string cells only (an error text or dataset name may start with "="); numbers as they are
    w.writerows({k: csv_cell(v) for k, v in r.items()} for r in flat)
    return buf.getvalue()
