#!/usr/bin/env python3
"""Print the pm_wq WQ_HIGHPRI study in the shape of the thread's tables.

Reads the JSON of `schedlab compare configs/experiments/pm_wq_highpri_X.yaml
--json FILE` (one file per platform) and prints, for each, the thread's rows
(../../../shared/seeds/pm_wq_highpri.md): the simulated nice 0 and WQ_HIGHPRI
values and change beside the published ones, then the who-pays rows.

Simulated values are computed as the thread computes its own: over every
work item (or D sleep, or frame) of every run pooled, counts per run. The
interval is schedlab compare's paired bootstrap over runs of that same
pooled change (pooled_ci_*_pct: each resample of runs pooled again); "~"
marks an interval that includes 0, "inf" a bound the bootstrap cannot
limit (resamples whose baseline is 0).

usage: thread_table.py PLATFORM_A.json [PLATFORM_B.json ...]
       thread_table.py --sweep POINTS.csv   (schedlab sweep's points.csv: one row per swept value)
"""
import csv
import json
import sys

ROWS = [
    ("wq:pm.runnable_wait.mean", "pm_runtime_work CPU wait mean", "us"),
    # Only where the experiment lists it (the cpuidle what-ifs): the part of
    # the wait on a CPU still leaving idle, which no priority removes.
    ("wq:pm.idle_exit_wait.mean", "  of it on a CPU leaving idle", "us"),
    ("wq:pm.runnable_wait.p99", "pm_runtime_work CPU wait P99", "us"),
    ("wq:pm.runnable_wait.max", "pm_runtime_work CPU wait max", "ms"),
    ("wq:pm.runnable_wait.ge_2ms", "pm_runtime_work wait >= 2 ms / run", ""),
    ("wq:pm.runnable_wait.ge_5ms", "pm_runtime_work wait >= 5 ms / run", ""),
    ("rpm:ndroid.systemui.resume_wait_waker_wait.p90", "UI rpm_resume() waker wait P90", "us"),
    ("rpm:ndroid.systemui.resume_wait_d_state.p90", "UI rpm_resume() D-state P90", "us"),
    ("frames:NotificationShade.app_missed", "FrameTimeline app missed / run", ""),
    ("frames:NotificationShade.sf_missed", "FrameTimeline SF missed / run", ""),
]
CONTEXT = [
    ("wq:pm.items", "pm_runtime_work items / run"),
    ("rpm:ndroid.systemui.resume_waits", "UI rpm_resume() waits on pm_wq / run"),
    ("frames:NotificationShade.frames", "frames / run"),
]


def fmt(v, unit):
    if v is None:
        return "n/a"
    if unit == "ms":
        return f"{v / 1000:.2f} ms"
    if unit == "us":
        return f"{v:,.1f} us" if v < 1000 else f"{v:,.0f} us"
    return f"{v:.3f}" if v < 10 else f"{v:.2f}"


def pct(a, b):
    if a is None or b is None or a == 0:
        return "n/a"
    return f"{100.0 * (b - a) / a:+.1f}%"


def interval(var, digits=0, missing="", prefix=""):
    """The variant's 95% interval of the change, "[lo, hi]", with "~" when it includes 0.

    prefix "pooled_" reads the pooled statistic's interval. A null bound
    beside a number is infinite; both null: no interval."""
    lo, hi = var.get(prefix + "ci_low_pct"), var.get(prefix + "ci_high_pct")
    if lo is None and hi is None:
        # A change without an interval: too many resamples of runs held no
        # sample to compute the statistic from.
        return "few samples" if var.get(prefix + "change_pct") is not None and var.get("runs", 0) > 1 else missing
    lo_text = "-inf" if lo is None else f"{lo:+.{digits}f}"
    hi_text = "+inf" if hi is None else f"{hi:+.{digits}f}"
    return f"[{lo_text}, {hi_text}]" + (" ~" if var.get(prefix + "noise") else "")


def published_change(a, b):
    def number(text):
        if text is None:
            return None
        t = text.replace(",", "").split()[0]
        try:
            return float(t)
        except ValueError:
            return None
    return pct(number(a), number(b))


