#!/usr/bin/env bash
# Regenerates the published HTML reports in reports/ from the result files stored there:
#   reports/h200/*.csv      runs on the lent single-GPU H200 (one report per scenario)
#   reports/h200-x2/*.csv   the same quick + headline scenarios on the two-GPU H200 host
#   reports/compare-*.html  the two machines side by side; reports/index.html links everything
# Usage: scripts/publish-reports.sh [path/to/pinscope]   (default: cargo run --release)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -ge 1 ]]; then P=("$1"); else cargo build --release -q; P=(target/release/pinscope); fi
for csv in reports/h200/*.csv reports/h200-x2/*.csv; do
  [[ $csv == *.samples.csv ]] && continue
  name=$(basename "$csv" .csv)
  scen=$(sed -E 's/^[0-9]{8}-[0-9]{6}-(.*)-[^-]+$/\1/' <<<"$name")
  extra=()
  # A machine's own one-GPU nvbandwidth run (nvbandwidth.json in its folder) is its reference
  # line; the two-GPU host's file (nvbandwidth-all.json) holds sums over both GPUs, which a
  # one-GPU case does not compare with, so its pages have none.
  ref=$(dirname "$csv")/nvbandwidth.json
  [[ -f $ref && ( $scen == h200-headline || $scen == quick ) ]] && extra=(--nvbandwidth "$ref")
  "${P[@]}" -q report "$csv" "${extra[@]}" -o "${csv%.csv}.html" --title "$scen on $(basename "$(dirname "$csv")")"
done
for scen in quick h200-headline; do
  a=$(ls reports/h200/*-"$scen"-*.csv | grep -v samples | head -1)
  b=$(ls reports/h200-x2/*-"$scen"-*.csv | grep -v samples | head -1)
  "${P[@]}" compare "$a" "$b" --format markdown --html "reports/compare-$scen.html" > "reports/compare-$scen.md"
done
python3 - <<'PY'
import glob, html, json, os, re

def headline(page):
    """The headline pinscope wrote on the report's answer list (data-headline-* attributes)."""
    text = open(page).read()
    m = re.search(r'<ul class="answer"([^>]*)>', text)
    attrs = dict(re.findall(r'data-headline-([a-z-]+)="([^"]*)"', m.group(1))) if m else {}
    if "fastest" not in attrs:
        # A latency scenario: its first latency sentence (already HTML-escaped by pinscope).
        lat = re.search(r'<li><strong>Latency:</strong> (.*?)</li>', text)
        return lat.group(1) if lat else "no host-to-GPU bandwidth measured (see the report)"
    text = f'<b>{attrs["gbs"]} GB/s</b>: {attrs["fastest"]}, holding {attrs["pinned"]} page-locked'
    if "ring-share" in attrs:
        text += f'; staging ring {attrs["ring-share"]} of it, holding {attrs["ring-pinned"]}'
    return text  # already HTML-escaped by pinscope

rows = []
for j in sorted(glob.glob("reports/*/*.json")):
    if os.path.basename(j).startswith("nvbandwidth"): continue
    d = json.load(open(j))
    m = d["machine"]; g = m.get("gpu") or {}
    h = j[:-5] + ".html"
    rows.append((os.path.dirname(j).split("/")[-1], d["scenarios"][0]["name"], d["scenarios"][0]["description"],
                 os.path.relpath(h, "reports"), headline(h), f'{g.get("name","")}, {m["cpu_threads"]} CPU threads, {m["ram_bytes"]/2**30:.0f} GiB RAM, driver {g.get("driver_version","")}', d["started_at"][:16].replace("T", " ")))
out = ['<!doctype html><meta charset="utf-8"><title>pinscope published reports</title>',
       '<style>body{font-family:sans-serif;max-width:1300px;margin:2em auto;padding:0 1em}td,th{padding:4px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}td.nw{white-space:nowrap}</style>',
       '<h1>pinscope: published reports</h1>',
       '<p>Every report here was made by <code>pinscope report</code> / <code>pinscope compare</code> from the result files beside it, measured on lent NVIDIA H200 machines (Linux VMs, PCIe Gen5 x16). Each run\'s headline is host to GPU: its fastest way, the page-locked memory that way holds, and how close a small staging ring comes. GB/s = 1e9 bytes/s; MiB, GiB = 2^20, 2^30 bytes. Regenerate with <code>scripts/publish-reports.sh</code>.</p>',
       '<h2>Two machines side by side</h2><ul>',
       '<li><a href="compare-quick.html">quick: single-GPU H200 host (A) vs two-GPU H200 host (B)</a> (<a href="compare-quick.md">markdown</a>)</li>',
       '<li><a href="compare-h200-headline.html">h200-headline: single-GPU H200 host (A) vs two-GPU H200 host (B)</a> (<a href="compare-h200-headline.md">markdown</a>)</li></ul>',
       '<h2>Runs</h2>']
for mach in sorted({r[0] for r in rows}, key=lambda m: (len(m), m)):
    hw = next(r[5] for r in rows if r[0] == mach)
    out.append(f'<h3>{html.escape(mach)}: {html.escape(hw)}</h3>')
    out.append('<table><tr><th>scenario</th><th>headline (host to GPU)</th><th>question</th><th>started (UTC)</th></tr>')
    for m, name, desc, href, head, hw, t in rows:
        if m != mach: continue
        out.append(f'<tr><td class="nw"><a href="{html.escape(href)}">{html.escape(name)}</a></td><td>{head}</td><td>{html.escape(desc)}</td><td class="nw">{t}</td></tr>')
    out.append('</table>')
open("reports/index.html", "w").write("\n".join(out) + "\n")
PY
echo "reports/index.html written"
