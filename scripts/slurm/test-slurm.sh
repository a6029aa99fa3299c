#!/usr/bin/env bash
# Runs scripts/slurm/pinscope-fleet.sbatch through a real Slurm on this machine: installs
# Debian's slurm-wlm and munge when missing, starts munged, slurmctld and slurmd (one node, this
# host, own ports and files in a temporary folder, as root), submits the sbatch with the quick
# scenario, waits, checks what the fleet folder holds, and stops every daemon it started.
#
#   scripts/slurm/test-slurm.sh [path/to/pinscope]     (default: target/debug/pinscope, built)
#
# Without a GPU every node's `info`, `check` and `run` exit 3 and the fleet page says "no GPU";
# with one, `run` exits 0 and the node has a results CSV. Needs root (slurmd runs jobs as root).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

if [ "$(id -u)" != 0 ]; then
  echo "test-slurm: needs root (slurmd and munged are started here as root)" >&2
  exit 2
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "== installing slurm-wlm and munge"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends slurm-wlm munge
fi

bin=${1:-}
if [ -z "$bin" ]; then
  cargo build --quiet --bin pinscope
  bin=$repo/target/debug/pinscope
fi
bin=$(readlink -f "$bin")

tmp=$(mktemp -d /tmp/pinscope-slurm.XXXXXX)
pids=()
cleanup() {
  local rc=$?
  # Stop exactly what this script started, newest first, and wait until each is gone.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  if [ "$rc" != 0 ]; then
    echo "test-slurm: FAILED (rc $rc); daemon logs:" >&2
    tail -n 20 "$tmp"/*.log 2>/dev/null >&2 || true
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT INT TERM

node=$(hostname -s)
# Ports nothing else of ours uses (Slurm's defaults are 6817/6818).
ctld_port=${PINSCOPE_SLURMCTLD_PORT:-26817}
slurmd_port=${PINSCOPE_SLURMD_PORT:-26818}
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/munge"
chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
sock=$tmp/munge/munge.socket

cat >"$tmp/slurm.conf" <<CONF
ClusterName=pinscope-ci
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ci Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf

echo "== starting munged, slurmctld, slurmd (ports $ctld_port, $slurmd_port; files in $tmp)"
munged --foreground --force --socket="$sock" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munged.log" \
  --seed-file="$tmp/munge/munge.seed" 2>>"$tmp/munged.log" &
pids+=($!)
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { echo "test-slurm: munged did not open $sock" >&2; exit 1; }
slurmctld -D -i -f "$tmp/slurm.conf" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$tmp/slurm.conf" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
ready=
for _ in $(seq 60); do
  if sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then ready=1; break; fi
  sleep 0.5
done
[ -n "$ready" ] || { echo "test-slurm: the node did not come up: $(sinfo -N 2>&1)" >&2; exit 1; }

echo "== sbatch scripts/slurm/pinscope-fleet.sbatch (quick scenario, --device all)"
results=$tmp/fleet
# This Slurm has no GPU GRES: the script's own --gpus-per-node is refused here ("Invalid generic
# resource"), so the test asks for none, as docs/fleet.md says to on such clusters.
PINSCOPE=$bin timeout 300 sbatch --wait -N 1 --gpus-per-node=0 -o "$tmp/job.out" \
  scripts/slurm/pinscope-fleet.sbatch "$results" quick \
  || { echo "test-slurm: the job failed:" >&2; cat "$tmp/job.out" >&2; exit 1; }
cat "$tmp/job.out"

echo "== a second run into the same folder is refused"
before=$(find "$results" -type f -printf '%p %s %T@\n' | sort)
if PINSCOPE=$bin timeout 120 sbatch --wait -N 1 --gpus-per-node=0 -o "$tmp/job2.out" \
  scripts/slurm/pinscope-fleet.sbatch "$results" quick; then
  echo "test-slurm: a second run into $results was not refused" >&2; cat "$tmp/job2.out" >&2; exit 1
fi
grep -q "already holds a fleet run" "$tmp/job2.out" \
  || { echo "test-slurm: the refusal does not say why:" >&2; cat "$tmp/job2.out" >&2; exit 1; }
[ "$before" = "$(find "$results" -type f -printf '%p %s %T@\n' | sort)" ] \
  || { echo "test-slurm: the refused run changed $results" >&2; exit 1; }

echo "== checking $results"
fail() { echo "test-slurm: $*" >&2; exit 1; }
d=$results/$node
for f in info.json info.log check.log run.log steps.json; do
  [ -f "$d/$f" ] || fail "$d/$f is missing"
done
python3 - "$d" "$results/index.html" <<'PY'
import json, pathlib, sys
d, page = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
steps = json.loads((d / "steps.json").read_text())
info = json.loads((d / "info.json").read_text())
html = page.read_text()
gpu = info.get("gpu_unavailable") is None
if steps["check"] is not None:
    json.loads((d / "check.json").read_text())  # valid JSON either way
if gpu:
    assert steps["info"] == 0 and steps["run"] == 0, steps
    assert list(d.glob("*.csv")), "a node with a GPU wrote no results CSV"
else:
    assert steps["info"] == 3 and steps["run"] == 3, steps
    assert steps["check"] in (3, None), steps
    assert "no GPU" in html, "the fleet page does not say 'no GPU'"
assert steps["slurm_gpus"] == 0, steps  # this Slurm manages no GPUs
assert steps["node"] in html, "the fleet page does not name the node"
print(f"test-slurm: {steps}; fleet page {page} ({len(html)} B) names {steps['node']}"
      + ("" if gpu else " with no GPU"))
PY
echo "== test-slurm passed"
