#!/usr/bin/env bash
# Re-makes the published runs in reports/<machine>/ and the reference numbers beside them: pinscope
# on a GPU machine, beside NVIDIA's nvbandwidth and the C++ probes of scripts/probes/. One command
# per step; scripts/README.md says when each is run and what it needs.
#
#   scripts/publish.sh check     [OUT]                 GPU machine: GPU tests, fault tests, ptxas,
#                                                      info, check, quick, SIGINT mid-run
#   scripts/publish.sh reference [OUT]                 GPU machine: h200-headline beside nvbandwidth,
#                                                      the latency check beside the probes, the
#                                                      device-copy probe, bidirectional rounds;
#                                                      OUT/reference.log is the machine's reference log
#   scripts/publish.sh runs      [OUT] [SCENARIO...]   GPU machine: shipped scenarios (default all)
#                                                      into OUT/runs/, packed as OUT/runs.tar.gz
#   scripts/publish.sh multi-gpu [OUT]                 machine with several GPUs: topology,
#                                                      nvbandwidth's all-GPU tests, multi-gpu
#   scripts/publish.sh rerun     OUT [MACHINE] [SCENARIO...]  GPU machine: re-run published
#                                                      scenarios, `pinscope compare` with reports/MACHINE/
#   scripts/publish.sh observe   [OUT]                 GPU machine: what `pinscope observe` costs
#                                                      the program it observes: the pinned cases of
#                                                      latency and h200-headline, plain and under
#                                                      observe, alternated in 3 rounds (~5 min)
#   scripts/publish.sh pages     [PINSCOPE]            anywhere: re-render every page in reports/,
#                                                      the two compare pages and reports/index.html
#   scripts/publish.sh index     [PINSCOPE]            anywhere: reports/index.html alone
#   scripts/publish.sh budget    [OUT]                 GPU machine: pinscope budget, check --json
#                                                      --budget --prom, check --quick; with
#                                                      MAX_MAP_COUNT set (root), the budget again
#                                                      under that vm.max_map_count, then restored;
#                                                      with MEMORY_MAX, below a cgroup of that limit;
#                                                      with AS_ABOVE, under such a ulimit -v
#   scripts/publish.sh models    [OUT]                 GPU machine: a 7B Q4_K_M-sized GGUF and a
#                                                      safetensors file, each loaded by model-load
#                                                      cold and warm, beside FILELOAD_CU's probe in
#                                                      ROUNDS alternated rounds, and PyTorch's loaders
#
# Environment: PINSCOPE  the binary under test (default dist/pinscope, from `scripts/build-dist.sh`;
#                        check also needs dist/gpu-tests and dist/gpu-fault-tests from it)
#              NVBANDWIDTH  path to a built nvbandwidth v0.8 binary (github.com/NVIDIA/nvbandwidth);
#                        unset: the nvbandwidth steps are skipped and say so
#              CUDA_HOME the CUDA toolkit for nvcc/ptxas (default /usr/local/cuda); no nvcc: the
#                        probes are skipped and say so
#              BUDGET    seconds after which reference/runs/models start no further step (default 600)
#              FILELOAD_CU  models: the C++ file-load probe to build with nvcc and run beside pinscope
#                        (default scripts/probes/fileload.cu)
#              SIZE      models: the files' size as a fraction of the 7B table (make-model-files.py
#                        --scale; default 1, 4.08 GB each); MODEL_DIR where they go (default /tmp);
#                        KEEP_FILES=1 keeps files made there before; ROUNDS the alternated rounds of
#                        pinscope and the probe (default 1; a round already in OUT is kept);
#                        ALONE=N then runs each path alone, pinscope's one case in one cache state
#                        beside the probe's same step, N pairs alternated (default 0: none), on the
#                        safetensors file (ALONE_ON=gguf: the GGUF), every path cold and warm or the
#                        "label:cache" list ALONE_PATHS (a pair already in OUT is kept)
#              MAX_MAP_COUNT  budget: a vm.max_map_count for one more budget run (root; the host's
#                        kernel setting, restored when that run ends); unset: no such run
#              MEMORY_MAX  budget: a memory.max (say 4G) for one more budget run in a cgroup v2 child
#                        of a cgroup with that limit (root), as a job's memory limit; unset: no such run
#              AS_ABOVE  budget: GiB above a CUDA context's VmPeak for one more budget --quick under
#                        that ulimit -v (a job's address-space limit: real refusals); unset: no such run
# Never changes the GPU's clocks, modes or settings.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:${CUDA_HOME:-/usr/local/cuda}/bin
P=${PINSCOPE:-dist/pinscope}
NVB=${NVBANDWIDTH:-}
BUDGET=${BUDGET:-600}
log() { echo "== $(date -u +%T) +${SECONDS}s $*"; }
left() { [ "$SECONDS" -lt "$BUDGET" ] || { echo "-- skipped (BUDGET of ${BUDGET} s spent): $*"; return 1; }; }
machine() {
  nvidia-smi --query-gpu=index,name,driver_version,pcie.link.gen.current,pcie.link.width.current,memory.total \
    --format=csv,noheader
  echo "cpu threads: $(nproc)"
}
have_nvb() { [[ -n $NVB && -x $NVB ]] || { echo "-- no nvbandwidth (set NVBANDWIDTH=/path/to/nvbandwidth): $*"; return 1; }; }
have_nvcc() { command -v nvcc >/dev/null || { echo "-- no nvcc (set CUDA_HOME): $*"; return 1; }; }

