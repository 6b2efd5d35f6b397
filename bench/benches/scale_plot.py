#!/usr/bin/env python3
"""The scale groups of `cargo bench --bench span_pool` as a table and a plot:
ns per churn step against live spans, one line per allocator.

    python3 bench/benches/scale_plot.py [CRITERION_DIR] [--before DIR] [--svg OUT.svg]

CRITERION_DIR defaults to target/criterion. Reads each
`scale_<n>/<allocator>/new/estimates.json` (the median of one criterion
iteration of 1024 churn steps), prints a Markdown table (ns per step, and each
allocator's figure over rlsf's at the same size), and with --svg writes a
log-log plot. `--before DIR` adds the span pool's figures from another
criterion directory (an earlier build) as a dashed line and a column. No
dependencies beyond the standard library.
"""

import json
import math
import os
import sys

SIZES = [("1k", 1_000), ("10k", 10_000), ("100k", 100_000), ("1m", 1_000_000)]
ALLOCATORS = ["span_unchecked", "rlsf", "mimalloc", "glibc"]
COLOURS = {"span_unchecked": "#c0392b", "rlsf": "#2c7fb8", "mimalloc": "#31a354", "glibc": "#756bb1",
           "span_unchecked (before)": "#c0392b"}
STEPS = 1024


def load(root):
    """{allocator: {live: ns per step}} for every estimate found."""
    out = {}
    for name, live in SIZES:
        for a in ALLOCATORS:
            path = os.path.join(root, f"scale_{name}", a, "new", "estimates.json")
            if not os.path.exists(path):
                continue
            with open(path) as f:
                est = json.load(f)
            out.setdefault(a, {})[live] = est["median"]["point_estimate"] / STEPS
    return out


def table(data):
    names = [a for a in data if a not in ALLOCATORS] + ALLOCATORS
    lines = ["| live spans | " + " | ".join(names) + " | span/rlsf | span/mimalloc | span/glibc |",
             "|---" * (len(names) + 4) + "|"]
    for name, live in SIZES:
        row = [f"{live:,}".replace(",", " ")]
        vals = {a: data.get(a, {}).get(live) for a in names}
        row += ["-" if v is None else f"{v:.1f}" for v in vals.values()]
        s = vals["span_unchecked"]
        for peer in ("rlsf", "mimalloc", "glibc"):
            p = vals[peer]
            row.append("-" if s is None or p is None else f"{s / p:.2f}x")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def svg(data):
    w, h, left, right, top, bottom = 720, 400, 70, 230, 30, 50
    xs = [live for _, live in SIZES]
    ys = [v for a in data.values() for v in a.values()]
    if not ys:
        return ""
    y_lo = 10 ** math.floor(math.log10(min(ys)))
    y_hi = 10 ** math.ceil(math.log10(max(ys)))

    def px(x):
        return left + (math.log10(x) - 3) / 3 * (w - left - right)

    def py(y):
        return top + (1 - (math.log10(y) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo))) * (h - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">Churn: ns per step (free one + allocate one) against live spans</text>']
    for x in xs:
        out.append(f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{h - bottom}" stroke="#ddd"/>')
        out.append(f'<text x="{px(x):.1f}" y="{h - bottom + 16}" text-anchor="middle">{x:,}</text>')
    d = y_lo
    while d <= y_hi * 1.0001:
        out.append(f'<line x1="{left}" y1="{py(d):.1f}" x2="{w - right}" y2="{py(d):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{py(d) + 4:.1f}" text-anchor="end">{d:g}</text>')
        d *= 10
    out.append(f'<text x="{(left + w - right) / 2:.1f}" y="{h - 12}" text-anchor="middle">live spans (log)</text>')
    out.append(f'<text x="16" y="{(top + h - bottom) / 2:.1f}" transform="rotate(-90 16 {(top + h - bottom) / 2:.1f})" text-anchor="middle">ns per step (log)</text>')
    for i, a in enumerate(ALLOCATORS + [a for a in data if a not in ALLOCATORS]):
        pts = sorted(data.get(a, {}).items())
        if not pts:
            continue
        c = COLOURS[a]
        dash = ' stroke-dasharray="6 4"' if "before" in a else ""
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        for x, y in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"/>')
        ly = top + 10 + 20 * i
        out.append(f'<line x1="{w - right + 15}" y1="{ly}" x2="{w - right + 35}" y2="{ly}" stroke="{c}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{w - right + 40}" y="{ly + 4}">{a}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    root = "target/criterion"
    out_svg = None
    before = None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--svg":
            if not args:
                sys.exit("--svg needs a file name")
            out_svg = args.pop(0)
        elif a == "--before":
            if not args:
                sys.exit("--before needs a directory")
            before = args.pop(0)
        elif a.startswith("-"):
            sys.exit(f"unknown option {a}")
        else:
            root = a
    data = load(root)
    if not data:
        sys.exit(f"no scale_* estimates under {root}: run `cargo bench --bench span_pool -- scale` first")
    if before:
        old = load(before).get("span_unchecked")
        if not old:
            sys.exit(f"no span_unchecked scale estimates under {before}")
        data = {"span_unchecked (before)": old, **data}
    print(table(data))
    if out_svg:
        if os.path.exists(out_svg):
            sys.exit(f"{out_svg} exists: not overwritten")
        with open(out_svg, "w") as f:
            f.write(svg(data))


if __name__ == "__main__":
    main(sys.argv[1:])
