#!/usr/bin/env python3
"""pinscope's model-load rows beside the C++ file-load probe's lines, path by path, over the
alternated rounds `publish.sh models` leaves in OUT (used by it; python3 only).

Usage: scripts/model-rounds.py OUT

  OUT/round-N/pinscope-FILE/*.csv        pinscope run model-load --model FILE (one load per row)
  OUT/round-N/fileload-FILE-{warm,cold}.txt  the probe on the same file, same round
  OUT/pieces-FILE-N.txt                  the probe warm with FAST=1, the mapping copied whole and
                                         then per tensor (PIECES), for the per-tensor question
  OUT/alone/FILE/PATH-CACHE/             each path alone (publish.sh models with ALONE=N): per
      pinscope-N/*.csv, probe-N.txt      pair N, pinscope's run of that one case in that cache
                                         state and the probe's same step (mmap per tensor)

For each file, path and cache state, over the rounds in which both sides loaded it: the median of
each side, its range, the ratio of the medians (pinscope / probe) and the range of the per-round
ratios, and whether the ratio of the medians is within 5%. Both sides load the whole
file; seconds are wall time of one load.
"""

import csv
import glob
import os
import re
import statistics
import sys

# The probe's line labels, as pinscope's model-load case labels.
PROBE_PATHS = [
    ("read() all to malloc", "read"),
    ("mmap, cudaMemcpy from the mapping", "mmap"),
    ("mmap, cudaMemcpy per tensor", "mmap"),
    ("pread into a 16 MiB", "pread-16m"),
    ("pread into a 64 MiB", "pread-64m"),
    ("pread(O_DIRECT) into a 16 MiB", "direct-16m"),
    ("pread(O_DIRECT) into a 64 MiB", "direct-64m"),
    ("pread(O_DIRECT) 8 threads", "direct-16m-8t"),
    ("mmap + cudaHostRegister", "register"),
]
LINE = re.compile(r"^(?P<label>.*?)\s+(?P<cache>cold|warm)\s+(?P<s>[0-9.]+) s\b")
TOLERANCE = 0.05


def probe_lines(path):
    """(label, cache, seconds) of each timed line of a probe output."""
    out = []
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return out
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            out.append((m["label"], m["cache"], float(m["s"])))
    return out


def probe_case(label):
    for prefix, case in PROBE_PATHS:
        if label.startswith(prefix):
            return case
    return None


def pinscope_rows(folder):
    """(case_label, cache) -> seconds of the ok rows of the run's results in `folder`."""
    out = {}
    for path in glob.glob(os.path.join(folder, "*.csv")):
        if path.endswith(".samples.csv"):
            continue
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if row.get("status") == "ok" and row.get("time_median_ms"):
                    key = (row["case_label"], row.get("cache", ""))
                    out[key] = float(row["time_median_ms"]) / 1000
    return out


def gather(out_dir):
    """file -> (case, cache) -> {"pinscope": [s...], "probe": [s...], "ratio": [...]} over the
    rounds in which both sides loaded that file and path (a side alone in a round is left out)."""
    table = {}
    for rd in sorted(glob.glob(os.path.join(out_dir, "round-*"))):
        ours, theirs = {}, {}
        for folder in sorted(glob.glob(os.path.join(rd, "pinscope-*"))):
            if os.path.isdir(folder):
                name = os.path.basename(folder)[len("pinscope-"):]
                for key, s in pinscope_rows(folder).items():
                    ours[(name,) + key] = s
        for path in sorted(glob.glob(os.path.join(rd, "fileload-*-*.txt"))):
            name = re.sub(r"^fileload-(.*)-(warm|cold)\.txt$", r"\1", os.path.basename(path))
            for label, cache, s in probe_lines(path):
                case = probe_case(label)
                if case:
                    theirs[(name, case, cache)] = s
        for key in ours.keys() & theirs.keys():
            cell = table.setdefault(key[0], {}).setdefault(key[1:], {"pinscope": [], "probe": [], "ratio": []})
            cell["pinscope"].append(ours[key])
            cell["probe"].append(theirs[key])
            cell["ratio"].append(ours[key] / theirs[key])
    return table


def spread(v):
    return f"{min(v):.2f}–{max(v):.2f}" if len(v) > 1 else f"{v[0]:.2f}"


