#!/usr/bin/env python3
"""SYNTHETIC fleet-scale inputs replicated from real published runs (for scripts/fleet-timings.sh).

Every file written here is a copy of a real run's rows and samples with the case keys made unique;
the output paths must contain "synthetic", so every page pinscope renders from them carries the
SYNTHETIC banner. Nothing here is a measurement.

  big SRC OUT ROWS [--samples all|none]   ROWS rows: replica r appends " r0000123" to case_label and
                                          puts the same suffix into the label part of case_key;
                                          case_index runs on from 0; run_id and host_name are set
                                          per output; the samples file (all: every real series;
                                          none: no samples file) repeats the real samples with
                                          each replica's key; the sidecar is the real one with
                                          run_id and machine.host_name changed.
  runs SRC_A SRC_B DIR N ROWS             N runs of ROWS rows, A and B alternating (same keys).
  fleet SRC DIR N SLOW FACTOR             N node folders (fleet-0000 ...) as the Slurm script writes
                                          them (steps.json + the run), each run the real one with
                                          the host changed and a +-0.5% spread; node SLOW gets
                                          FACTOR x its bandwidth (rows and bw_gbs samples) and its
                                          check exits 1.
  sweep OUT                               a staged sweep of 2 directions x 50 chunks x 1000 ring
                                          depths = 100 000 cases (threads = "auto").

SRC is a results CSV (x.csv with x.samples.csv and x.json beside it).
"""
import csv
import io
import json
import os
import sys

KEY_COL = "case_key"


def load(src):
    base = src[: -len(".csv")]
    with open(src, newline="") as f:
        reader = csv.reader(f)
        head = next(reader)
        rows = list(reader)
    with open(base + ".samples.csv", newline="") as f:
        sreader = csv.reader(f)
        shead = next(sreader)
        samples = {}
        for line in sreader:
            samples.setdefault(line[1], []).append(line)
    with open(base + ".json") as f:
        sidecar = json.load(f)
    return head, rows, shead, samples, sidecar


def check_synthetic(path):
    if "synthetic" not in path:
        sys.exit(f"{path}: the output path must contain 'synthetic', so that no one takes it for a measurement")


def replica_key(row, col, suffix):
    """The case key with the suffix after the label part (`scenario/label/params`)."""
    key = row[col[KEY_COL]]
    prefix = f"{row[col['scenario']]}/{row[col['case_label']]}/"
    if not key.startswith(prefix):
        sys.exit(f"case key {key!r} does not start with {prefix!r}")
    return f"{row[col['scenario']]}/{row[col['case_label']]}{suffix}/{key[len(prefix):]}"


def sample_templates(rows, col, samples):
    """Per source row: its samples as CSV text with the key replaced by a placeholder."""
    out = []
    seen = set()
    for row in rows:
        key = row[col[KEY_COL]]
        if key in seen:
            out.append("")
            continue
        seen.add(key)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        for line in samples.get(key, []):
            w.writerow([line[0], "\x00KEY\x00"] + line[2:])
        out.append(buf.getvalue())
    return out


def write_run(src, out, nrows, run_id, host, with_samples, scale=1.0):
    """nrows replicated rows of src at out (+ .samples.csv, .json)."""
    check_synthetic(out)
    head, rows, shead, samples, sidecar = load(src)
    col = {h: i for i, h in enumerate(head)}
    templates = sample_templates(rows, col, samples) if with_samples else None
    bw_cols = [col[c] for c in ("bw_median_gbs", "bw_min_gbs", "bw_max_gbs")]
    base = out[: -len(".csv")]
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    fs = open(base + ".samples.csv", "w", newline="") if with_samples else None
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        if fs:
            fs.write(",".join(shead) + "\n")
        for i in range(nrows):
            r, k = divmod(i, len(rows))
            src_row = rows[k]
            row = list(src_row)
            suffix = f" r{r:07d}" if nrows > len(rows) else ""
            key = replica_key(src_row, col, suffix)
            row[col["case_label"]] += suffix
            row[col[KEY_COL]] = key
            row[col["case_index"]] = str(i)
            row[col["run_id"]] = run_id
            row[col["host_name"]] = host
            if scale != 1.0:
                for c in bw_cols:
                    if row[c]:
                        row[c] = f"{float(row[c]) * scale:.6f}"
            w.writerow(row)
            if fs and templates[k]:
                text = templates[k]
                if scale != 1.0:
                    text = scale_bw(text, scale)
                fs.write(text.replace("\x00KEY\x00", '"' + key.replace('"', '""') + '"'))
    if fs:
        fs.close()
    sidecar["run_id"] = run_id
    sidecar["machine"]["host_name"] = host
    # The field that marks a made-up run: pages and comparisons of it say SYNTHETIC DATA.
    sidecar["SYNTHETIC"] = "replicated from a real published run by scripts/fleet-inputs.py: not a measurement"
    with open(base + ".json", "w") as f:
        json.dump(sidecar, f, indent=2)


def scale_bw(text, scale):
    out = []
    for line in text.splitlines(keepends=True):
        parts = line.rstrip("\n").split(",")
        if parts[-4] == "bw_gbs" and parts[-1]:
            parts[-1] = repr(float(parts[-1]) * scale)
            line = ",".join(parts) + "\n"
        out.append(line)
    return "".join(out)


def stem(src):
    return os.path.basename(src)[: -len(".csv")]


def cmd_big(args):
    src, out, nrows = args[0], args[1], int(args[2])
    with_samples = "--samples" not in args or args[args.index("--samples") + 1] == "all"
    write_run(src, out, nrows, "synthetic-" + stem(out), "synthetic-host", with_samples)


def cmd_runs(args):
    a, b, folder, n, nrows = args[0], args[1], args[2], int(args[3]), int(args[4])
    for i in range(n):
        src = a if i % 2 == 0 else b
        write_run(src, f"{folder}/run{i}.csv", nrows, f"synthetic-run{i}", f"synthetic-m{i}", True)


def cmd_fleet(args):
    src, folder, n, slow, factor = args[0], args[1], int(args[2]), int(args[3]), float(args[4])
    _, rows, *_ = load(src)
    for i in range(n):
        node = f"fleet-{i:04d}"
        # A little spread between machines, as real fleets have (+-0.5%).
        scale = factor if i == slow else 1.0 + ((i * 7919) % 11) * 0.001 - 0.005
        write_run(src, f"{folder}/{node}/{stem(src)}.csv", len(rows), f"synthetic-{node}", node, True, scale)
        steps = {"node": node, "info": 0, "check": 1 if i == slow else 0, "run": 0}
        with open(f"{folder}/{node}/steps.json", "w") as f:
            json.dump(steps, f)


def cmd_sweep(args):
    chunks = ", ".join(f'"{c}MiB"' for c in range(1, 51))
    rings = ", ".join(str(r) for r in range(1, 1001))
    text = f"""# SYNTHETIC plan input: a staged sweep of 2 x 50 x 1000 = 100 000 cases.
name = "sweep100k"
description = "Staged ring sweep: direction x chunk x ring (plan timing input)"

[defaults]
host = "pageable"
mode = "staged"
size = "1GiB"
threads = "auto"

[[case]]
label = "ring"
sweep = {{ direction = ["h2d", "d2h"], chunk = [{chunks}], ring = [{rings}] }}
"""
    with open(args[0], "w") as f:
        f.write(text)


if __name__ == "__main__":
    commands = {"big": cmd_big, "runs": cmd_runs, "fleet": cmd_fleet, "sweep": cmd_sweep}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](sys.argv[2:])
