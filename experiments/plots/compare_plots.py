#!/usr/bin/env python3
"""Plots of `schedlab compare --plot DIR` (Debian: python3-matplotlib).

usage: compare_plots.py COMPARE_DATA.json OUTDIR

Reads the plot data schedlab writes (render_compare_plot_data: quantiles
and changes are computed in C++; this script only draws) and writes
  OUTDIR/latency_cdf.png  wakeup-latency CDF of every task group with
                          wakeups, one line per variant (pooled over runs)
  OUTDIR/changes.png      every metric's change against the baseline with
                          its 95% bootstrap interval; grey = interval
                          includes 0 (noise)
"""
import os

from plot_common import panel_grid, plt, read_input

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def all_zero(group):
    return all(x in (None, 0) for v in group["variants"] for x in v["latency_us"])


def latency_cdfs(data, out):
    # A group whose every wakeup ran at once (e.g. the highest RT task) has
    # nothing to draw: name it below the figure instead.
    skipped = [g["group"] for g in data["latency_quantiles"] if all_zero(g)]
    groups = [g for g in data["latency_quantiles"] if not all_zero(g)]
    if not groups:
        return
    fig, axes = panel_grid(len(groups), 4.6, 3.4)
    for ax, g in zip(axes.flat, groups):
        levels = g["levels_pct"]
        for i, v in enumerate(g["variants"]):
            xs = [x for x in v["latency_us"]]
            pts = [(x, q) for x, q in zip(xs, levels) if x is not None]
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=COLORS[i % len(COLORS)], lw=1.6,
                    drawstyle="steps-post", label=f'{v["variant"]} ({v["samples"]} wakeups)')
        ax.set_title(g["group"], fontsize=11)
        ax.set_xlabel("wakeup latency (us)")
        ax.set_ylabel("% of wakeups at or below")
        ax.set_ylim(0, 100.5)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f'{data["experiment"]}: wakeup latency CDF per task group '
                 f'({data["scenario"]}, {data["runs"]} runs per variant, pooled)', fontsize=12)
    if skipped:
        fig.text(0.01, 0.005, "not shown (every wakeup at 0 us in every variant): " + ", ".join(skipped),
                 fontsize=8, color="0.3")
    fig.tight_layout(rect=(0, 0.02 if skipped else 0, 1, 1))
    fig.savefig(os.path.join(out, "latency_cdf.png"), dpi=110)
    plt.close(fig)


def changes(data, out):
    rows = [c for c in data["changes"]]
    if not rows:
        return
    variants = [v for v in data["variants"][1:]]
    metrics = []
    for c in rows:
        if c["metric"] not in metrics:
            metrics.append(c["metric"])
    height = 0.8 / max(1, len(variants))
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(metrics) * max(1, len(variants)) + 1.6))
    for vi, v in enumerate(variants):
        for mi, m in enumerate(metrics):
            c = next((r for r in rows if r["metric"] == m and r["variant"] == v), None)
            y = mi + (vi - (len(variants) - 1) / 2) * height
            if c is None or c["change_pct"] is None:
                ax.text(0, y, " n/a", va="center", fontsize=8, color="0.4")
                continue
            noise = c["noise"]
            color = "0.7" if noise else COLORS[vi % len(COLORS)]
            ax.barh(y, c["change_pct"], height=height * 0.9, color=color,
                    label=v if mi == 0 else None)
            if c["ci_low_pct"] is not None or c["ci_high_pct"] is not None:
                # A null bound beside a number is infinite: no whisker on that side.
                lo = c["ci_low_pct"] if c["ci_low_pct"] is not None else c["change_pct"]
                hi = c["ci_high_pct"] if c["ci_high_pct"] is not None else c["change_pct"]
                ax.errorbar(c["change_pct"], y, xerr=[[c["change_pct"] - lo], [hi - c["change_pct"]]],
                            fmt="none", ecolor="black", capsize=3, lw=1)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(metrics)))
    ax.set_yticklabels(metrics, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f'change vs {data["variants"][0]} (%), with 95% bootstrap interval; grey: interval includes 0')
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    ax.set_title(f'{data["experiment"]}: changes against {data["variants"][0]} ({data["runs"]} runs per variant)')
    fig.tight_layout()
    fig.savefig(os.path.join(out, "changes.png"), dpi=110)
    plt.close(fig)


def main():
    data, out = read_input(__doc__, "schedlab.compare.plotdata", "schedlab compare plot data")
    latency_cdfs(data, out)
    changes(data, out)


if __name__ == "__main__":
    main()
