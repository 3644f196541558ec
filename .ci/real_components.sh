#!/usr/bin/env bash
# Real components in CI (issue 29): a real MLflow tracking server (loopback, SQLite backend)
# and a real Ray cluster (a head and one more node process, `ray start`), each started and
# stopped here with bounded waits, and cleaned up on every exit path.
#
# MLflow: an audit and a sweep logged with --mlflow, read back through MlflowClient (runs,
# metrics, the report.json artifact byte for byte). Those two local runs are also the
# references of the Ray part (--mlflow only logs: it does not change what is written).
# Ray: the same audit with --ray and the same sweep with --backend ray on the cluster, each
# checked equal to the local run (report.json byte for byte but its timing lines; the
# sweep's stored rows), then the Ray-marked tests, joined to the same cluster.
#
# Needs graphleaks with the ray and mlflow-server extras in the active environment.
# Settings (environment): WAIT_S, the most one start-up may wait (default 180 s; a
# healthy start takes seconds to tens of seconds, the bound is spent only on a failure);
# STOP_S, the most a stopped process group may take before it is killed (default 30 s);
# STEP_S, the most one audit, sweep or test step may run (default 600 s); RAY_TRIES, starts
# of the cluster before giving up (default 4).
#
# Why the Ray start is shaped as it is (a 2-core CI machine after its test suite, or one
# shared with other jobs). Measured here, Ray 2.60: `ray start` gives its raylet a fixed 30 s
# to register, and the raylet gives the node's dashboard agent, a Python process, a fixed 15 s
# to write its port file, else it aborts ("Timed out waiting for file .../metrics_agent_port_
# ..." or "...dashboard_agent_listen_port_..." in raylet.out; neither wait is configurable).
# On a loaded machine the agent took 17-18 s to start, so every try failed. Hence:
# - The agent's imports are made cheaper: Ray imports jsonschema, which imports rfc3987_syntax
#   where it is installed (the notebooks extra pulls it in), and that compiles a Lark grammar
#   at import: 0.88 of the agent's 1.28 CPU-s of imports. The cluster's processes (agents,
#   workers) run with a stand-in module that leaves it out; jsonschema then only lacks its
#   "iri" format check, which Ray does not use.
# - Fewer Python processes compete with the agent: no autoscaler monitor, no log monitor (the
#   drivers here do not stream worker output); the Ray Client server cannot be turned off, it
#   gets a free port. The node is started only once the head runs tasks.
# - A start that still misses a window is stopped and retried (RAY_TRIES), Ray's log tails
#   printed each time.
# - Readiness is what the audit needs, not a port: a driver joins (ray.init), the expected
#   nodes are alive with their CPUs, and a task has run on each node (a worker process
#   started and registered). The waiter stops at once if a `ray start` process exits.
# - A private, short --temp-dir: Ray's sockets live under it (a path limit of 107 bytes), its
#   logs are this run's alone (their tails say what a failed start waited for), and `ray
#   start` records its address there rather than in the machine-wide /tmp/ray (which a later
#   ray.init() would try to join).
# - A small object store (the graphs are tiny) and no usage stats, dashboard or SIGTERM
#   drain (RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S=0: a stopped node goes at once, not after
#   Ray's 30-s drain).
# - The MLflow server runs without its job runner (MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false):
#   eight Python processes fewer, which also ignored the server's stop for 30 s.
# Each node and the server run in a process group of their own (setsid), stopped by its id,
# never by `ray stop`, which would stop every Ray node of this user on the machine (CI jobs
# and developers may share it); a process of this run's cluster that outlives that stop is
# found by a marker in its environment and killed.
set -euo pipefail
cd "$(dirname "$0")/.."
export WAIT_S=${WAIT_S:-180}
STOP_S=${STOP_S:-30}
STEP_S=${STEP_S:-600}
RAY_TRIES=${RAY_TRIES:-4}
t0=$SECONDS
say() { echo "real components [+$((SECONDS - t0)) s] $*"; }
work=$(mktemp -d)
ray_tmp=$(mktemp -d /tmp/glray.XXXXXX)  # short: Ray's socket paths must fit 107 bytes
pids=()
# Every process of this run's cluster carries this in its environment (Ray's workers rename
# their command line, so it cannot be found by name); it names this run's own temp dir, so no
# other process on the machine matches
marker="GRAPHLEAKS_CI_RAY_RUN=$ray_tmp"
leftovers() {
  local p
  for p in /proc/[0-9]*; do
    grep -qsxzF -- "$marker" "$p/environ" && echo "${p#/proc/}"
  done
  return 0
}
stop_pids() {  # each started process is its own group's leader (setsid): stop the groups
  local pid
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq "$STOP_S"); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 1; done
    if kill -0 -- "-$pid" 2>/dev/null; then  # say what ignored the TERM, then kill it
      echo "still running ${STOP_S}s after TERM, killed:" \
        "$(ps -o comm= -g "$pid" 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')" >&2
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
  pids=()
  # Ray's workers run in process groups of their own and leave with their raylet; kill any
  # that outlived it
  local left
  left=$(leftovers)
  if [ -n "$left" ]; then
    sleep 2; left=$(leftovers)
    # shellcheck disable=SC2086
    [ -z "$left" ] || kill -KILL $left 2>/dev/null || true
  fi
}
ray_logs() {  # the tail of every log of the cluster: what a failed start was waiting for
  local f
  for f in "$work"/ray-*.log "$ray_tmp"/session_latest/logs/{gcs_server.out,raylet*.out,raylet*.err,dashboard_agent*.log,runtime_env_agent*.log,dashboard.log,ray_process_exit.log}; do
    [ -s "$f" ] || continue
    echo "---- ${f#"$ray_tmp/"} (last 12 lines)" >&2
    tail -n 12 "$f" | cut -c1-300 >&2
  done
  for f in "$ray_tmp"/session_latest/logs/{python-core-driver,python-core-worker}*.log; do
    [ -s "$f" ] && grep -qE '^\[[^]]* [EFC] ' "$f" || continue  # errors of drivers, workers
    echo "---- ${f#"$ray_tmp/"} (errors)" >&2
    grep -E '^\[[^]]* [EFC] ' "$f" | tail -n 5 | cut -c1-300 >&2
  done
}
cleanup() {
  local rc=$?
  trap - EXIT TERM INT
  stop_pids
  if [ "$rc" -ne 0 ]; then
    echo "real components FAILED (exit $rc) after $((SECONDS - t0)) s; logs:" >&2
    tail -n 20 "$work"/*.log 2>/dev/null | cut -c1-300 >&2 || true
    ray_logs
  fi
  rm -rf "$work" "$ray_tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT   # a stopped CI job cleans up too
export RAY_AUTH_MODE=token       # explicit: head, node, drivers and workers share ~/.ray's token
export RAY_USAGE_STATS_ENABLED=0
export RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S=0
step() { timeout -k 10 "$STEP_S" "$@"; }  # no step hangs CI
free_port() { python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }  # bash's own connect: no process
alive() { [ -e "/proc/$1" ] && ! grep -qs '^[0-9]* ([^)]*) Z' "/proc/$1/stat"; }

# ---------------------------------------------------------------- MLflow: a real server
# started first: it sets up its new SQLite store (tens of seconds of CPU under load) while
# the inputs are written
ml_port=$(free_port)
MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false setsid mlflow server --host 127.0.0.1 --port "$ml_port" --workers 1 \
  --backend-store-uri "sqlite:///$work/mlflow.db" --artifacts-destination "$work/artifacts" \
  > "$work/mlflow.log" 2>&1 &
ml_pid=$!
pids+=("$ml_pid")

# ---------------------------------------------------------------- a tiny graph, as files
python - "$work" <<'PY'
import sys
from pathlib import Path

import numpy as np

from graphleaks.data.synthetic import csbm

d = Path(sys.argv[1])
g = csbm(150, num_classes=3, num_features=8, seed=1)
ei = g.edge_index.numpy()
(d / "edges.csv").write_text("src,dst\n" + "\n".join(f"{a},{b}" for a, b in ei.T))
np.save(d / "x.npy", g.x.numpy())
(d / "y.csv").write_text("\n".join(str(v) for v in g.y.tolist()))
PY
cat > "$work/sweep.toml" <<'TOML'
[target]
dataset = "synthetic"
[target.synthetic]
num_nodes = 60
num_features = 8
[target.architecture]
epochs = 20
hidden = [16]
[audit]
n_bootstrap = 20
[attacks.confidence_mia]
threshold = "none"
[attacks.lira_mia]
num_references = 2
ref_epochs = 10
[sweep]
defenses = ["none"]
seeds = [0, 1]
TOML
# Three attacks that fan out (reference and shadow trainings: 6 Ray tasks over 2 nodes)
audit=(graphleaks audit --edges "$work/edges.csv" --features "$work/x.npy"
       --labels "$work/y.csv" --suite quick --attack lira_mia --attack shadow_mia
       --attack base_mia --param lira_mia.num_references=2 --param lira_mia.ref_epochs=20
       --param shadow_mia.num_shadows=2 --param base_mia.num_references=2
       --n-bootstrap 30 --quiet)
no_timings() { grep -v '"runtime_s":' "$1"; }
say "inputs written"

# ---------------------------------------------------------------- MLflow: ready when asked
# ready when its health endpoint answers; stop at once if the server process exits
ready=0
for _ in $(seq "$WAIT_S"); do
  alive "$ml_pid" || { echo "error: the MLflow server exited while starting" >&2; exit 1; }
  if listening "$ml_port" && python -c 'import sys, urllib.request as u
sys.exit(u.urlopen(sys.argv[1], timeout=5).status != 200)' \
      "http://127.0.0.1:$ml_port/health" 2>/dev/null; then ready=1; break; fi
  sleep 1
done
if [ "$ready" != 1 ]; then
  echo "error: the MLflow server did not answer http://127.0.0.1:$ml_port/health within ${WAIT_S}s" >&2
  exit 1
fi
say "MLflow server up on 127.0.0.1:$ml_port"
export MLFLOW_TRACKING_URI="http://127.0.0.1:$ml_port"
step "${audit[@]}" --mlflow --out "$work/audit-local"
say "local audit done (logged to MLflow)"
step graphleaks sweep "$work/sweep.toml" --db "$work/sweep-local.sqlite" --mlflow > /dev/null
say "local sweep done (logged to MLflow)"
step python - "$work/audit-local/report.json" "$work/dl" <<'PY'
import json
import math
import sys
from pathlib import Path

from mlflow import MlflowClient

from graphleaks.audit.tracking import flat_metrics
from graphleaks.report.report import AuditReport

client = MlflowClient()  # MLFLOW_TRACKING_URI: the server started above
exp = client.get_experiment_by_name("graphleaks")
if exp is None:
    sys.exit("error: the MLflow server has no experiment 'graphleaks'")
runs = client.search_runs([exp.experiment_id])
audits = [r for r in runs if r.info.run_name.startswith("audit ")]
sweeps = [r for r in runs if r.info.run_name.startswith("sweep ")]
if len(audits) != 1 or len(sweeps) != 4:  # 1 audit; 2 seeds x 2 attacks
    sys.exit(f"error: read back {len(audits)} audit and {len(sweeps)} sweep runs, not 1 and 4")
audit = audits[0]
report = AuditReport.from_dict(json.loads(Path(sys.argv[1]).read_text()))
expected = {k: v for a in report.attacks for k, v in flat_metrics(a.attack, a.metrics)}
logged = {k: v for k, v in audit.data.metrics.items() if not k.startswith("utility.")}


def same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


if (not expected or logged.keys() != expected.keys()
        or not all(same(v, logged[k]) for k, v in expected.items())):
    sys.exit(f"error: the audit's metrics read back differ from the report's "
             f"({len(logged)} vs {len(expected)} keys)")
utility = [k for k in audit.data.metrics if k.startswith("utility.")]
if len(utility) != len(report.target.utility):
    sys.exit(f"error: read back {len(utility)} utility metrics, the report has "
             f"{len(report.target.utility)}")
auc = logged["lira_mia.binary.auc"]
names = {a.path for a in client.list_artifacts(audit.info.run_id)}
missing = {"report.json", "report.md", "ledger.json"} - names
if missing:
    sys.exit(f"error: artifacts missing from the audit run: {sorted(missing)}")
got = Path(client.download_artifacts(audit.info.run_id, "report.json", sys.argv[2]))
if got.read_bytes() != Path(sys.argv[1]).read_bytes():
    sys.exit("error: the report.json artifact read back differs from the written one")
for r in sweeps:
    if not any(k.endswith(".auc") for k in r.data.metrics) or "defense" not in r.data.params:
        sys.exit(f"error: sweep run {r.info.run_name!r} lacks its metrics or parameters")
print(f"MLflow: read back 1 audit run ({len(logged)} metrics equal to the report's, LiRA auc "
      f"{auc:.4f}; {len(names)} artifacts, report.json identical) and {len(sweeps)} sweep runs")
PY
unset MLFLOW_TRACKING_URI
stop_pids
if listening "$ml_port"; then
  echo "error: the MLflow server still listens after its stop" >&2; exit 1
fi
say "MLflow server stopped"

# ---------------------------------------------------------------- Ray: a real cluster
# wait_cluster ADDRESS NODES PID...: until a driver joins, NODES nodes are alive with their
# CPUs and a task has run on each; exits non-zero, saying what it waited for, after WAIT_S
# or as soon as one of the `ray start` processes PID... has exited
wait_cluster() {
  "${ray_env[@]}" python - "$@" <<'PY'
import os
import socket
import sys
import time

address, want, pids = sys.argv[1], int(sys.argv[2]), [int(p) for p in sys.argv[3:]]
wait_s = float(os.environ["WAIT_S"])
deadline = time.monotonic() + wait_s
host, _, port = address.rpartition(":")


def exited() -> list[int]:
    gone = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    gone.append(pid)
        except OSError:
            gone.append(pid)
    return gone


def wait_for(what: str, ready) -> object:  # noqa: ANN001
    last = None
    while True:
        gone = exited()
        if gone:
            sys.exit(f"error: a `ray start` process (pid {gone[0]}) exited while waiting "
                     f"for {what}")
        try:
            got = ready()
            if got:
                return got
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, TimeoutError...
            last = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        if time.monotonic() > deadline:
            sys.exit(f"error: gave up after {wait_s:.0f}s waiting for {what}"
                     + (f" (last: {last})" if last else ""))
        time.sleep(1)


def gcs_listens() -> bool:
    with socket.create_connection((host, int(port)), timeout=2):
        return True


wait_for(f"the Ray head's GCS to accept connections on {address}", gcs_listens)
import ray  # noqa: E402 (after the cheap wait: the import itself costs seconds of CPU)
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: E402


def joined() -> bool:
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 logging_level="ERROR")
    except Exception:
        ray.shutdown()
        raise
    return True


wait_for(f"a driver to join the cluster at {address}", joined)


def nodes_up() -> list[str]:
    alive = [n for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU", 0) >= 1]
    return [n["NodeID"] for n in alive] if len(alive) >= want else []


nodes = wait_for(f"{want} node(s) alive with a CPU each", nodes_up)


@ray.remote(num_cpus=1)
def where() -> str:
    return ray.get_runtime_context().get_node_id()


refs = [where.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False))
        .remote() for n in nodes]
pending = list(refs)


def ran() -> bool:
    global pending
    _, pending = ray.wait(pending, num_returns=len(pending), timeout=1)
    return not pending


wait_for(f"a task to run on each of the {want} node(s) (a worker process to start)", ran)
if sorted(ray.get(refs)) != sorted(nodes):
    sys.exit("error: the warm-up tasks did not run on their nodes")
print(f"{len(nodes)} node(s) run tasks, {ray.cluster_resources()['CPU']:.0f} CPUs")
PY
}
# The cluster's processes: the marker, and the stand-in that keeps rfc3987_syntax's grammar
# out of their imports (see the header)
mkdir -p "$work/shim"
echo 'raise ImportError("left out of the CI Ray cluster: see .ci/real_components.sh")' \
  > "$work/shim/rfc3987_syntax.py"
ray_env=(env "$marker" "PYTHONPATH=$work/shim${PYTHONPATH:+:$PYTHONPATH}")
node_ports() { echo "--dashboard-agent-listen-port $(free_port) --runtime-env-agent-port $(free_port)"; }
node_opts=(--block --num-cpus 1 --temp-dir "$ray_tmp" --object-store-memory 100000000
           --disable-usage-stats --include-log-monitor false)
# Ray Client's server cannot be turned off where its packages are installed (ray[client]):
# give it a free port then, not the fixed 10001. Minimal Ray (the ray extra) refuses the
# option and starts no client server.
client_opts=()
if python -c 'import sys
from ray._private.utils import get_ray_client_dependency_error as missing
sys.exit(missing() is not None)' 2>/dev/null; then
  client_opts=(--ray-client-server-port "$(free_port)")
fi
start_cluster() {  # a head and one more node, 1 CPU each; non-zero if not up in time
  head_port=$(free_port)
  # shellcheck disable=SC2046
  "${ray_env[@]}" setsid ray start --head --port "$head_port" "${node_opts[@]}" --include-dashboard false \
    "${client_opts[@]}" --no-monitor $(node_ports) > "$work/ray-head.log" 2>&1 &
  local head_pid=$!
  pids+=("$head_pid")
  wait_cluster "127.0.0.1:$head_port" 1 "$head_pid" || return 1
  say "Ray head up on 127.0.0.1:$head_port"
  # shellcheck disable=SC2046
  "${ray_env[@]}" setsid ray start --address "127.0.0.1:$head_port" "${node_opts[@]}" $(node_ports) \
    > "$work/ray-node.log" 2>&1 &
  pids+=($!)
  wait_cluster "127.0.0.1:$head_port" 2 "$head_pid" "$!" || return 1
}
for try in $(seq "$RAY_TRIES"); do
  start_cluster && break
  echo "the Ray cluster did not come up (try $try of $RAY_TRIES); its logs:" >&2
  ray_logs
  stop_pids
  if [ "$try" -eq "$RAY_TRIES" ]; then
    echo "error: the Ray cluster did not come up in $RAY_TRIES tries" >&2; exit 1
  fi
done
address="127.0.0.1:$head_port"
say "Ray cluster up: a head and one more node at $address"
step "${audit[@]}" --out "$work/audit-ray" --ray "$address"
diff <(no_timings "$work/audit-local/report.json") <(no_timings "$work/audit-ray/report.json")
say "Ray: the audit on the cluster wrote the local report.json (timing lines aside)"
step graphleaks sweep "$work/sweep.toml" --db "$work/sweep-ray.sqlite" --backend ray \
  --address "$address" > /dev/null
step python - "$work/sweep-local.sqlite" "$work/sweep-ray.sqlite" <<'PY'
import sys

from graphleaks.sweep.results_store import RESULT_COLUMNS, ResultsStore


def rows(path):
    with ResultsStore(path) as s:
        return [tuple(r[c] for c in RESULT_COLUMNS) for r in s.rows()]


local, remote = rows(sys.argv[1]), rows(sys.argv[2])
if not local or local != remote:
    sys.exit(f"error: the sweep on the cluster stored other rows ({len(remote)} vs {len(local)})")
print(f"Ray: the sweep on the cluster stored the local rows ({len(local)} runs)")
PY
say "Ray: sweep compared"
# The executor's own tests on the same cluster (its CLI test is the audit checked above)
GRAPHLEAKS_TEST_RAY_ADDRESS="$address" step python -m pytest -q -p no:randomly -m ray \
  tests/test_executor_ray.py -k "not test_cli_report_json_on_ray_equals_the_local_one"
say "Ray: executor tests passed on the cluster"
stop_pids
if listening "$head_port"; then
  echo "error: the Ray head still listens after its stop" >&2; exit 1
fi
if [ -n "$(leftovers)" ]; then
  echo "error: Ray processes outlived the cluster's stop" >&2; exit 1
fi
say "Ray: cluster stopped, no process left"
echo "real components passed in $((SECONDS - t0)) s"
