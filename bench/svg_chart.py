"""Charts as standalone SVG files for the benchmark scripts (no plotting library needed).

line_chart(path, series, xs, title, xlabel, ylabel): one polyline per series over the categorical
x values `xs` (equally spaced); `series` maps a name to {x: y}. Series whose name mentions
llama.cpp are dashed, so the anchor stands apart from wisp's lines.

scatter_chart(path, series, title, xlabel, ylabel): points on a log-scaled x axis and a linear y
axis; `series` maps a name to [(x, y, label)], each point drawn with its label beside it (empty:
none). Series whose name mentions llama.cpp get hollow markers.

bar_chart(path, panels, title, ylabel): panels side by side, each `{series: {category: y}}` under its
own name and y scale; per category one bar per series (categories in first-seen order, their
names slanted under the axis). Series whose name mentions llama.cpp get hollow bars."""
import math

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


def line_chart(path, series, xs, title, xlabel, ylabel):
    W, H, left, top, pw, ph = 760, 460, 80, 60, 560, 320
    ymax = max((v for s in series.values() for v in s.values()), default=1.0) * 1.1 or 1.0
    X = lambda i: left + pw * i / max(1, len(xs) - 1)
    Y = lambda v: top + ph - ph * v / ymax
    o = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{W}' height='{H}' font-family='sans-serif'>",
         "<rect width='100%' height='100%' fill='white'/>",
         f"<text x='{W/2}' y='30' font-size='17' text-anchor='middle'>{title}</text>",
         f"<rect x='{left}' y='{top}' width='{pw}' height='{ph}' fill='none' stroke='black'/>"]
    for k in range(6):
        v = ymax * k / 5
        label = f"{v:.0f}" if ymax >= 10 else f"{v:.2f}"
        o.append(f"<line x1='{left}' y1='{Y(v):.1f}' x2='{left+pw}' y2='{Y(v):.1f}' stroke='#ddd'/>"
                 f"<text x='{left-6}' y='{Y(v)+4:.1f}' font-size='12' text-anchor='end'>{label}</text>")
    for i, b in enumerate(xs):
        o.append(f"<text x='{X(i):.1f}' y='{top+ph+18}' font-size='12' text-anchor='middle'>{b}</text>")
    o.append(f"<text x='{left+pw/2}' y='{top+ph+40}' font-size='13' text-anchor='middle'>{xlabel}</text>")
    o.append(f"<text x='25' y='{top+ph/2}' font-size='13' text-anchor='middle' transform='rotate(-90 25 {top+ph/2})'>"
             f"{ylabel}</text>")
    for j, (name, s) in enumerate(series.items()):
        c = COLORS[j % len(COLORS)]
        dash = " stroke-dasharray='6 4'" if "llama.cpp" in name else ""
        pts = " ".join(f"{X(i):.1f},{Y(s[b]):.1f}" for i, b in enumerate(xs) if b in s)
        o.append(f"<polyline points='{pts}' fill='none' stroke='{c}' stroke-width='2'{dash}/>")
        for i, b in enumerate(xs):
            if b in s:
                o.append(f"<circle cx='{X(i):.1f}' cy='{Y(s[b]):.1f}' r='3.5' fill='{c}'/>")
        o.append(f"<text x='{left+10}' y='{top+18+16*j}' font-size='12' fill='{c}'>{name}</text>")
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def scatter_chart(path, series, title, xlabel, ylabel):
    W, H, left, top, pw, ph = 860, 560, 80, 60, 620, 400
    pts = [p for s in series.values() for p in s if p[0] > 0]
    lo = math.floor(math.log10(min((p[0] for p in pts), default=0.01)))
    hi = math.ceil(math.log10(max((p[0] for p in pts), default=1.0)))
    hi = max(hi, lo + 1)
    ymax = max((p[1] for p in pts), default=1.0) * 1.1 or 1.0
    X = lambda v: left + pw * (math.log10(v) - lo) / (hi - lo)
    Y = lambda v: top + ph - ph * v / ymax
    o = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{W}' height='{H}' font-family='sans-serif'>",
         "<rect width='100%' height='100%' fill='white'/>",
         f"<text x='{left+pw/2}' y='30' font-size='17' text-anchor='middle'>{title}</text>",
         f"<rect x='{left}' y='{top}' width='{pw}' height='{ph}' fill='none' stroke='black'/>"]
    for k in range(6):
        v = ymax * k / 5
        o.append(f"<line x1='{left}' y1='{Y(v):.1f}' x2='{left+pw}' y2='{Y(v):.1f}' stroke='#ddd'/>"
                 f"<text x='{left-6}' y='{Y(v)+4:.1f}' font-size='12' text-anchor='end'>{v:.0f}</text>")
    for e in range(lo, hi + 1):
        x = X(10.0 ** e)
        o.append(f"<line x1='{x:.1f}' y1='{top}' x2='{x:.1f}' y2='{top+ph}' stroke='#ddd'/>"
                 f"<text x='{x:.1f}' y='{top+ph+18}' font-size='12' text-anchor='middle'>{10.0 ** e:g}</text>")
    o.append(f"<text x='{left+pw/2}' y='{top+ph+40}' font-size='13' text-anchor='middle'>{xlabel}</text>")
    o.append(f"<text x='25' y='{top+ph/2}' font-size='13' text-anchor='middle' transform='rotate(-90 25 {top+ph/2})'>"
             f"{ylabel}</text>")
    for j, (name, s) in enumerate(series.items()):
        c = COLORS[j % len(COLORS)]
        fill = "white" if "llama.cpp" in name else c
        for x, y, label in s:
            if x <= 0:
                continue
            o.append(f"<circle cx='{X(x):.1f}' cy='{Y(y):.1f}' r='4.5' fill='{fill}' stroke='{c}' stroke-width='2'/>")
            if label:
                o.append(f"<text x='{X(x)+7:.1f}' y='{Y(y)-6:.1f}' font-size='10' fill='{c}'>{label}</text>")
        o.append(f"<circle cx='{left+pw-230}' cy='{top+14+16*j}' r='4.5' fill='{fill}' stroke='{c}' stroke-width='2'/>"
                 f"<text x='{left+pw-220}' y='{top+18+16*j}' font-size='12' fill='{c}'>{name}</text>")
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def bar_chart(path, panels, title, ylabel):
    cats_of = {p: list(dict.fromkeys(c for s in panel.values() for c in s)) for p, panel in panels.items()}
    names = list(dict.fromkeys(n for panel in panels.values() for n in panel))
    pw = max(240, max((len(c) for c in cats_of.values()), default=1) * 22 * max(1, len(names)))
    left, top, ph, gap = 170, 80, 320, 60
    W, H = left + len(panels) * (pw + gap), top + ph + 230
    o = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{W}' height='{H}' font-family='sans-serif'>",
         "<rect width='100%' height='100%' fill='white'/>",
         f"<text x='{W/2}' y='28' font-size='17' text-anchor='middle'>{title}</text>"]
    for j, n in enumerate(names):
        c = COLORS[j % len(COLORS)]
        fill = "white" if "llama.cpp" in n else c
        o.append(f"<rect x='{left + 180*j}' y='42' width='12' height='12' fill='{fill}' stroke='{c}' stroke-width='2'/>"
                 f"<text x='{left + 180*j + 18}' y='53' font-size='12' fill='{c}'>{n}</text>")
    for k, (pname, panel) in enumerate(panels.items()):
        x0, cats = left + k * (pw + gap), cats_of[pname]
        ymax = max((v for s in panel.values() for v in s.values()), default=1.0) * 1.1 or 1.0
        Y = lambda v: top + ph - ph * v / ymax
        o.append(f"<text x='{x0 + pw/2}' y='{top - 8}' font-size='14' text-anchor='middle'>{pname}</text>")
        o.append(f"<rect x='{x0}' y='{top}' width='{pw}' height='{ph}' fill='none' stroke='black'/>")
        for t in range(6):
            v = ymax * t / 5
            label = f"{v:.0f}" if ymax >= 50 else f"{v:.1f}"
            o.append(f"<line x1='{x0}' y1='{Y(v):.1f}' x2='{x0+pw}' y2='{Y(v):.1f}' stroke='#ddd'/>"
                     f"<text x='{x0-6}' y='{Y(v)+4:.1f}' font-size='11' text-anchor='end'>{label}</text>")
        slot = pw / max(1, len(cats))
        bw = slot * 0.8 / max(1, len(names))
        for i, cat in enumerate(cats):
            cx = x0 + slot * (i + 0.5)
            for j, n in enumerate(names):
                v = panel.get(n, {}).get(cat)
                if v is None:
                    continue
                c = COLORS[j % len(COLORS)]
                fill = "white" if "llama.cpp" in n else c
                x = cx - slot * 0.4 + j * bw
                o.append(f"<rect x='{x:.1f}' y='{Y(v):.1f}' width='{bw:.1f}' height='{top + ph - Y(v):.1f}' "
                         f"fill='{fill}' stroke='{c}' stroke-width='1.5'/>")
            o.append(f"<text x='{cx:.1f}' y='{top+ph+14}' font-size='11' text-anchor='end' "
                     f"transform='rotate(-40 {cx:.1f} {top+ph+14})'>{cat}</text>")
        if k == 0:
            o.append(f"<text x='{left-45}' y='{top+ph/2}' font-size='13' text-anchor='middle' "
                     f"transform='rotate(-90 {left-45} {top+ph/2})'>{ylabel}</text>")
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")
