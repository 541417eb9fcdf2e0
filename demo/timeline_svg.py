"""Draws the demo's timeline as an SVG Gantt chart: one row per worker, a bar per hold."""
from __future__ import annotations

from html import escape

import checks

FILL = {"rust": "#e8772e", "python": "#3572a5", "node": "#3c873a", "c": "#8e44ad", "etcdctl": "#16a0b5", "cli": "#b58900"}
ROW, LEFT, TOP, WIDTH = 26, 110, 54, 1100


def write(path: str, run, done: dict) -> None:
    events = run.events
    labels = sorted({e["label"] for e in events}, key=lambda l: (l == "etcdctl", l))
    end_ns = max((e["t"] for e in events), default=run.t0)
    span = max(1e-9, (end_ns - run.t0) / 1e9)
    x = lambda t_ns: LEFT + (t_ns - run.t0) / 1e9 / span * (WIDTH - LEFT - 20)
    y = {l: TOP + i * ROW for i, l in enumerate(labels)}
    height = TOP + len(labels) * ROW + 60 + 15 * len(run.narration)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
           f'<text x="{LEFT}" y="20" font-size="14" font-weight="bold">etcdlock demo: who held the lock (bars, with fencing tokens), '
           f'who waited (grey)</text>']
    for s in range(0, int(span) + 1, max(1, int(span // 12) or 1)):
        xs = x(run.t0 + s * 1e9)
        out.append(f'<line x1="{xs:.1f}" y1="{TOP - 8}" x2="{xs:.1f}" y2="{TOP + len(labels) * ROW}" stroke="#eee"/>')
        out.append(f'<text x="{xs:.1f}" y="{TOP - 12}" text-anchor="middle" fill="#666">{s}s</text>')
    for l in labels:
        lang = next(e["lang"] for e in events if e["label"] == l)
        out.append(f'<text x="{LEFT - 8}" y="{y[l] + 15}" text-anchor="end" fill="{FILL.get(lang, "#333")}">{escape(l)}</text>')
    # Waits: from "waiting" to the matching "acquired".
    waiting = {}
    for e in sorted(events, key=lambda e: e["t"]):
        if e["ev"] == "waiting":
            waiting[e["label"]] = e["t"]
        elif e["ev"] == "acquired" and e["label"] in waiting:
            s = waiting.pop(e["label"])
            out.append(f'<rect x="{x(s):.1f}" y="{y[e["label"]] + 9}" width="{max(0.5, x(e["t"]) - x(s)):.1f}" height="4" fill="#ccc"/>')
    for s, t_end, a in checks.intervals(events, done):
        w = max(1.5, x(t_end) - x(s))
        out.append(f'<rect x="{x(s):.1f}" y="{y[a["label"]] + 3}" width="{w:.1f}" height="16" rx="2" '
                   f'fill="{FILL.get(a["lang"], "#333")}"><title>{escape(a["label"])} token {a["token"]}</title></rect>')
        if w > 28:
            out.append(f'<text x="{x(s) + 3:.1f}" y="{y[a["label"]] + 15}" fill="white" font-size="9">{a["token"]}</text>')
    for e in events:
        if e["ev"] in ("lost", "write_refused"):
            sym, what = ("✗", "learned it lost the lock") if e["ev"] == "lost" else ("⊘", "guarded write refused")
            dy = 16 if e["ev"] == "lost" else 2
            out.append(f'<text x="{x(e["t"]) + 2:.1f}" y="{y[e["label"]] + dy}" fill="#c0392b" font-size="13" '
                       f'font-weight="bold">{sym}<title>{escape(e["label"])}: {what}</title></text>')
    # Episodes: numbered markers on the chart, explained in a legend below it.
    base = TOP + len(labels) * ROW + 18
    for i, (t, text) in enumerate(run.narration, start=1):
        xs = x(run.t0 + t * 1e9)
        out.append(f'<line x1="{xs:.1f}" y1="{TOP - 4}" x2="{xs:.1f}" y2="{TOP + len(labels) * ROW}" stroke="#c0392b" stroke-dasharray="3,3"/>')
        out.append(f'<circle cx="{xs:.1f}" cy="{TOP + len(labels) * ROW + 6}" r="7" fill="#c0392b"/>')
        out.append(f'<text x="{xs:.1f}" y="{TOP + len(labels) * ROW + 10}" text-anchor="middle" fill="white" font-size="10">{i}</text>')
        out.append(f'<text x="{LEFT}" y="{base + i * 15}" fill="#333">{i}. {t:.1f}s — {escape(text)}</text>')
    legend_y = base + (len(run.narration) + 1) * 15 + 4
    out.append(f'<text x="{LEFT}" y="{legend_y}" fill="#666">bar = holding (fencing token inside) · grey = waiting · '
               f'✗ = the holder learned it lost the lock · ⊘ = its guarded write was refused</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
