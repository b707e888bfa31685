"""Line charts as standalone SVG files for the benchmark scripts (no plotting library needed).

line_chart(path, series, xs, title, xlabel, ylabel): one polyline per series over the categorical
x values `xs` (equally spaced); `series` maps a name to {x: y}. Series whose name mentions
llama.cpp are dashed, so the anchor stands apart from wisp's lines."""

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