# ---- check: every GPU test and the checks a user runs first --------------------------------------
check() {
  local out=${1:-/tmp/pinscope-check}
  mkdir -p "$out"
  log machine; machine | tee "$out/nvidia-smi.txt"
  log "ptxas on the shipped PTX"; bash scripts/build-kernels.sh "$out/kernels" 2>&1 | tee "$out/ptxas.log"
  log "GPU tests (ignored by default)"
  dist/gpu-tests --ignored --test-threads=1 2>&1 | tee "$out/gpu-tests.log" | grep -E "^test |test result"
  log "GPU fault-injection tests"
  dist/gpu-fault-tests faults:: --ignored --test-threads=1 2>&1 | tee "$out/gpu-fault-tests.log" | grep -E "^test |test result"
  log "pinscope info --probe"; $P info --probe 2>&1 | tee "$out/info.txt"
  log "pinscope check (expected: exit 0 within 30 s)"
  local s=$SECONDS rc
  $P check 2>&1 | tee "$out/check.txt"; rc=${PIPESTATUS[0]}
  echo "check: exit $rc in $((SECONDS - s)) s"
  # A floor above what any PCIe Gen5 x16 link reaches: the pinned H2D check must fail.
  $P check --min-h2d 70 >"$out/check-min-h2d-70.txt" 2>&1; echo "check --min-h2d 70: exit $? (expected 1)"
  log "quick scenario"; $P run scenarios/quick.toml --out-dir "$out/quick" 2>&1 | tee "$out/quick.log" | tail -30
  log "SIGINT during a run (expected: exit 130, a valid partial run)"
  $P run scenarios/quick.toml --out-dir "$out/sigint" >"$out/sigint.log" 2>&1 &
  local pid=$!
  sleep "${SIGINT_AFTER:-6}"; kill -INT $pid; wait $pid; echo "exit after SIGINT: $?"
  python3 - "$out/sigint" <<'PY'
import csv, glob, json, sys
runs = [p for p in glob.glob(sys.argv[1] + "/*.csv") if not p.endswith(".samples.csv")]
assert len(runs) == 1, runs
rows = list(csv.DictReader(open(runs[0])))
assert json.load(open(runs[0][:-4] + ".json"))["partial"] is True, "the sidecar must say partial"
assert all(r["status"] == "ok" or r["status"].startswith(("skipped", "failed")) for r in rows)
print(f"partial run valid: {len(rows)} rows")
PY
}

# ---- reference: pinscope beside nvbandwidth and the probes, interleaved -----------------------------
NVB_TESTS="host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_bidirectional_memcpy_ce
device_to_host_bidirectional_memcpy_ce device_local_copy host_device_latency_sm"

nvb_round() {  # nvb_round OUT N: nvbandwidth's tests as JSON, and the sums
  have_nvb "round $2" || return 0
  log "nvbandwidth round $2"
  # shellcheck disable=SC2086
  timeout 120 "$NVB" -j -t $NVB_TESTS >"$1/nvbandwidth-$2.json" 2>"$1/nvbandwidth-$2.err"
  python3 - "$1/nvbandwidth-$2.json" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["nvbandwidth"]["testcases"]:
    print(f"  {t['name']:45} sum {t.get('sum', 'n/a')}")
PY
}

