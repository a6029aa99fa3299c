#!/usr/bin/env python3
"""How much of a run's wall time went into what pinscope measured.

Usage: scripts/overhead.py RUN.csv [...]   (RUN.samples.csv and RUN.json beside it)
wall      = sidecar finished_at - started_at
timed     = sum over every recorded sample of (bytes moved in the sample / its bandwidth):
            the transfer time the bandwidth figures come from
setup     = sum over cases of the measured alloc + register + unregister + free times
ratio     = wall / (timed + setup): warm-up transfers, first touch, verification, probes and
            the observers' snapshots are what it charges as overhead (the GPU check's target
            for h200-headline is <= 1.2).
touch     = the host buffers' first touch (the pattern written into them), from the phase
            timeline of the samples file: the time from the `before` snapshot to the `host`
            snapshot less the measured alloc + register time. For pageable memory this is where
            the pages are really allocated (page faults); ratio+touch counts it as setup too.
"""
import csv
import json
import sys
from datetime import datetime


def one(path):
    base = path[: -len(".csv")]
    meta = json.load(open(base + ".json"))
    rows = list(csv.DictReader(open(path)))
    wall = (datetime.fromisoformat(meta["finished_at"]) - datetime.fromisoformat(meta["started_at"])).total_seconds()
    per_case = {}
    for r in rows:
        per_case.setdefault(r["case_index"], r)
    # Identical cases (staging-repeat) share a case_key: walk the samples in file order, which is
    # row order, and move to the next row of that key and lane when a sample index restarts at 0.
    queue = {}
    for r in rows:
        if r["lane"] != "sum":
            queue.setdefault((r["case_key"], r["lane"]), []).append(r)
    current = {}
    spans = {}
    phases = {}
    for s in csv.DictReader(open(base + ".samples.csv")):
        if s["series"] == "phase:procfs.vm_rss" and s["t_ms"]:
            phases.setdefault(s["case_key"], []).append((s["index"], float(s["t_ms"])))
        # A zero rate moved nothing (the empty kernel, latency samples): no transfer time.
        if s["series"] != "bw_gbs" or s["lane"] == "sum" or not s["value"] or float(s["value"]) == 0.0:
            continue
        key = (s["case_key"], s["lane"])
        if s["index"] == "0" or key not in current:
            current[key] = queue[key].pop(0)
        r = current[key]
        t = int(r["size_bytes"]) * int(r["batch"] or 1) / (float(s["value"]) * 1e9)
        # bidirectional lanes run at the same time: count a sample's span once (its longest lane)
        k = (r["case_index"], s["index"])
        spans[k] = max(spans.get(k, 0.0), t)
    timed = sum(spans.values())
    setup = 0.0
    for r in per_case.values():
        for c in ("alloc_ms", "register_ms", "unregister_ms", "free_ms"):
            if r.get(c):
                setup += float(r[c]) / 1e3
    touch = host_touch(per_case.values(), phases)
    ratio = wall / (timed + setup) if timed + setup > 0 else float("nan")
    with_touch = wall / (timed + setup + touch) if timed + setup + touch > 0 else float("nan")
    print(f"{path.split('/')[-1]}: wall {wall:.1f} s, timed transfers {timed:.1f} s, alloc/register/free {setup:.1f} s, ratio {ratio:.2f}; first touch {touch:.1f} s, ratio+touch {with_touch:.2f}")


def host_touch(cases, phases):
    """Seconds between each case's `before` and `host` snapshots less its alloc + register."""
    by_key = {}
    for r in cases:
        by_key.setdefault(r["case_key"], []).append(r)
    total = 0.0
    for key, rows in by_key.items():
        # Identical cases share a key: the k-th before/host pair belongs to the k-th case.
        before, k = None, 0
        for name, t in phases.get(key, []):
            if name == "before":
                before = t
            elif name == "host" and before is not None and k < len(rows):
                setup = sum(float(rows[k][c]) for c in ("alloc_ms", "register_ms") if rows[k].get(c))
                total += max(0.0, t - before - setup) / 1e3
                before, k = None, k + 1
    return total


for p in sys.argv[1:]:
    if not p.endswith(".samples.csv"):
        one(p)
