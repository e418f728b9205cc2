#!/usr/bin/env python3
"""Sweep curves of `schedlab sweep --plot DIR` (Debian: python3-matplotlib).

usage: sweep_plots.py SWEEP_DIR/sweep.json OUTDIR

Writes OUTDIR/sweep_curves.png: one panel per metric, the metric's mean
over runs (with its 95% bootstrap interval) against the first swept key
path, one line per variant (and per combination of the other swept key
paths). Values that are not numbers are placed at equal spacing and
labelled as written. Statistics come from sweep.json; this script only draws.
"""
import os

from plot_common import panel_grid, plt, read_input

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def main():
    data, out = read_input(__doc__, "schedlab.sweep", "a schedlab sweep.json")
    axes_def = data["axes"]
    metrics = data["metrics"]
    if not axes_def or not metrics:
        return
    x_axis = axes_def[0]
    numeric = all(n is not None for n in x_axis["numbers"])
    x_of = {t: (n if numeric else i) for i, (t, n) in enumerate(zip(x_axis["values"], x_axis["numbers"]))}

    # A line per (variant, values of the other axes).
    lines = {}
    for p in data["points"]:
        key = (p["variant"],) + tuple(p["values"][1:])
        lines.setdefault(key, []).append(p)
    multi_variant = len(data["variants"]) > 1

    fig, axes = panel_grid(len(metrics), 5.0, 3.6)
    for mi, (ax, metric) in enumerate(zip(axes.flat, metrics)):
        for li, (key, pts) in enumerate(lines.items()):
            xs, ys, lo, hi = [], [], [], []
            for p in pts:
                st = next((s for s in p["metrics"] if s["name"] == metric["name"]), None)
                if st is None or st["mean"] is None:
                    continue
                xs.append(x_of[p["values"][0]])
                ys.append(st["mean"])
                lo.append(st["mean"] - (st["ci_low"] if st["ci_low"] is not None else st["mean"]))
                hi.append((st["ci_high"] if st["ci_high"] is not None else st["mean"]) - st["mean"])
            if not xs:
                continue
            order = sorted(range(len(xs)), key=lambda i: xs[i])
            label_parts = []
            if multi_variant:
                label_parts.append(key[0])
            label_parts += [f'{a["path"]}={v}' for a, v in zip(axes_def[1:], key[1:])]
            ax.errorbar([xs[i] for i in order], [ys[i] for i in order],
                        yerr=[[lo[i] for i in order], [hi[i] for i in order]],
                        color=COLORS[li % len(COLORS)], marker=MARKERS[li % len(MARKERS)], ms=4, lw=1.5,
                        capsize=3, label=", ".join(label_parts) or None)
        unit = f' ({metric["unit"]})' if metric["unit"] else ""
        ax.set_title(metric["name"] + unit, fontsize=10)
        ax.set_xlabel(x_axis["path"] + (" (s)" if x_axis["unit"] == "s" else ""))
        if not numeric:
            ax.set_xticks(list(x_of.values()))
            ax.set_xticklabels(list(x_of.keys()))
        ax.grid(True, alpha=0.3)
        if mi == 0 and (multi_variant or len(axes_def) > 1):
            ax.legend(fontsize=8)
    s = data["sweep"]
    fig.suptitle(f'{s["name"]}: mean over {s["runs"]} runs per point, 95% bootstrap interval', fontsize=12)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sweep_curves.png"), dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
