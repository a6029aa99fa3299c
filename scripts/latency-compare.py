#!/usr/bin/env python3
"""pinscope's latency rows beside the driver-API probe (scripts/probes/latency_driver.cu).

Usage: scripts/latency-compare.py RUN.csv PROBE.txt

Joins each latency row of a `pinscope run scenarios/latency.toml` results CSV to the probe line
with the same key (host kind, direction, bytes, call; or the wait; or the launch) and prints the
medians side by side, the difference in µs and whether pinscope is within 5 % or 0.3 µs of the
probe (the target of the GPU check). Rows without a probe line (the pointer chase: its reference
is nvbandwidth's host_device_latency_sm) are left out. Exit status 0 always: this is a table.
"""
import csv
import re
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
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2])
        return 2
    rows = list(csv.DictReader(open(sys.argv[1])))
    probe = probe_lines(sys.argv[2])
    print(f"{'key':36} {'pinscope p50':>12} {'probe p50':>10} {'diff':>7} {'ratio':>6}  within 5%/0.3 us")
    met = total = 0
    for r in rows:
        k = key_of(r)
        if k is None or k not in probe:
            continue
        mine, ref = p50_us(r), probe[k]["p50"]
        if mine is None:
            continue
        diff = mine - ref
        ok = abs(diff) <= 0.3 or abs(diff) <= 0.05 * ref
        met += ok
        total += 1
        print(f"{k:36} {mine:12.2f} {ref:10.2f} {diff:+7.2f} {mine / ref:6.3f}  {'yes' if ok else 'NO'}")
    print(f"{met} of {total} within 5% or 0.3 us of the driver-API probe (µs, p50 of the host clock)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