def report_rounds(table):
    for name in sorted(table):
        print(f"\n{name}: seconds per load, median over the rounds (range), pinscope / probe")
        print(f"{'path':15} {'cache':5} {'rounds':>6} {'pinscope':>8} {'range':>11}  {'probe':>8} {'range':>11}  {'ratio':>6} {'per round':>11}  within 5%")
        rows = table[name]
        for (case, cache) in sorted(rows, key=lambda k: (k[1], k[0])):
            a, b, rr = rows[(case, cache)]["pinscope"], rows[(case, cache)]["probe"], rows[(case, cache)]["ratio"]
            ma, mb = statistics.median(a), statistics.median(b)
            r = ma / mb
            ok = "yes" if abs(r - 1) <= TOLERANCE else "no"
            print(f"{case:15} {cache:5} {len(a):6} {ma:8.3f} {spread(a):>11}  {mb:8.3f} {spread(b):>11}  {r:6.3f} {spread(rr):>11}  {ok}")


def report_pieces(out_dir):
    runs = {}
    for path in sorted(glob.glob(os.path.join(out_dir, "pieces-*.txt"))):
        name = re.sub(r"^pieces-(.*)-[0-9]+\.txt$", r"\1", os.path.basename(path))
        for label, _cache, s in probe_lines(path):
            if label.startswith("mmap, cudaMemcpy per tensor"):
                runs.setdefault(name, {"whole": [], "per tensor": []})["per tensor"].append(s)
            elif label.startswith("mmap, cudaMemcpy from the mapping"):
                runs.setdefault(name, {"whole": [], "per tensor": []})["whole"].append(s)
    if not runs:
        return
    print("\nthe probe, warm, mmap: the mapping copied whole against one copy per tensor (seconds)")
    for name, r in sorted(runs.items()):
        w, p = r["whole"], r["per tensor"]
        if w and p:
            print(f"{name}: whole {statistics.median(w):.3f} (n {len(w)}, {spread(w)}), "
                  f"per tensor {statistics.median(p):.3f} (n {len(p)}, {spread(p)}), "
                  f"per tensor / whole {statistics.median(p) / statistics.median(w):.3f}")


def gather_alone(out_dir):
    """file -> (case, cache) -> [(pinscope s, probe s), ...]: the pairs in which both sides loaded."""
    table = {}
    for d in sorted(glob.glob(os.path.join(out_dir, "alone", "*", "*-*"))):
        name = os.path.basename(os.path.dirname(d))
        case, _, cache = os.path.basename(d).rpartition("-")
        pairs = []
        for probe_txt in sorted(glob.glob(os.path.join(d, "probe-*.txt"))):
            n = re.sub(r"^probe-([0-9]+)\.txt$", r"\1", os.path.basename(probe_txt))
            theirs = [s for label, c, s in probe_lines(probe_txt) if c == cache and probe_case(label) == case]
            ours = pinscope_rows(os.path.join(d, f"pinscope-{n}")).get((case, cache))
            if theirs and ours is not None:
                pairs.append((ours, theirs[0]))
        if pairs:
            table.setdefault(name, {})[(case, cache)] = pairs
    return table


def report_alone(table):
    for name in sorted(table):
        print(f"\n{name}: each path alone, seconds per load, median over the pairs, pinscope / probe")
        print(f"{'path':15} {'cache':5} {'pairs':>5} {'pinscope':>8} {'probe':>8}  {'ratio':>6} {'per pair':>11}  within 5%")
        rows = table[name]
        for (case, cache) in sorted(rows, key=lambda k: (k[1], k[0])):
            pairs = rows[(case, cache)]
            ma = statistics.median(a for a, _ in pairs)
            mb = statistics.median(b for _, b in pairs)
            r = ma / mb
            ok = "yes" if abs(r - 1) <= TOLERANCE else "no"
            print(f"{case:15} {cache:5} {len(pairs):5} {ma:8.3f} {mb:8.3f}  {r:6.3f} {spread([a / b for a, b in pairs]):>11}  {ok}")


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit(__doc__.split("\n\n")[1])
    table, alone = gather(sys.argv[1]), gather_alone(sys.argv[1])
    if not table and not alone:
        sys.exit(f"no rounds in {sys.argv[1]} (round-N/pinscope-FILE/ and round-N/fileload-FILE-*.txt)"
                 " and no pairs (alone/FILE/PATH-CACHE/)")
    report_rounds(table)
    report_pieces(sys.argv[1])
    report_alone(alone)


if __name__ == "__main__":
    main()
