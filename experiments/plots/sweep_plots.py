#!/usr/bin/env python3
"""Sweep curves of `schedlab sweep --plot DIR` (Debian: python3-matplotlib).

usage: sweep_plots.py SWEEP_DIR/sweep.json OUTDIR

Writes OUTDIR/sweep_curves.png: one panel per metric, the metric's mean
over runs (with its 95% bootstrap interval) against the first swept key
path, one line per variant (and per combination of the other swept key
paths). Values that are not numbers are placed at equal spacing and
labelled as written. Statistics come from sweep.json; this script only draws.

With `sweep --why`, also OUTDIR/sweep_why.png: how the kernel's reasons
move along the sweep. A panel per (decision kind, task group or CPU) whose
reasons' shares swing the most across the points (at least 10 percentage
points, and 5 binomial standard errors; the six largest against that
noise), each reason's share of that group's decisions of that kind
against the first swept key path: a colour per reason (those that swing
at least 5 points and 5 standard errors, at most four), a line style per
variant (and per value of the other swept key paths).
"""
import math
import os

from plot_common import panel_grid, plt, read_input

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
STYLES = ["-", "--", ":", "-."]
MIN_PANEL_SWING = 10.0   # percentage points
MIN_REASON_SWING = 5.0
MIN_Z = 5.0              # the swing against binomial noise at its two ends
MAX_PANELS = 6
MAX_REASONS = 4


def shares_by_point(points):
    """{(kind, group): ({point id: decisions}, {reason: {point id: share %}})}
    from each point's decisions (summed over its runs). A point where the
    group took no decision of that kind is absent (not a share of 0)."""
    out = {}
    for p in points:
        totals = {}
        for d in p["decisions"]:
            totals[(d["kind"], d["group"])] = totals.get((d["kind"], d["group"]), 0) + d["count"]
        for key, n in totals.items():
            out.setdefault(key, ({}, {}))[0][p["id"]] = n
        for d in p["decisions"]:
            key = (d["kind"], d["group"])
            out[key][1].setdefault(d["reason"], {})[p["id"]] = 100.0 * d["count"] / totals[key]
    return out


def swing_of(by_point, totals):
    """(max - min share over the points where the group decided, z): z
    compares that swing with the binomial standard error at its two ends."""
    values = [(by_point.get(i, 0.0), n) for i, n in totals.items()]
    if len(values) < 2:
        return 0.0, 0.0
    hi = max(values)
    lo = min(values)
    pooled = (hi[0] * hi[1] + lo[0] * lo[1]) / (hi[1] + lo[1]) / 100.0
    se = 100.0 * math.sqrt(max(pooled * (1 - pooled), 1e-12) * (1.0 / hi[1] + 1.0 / lo[1]))
    return hi[0] - lo[0], (hi[0] - lo[0]) / se


def time_scale(x_axis, numeric):
    """(factor, unit) showing a swept duration (stored in seconds) in the
    largest unit in which its biggest value is at least 1: a sweep of
    25us..400us reads in us, not as 0.000025..0.0004 s."""
    if not numeric or x_axis["unit"] != "s":
        return 1.0, x_axis["unit"]
    top = max(abs(n) for n in x_axis["numbers"])
    for factor, unit in ((1.0, "s"), (1e3, "ms"), (1e6, "us")):
        if top * factor >= 1:
            return factor, unit
    return 1e9, "ns"


def x_label(x_axis, unit):
    return x_axis["path"] + (f" ({unit})" if unit else "")


def draw_why(data, out, lines, x_axis, x_of, numeric, x_unit):
    panels = []
    for key, (totals, reasons) in shares_by_point(data["points"]).items():
        scored = [(swing_of(by_point, totals), reason, by_point) for reason, by_point in reasons.items()]
        shown = sorted((t for t in scored if t[0][0] >= MIN_REASON_SWING and t[0][1] >= MIN_Z),
                       key=lambda t: (-t[0][1], t[1]))[:MAX_REASONS]
        if shown and shown[0][0][0] >= MIN_PANEL_SWING:
            panels.append((shown[0][0][1], key, totals, shown))
    panels.sort(key=lambda t: (-t[0], t[1]))
    panels = panels[:MAX_PANELS]
    if not panels:
        return
    fig, axes = panel_grid(len(panels), 6.0, 4.2)
    multi_line = len(lines) > 1
    for pi, (ax, (_, (kind, group), totals, shown)) in enumerate(zip(axes.flat, panels)):
        for ri, (_, reason, by_point) in enumerate(shown):
            for li, pts in enumerate(lines.values()):
                order = sorted((p for p in pts if p["id"] in totals), key=lambda p: x_of[p["values"][0]])
                ax.plot([x_of[p["values"][0]] for p in order], [by_point.get(p["id"], 0.0) for p in order],
                        color=COLORS[ri % len(COLORS)], ls=STYLES[li % len(STYLES)],
                        marker=MARKERS[ri % len(MARKERS)], ms=4, lw=1.5,
                        label=(reason if len(reason) <= 60 else reason[:57] + "...") if li == 0 else None)
        if pi == 0 and multi_line:  # which line style is which variant (and other swept values)
            for li, key in enumerate(lines):
                ax.plot([], [], color="black", ls=STYLES[li % len(STYLES)], label=", ".join(str(k) for k in key))
        ax.set_title(f"{kind}: {group}", fontsize=10)
        ax.set_ylabel("share of the group's decisions (%)")
        ax.set_xlabel(x_label(x_axis, x_unit))
        ax.set_ylim(-2, 102)
        if not numeric:
            ax.set_xticks(list(x_of.values()))
            ax.set_xticklabels(list(x_of.keys()))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    s = data["sweep"]
    fig.suptitle(f'{s["name"]}: why (--why), the reasons that move most along the sweep; '
                 f'summed over {s["runs"]} runs per point', fontsize=12)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sweep_why.png"), dpi=110)
    plt.close(fig)


def main():
    data, out = read_input(__doc__, "schedlab.sweep", "a schedlab sweep.json")
    axes_def = data["axes"]
    metrics = data["metrics"]
    if not axes_def or not metrics:
        return
    x_axis = axes_def[0]
    numeric = all(n is not None for n in x_axis["numbers"])
    factor, x_unit = time_scale(x_axis, numeric)
    x_of = {t: (n * factor if numeric else i) for i, (t, n) in enumerate(zip(x_axis["values"], x_axis["numbers"]))}

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
        ax.set_xlabel(x_label(x_axis, x_unit))
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
    if any("decisions" in p for p in data["points"]):
        draw_why(data, out, lines, x_axis, x_of, numeric, x_unit)


if __name__ == "__main__":
    main()
