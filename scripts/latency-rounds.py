#!/usr/bin/env python3
"""Per-round latency differences to the driver-API probe, per key (scripts/latency-order.sh).

Usage: scripts/latency-rounds.py OUT ROUNDS probe VARIANT [VARIANT ...] [--rows KEY]
OUT/NAME-R.txt is a probe's output (round R), OUT/NAME-R/ a `pinscope run` output folder. The
first name is the reference. For every key the reference printed, each other variant's column is
the median over rounds of (its p50 - the reference's p50 in the same round), in µs, then
[k/n]: in k of the n rounds it was within 5% or 0.3 µs of the reference; `!` marks a key whose
median over the rounds is not within 5% or 0.3 µs of the reference's median (pooled), and the last
lines count, per variant, the keys pooled within. With --rows KEY: first every variant's p50 of
KEY in each round, one line per variant, then the table of that key alone.
"""
import glob
import importlib.util
import os
import statistics
import sys

spec = importlib.util.spec_from_file_location(
    "latency_compare", os.path.join(os.path.dirname(os.path.abspath(__file__)), "latency-compare.py")
)
lc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lc)


def p50s(out, name, r):
    txt = f"{out}/{name}-{r}.txt"
    if os.path.exists(txt):
        return {k: v["p50"] for k, v in lc.probe_lines(txt).items()}
    found = {}
    for f in glob.glob(f"{out}/{name}-{r}/*.csv"):
        if f.endswith(".samples.csv"):
            continue
        with open(f) as fh:
            for row in lc.csv.DictReader(fh):
                k, v = lc.key_of(row), lc.p50_us(row)
                if k and v is not None:
                    found[k] = v
    return found


def main():
    args = sys.argv[1:]
    only = None
    if "--rows" in args:
        at = args.index("--rows")
        if at + 1 >= len(args):
            print(__doc__.strip().splitlines()[2])
            return 2
        only = args[at + 1]
        del args[at : at + 2]
    if len(args) < 4:
        print(__doc__.strip().splitlines()[2])
        return 2
    out, rounds, ref, others = args[0], int(args[1]), args[2], args[3:]
    table = {n: [p50s(out, n, r) for r in range(1, rounds + 1)] for n in [ref] + others}
    if only:
        for n in [ref] + others:
            vals = [table[n][r].get(only) for r in range(rounds)]
            print(f"{n:24}" + " ".join(f"{v:6.2f}" if v is not None else "     -" for v in vals))
        keys = [only]
    else:
        keys = []
        for per_round in table[ref]:
            keys += [k for k in per_round if k not in keys and not k.endswith(("-evt", "-settle", "-elapsed"))]
    w = max(18, max(len(n) for n in others) + 2)
    print(f"{'key':34} {ref + ' p50':>12}" + "".join(f"{n:>{w}}" for n in others))
    pooled = {n: [0, 0] for n in others}
    for k in keys:
        refs = [table[ref][r].get(k) for r in range(rounds)]
        ok_refs = [x for x in refs if x is not None]
        if not ok_refs:
            continue
        cells = []
        for n in others:
            pairs = [(table[n][r][k], refs[r]) for r in range(rounds) if refs[r] is not None and k in table[n][r]]
            if not pairs:
                cells.append(f"{'-':>{w}}")
                continue
            d = [mine - theirs for mine, theirs in pairs]
            within = sum(abs(mine - theirs) <= max(0.3, 0.05 * theirs) for mine, theirs in pairs)
            ref_med = statistics.median(ok_refs)
            together = abs(statistics.median([m for m, _ in pairs]) - ref_med) <= max(0.3, 0.05 * ref_med)
            pooled[n][0] += together
            pooled[n][1] += 1
            mark = " " if together else "!"
            cells.append(f"{statistics.median(d):+{w - 8}.2f}{mark}[{within}/{len(d)}]")
        print(f"{k:34} {statistics.median(ok_refs):12.2f}" + "".join(cells))
    for n in others:
        print(f"{n}: {pooled[n][0]} of {pooled[n][1]} keys with its median over the rounds within 5% or 0.3 µs of {ref}'s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
