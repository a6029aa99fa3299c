#!/usr/bin/env bash
# Renders a pinscope HTML report in headless Chromium and fails if it looks blank.
#
#   scripts/check-report.sh REPORT.html [OUT.png]
#
# Checks: (1) every <svg> in the HTML draws something beyond its background rectangle;
# (2) the screenshot has a reasonable share of non-white pixels; (3) plot defects: a
# bandwidth-vs-size plot whose size axis labels no measured size (or labels a size that was not
# measured), a label cut short (an ellipsis without the whole text as a tooltip, or text running
# past the edge of its plot), a series
# or bar that mixes directions or lanes (each must name exactly one, see the figure's
# data-series-directions), and a bandwidth plot that does not say its directions at all. Installs Debian's chromium when
# no chromium is on PATH (needs root and apt). The PNG is decoded with python3's zlib only.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 REPORT.html [OUT.png]" >&2
  exit 2
fi
report=$1
out=${2:-${report%.html}.png}
if [[ ! -f $report ]]; then
  echo "error: $report does not exist" >&2
  exit 2
fi

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "chromium not found; installing Debian's chromium" >&2
  apt-get update && apt-get install -y chromium
  browser=$(command -v chromium)
fi

abs=$(realpath "$report")
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
timeout 180 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars \
  --screenshot="$out" --window-size=1400,4000 "file://$abs" 2>/dev/null || true
if [[ ! -s $out ]]; then
  echo "error: chromium wrote no screenshot to $out" >&2
  exit 1
fi

python3 - "$report" "$out" <<'PY'
import re, struct, sys, zlib

html_path, png_path = sys.argv[1], sys.argv[2]
from html import unescape as html_unescape
problems = []

# 1. Every SVG draws more than its background.
html = open(html_path, encoding="utf-8").read()
svgs = re.findall(r"<svg\b.*?</svg>", html, flags=re.S)
for i, svg in enumerate(svgs, 1):
    marks = sum(len(re.findall(p, svg)) for p in (r"<rect\b", r"<path\b", r"<polyline\b", r"<polygon\b", r"<circle\b", r"<line\b"))
    if marks <= 1:
        problems.append(f"svg #{i} draws nothing beyond its background")
print(f"{len(svgs)} inline SVG plot(s); {len(svgs) - sum('svg #' in p for p in problems)} draw marks beyond the background")
# 3. Plot defects, from the figures' data-* attributes and the SVG text elements.
SIZE = re.compile(r"^\d+(\.\d+)? (B|KiB|MiB|GiB|TiB)$")
DIRECTIONS = {"h2d", "d2h", "bidir-h2d", "bidir-d2h", "bidir-sum", "sum", "device"}  # device: device-only engines
for n, fig in enumerate(re.findall(r"<figure\b.*?</figure>", html, flags=re.S), 1):
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', fig.split(">", 1)[0]))
    kind = attrs.get("plot", "")
    if not kind and re.search(r"<h3>[^<]*bandwidth vs size", fig):
        kind = "bandwidth-vs-size"  # a report from an older renderer, checked all the same
    name = f"plot #{n} ({attrs.get('title', kind) or 'untitled'})"
    svg = re.search(r"<svg\b.*?</svg>", fig, flags=re.S)
    if not svg:
        continue
    svg = svg.group(0)
    width = float(re.search(r'width="(\d+)"', svg).group(1))
    texts = re.findall(r"<text\b([^>]*)>(.*?)</text>", svg, flags=re.S)
    for a, t in texts:
        # A label pinscope shortened on purpose keeps its whole text in a <title> tooltip.
        whole = re.match(r"\s*<title>.*?</title>", t, flags=re.S)
        t = html_unescape(t[whole.end():].strip() if whole else t.strip())
        if ("…" in t or t.endswith("...")) and not whole:
            problems.append(f"{name}: truncated label {t!r}")
        x = re.search(r'\bx="(-?[\d.]+)"', a)
        if x:
            x, est = float(x.group(1)), 5.2 * len(t)
            anchor = re.search(r'text-anchor="(\w+)"', a)
            anchor = anchor.group(1) if anchor else "start"
            if (anchor == "start" and x + est > width + 2) or (anchor == "end" and x - est < -2):
                problems.append(f"{name}: label {t!r} runs past the edge of the plot")
    if kind == "bandwidth-vs-size":
        measured = set(filter(None, attrs.get("measured-sizes", "").split("|")))
        ticks = {html_unescape(t.strip()) for _, t in texts if SIZE.match(html_unescape(t.strip()))}
        if not ticks & measured:
            problems.append(f"{name}: the size axis labels none of the measured sizes {sorted(measured)}")
        for t in sorted(ticks - measured):
            problems.append(f"{name}: the size axis labels {t!r}, which was not measured")
    if kind in ("bandwidth-vs-size", "bandwidth-bars", "platform-bandwidth"):
        dirs = attrs.get("series-directions")
        if dirs is None:
            problems.append(f"{name}: the plot does not say the direction of its series")
        else:
            for d in dirs.split("|"):
                if d not in DIRECTIONS:
                    problems.append(f"{name}: a series mixes directions or lanes ({d!r})")
print(f"{len(re.findall(r'<figure', html))} figure(s) checked for axis, label and direction defects")
if "<script" in html.lower():
    problems.append("the page contains a <script>")
if re.search(r"https?://", html):
    problems.append("the page references a URL")

# 2. Decode the PNG (8-bit RGB/RGBA, non-interlaced, as Chromium writes) and count non-white pixels.
data = open(png_path, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(f"error: {png_path} is not a PNG")
pos, idat, width = 8, [], None
while pos < len(data):
    (length,) = struct.unpack(">I", data[pos:pos + 4])
    kind = data[pos + 4:pos + 8]
    body = data[pos + 8:pos + 8 + length]
    pos += 12 + length
    if kind == b"IHDR":
        width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat.append(body)
    elif kind == b"IEND":
        break
if width is None or depth != 8 or ctype not in (2, 6) or interlace != 0:
    sys.exit(f"error: {png_path}: unsupported PNG layout")
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(b"".join(idat))
stride = width * bpp
prev = bytearray(stride)
nonwhite = 0
p = 0
for _ in range(height):
    f = raw[p]
    line = bytearray(raw[p + 1:p + 1 + stride])
    p += 1 + stride
    if f == 1:
        for x in range(bpp, stride):
            line[x] = (line[x] + line[x - bpp]) & 255
    elif f == 2:
        line = bytearray((a + b) & 255 for a, b in zip(line, prev))
    elif f == 3:
        for x in range(stride):
            left = line[x - bpp] if x >= bpp else 0
            line[x] = (line[x] + ((left + prev[x]) >> 1)) & 255
    elif f == 4:
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line[x] = (line[x] + pr) & 255
    # Count pixels with any colour channel clearly below white.
    for x in range(0, stride, bpp):
        if line[x] < 235 or line[x + 1] < 235 or line[x + 2] < 235:
            nonwhite += 1
    prev = line
total = width * height
share = nonwhite / total
print(f"{png_path}: {width}x{height}, {nonwhite} non-white pixels ({share:.1%})")
if share < 0.01:
    problems.append(f"the rendered page is nearly blank ({share:.2%} non-white pixels)")
if share > 0.95:
    problems.append(f"the rendered page is nearly solid ({share:.2%} non-white pixels)")
for pr in problems:
    print("FAIL:", pr)
sys.exit(1 if problems else 0)
PY