latency_check() {  # the latency scenario between runs of the driver-API probe, then the runtime probe
  local out=$1 n=${LATENCY_SAMPLES:-300} rounds=${LATENCY_ROUNDS:-3} r
  mkdir -p "$out"
  sed "s/samples = 1000/samples = $n/" harness/scenarios/latency.toml >"$out/latency.toml"
  have_nvcc "latency probes" && nvcc -O2 -o "$out/latency_driver" scripts/probes/latency_driver.cu -lcuda -ldl \
    >"$out/driver-build.log" 2>&1 || echo "-- the driver-API probe did not build ($out/driver-build.log)"
  probe() { [ -x "$out/latency_driver" ] && timeout 120 "$out/latency_driver" harness/kernels/pinscope.ptx "$n" >"$out/driver-probe-$1.txt" 2>&1; }
  # probe, pinscope, probe, ..., probe: both tools see the same machine state in turn.
  for r in $(seq "$rounds"); do
    probe "$r"
    log "pinscope latency scenario, round $r ($n samples per case)"
    timeout 180 $P run "$out/latency.toml" --out-dir "$out/latency-$r" --no-report >"$out/latency-$r.log" 2>&1
  done
  probe $((rounds + 1))
  log "pinscope beside the driver-API probe"
  # shellcheck disable=SC2046
  python3 scripts/latency-compare.py $(ls "$out"/latency-*/*.csv | grep -v samples.csv) -- "$out"/driver-probe-*.txt
  log "runtime-API probe (what a cudaMemcpyAsync program sees), one run per context flag"
  if have_nvcc "runtime probe" && nvcc -O2 -o "$out/latency_probe" scripts/probes/latency_probe.cu >"$out/probe-build.log" 2>&1; then
    for mode in spin yield blocking; do timeout 60 "$out/latency_probe" "$mode" "$n" 2>&1; done
  fi
}

bidir_rounds() {  # nvbandwidth's bidirectional tests and pinscope's, alternated round by round
  local out=$1 rounds=${BIDIR_ROUNDS:-5} r
  have_nvb "bidirectional rounds" || return 0
  mkdir -p "$out"
  for r in $(seq "$rounds"); do
    log "bidirectional round $r"
    timeout 60 "$NVB" -v -i 5 -t host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce \
      >"$out/nvbandwidth-$r.txt" 2>&1
    timeout 120 $P run scenarios/h200-headline.toml --only "pinned copy-engine" --no-report \
      --out-dir "$out/pinscope-$r" >"$out/pinscope-$r.log" 2>&1
  done
  python3 - "$out" <<'PY'
import csv, glob, re, statistics as st, sys
out = sys.argv[1]
tests = {"host_to_device_bidirectional_memcpy_ce": "h2d", "device_to_host_bidirectional_memcpy_ce": "d2h"}
ref, ours = {}, {}
num = lambda p: int(re.search(r"-(\d+)(?:/[^/]*)?\.(?:txt|csv)$", p).group(1))
for f in sorted(glob.glob(f"{out}/nvbandwidth-*.txt"), key=num):
    for line in open(f, errors="replace"):
        m = re.match(r"SUM (\S+) ([\d.]+)", line.strip())
        if m and m.group(1) in tests:
            ref.setdefault(tests[m.group(1)], []).append(float(m.group(2)))
for f in sorted((f for f in glob.glob(f"{out}/pinscope-*/*.csv") if not f.endswith(".samples.csv")), key=num):
    for r in csv.DictReader(open(f)):
        if "direction=bidirectional" in r["case_key"] and r["lane"] in ("h2d", "d2h") and r["bw_median_gbs"]:
            ours.setdefault(r["lane"], []).append(float(r["bw_median_gbs"]))
for lane in ("h2d", "d2h"):
    a, b = ref.get(lane, []), ours.get(lane, [])
    if not a or not b:
        print(f"{lane}: nothing to compare"); continue
    inside = sum(min(a) <= x <= max(a) for x in b)
    print(f"{lane} bidirectional (GB/s): nvbandwidth rounds {' '.join(f'{x:.2f}' for x in a)}; "
          f"pinscope rounds {' '.join(f'{x:.2f}' for x in b)}; {inside} of {len(b)} inside nvbandwidth's range; "
          f"medians {st.median(a):.2f} / {st.median(b):.2f}")
PY
}

reference() {
  local out=${1:-/tmp/pinscope-reference}
  mkdir -p "$out"
  {
    log machine; machine
    left nvbandwidth && nvb_round "$out" 1
    left h200-headline && { log "pinscope h200-headline"; $P run scenarios/h200-headline.toml --out-dir "$out/h200-headline" --no-report 2>&1 | tail -30; }
    left "nvbandwidth round 2" && nvb_round "$out" 2
    left "latency check" && latency_check "$out/latency"
    if left "device-copy probe" && have_nvcc "device-copy probe" \
      && nvcc -O3 -arch=sm_90 -o "$out/device_copy" scripts/probes/device_copy.cu >"$out/device_copy-build.log" 2>&1; then
      log "device-copy probe (copy engine against SM copy kernels)"; "$out/device_copy"
    fi
    left "nvbandwidth round 3" && nvb_round "$out" 3
    left "bidirectional rounds" && bidir_rounds "$out/bidir"
  } 2>&1 | tee "$out/reference.log"
  # The first round's one-way tests are the machine's reference line on its pages.
  [ -f "$out/nvbandwidth-1.json" ] && cp "$out/nvbandwidth-1.json" "$out/nvbandwidth.json"
  echo "reference log: $out/reference.log (copy it to reports/<machine>/reference.log)"
}

# ---- runs: the shipped scenarios for reports/<machine>/ -------------------------------------------
runs() {
  local out=${1:-/tmp/pinscope-runs}; shift $(( $# > 0 ? 1 : 0 ))
  local all s
  all=$(ls harness/scenarios/*.toml | xargs -n1 basename | sed 's/\.toml$//')
  mkdir -p "$out/runs/logs"
  machine | tee "$out/runs/logs/machine.txt"
  for s in ${*:-$all}; do
    left "$s" || continue
    log "$s"
    local extra=()
    [[ $s == vram-overflow ]] && extra=(--allow-vram-overflow)
    /usr/bin/time -f "wall %e s" timeout "${LIMIT:-300}" $P run "harness/scenarios/$s.toml" --out-dir "$out/runs" \
      --no-report "${extra[@]}" 2>&1 | tee "$out/runs/logs/$s.log" | grep -vE "^\s*$" | tail -"${TAIL:-20}"
  done
  log "wall time against measured time"
  # shellcheck disable=SC2046
  python3 scripts/overhead.py $(ls "$out"/runs/*.csv | grep -v samples.csv) | tee "$out/runs/logs/overhead.log"
  tar czf "$out/runs.tar.gz" -C "$out/runs" .
  echo "then here: tar xzf runs.tar.gz -C reports/<machine>/ (the result files), scripts/publish.sh pages"
}

multi_gpu() {
  local out=${1:-/tmp/pinscope-multi-gpu}
  mkdir -p "$out/runs/logs"
  {
    log topology
    nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
    nvidia-smi topo -m
    lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|NUMA)"
    if have_nvb "all-GPU tests"; then
      log "nvbandwidth, every GPU at once"
      timeout 300 "$NVB" -j -t host_to_all_memcpy_ce all_to_host_memcpy_ce host_to_all_bidirectional_memcpy_ce \
        host_to_all_memcpy_sm all_to_host_memcpy_sm host_to_device_memcpy_ce device_to_host_memcpy_ce \
        >"$out/runs/nvbandwidth-all.json" 2>"$out/runs/logs/nvbandwidth.err"
    fi
    log "pinscope multi-gpu"
    $P run scenarios/multi-gpu.toml --out-dir "$out/runs" --no-report 2>&1 | tail -"${TAIL:-40}"
  } 2>&1 | tee "$out/runs/logs/reference.log"
  tar czf "$out/multi-gpu.tar.gz" -C "$out/runs" .
}

rerun() {
  local out=${1:?usage: scripts/publish.sh rerun OUT [MACHINE] [SCENARIO...]} machine=${2:-h200} s
  shift $(( $# > 2 ? 2 : $# ))
  for s in ${*:-h200-headline staging-repeat}; do
    local published new
    published=$(ls reports/"$machine"/*-"$s"-*.csv 2>/dev/null | grep -v samples.csv | sort | tail -1)
    log "$s (published: ${published:-none})"
    $P run "scenarios/$s.toml" --out-dir "$out/$s" -q 2>&1 | tail -5
    new=$(ls "$out/$s"/*.csv 2>/dev/null | grep -v samples.csv | sort | tail -1)
    if [[ -n $published && -n $new ]]; then $P compare "$published" "$new"; else echo "nothing to compare for $s"; fi
  done
}

# ---- pages: every published page, the compare pages and the index, from the files in reports/ ----
pages() {
  local bin csv name scen ref extra
  if [[ $# -ge 1 ]]; then bin=$1; else cargo build --release -q && bin=target/release/pinscope; fi
  for csv in reports/*/*.csv; do
    [[ $csv == *.samples.csv ]] && continue
    name=$(basename "$csv" .csv)
    scen=$(sed -E 's/^[0-9]{8}-[0-9]{6}-(.*)-[^-]+$/\1/' <<<"$name")
    # A machine's one-GPU nvbandwidth run (nvbandwidth.json in its folder) is the reference line
    # of its quick and h200-headline pages; sums over several GPUs compare with no one-GPU case.
    ref=$(dirname "$csv")/nvbandwidth.json; extra=()
    [[ -f $ref && ($scen == h200-headline || $scen == quick) ]] && extra=(--nvbandwidth "$ref")
    "$bin" -q report "$csv" "${extra[@]}" -o "${csv%.csv}.html" --title "$scen on $(basename "$(dirname "$csv")")"
  done
  # Observed programs: one page per timeline, beside its events and sidecar.
  for csv in reports/*/observed/*.timeline.csv; do
    [[ -f $csv ]] || continue
    "$bin" -q report "$csv" -o "${csv%.timeline.csv}.html" --title "observed on $(basename "$(dirname "$(dirname "$csv")")")"
  done
  # Pin budgets: one page per measured record (budget/budget.json, budget/maps-N/budget.json).
  for json in reports/*/budget/budget.json reports/*/budget/*/budget.json; do
    [[ -f $json ]] || continue
    local mach=${json#reports/} with="" sub
    mach=${mach%%/*}; sub=$(basename "$(dirname "$json")")
    case $sub in
      maps-*) with=" with vm.max_map_count ${sub#maps-}" ;;
      cgroup-*) with=" in a cgroup below one with memory.max ${sub#cgroup-}" ;;
      as-*) with=" under ulimit -v ${sub#as-}iB above a CUDA context" ;;
    esac
    "$bin" -q report "$json" -o "${json%.json}.html" --title "pin budget on $mach$with"
  done
  for scen in quick h200-headline; do
    local a b
    a=$(ls reports/h200/*-"$scen"-*.csv | grep -v samples | head -1)
    b=$(ls reports/h200-x2/*-"$scen"-*.csv | grep -v samples | head -1)
    "$bin" compare "$a" "$b" --format markdown --html "reports/compare-$scen.html" >"reports/compare-$scen.md"
  done
  index "$bin"
  echo "reports/index.html written"
}

index() {
  local bin
  if [[ $# -ge 1 ]]; then bin=$1; else cargo build --release -q && bin=target/release/pinscope; fi
  PINSCOPE_BIN=$bin python3 - <<'PY'
import glob, html, json, os, subprocess

def size(b):
    """Bytes in binary units, as pinscope writes them (units::format_size)."""
    for name, m in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= m:
            return f"{b // m} {name}" if b % m == 0 else f"{b / m:.2f} {name}"
    return f"{b} B"

def headline(csv):
    """The run's headline, host to GPU, from the findings pinscope computes for its page."""
    out = subprocess.run([os.environ["PINSCOPE_BIN"], "report", "-q", "--format", "json", csv],
                         check=True, capture_output=True, text=True).stdout
    s = json.loads(out)["runs"][0]["scenarios"][0]
    loads = [x["text"] for x in s["sentences"] if x["topic"] == "File load" and "fastest here" in x["text"]]
    if loads:
        return "<br>".join(html.escape(t) for t in loads)
    h = s["host_to_gpu"]
    if h is None:
        lat = next((x["text"] for x in s["sentences"] if x["topic"] == "Latency"), None)
        return html.escape(lat) if lat else "no host-to-GPU bandwidth measured (see the report)"
    f = h["fastest"]
    named = f'{f["case"]} ({f["strategy"]}, {size(f["size_bytes"])})'
    text = f'<b>{f["bw_median_gbs"]:.1f} GB/s</b>: {html.escape(named)}, holding {size(f["pinned_bytes"])} page-locked'
    if h["staging_ring"]:
        r = h["staging_ring"]
        text += f'; staging ring {100 * r["share_of_fastest"]:.0f}% of it, holding {size(r["pinned_bytes"])}'
    return text

rows = []
for j in sorted(glob.glob("reports/*/*.json")):
    if os.path.basename(j).startswith("nvbandwidth"):
        continue
    d = json.load(open(j))
    m = d["machine"]; g = m.get("gpu") or {}
    h = j[:-5] + ".html"
    # A run on a model file says which (its --model argument), so two model-load runs differ.
    cl = d.get("command_line") or []
    name = d["scenarios"][0]["name"] + (f' ({os.path.basename(cl[cl.index("--model") + 1])})' if "--model" in cl[:-1] else "")
    rows.append((os.path.dirname(j).split("/")[-1], name, d["scenarios"][0]["description"],
                 os.path.relpath(h, "reports"), headline(j[:-5] + ".csv"),
                 f'{g.get("name","")}, {m["cpu_threads"]} CPU threads, {m["ram_bytes"]/2**30:.0f} GiB RAM, driver {g.get("driver_version","")}',
                 d["started_at"][:16].replace("T", " ")))
out = ['<!doctype html><meta charset="utf-8"><title>pinscope published reports</title>',
       '<style>body{font-family:sans-serif;max-width:1300px;margin:2em auto;padding:0 1em}td,th{padding:4px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}td.nw{white-space:nowrap}</style>',
       '<h1>pinscope: published reports</h1>',
       '<p>Every report here was made by <code>pinscope report</code> / <code>pinscope compare</code> from the result files beside it, measured on NVIDIA H200 and H100 machines (Linux VMs, PCIe Gen5 x16, driver 580.159.04), a folder per kind: one H200, two H200s, one H100, each folder\'s runs from one or more VMs of that kind (<a href="README.md">README.md</a> says which). Each run\'s headline is host to GPU: its fastest way, the page-locked memory that way holds, and how close a small staging ring comes. GB/s = 1e9 bytes/s; MiB, GiB = 2^20, 2^30 bytes. Regenerate with <code>scripts/publish.sh pages</code>.</p>',
       '<h2>Two machines side by side</h2><ul>',
       '<li><a href="compare-quick.html">quick: single-GPU H200 host (A) vs two-GPU H200 host (B)</a> (<a href="compare-quick.md">markdown</a>)</li>',
       '<li><a href="compare-h200-headline.html">h200-headline: single-GPU H200 host (A) vs two-GPU H200 host (B)</a> (<a href="compare-h200-headline.md">markdown</a>)</li></ul>',
       '<h2>Runs</h2>']
for mach in sorted({r[0] for r in rows}, key=lambda m: (len(m), m)):
    hw = next(r[5] for r in rows if r[0] == mach)
    out.append(f'<h3>{html.escape(mach)}: {html.escape(hw)}</h3>')
    out.append('<table><tr><th>scenario</th><th>headline (host to GPU)</th><th>question</th><th>started (UTC)</th></tr>')
    for m, name, desc, href, head, hw, t in rows:
        if m != mach:
            continue
        out.append(f'<tr><td class="nw"><a href="{html.escape(href)}">{html.escape(name)}</a></td><td>{head}</td><td>{html.escape(desc)}</td><td class="nw">{t}</td></tr>')
    out.append('</table>')
    observed = sorted(glob.glob(f"reports/{mach}/observed/*.observed.json"))
    if observed:
        out.append('<p>Programs observed (<code>pinscope observe</code>):</p><ul>')
        for j in observed:
            d = json.load(open(j))
            page = os.path.relpath(j[:-len(".observed.json")] + ".html", "reports")
            e = d["ending"]
            ended = f'exit {e["code"]}' if "code" in e else html.escape(", ".join(f"{k} {v}" for k, v in e.items()))
            cmd = " ".join(d["command_line"][d["command_line"].index("--") + 1:] if "--" in d["command_line"] else d["command_line"])
            out.append(f'<li><a href="{html.escape(page)}"><code>{html.escape(cmd)}</code></a>, '
                       f'{d["started_at"][:16].replace("T", " ")} UTC, {ended}</li>')
        out.append('</ul>')
    budget = f"reports/{mach}/budget/budget.json"
    if os.path.exists(budget):
        # The answer is pinscope's own (report --format json), not recomputed here.
        answer = json.loads(subprocess.run([os.environ["PINSCOPE_BIN"], "report", budget, "--format", "json"],
                                           capture_output=True, text=True, check=True).stdout)["answers"][0]
        out.append(f'<p><a href="{mach}/budget/budget.html">Pin budget</a> (<code>pinscope budget</code>, '
                   f'<a href="{mach}/budget/budget.json">JSON</a>; <code>pinscope check</code>: '
                   f'<a href="{mach}/budget/check.json">JSON</a>, <a href="{mach}/budget/check.prom">Prometheus</a>): '
                   f'{html.escape(answer)}</p>')
        for extra in sorted(glob.glob(f"reports/{mach}/budget/*/budget.json")):
            sub = os.path.basename(os.path.dirname(extra))
            kind, _, n = sub.partition("-")
            what = {"maps": f"with vm.max_map_count {n}", "cgroup": f"in a cgroup below one with memory.max {n}",
                    "as": f"under ulimit -v {n}iB above a CUDA context"}.get(kind, sub)
            answer = json.loads(subprocess.run([os.environ["PINSCOPE_BIN"], "report", extra, "--format", "json"],
                                               capture_output=True, text=True, check=True).stdout)["answers"][0]
            page = os.path.relpath(extra[:-len(".json")] + ".html", "reports")
            out.append(f'<p><a href="{html.escape(page)}">Pin budget {html.escape(what)}</a>: {html.escape(answer)}</p>')
open("reports/index.html", "w").write("\n".join(out) + "\n")
PY
}

# ---- budget: the pin budget and the node check, as published in reports/<machine>/budget/ --------
budget() {
  local out=${1:-/tmp/pinscope-budget} s
  mkdir -p "$out"
  log machine; machine | tee "$out/nvidia-smi.txt"
  budget_run "$out"
  s=$SECONDS; $P check --json --budget "$out/budget.json" --prom "$out/check.prom" >"$out/check.json" 2>"$out/check.err"
  echo "check --json --budget: exit $? in $((SECONDS - s)) s"
  s=$SECONDS; $P check --quick >"$out/check-quick.txt" 2>&1; echo "check --quick: exit $? in $((SECONDS - s)) s"
  tail -3 "$out/check-quick.txt"
  [[ -n ${MAX_MAP_COUNT:-} ]] && budget_maps "$out/maps-$MAX_MAP_COUNT"
  [[ -n ${MEMORY_MAX:-} ]] && budget_cgroup "$out/cgroup-$MEMORY_MAX"
  [[ -n ${AS_ABOVE:-} ]] && budget_as "$out/as-${AS_ABOVE}G"
  return 0
}

budget_cgroup() {  # OUT: the budget again inside a cgroup v2 child whose memory.max is MEMORY_MAX (root)
  local cg=/sys/fs/cgroup/pinscope-budget-$$
  mkdir -p "$1"
  # A job's memory limit (Slurm, Kubernetes, systemd) charges pinned pages: a pin past it is
  # refused or the process is killed, and the record says which.
  if [[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) != cgroup2fs ]]; then
    echo "-- /sys/fs/cgroup is no cgroup v2 file system: the run with memory.max $MEMORY_MAX is skipped"; return 0
  fi
  # The limit sits on a parent and the process runs in a child without one, as Slurm lays out a
  # job (job_N/step_M/user/task_K): the budget must find the limit a level up.
  if ! { echo +memory >/sys/fs/cgroup/cgroup.subtree_control && mkdir "$cg" && echo "$MEMORY_MAX" >"$cg/memory.max" &&
    echo +memory >"$cg/cgroup.subtree_control" && mkdir "$cg/task"; } 2>"$1/cgroup.err"; then
    echo "-- no cgroup with memory.max $MEMORY_MAX ($(cat "$1/cgroup.err")): the run in it is skipped"; rmdir "$cg/task" "$cg" 2>/dev/null; return 0
  fi
  log "pinscope budget in a cgroup with memory.max $MEMORY_MAX"
  local s=$SECONDS
  bash -c 'echo $$ >"$1/cgroup.procs" && exec timeout 90 "$2" budget --cap 8GiB --deadline 60s --json -o "$3/budget.json"' \
    _ "$cg/task" "$P" "$1" >"$1/budget.txt" 2>&1
  echo "budget in the cgroup: exit $? in $((SECONDS - s)) s; memory.events: $(tr '\n' ' ' <"$cg/memory.events")"
  echo "pinscope processes left: $(pgrep -c -x pinscope)"
  rmdir "$cg/task" "$cg" 2>/dev/null || echo "-- $cg could not be removed"
}

budget_as() {  # OUT: budget --quick under ulimit -v at a CUDA context's VmPeak + AS_ABOVE GiB
  # A job's address-space limit (ulimit -v; Slurm's VSizeFactor) refuses pins with an error the
  # program sees: the one refusal a Linux machine with RAM to spare gives, and so the after-refusal
  # checks on this driver.
  local v0
  mkdir -p "$1"
  v0=$(python3 -c 'import ctypes
c = ctypes.CDLL("libcuda.so.1"); c.cuInit(0); d = ctypes.c_int(); c.cuDeviceGet(ctypes.byref(d), 0)
x = ctypes.c_void_p(); c.cuDevicePrimaryCtxRetain(ctypes.byref(x), d); c.cuCtxSetCurrent(x)
print([int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmPeak")][0])') ||
    { echo "-- the VmPeak of a CUDA context could not be read: the run under ulimit -v is skipped"; return 0; }
  log "pinscope budget --quick under ulimit -v $((v0 / 1048576)) GiB (a CUDA context's VmPeak) + $AS_ABOVE GiB"
  ( ulimit -v $((v0 + AS_ABOVE * 1048576)) &&
    timeout 60 $P budget --quick --cap 4GiB --deadline 40s --json -o "$1/budget.json" >"$1/budget.txt" 2>&1 )
  echo "budget under ulimit -v: exit $?"; echo "pinscope processes left: $(pgrep -c -x pinscope)"
}

budget_run() {  # OUT: pinscope budget into OUT/budget.json, and what it left behind
  local s=$SECONDS
  log "pinscope budget --cap 8GiB --deadline 60s (vm.max_map_count $(cat /proc/sys/vm/max_map_count))"
  timeout 90 $P budget --cap 8GiB --deadline 60s --json -o "$1/budget.json" >"$1/budget.txt" 2>&1
  echo "budget: exit $? in $((SECONDS - s)) s"
  echo "pinscope processes left: $(pgrep -c -x pinscope)"
  echo "GPU processes left: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)"
}

budget_maps() {  # OUT: the budget again with vm.max_map_count at MAX_MAP_COUNT (root), then restored
  local was; was=$(cat /proc/sys/vm/max_map_count)
  mkdir -p "$1"
  # The registrations probe meets the mapping limit the way a loader registering many buffers
  # does (about 65 k ranges with the kernel's default of 65 530).
  if ! sysctl -qw vm.max_map_count="$MAX_MAP_COUNT" 2>"$1/sysctl.err"; then
    echo "-- vm.max_map_count could not be set ($(cat "$1/sysctl.err")): the refusal run is skipped"; return 0
  fi
  trap 'sysctl -qw vm.max_map_count='"$was" EXIT
  budget_run "$1"
  sysctl -qw vm.max_map_count="$was"; trap - EXIT
  echo "vm.max_map_count restored to $(cat /proc/sys/vm/max_map_count)"
}

# ---- models: real-sized model files loaded the ways loaders do, beside the C++ probe and PyTorch --
models() {
  local out=${1:-/tmp/pinscope-models} dir=${MODEL_DIR:-/tmp}/pinscope-model-files f name r
  local files=("$dir/llama-7b-q4_k_m.gguf" "$dir/llama-7b.safetensors")
  mkdir -p "$out" "$dir"
  log machine; machine | tee "$out/nvidia-smi.txt"; df -hT "$dir" | tee "$out/disk.txt"
  if [[ ${KEEP_FILES:-0} == 1 && -f ${files[0]} && -f ${files[1]} ]]; then
    log "model files kept from an earlier run (KEEP_FILES=1)"; ls -l "${files[@]}"
  else
    log "model files (scale ${SIZE:-1})"
    python3 scripts/make-model-files.py "$dir" --scale "${SIZE:-1}" --force | tee "$out/files.txt" || return 1
  fi
  local probe="" cu=${FILELOAD_CU:-scripts/probes/fileload.cu}
  if have_nvcc "file-load probe" && nvcc -O2 -std=c++17 -o "$out/fileload" "$cu" >"$out/fileload-build.log" 2>&1; then
    probe=$out/fileload
  else
    echo "-- the file-load probe did not build ($out/fileload-build.log)"
  fi
  [[ -n $probe ]] && left "the probe per tensor" && probe_pieces "$out" "${files[@]}"
  for ((r = 1; r <= ${ROUNDS:-1}; r++)); do
    [[ -f $out/round-$r/done ]] && { echo "-- round $r is in $out already"; continue; }
    left "round $r" || break
    rm -rf "$out/round-$r"; mkdir -p "$out/round-$r"
    local whole=1
    for f in "${files[@]}"; do
      # Odd rounds run pinscope first, even rounds the probe: neither side always follows the other.
      if ((r % 2)); then model_load "$out/round-$r" "$f" && probe_loads "$out/round-$r" "$f" || whole=0
      else probe_loads "$out/round-$r" "$f" && model_load "$out/round-$r" "$f" || whole=0; fi
    done
    # A round cut short by BUDGET is made again by the next run into OUT.
    ((whole)) && touch "$out/round-$r/done"
  done
  if [[ -n $probe && ${ALONE:-0} -gt 0 ]]; then
    [[ ${ALONE_ON:-safetensors} == gguf ]] && f=${files[0]} || f=${files[1]}
    alone "$out" "$f"
  fi
  [[ -n $probe ]] && python3 scripts/model-rounds.py "$out" | tee "$out/rounds.txt"
  if [[ -n $probe && ! -f $out/fileload-register.txt ]] && left "file-load probe REGISTER=1"; then
    f=${files[0]}
    log "file-load probe with REGISTER=1 on $(basename "$f") (cold; timeout 60 s: the probe maps the file private, and registering that never returned on driver 580)"
    REGISTER=1 DROP=fadvise timeout 60 "$probe" "$f" cold 2>&1 | tee "$out/fileload-register.txt"; echo "exit ${PIPESTATUS[0]} (124: did not return in 60 s)"
  fi
  [[ -f $out/pytorch.txt ]] || { left "PyTorch loaders" && torch_loads "${files[1]}" 2>&1 | tee "$out/pytorch.txt"; }
}

model_load() {  # OUT FILE: pinscope's model-load on FILE, every path cold and warm, into OUT/pinscope-<name>/
  local name; name=$(basename "$2")
  left "model-load on $name" || return 1
  log "pinscope model-load on $name, every path cold and warm"
  # libcufile for load-cufile lives in the toolkit's lib64.
  LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}${CUDA_HOME:-/usr/local/cuda}/lib64 \
    timeout 420 $P run model-load --model "$2" --out-dir "$1/pinscope-$name" >"$1/pinscope-$name.log" 2>&1
  echo "exit $?"; grep -E "File load: (cold|warm) cache, fastest" "$1/pinscope-$name.log" || true
}

probe_loads() {  # OUT FILE: the probe warm (the file read once before) and cold (posix_fadvise, as pinscope drops it)
  local name; name=$(basename "$2")
  [[ -z $probe ]] && return 0
  left "file-load probe on $name" || return 1
  log "file-load probe on $name: warm, then cold (posix_fadvise(DONTNEED), as pinscope makes it cold)"
  cat "$2" >/dev/null
  timeout 180 "$probe" "$2" warm >"$1/fileload-$name-warm.txt" 2>&1; cat "$1/fileload-$name-warm.txt"
  DROP=fadvise timeout 180 "$probe" "$2" cold >"$1/fileload-$name-cold.txt" 2>&1; cat "$1/fileload-$name-cold.txt"
  return 0
}

probe_pieces() {  # OUT FILE...: the probe warm through the mapping, copied whole and then per tensor (PIECES), 3 times
  local out=$1 f name i; shift
  for f in "$@"; do
    name=$(basename "$f")
    [[ -f $out/pieces-$name-3.txt ]] && { echo "-- the probe per tensor on $name is in $out already"; continue; }
    $P model --json "$f" | python3 -c 'import json, sys
for t in json.load(sys.stdin)["table"]["tensors"]: print(t["offset"], t["bytes"])' >"$out/tensors-$name.txt" || continue
    log "file-load probe on $name, warm, FAST=1: the mapping copied whole, then per tensor ($(wc -l <"$out/tensors-$name.txt") tensors)"
    cat "$f" >/dev/null
    for i in 1 2 3; do
      { FAST=1 timeout 60 "$probe" "$f" warm; FAST=1 PIECES="$out/tensors-$name.txt" timeout 60 "$probe" "$f" warm; } \
        >"$out/pieces-$name-$i.txt" 2>&1
      grep -E "^mmap" "$out/pieces-$name-$i.txt"
    done
  done
}

# The paths the probe has a step for, each cold and warm: "label:cache" (model-load's case labels).
ALONE_PATHS_ALL="mmap:warm mmap:cold read:warm read:cold pread-16m:warm pread-16m:cold pread-64m:warm
  pread-64m:cold direct-16m:warm direct-16m:cold direct-64m:warm direct-64m:cold direct-16m-8t:warm direct-16m-8t:cold"

alone() {  # OUT FILE: each path alone, ALONE pairs: pinscope running only that case in that cache state, then the probe only the same step (the probe first in even pairs)
  local out=$1/alone/$(basename "$2") f=$2 i x label cache d
  # The tensor table probe_pieces wrote: the probe copies out of the mapping per tensor, as pinscope.
  local tensors=$1/tensors-$(basename "$2").txt
  for ((i = 1; i <= ALONE; i++)); do
    for x in ${ALONE_PATHS:-$ALONE_PATHS_ALL}; do
      label=${x%:*} cache=${x#*:} d=$out/$label-$cache
      [[ -f $d/pair-$i.done ]] && continue
      left "$label $cache alone, pair $i" || return 0
      mkdir -p "$d"
      if [[ ! -f $d/scenario.toml ]]; then
        alone_scenario "$label" "$cache" >"$d/scenario.part" && mv "$d/scenario.part" "$d/scenario.toml" || return 1
      fi
      log "$(basename "$f"): $label $cache alone, pair $i"
      if ((i % 2)); then alone_pinscope "$d" "$f" "$i" && alone_probe "$d" "$f" "$i" "$label" "$cache"
      else alone_probe "$d" "$f" "$i" "$label" "$cache" && alone_pinscope "$d" "$f" "$i"; fi && touch "$d/pair-$i.done"
    done
  done
}

alone_scenario() {  # LABEL CACHE: model-load's defaults and its case LABEL alone, only in CACHE (stdout)
  python3 - "$1" "$2" <<'PY'
import json, sys, tomllib
label, cache = sys.argv[1:]
with open("scenarios/model-load.toml", "rb") as f:
    s = tomllib.load(f)
case = next((c for c in s["case"] if c["label"] == label), None)
if case is None:
    sys.exit(f"scenarios/model-load.toml has no case {label!r}")
def value(v):  # a TOML value: strings, whole numbers, booleans, lists and inline tables
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    return json.dumps(v) if isinstance(v, str) else str(v)
print(f'name = "model-load-{label}-{cache}"')
print(f'description = "the model-load case {label} alone, {cache} cache"')
print("[defaults]")
for k, v in s["defaults"].items():
    print(f"{k} = {value(v)}")
print("[sweep]")
print(f"cache = {value([cache])}")
print("[[case]]")
for k, v in case.items():
    print(f"{k} = {value(v)}")
PY
}

alone_pinscope() {  # DIR FILE PAIR: pinscope's run of DIR/scenario.toml on FILE into DIR/pinscope-PAIR/
  timeout 180 $P run "$1/scenario.toml" --model "$2" --no-report -q --out-dir "$1/pinscope-$3" >"$1/pinscope-$3.log" 2>&1
  local rc=$?; echo "pinscope exit $rc"; return 0
}

alone_probe() {  # DIR FILE PAIR LABEL CACHE: the probe's step for LABEL alone into DIR/probe-PAIR.txt
  local -a step
  case $4 in
    mmap) step=(ONLY=mmap PIECES="$tensors") ;;
    read) step=(ONLY=read) ;;
    pread-16m) step=(ONLY=pread CH=16) ;;
    pread-64m) step=(ONLY=pread CH=64) ;;
    direct-16m) step=(ONLY=direct CH=16) ;;
    direct-64m) step=(ONLY=direct CH=64) ;;
    direct-16m-8t) step=(ONLY=direct8) ;;
    *) echo "-- the probe has no step for $4"; return 0 ;;
  esac
  if [[ $5 == warm ]]; then cat "$2" >/dev/null; else step+=(DROP=fadvise); fi
  env "${step[@]}" timeout 180 "$probe" "$2" "$5" >"$1/probe-$3.txt" 2>&1
  grep -E " (cold|warm) +[0-9.]+ s" "$1/probe-$3.txt" || true
}

