#!/usr/bin/env python3
"""pinscope's latency rows beside the driver-API probe (scripts/probes/latency_driver.cu).

Usage: scripts/latency-compare.py RUN.csv [RUN.csv ...] -- PROBE.txt [PROBE.txt ...]

Joins each latency row of `pinscope run scenarios/latency.toml` results CSVs to the probe lines
with the same key (host kind, direction, bytes, call; or the wait; or the launch) and prints the
medians side by side. The probe run several times in the same call gives its run-to-run range;
pinscope is "within" when each of its medians lies inside that range widened by 5 % or 0.3 µs
(the target of the GPU check), and the table also shows the distance to the nearest probe run.
"pooled" compares the median of pinscope's runs with the median of the probe's runs, within the
same 5 % or 0.3 µs: on a machine whose latency moves between levels from one process to the
next, that is the comparison a single process cannot spoil.
For a copy timed with `latency` the last column is the probe's `async-evt` range: the same copy
in pinscope's sample shape (each host-timed copy follows one bracketed by timing events), to
show what that shape costs; then the probe's `async-settle` range (a plain copy after the
event-bracketed one, pinscope's shape now). Rows without a probe line (the pointer chase: its reference is nvbandwidth's
host_device_latency_sm) are left out. Exit status 0 always: this is a table.
"""
import csv
import re
import statistics
import sys


def fields(case_key):
    tail = case_key.split("/", 2)[2]
    return dict(kv.split("=", 1) for kv in tail.split(",") if "=" in kv)


def key_of(row):
    f = fields(row["case_key"])
    engine, mode = f.get("engine"), f.get("mode")
    if engine == "empty":
        if mode == "latency":
            return "sync/" + f.get("wait", "stream")
        return {"enqueue": "launch-call", "direct": "launch-rate"}.get(mode)
    if engine != "copy":
        return None
    call = {"latency": "async", "latency-sync": "sync", "enqueue": "enqueue"}.get(mode)
    if call is None:
        return None
    host = f.get("host")
    kind = {"alloc": "pinned", "register": "registered", "pageable": "pageable"}.get(host)
    if host == "alloc" and "mapped" in f.get("flags", ""):
        kind = "mapped"
    return f"copy/{kind}/{f['direction']}/{f['size']}/{call}"


def p50_us(row):
    if row.get("lat_p50_us"):
        return float(row["lat_p50_us"])
    if row.get("time_median_ms"):
        # launch-rate: time_median_ms is per launch
        return float(row["time_median_ms"]) * 1e3
    return None


def probe_lines(path):
    out = {}
    pat = re.compile(r"key=(\S+)\s+min\s+(\S+)\s+p50\s+(\S+)\s+p90\s+(\S+)\s+p99\s+(\S+) us\s+n=(\d+)\s+data=(\S+)")
    for line in open(path):
        m = pat.search(line)
        if m:
            out[m.group(1)] = {"p50": float(m.group(3)), "p99": float(m.group(5)), "data": m.group(7)}
    return out


def main():
    args = sys.argv[1:]
    if "--" not in args:
        print(__doc__.strip().splitlines()[2])
        return 2
    cut = args.index("--")
    runs = [{key_of(r): p50_us(r) for r in csv.DictReader(open(f))} for f in args[:cut]]
    probes = [probe_lines(f) for f in args[cut + 1 :]]
    print(f"{'key':34} {'pinscope p50':>16} {'probe p50 range':>17} {'nearest':>8}  within  pooled  {'async-evt range':>17}  {'async-settle':>17}")
    met = total = pooled_met = 0
    for k in runs[0]:
        refs = [p[k]["p50"] for p in probes if k in p]
        mine = [r.get(k) for r in runs if r.get(k) is not None]
        if k is None or not refs or not mine:
            continue
        lo, hi = min(refs), max(refs)
        tol = lambda v: max(0.3, 0.05 * v)
        ok = all(lo - tol(lo) <= m <= hi + tol(hi) for m in mine)
        nearest = max((m - hi if m > hi else lo - m if m < lo else 0.0) for m in mine)
        met += ok
        total += 1
        pooled = abs(statistics.median(mine) - statistics.median(refs)) <= tol(statistics.median(refs))
        pooled_met += pooled
        ps = "/".join(f"{m:.2f}" for m in mine)
        def shape_range(suffix):
            v = [p[k + suffix]["p50"] for p in probes if k.endswith("/async") and k + suffix in p]
            return f"{min(v):8.2f}-{max(v):<8.2f}" if v else ""
        shape = shape_range("-evt") + "  " + shape_range("-settle")
        print(f"{k:34} {ps:>16} {lo:8.2f}-{hi:<8.2f} {nearest:8.2f}  {'yes' if ok else 'NO ':3}     {'yes' if pooled else 'NO ':3}     {shape}")
    print(
        f"{met} of {total} keys: every pinscope median within the driver-API probe's range "
        f"({len(probes)} runs) widened by 5% or 0.3 us (p50 of the host clock, us)"
    )
    print(
        f"{pooled_met} of {total} keys: the median of pinscope's {len(runs)} runs within 5% or 0.3 us "
        f"of the median of the probe's {len(probes)} runs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
