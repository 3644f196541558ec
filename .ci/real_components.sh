#!/usr/bin/env bash
# Real components in CI (issue 29): a real Ray cluster (a head and one more node process,
# `ray start`) and a real MLflow tracking server (loopback, SQLite backend), each started
# and stopped here with bounded waits, and cleaned up on any failure.
#
# Ray: a small audit with --ray and a small sweep with --backend ray on the cluster, each
# checked equal to the local run (report.json byte for byte but its timing lines; the
# sweep's stored rows), then the Ray-marked tests (a local Ray instance of their own).
# MLflow: an audit and a sweep logged with --mlflow, read back through MlflowClient (runs,
# metrics, the report.json artifact byte for byte).
#
# Needs graphleaks with the ray and mlflow-server extras in the active environment.
# Each node and the server run in a process group of their own (setsid), stopped by its id
# (`ray start --block` tears its node down on SIGTERM), never by `ray stop`, which would
# stop every Ray node of this user on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
WAIT_S=${WAIT_S:-60}
work=$(mktemp -d)
pids=()
stop_pids() {  # each started process is its own group's leader (setsid): stop the group
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq "$WAIT_S"); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 1; done
    kill -KILL -- "-$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
  done
  pids=()
  # `ray start` records its head as this machine's default cluster; a head stopped by pid
  # leaves that record, which a later ray.init() would try to join: drop ours
  if [ -n "${head_port:-}" ] && grep -qs ":$head_port\$" /tmp/ray/ray_current_cluster; then
    rm -f /tmp/ray/ray_current_cluster
  fi
}
cleanup() {
  local rc=$?
  stop_pids
  if [ "$rc" -ne 0 ]; then
    echo "real components FAILED (exit $rc); logs:" >&2
    tail -n 20 "$work"/*.log >&2 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT   # a stopped CI job cleans up too
start=$(date +%s)
export RAY_AUTH_MODE=token       # explicit: head, node, drivers and workers share ~/.ray's token
export RAY_USAGE_STATS_ENABLED=0
free_port() { python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }  # bash's own connect: no process
wait_port() {  # wait_port PORT WHAT: up to WAIT_S seconds for a TCP listener
  for _ in $(seq "$WAIT_S"); do listening "$1" && return 0; sleep 1; done
  echo "error: $2 did not listen on 127.0.0.1:$1 within ${WAIT_S}s" >&2; return 1
}

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
audit=(graphleaks audit --edges "$work/edges.csv" --features "$work/x.npy"
       --labels "$work/y.csv" --suite quick --attack lira_mia --attack shadow_mia
       --attack base_mia --param lira_mia.num_references=4
       --param shadow_mia.num_shadows=2 --param base_mia.num_references=3
       --n-bootstrap 30 --quiet)
no_timings() { grep -v '"runtime_s":' "$1"; }

# ---------------------------------------------------------------- Ray: a real cluster
node_ports() { echo "--dashboard-agent-listen-port $(free_port) --runtime-env-agent-port $(free_port)"; }
start_cluster() {  # a head and one more node, 1 CPU each; returns non-zero if not up in time
  head_port=$(free_port)
  # shellcheck disable=SC2046
  # no autoscaler monitor: one process fewer to start
  setsid ray start --head --block --port "$head_port" --num-cpus 1 --include-dashboard false \
    --ray-client-server-port "$(free_port)" --no-monitor $(node_ports) \
    > "$work/ray-head.log" 2>&1 &
  pids+=($!)
  wait_port "$head_port" "the Ray head" || return 1
  # shellcheck disable=SC2046
  setsid ray start --block --address "127.0.0.1:$head_port" --num-cpus 1 $(node_ports) \
    > "$work/ray-node.log" 2>&1 &
  pids+=($!)
  python - "127.0.0.1:$head_port" "$WAIT_S" <<'PY'
import sys
import time

import ray

ray.init(address=sys.argv[1], include_dashboard=False, logging_level="ERROR")
deadline = time.monotonic() + float(sys.argv[2])
while len([n for n in ray.nodes() if n["Alive"]]) < 2 or ray.cluster_resources().get("CPU", 0) < 2:
    if time.monotonic() > deadline:
        sys.exit(f"the Ray cluster has {len(ray.nodes())} node(s), not 2, after {sys.argv[2]}s")
    time.sleep(1)
print(f"Ray cluster up: 2 nodes, {ray.cluster_resources()['CPU']:.0f} CPUs")
PY
}
# Ray gives a node's raylet and agents 30 s to start (not configurable), which a loaded
# machine can miss: up to 3 tries, each stopped before the next
for try in 1 2 3; do
  start_cluster && break
  stop_pids
  if [ "$try" -eq 3 ]; then echo "error: the Ray cluster did not come up in 3 tries" >&2; exit 1; fi
  echo "the Ray cluster did not come up (try $try); trying again" >&2
done
"${audit[@]}" --out "$work/audit-local"
"${audit[@]}" --out "$work/audit-ray" --ray "127.0.0.1:$head_port"
diff <(no_timings "$work/audit-local/report.json") <(no_timings "$work/audit-ray/report.json")
echo "Ray: the audit on the cluster wrote the local report.json (timing lines aside)"
graphleaks sweep "$work/sweep.toml" --db "$work/sweep-local.sqlite" > /dev/null
graphleaks sweep "$work/sweep.toml" --db "$work/sweep-ray.sqlite" --backend ray \
  --address "127.0.0.1:$head_port" > /dev/null
python - "$work/sweep-local.sqlite" "$work/sweep-ray.sqlite" <<'PY'
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
stop_pids
if listening "$head_port"; then
  echo "error: the Ray head still listens after its stop" >&2; exit 1
fi
echo "Ray: cluster stopped"
# the executor's own tests, on a local Ray instance they start (marker ray)
python -m pytest -q -m ray tests/test_executor_ray.py

# ---------------------------------------------------------------- MLflow: a real server
ml_port=$(free_port)
setsid mlflow server --host 127.0.0.1 --port "$ml_port" --workers 1 \
  --backend-store-uri "sqlite:///$work/mlflow.db" --artifacts-destination "$work/artifacts" \
  > "$work/mlflow.log" 2>&1 &
pids+=($!)
wait_port "$ml_port" "the MLflow server"
export MLFLOW_TRACKING_URI="http://127.0.0.1:$ml_port"
graphleaks audit --edges "$work/edges.csv" --features "$work/x.npy" --labels "$work/y.csv" \
  --attack confidence_mia --n-bootstrap 30 --quiet --mlflow --out "$work/audit-mlflow"
graphleaks sweep "$work/sweep.toml" --db "$work/sweep-mlflow.sqlite" --mlflow > /dev/null
python - "$work/audit-mlflow/report.json" "$work/dl" <<'PY'
import json
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
expected = dict(flat_metrics("confidence_mia", report.attacks[0].metrics))
logged = {k: v for k, v in audit.data.metrics.items() if k.startswith("confidence_mia.")}
if logged != expected:
    sys.exit(f"error: the audit's metrics read back differ from the report's "
             f"({len(logged)} vs {len(expected)} keys)")
auc = logged["confidence_mia.binary.auc"]
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
print(f"MLflow: read back 1 audit run ({len(logged)} metrics equal to the report's, auc "
      f"{auc:.4f}; {len(names)} artifacts, report.json identical) and {len(sweeps)} sweep runs")
PY
stop_pids
echo "MLflow: server stopped"
echo "real components passed in $(( $(date +%s) - start )) s"