torch_loads() {  # PyTorch's safetensors loaders on FILE, warm: load_file to the GPU vs pin + async copy
  python3 - "$1" <<'PY'
import sys, time
try:
    import torch
    from safetensors.torch import load_file
except ImportError as e:
    sys.exit(f"-- PyTorch or safetensors is not importable ({e}): skipped")
path = sys.argv[1]
def timed(what, load):
    torch.cuda.synchronize(); t = time.perf_counter(); out = load(); torch.cuda.synchronize()
    s = time.perf_counter() - t; n = sum(v.numel() * v.element_size() for v in out.values())
    print(f"{what:55} {s:7.3f} s {n / s / 1e9:6.2f} GB/s"); return out
def pinned():
    return {k: v.pin_memory().cuda(non_blocking=True) for k, v in load_file(path).items()}
for r in range(2):
    timed("load_file(device=\"cuda\")", lambda: load_file(path, device="cuda"))
    timed("load_file() then .pin_memory().cuda(non_blocking=True)", pinned)
    timed("load_file() then .cuda()", lambda: {k: v.cuda() for k, v in load_file(path).items()})
PY
}

# ---- observe: what `pinscope observe` (its injection library's callbacks) costs a program -------
observe_cost() {
  local out=${1:-/tmp/pinscope-observe} r s
  mkdir -p "$out"
  log machine; machine | tee "$out/nvidia-smi.txt"
  csv_of() { ls "$1"/*-"$2"-*.csv 2>/dev/null | grep -v samples.csv | head -1; }
  for r in 1 2 3; do
    for s in latency h200-headline; do
      log "round $r: $s (pinned cases), plain"
      timeout 150 $P run "$s" --only pinned --no-report -q --out-dir "$out/plain-$r" 2>&1 | tail -2
      log "round $r: $s (pinned cases), under pinscope observe"
      timeout 150 $P observe -q -o "$out/observe-$r" -- \
        $P run "$s" --only pinned --no-report -q --out-dir "$out/observed-$r" 2>&1 | tail -2
    done
  done
  for r in 1 2 3; do
    for s in latency h200-headline; do
      log "round $r: $s, plain (baseline) against under observe"
      $P compare "$(csv_of "$out/plain-$r" "$s")" "$(csv_of "$out/observed-$r" "$s")" 2>&1 | tee "$out/compare-$s-$r.txt"
    done
  done
  log "allocation events recorded under observe"
  for f in "$out"/observe-*/*.events.csv; do echo "$f: $(($(wc -l <"$f") - 1)) events"; done
}

case ${1:-} in
  check | reference | runs | rerun | pages | index | models | budget) cmd=$1; shift; "$cmd" "$@" ;;
  observe) shift; observe_cost "$@" ;;
  multi-gpu) shift; multi_gpu "$@" ;;
  *) sed -n '2,59p' "$0"; exit 2 ;;
esac