def table(doc):
    metrics = {m["name"]: m for m in doc.get("metrics", [])}
    names = [v["name"] for v in doc["experiment"]["variants"]] if "variants" in doc.get("experiment", {}) else None
    exp = doc.get("experiment", {})
    platform = {"pm_wq_highpri_a": "platform A, 8 CPUs", "pm_wq_highpri_b": "platform B, 7 CPUs"}
    name = exp.get("name", "?")
    print(f"== {name} ({platform.get(name, exp.get('scenario_name', ''))}): pm_wq nice 0 vs WQ_HIGHPRI")
    first = next(iter(metrics.values()))
    runs = first["variants"][0]["runs"]
    print(f"   {runs} runs per variant; simulated = pooled over all runs (counts per run); "
          "interval = paired bootstrap over runs of the pooled change\n")
    head = f"{'metric':<38} {'nice 0':>11} {'WQ_HIGHPRI':>11} {'change':>8}  {'95% CI':<17} | " \
           f"{'pub. nice 0':>11} {'pub. HIGHPRI':>12} {'pub. chg':>9}"
    print(head)
    print("-" * len(head))
    for key, label, unit in ROWS:
        m = metrics.get(key)
        if not m:
            continue
        base, var = m["variants"][0], m["variants"][1]
        a, b = base.get("pooled"), var.get("pooled")
        if a is None and b is None:
            a, b = base.get("mean"), var.get("mean")
            ci = interval(var, missing="n/a")
        else:
            ci = interval(var, missing="n/a", prefix="pooled_")
        change = pct(a, b)
        if var.get("pooled_change_pct") is not None:
            change = f"{var['pooled_change_pct']:+.1f}%"  # from the unrounded pooled values
        pa, pb = base.get("published"), var.get("published")
        print(f"{label:<38} {fmt(a, unit):>11} {fmt(b, unit):>11} {change:>8}  {ci:<17} | "
              f"{pa or '-':>11} {pb or '-':>12} {published_change(pa, pb) if pa and pb else '-':>9}")
    for key, label in CONTEXT:
        m = metrics.get(key)
        if not m:
            continue
        base, var = m["variants"][0], m["variants"][1]
        a, b = base.get("pooled"), var.get("pooled")
        pa, pb = base.get("published"), var.get("published")
        print(f"{label:<38} {fmt(a, ''):>11} {fmt(b, ''):>11} {pct(a, b):>8}  {'':<17} | "
              f"{pa or '-':>11} {pb or '-':>12}")
    print()
    print("who pays (wakeup latency of every task group; power):")
    w = max([18] + [len(g["group"]) for g in doc.get("who_pays", [])])
    print(f"{'group':<{w}} {'wakeup mean us':>15} {'change':>8} {'95% CI':<16} {'wakeup P99 us':>14} "
          f"{'change':>8} {'95% CI':<16}")
    for g in doc.get("who_pays", []):
        cells = []
        for k in ("wakeup_latency_mean", "wakeup_latency_p99"):
            base, var = g[k]["variants"][0], g[k]["variants"][1]
            ci = interval(var)
            v, vv = base.get("mean"), var.get("mean")
            change = f"{var['change_pct']:+.1f}%" if var.get("change_pct") is not None else "n/a"
            # A group one side lacks (the workers WQ_HIGHPRI creates; the
            # nice-0 pool it stops using) has no change: say which side.
            if var.get("change_pct") is None and (v is None) != (vv is None):
                change, ci = ("new", f"= {vv:.1f} with it") if v is None else ("none", "not with it")
            cells.append((f"{v:.1f}" if v is not None else "-", change, ci))
        print(f"{g['group']:<{w}} {cells[0][0]:>15} {cells[0][1]:>8} {cells[0][2]:<16} {cells[1][0]:>14} "
              f"{cells[1][1]:>8} {cells[1][2]:<16}")
    for t in doc.get("totals", []):
        base, var = t["variants"][0], t["variants"][1]
        if base.get("mean") is None:
            continue
        ci = interval(var, 2)
        print(f"{t['name']:<{w}} {base['mean']:>15.1f} {var.get('change_pct', 0):>+7.2f}% {ci}")
    print()


def sweep_table(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError("no rows")
    axis = [k for k in rows[0] if k not in ("point", "variant", "metric", "unit", "runs", "mean", "sd", "min",
                                            "max", "ci_low", "ci_high")][0]
    metrics, points, cell = [], [], {}
    for r in rows:
        if r["metric"] not in metrics:
            metrics.append(r["metric"])
        if r[axis] not in points:
            points.append(r[axis])
        cell[(r[axis], r["metric"])] = (r["mean"], r["unit"])
    print(f"{'metric (mean over runs)':<46}" + "".join(f"{axis.split('.')[-1] + ' ' + p:>12}" for p in points))
    for m in metrics:
        unit = cell.get((points[0], m), ("", ""))[1]
        vals = []
        for p in points:
            v = cell.get((p, m), ("", ""))[0]
            vals.append("n/a" if v in ("", None) else f"{float(v):.2f}")
        print(f"{m + ' (' + unit + ')':<46}" + "".join(f"{v:>12}" for v in vals))


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    if argv[1] == "--sweep":
        try:
            sweep_table(argv[2])
        except (OSError, ValueError, IndexError, KeyError) as e:
            print(f"error: {argv[2] if len(argv) > 2 else '--sweep needs a file'}: {e}", file=sys.stderr)
            return 2
        return 0
    for path in argv[1:]:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"error: {path}: {e}", file=sys.stderr)
            return 2
        if not doc.get("metrics"):
            print(f"error: {path}: no metrics (not a schedlab compare JSON?)", file=sys.stderr)
            return 2
        table(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
