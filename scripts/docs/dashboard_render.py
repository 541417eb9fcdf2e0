"""Draws the dashboard's panels from evaluated queries (dashboard_prom.evaluate) with matplotlib,
in the dashboard's own grid (each panel's gridPos: 24 columns; rows of Grafana's 30 px), in
Grafana's dark colours, with the run's disturbances as annotations. Used by dashboard_run.py.
"""
import datetime
import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator  # noqa: E402
from PIL import Image  # noqa: E402 (matplotlib's own dependency)

BG, PANEL, GRID, TEXT, DIM = "#111217", "#181b1f", "#2c3235", "#ccccdc", "#8e8e9e"
# Grafana's classic palette, in its order.
COLOURS = ["#73bf69", "#f2cc0c", "#8ab8ff", "#ff780a", "#f2495c", "#5794f2", "#b877d9", "#705da0", "#37872d", "#fade2a"]
ANNOT = ["#f2495c", "#ff9830"]
CELL_W, CELL_H = 0.62, 0.36  # inches per grid column, per grid row
HEADER = 1.05  # inches above the grid


def _si(v, unit):
    """A value in the panel's unit, the way Grafana writes axis ticks."""
    if unit == "s":
        a = abs(v)
        if a == 0:
            return "0 s"
        if a < 1e-3:
            return f"{v * 1e6:.0f} µs"
        if a < 1:
            return f"{v * 1e3:.0f} ms"
        return f"{v:.1f} s" if a < 10 else f"{v:.0f} s"
    suffix = " ops/s" if unit == "ops" else ""
    if abs(v) >= 1000:
        return f"{v / 1000:.1f}K{suffix}"
    return f"{v:.2f}".rstrip("0").rstrip(".") + suffix if v % 1 else f"{v:.0f}{suffix}"


def _with_gaps(ts, vs, step):
    """The series as datetimes, with a NaN where samples are missing (a target that could not be
    scraped): Grafana leaves a gap there rather than drawing a line across it."""
    t, v = [], []
    for i, (x, y) in enumerate(zip(ts, vs)):
        if i and x - ts[i - 1] > 1.5 * step:
            t.append(datetime.datetime.fromtimestamp((x + ts[i - 1]) / 2, datetime.timezone.utc))
            v.append(float("nan"))
        t.append(datetime.datetime.fromtimestamp(x, datetime.timezone.utc))
        v.append(y)
    return t, v


def _panel(fig, panel, rows, data, annotations):
    g = panel["gridPos"]
    total_w, total_h = 24 * CELL_W, rows * CELL_H + HEADER
    pad = 0.05
    # The panel's box (figure fractions), then the plot inside it, leaving room for the title
    # above, the y labels to the left and the legend below.
    x0, x1 = g["x"] * CELL_W + pad, (g["x"] + g["w"]) * CELL_W - pad
    ytop = total_h - HEADER - g["y"] * CELL_H - pad
    ybot = total_h - HEADER - (g["y"] + g["h"]) * CELL_H + pad
    box = fig.add_axes([x0 / total_w, ybot / total_h, (x1 - x0) / total_w, (ytop - ybot) / total_h])
    box.set_facecolor(PANEL)
    box.set_xticks([])
    box.set_yticks([])
    for s in box.spines.values():
        s.set_color(GRID)
    box.text(0.012, 0.975, panel["title"], transform=box.transAxes, ha="left", va="top", color=TEXT, fontsize=10.5, fontweight="bold")
    series = [s for s in panel["series"] if any(not math.isnan(v) for v in s["v"])]
    legend_rows = math.ceil(len(series) / 3)
    legend_h = 0.16 + 0.17 * legend_rows
    ax = fig.add_axes([(x0 + 0.72) / total_w, (ybot + legend_h + 0.22) / total_h,
                       (x1 - x0 - 0.9) / total_w, (ytop - ybot - legend_h - 0.22 - 0.34) / total_h])
    ax.set_facecolor(PANEL)
    unit = (panel.get("fieldConfig") or {}).get("defaults", {}).get("unit", "short")
    for i, s in enumerate(series):
        t, v = _with_gaps(s["t"], s["v"], data["step"])
        ax.plot(t, v, color=COLOURS[i % len(COLOURS)], linewidth=1.3, label=s["legend"])
    for i, (_, a, b) in enumerate(annotations):
        ax.axvspan(datetime.datetime.fromtimestamp(a, datetime.timezone.utc), datetime.datetime.fromtimestamp(b, datetime.timezone.utc),
                   color=ANNOT[i % len(ANNOT)], alpha=0.13, linewidth=0)
    start = datetime.datetime.fromtimestamp(data["start"], datetime.timezone.utc)
    end = datetime.datetime.fromtimestamp(data["end"], datetime.timezone.utc)
    ax.set_xlim(start, end)
    values = [v for s in series for v in s["v"] if not math.isnan(v)]
    top = max(values, default=0)
    if min(values, default=0) >= 0:  # Grafana's soft minimum 0, and an all-zero panel 0 to 1
        ax.set_ylim(0, top * 1.08 if top > 0 else 1)
    ax.grid(color=GRID, linewidth=0.6)
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S", tz=datetime.timezone.utc))
    # Every 30 s, none in the first 10 s (where a label would run into the y axis' "0").
    first = math.ceil((data["start"] + 10) / 30) * 30
    ax.set_xticks([datetime.datetime.fromtimestamp(x, datetime.timezone.utc) for x in range(first, int(data["end"]) + 1, 30)])
    ax.yaxis.set_major_locator(MaxNLocator(4))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _si(v, unit)))
    ax.tick_params(colors=DIM, labelsize=8, length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    if series:
        ax.legend(loc="upper left", bbox_to_anchor=(0, -0.13), ncol=3, frameon=False, fontsize=8, labelcolor=TEXT,
                  handlelength=1.2, columnspacing=1.2, borderaxespad=0)


def render(data, out):
    """Writes the PNG `out` (a 64-colour palette image: the picture has few colours, and the
    docs want it small)."""
    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in data["panels"])
    fig = plt.figure(figsize=(24 * CELL_W, rows * CELL_H + HEADER), dpi=96, facecolor=BG)
    start = datetime.datetime.fromtimestamp(data["start"], datetime.timezone.utc)
    span = data["end"] - data["start"]
    fig.text(0.01, 1 - 0.3 / fig.get_figheight(), "etcdlock — docs/grafana/etcdlock.json", color=TEXT, fontsize=14, fontweight="bold", va="top")
    fig.text(0.01, 1 - 0.62 / fig.get_figheight(),
             f"Rendered from the dashboard's own queries against a real run (scripts/docs/dashboard-picture.sh), not a Grafana screenshot. "
             f"{start:%Y-%m-%d %H:%M:%S} UTC + {span / 60:.1f} min; step {data['step']} s, $__rate_interval = {data['vars']['__rate_interval']}.",
             color=DIM, fontsize=9, va="top")
    x = 0.01
    for i, (label, _, _) in enumerate(data["annotations"]):
        t = fig.text(x, 1 - 0.88 / fig.get_figheight(), f"■ {label}", color=ANNOT[i % len(ANNOT)], fontsize=9, va="top")
        fig.canvas.draw()
        x = t.get_window_extent().transformed(fig.transFigure.inverted()).x1 + 0.02
    for panel in data["panels"]:
        _panel(fig, panel, rows, data, data["annotations"])
    buf = io.BytesIO()
    fig.savefig(buf, format="png", facecolor=BG)
    plt.close(fig)
    buf.seek(0)
    Image.open(buf).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
