# Summary table of scripts/ab/run.sh: per round and binary, the pageable medians, the ring medians
# (range over its repeats), the pinned 4 GiB reference and ring ÷ pinned. Usage: summary.py OUT
import csv, glob, sys, statistics as st
out = sys.argv[1]
def rows(d):
    f = [p for p in glob.glob(d + "/*.csv") if not p.endswith(".samples.csv")]
    return list(csv.DictReader(open(f[0]))) if f else []
print("round binary  pageable h2d  d2h   | ring h2d (min-max)    d2h (min-max)     | pinned h2d d2h | ring/pinned h2d d2h")
for r in (1, 2, 3):
    for b in ("old", "new"):
        p = {x["lane"]: float(x["bw_median_gbs"]) for x in rows(f"{out}/{b}-pageable-{r}") if x["status"] == "ok"}
        R = rows(f"{out}/{b}-ring-{r}")
        ring = {l: [float(x["bw_median_gbs"]) for x in R if x["lane"] == l and x["case_label"] == "ring" and x["status"] == "ok"] for l in ("h2d", "d2h")}
        pin = {x["lane"]: float(x["bw_median_gbs"]) for x in R if x["case_label"].startswith("pinned") and x["status"] == "ok"}
        def rr(l):
            v = ring[l]
            return f"{st.median(v):6.2f} ({min(v):.2f}-{max(v):.2f})" if v else "-"
        rat = " ".join(f"{st.median(ring[l])/pin[l]:.3f}" if ring[l] and l in pin else "-" for l in ("h2d", "d2h"))
        print(f"{r:5} {b:6} {p.get('h2d', 0):8.2f} {p.get('d2h', 0):6.2f} | {rr('h2d'):21} {rr('d2h'):17} | {pin.get('h2d', 0):6.2f} {pin.get('d2h', 0):6.2f} | {rat}")
