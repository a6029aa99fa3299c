#!/usr/bin/env bash
# Regenerates the published HTML reports in reports/ from the result files stored there:
#   reports/h200/*.csv      runs on the lent single-GPU H200 (one report per scenario)
#   reports/h200-x2/*.csv   the same quick + headline scenarios on the two-GPU H200 host
#   reports/compare-*.html  the two machines side by side; reports/index.html links everything
# Usage: scripts/publish-reports.sh [path/to/pinscope]   (default: cargo run --release)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -ge 1 ]]; then P=("$1"); else cargo build --release -q; P=(target/release/pinscope); fi
ref=reports/h200/nvbandwidth-h2d.json
for csv in reports/h200/*.csv reports/h200-x2/*.csv; do
  [[ $csv == *.samples.csv ]] && continue
  name=$(basename "$csv" .csv)
  scen=$(sed -E 's/^[0-9]{8}-[0-9]{6}-(.*)-[^-]+$/\1/' <<<"$name")
  extra=()
  [[ $scen == h200-headline || $scen == quick ]] && extra=(--nvbandwidth "$ref")
  "${P[@]}" -q report "$csv" "${extra[@]}" -o "${csv%.csv}.html" --title "$scen on $(basename "$(dirname "$csv")")"
done
for scen in quick h200-headline; do
  a=$(ls reports/h200/*-"$scen"-*.csv | grep -v samples | head -1)
  b=$(ls reports/h200-x2/*-"$scen"-*.csv | grep -v samples | head -1)
  "${P[@]}" compare "$a" "$b" --format markdown --html "reports/compare-$scen.html" > "reports/compare-$scen.md"
done
python3 - <<'PY'
import glob, html, json, os
rows = []
for j in sorted(glob.glob("reports/*/*.json")):
    if os.path.basename(j).startswith("nvbandwidth"): continue
    d = json.load(open(j))
    m = d["machine"]; g = m.get("gpu") or {}
    h = j[:-5] + ".html"
    rows.append((os.path.dirname(j).split("/")[-1], d["scenarios"][0]["name"], d["scenarios"][0]["description"],
                 os.path.relpath(h, "reports"), f'{g.get("name","")}, {m["cpu_threads"]} CPU threads, {m["ram_bytes"]/2**30:.0f} GiB RAM, driver {g.get("driver_version","")}', d["started_at"][:19]))
out = ['<!doctype html><meta charset="utf-8"><title>pinscope published reports</title>',
       '<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}td,th{padding:4px 8px;border-bottom:1px solid #ddd;text-align:left}</style>',
       '<h1>pinscope: published reports</h1>',
       '<p>Every report here was made by <code>pinscope report</code> / <code>pinscope compare</code> from the result files beside it, measured on lent NVIDIA H200 machines (Linux VMs, PCIe Gen5 x16). GB/s = 1e9 bytes/s. Regenerate with <code>scripts/publish-reports.sh</code>.</p>',
       '<h2>Two machines side by side</h2><ul>',
       '<li><a href="compare-quick.html">quick: single-GPU H200 host (A) vs two-GPU H200 host (B)</a> (<a href="compare-quick.md">markdown</a>)</li>',
       '<li><a href="compare-h200-headline.html">h200-headline: single-GPU H200 host (A) vs two-GPU H200 host (B)</a> (<a href="compare-h200-headline.md">markdown</a>)</li></ul>',
       '<h2>Runs</h2><table><tr><th>machine</th><th>scenario</th><th>question</th><th>hardware</th><th>started (UTC)</th></tr>']
for mach, name, desc, href, hw, t in rows:
    out.append(f'<tr><td>{html.escape(mach)}</td><td><a href="{html.escape(href)}">{html.escape(name)}</a></td><td>{html.escape(desc)}</td><td>{html.escape(hw)}</td><td>{t}</td></tr>')
out.append('</table>')
open("reports/index.html", "w").write("\n".join(out) + "\n")
PY
echo "reports/index.html written"
