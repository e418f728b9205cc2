#!/usr/bin/env python3
"""Print the teo tick study in the shape of the thread's tables.

Reads the JSON of `schedlab compare configs/experiments/teo_tick_geekbench.yaml
--json GB.json` and/or `... teo_tick_jetnews.yaml --json JN.json` and prints
the seed's tables (../../../shared/seeds/cpuidle_teo_tick.md): each metric as
"value (change %)" per kernel, simulated beside published, then the idle
residency per cluster and state (-1 = running) in seconds.

Simulated values are means over runs (schedlab compare); the change is
against the teo baseline; "~" marks a change whose paired-bootstrap 95%
interval includes 0. Published cells are the thread's values in the same
"value (change %)" form; where the thread gives a value without its change
(the latencies), the change is computed from the thread's own values.

Scores: GB6 reports points, work per second of workload time relative to
a reference machine. The model's work_rate (work-seconds at capacity 1024
and f_max per second of the window) divided by the share of the run a
section computes (2 s of every 14 s cycle in geekbench6_gs101.yaml) is
"X1 equivalents while the workload runs": 1.0 = one Cortex-X1 at 2.8 GHz.
Only changes compare with the published points.

usage: thread_table.py [--geekbench GB.json] [--jetnews JN.json]
       thread_table.py FILE.json ...   (each recognised by its experiment name)
"""
import json
import re
import sys

KERNELS = ["teo", "teo_tick", "teo_tick_rfc"]
# Simulated only: teo as merged in 6.6, as in 6.12 and as in 6.18, against
# the same v6.5 baseline (printed when the JSON has them).
LATER = ["teo", "teo_v6.6", "teo_v6.12", "teo_v6.18"]
SECTION_SHARE = 2.0 / 14.0  # geekbench6_gs101.yaml: a 2 s workload per 14 s cycle

GEEKBENCH_ROWS = [
    ("multicore_score", "group:gb_mc.work_rate", "score"),
    ("score", "task:AsyncTask_1.work_rate", "score"),
    ("CPU_total_power", "total.avg_power_mw", "mW"),
    ("latency (AsyncTask #1)", "task:AsyncTask_1.wakeup_latency.mean", "us"),
    ("latency (labs.geekbench6)", "task:labs.geekbench6.wakeup_latency.mean", "us"),
    ("latency (surfaceflinger)", "task:surfaceflinger.wakeup_latency.mean", "us"),
]
GEEKBENCH_CONTEXT = [
    ("latency (gb_mc: AsyncTask #1's workers)", "group:gb_mc.wakeup_latency.mean", "us"),
    ("power little", "cluster:little.avg_power_mw", "mW"),
    ("power mid", "cluster:mid.avg_power_mw", "mW"),
    ("power big", "cluster:big.avg_power_mw", "mW"),
]
JETNEWS_ROWS = [
    ("fps", "frames:jetnews.fps", "fps"),
    ("janks_pc", "frames:jetnews.jank_pct", "%"),
    ("CPU_total_power", "total.avg_power_mw", "mW"),
]
JETNEWS_CONTEXT = [
    ("frames / run", "frames:jetnews.frames", ""),
    ("dropped / run", "frames:jetnews.dropped", ""),
    ("latency (example.jetnews)", "task:example.jetnews.wakeup_latency.mean", "us"),
    ("latency (RenderThread)", "task:RenderThread.wakeup_latency.mean", "us"),
    ("latency (surfaceflinger)", "task:surfaceflinger.wakeup_latency.mean", "us"),
    ("power little", "cluster:little.avg_power_mw", "mW"),
    ("power mid", "cluster:mid.avg_power_mw", "mW"),
    ("power big", "cluster:big.avg_power_mw", "mW"),
]


def number(v, unit):
    if v is None:
        return "n/a"
    if unit == "score":
        return f"{v / SECTION_SHARE:.3f}"
    if unit == "us":
        return f"{v:.2f}us" if v < 100 else f"{v:.1f}us"
    if unit in ("mW", "fps"):
        return f"{v:.1f}"
    if unit == "%":
        return f"{v:.2f}"
    return f"{v:.2f}" if v < 100 else f"{v:.1f}"


def cell(var, unit, baseline):
    text = number(var.get("mean"), unit)
    if baseline:
        return text + " (0.0%)" if var.get("mean") is not None else text
    change = var.get("change_pct")
    if change is None:
        return text
    return f"{text} ({'~' if var.get('noise') else ''}{change:+.2f}%)"


def published_cells(v, kernels):
    """The thread's figures of one metric in the simulated cells' form:
    "3303.3 (-0.53%)" as written with the sign made explicit, and "51.07 us"
    as "51.07us (+3.36%)", its change against the thread's teo value."""
    texts = [(v[k].get("published") or "") if k in v else "" for k in kernels]
    base = None
    cells = []
    for i, text in enumerate(texts):
        m = re.fullmatch(r"\s*([-+]?[0-9.]+)\s*\(([-+]?[0-9.]+)%\)\s*", text)
        if m:
            value, change = m.group(1), float(m.group(2))
        else:
            m = re.fullmatch(r"\s*([-+]?[0-9.]+)\s*([a-zA-Z%]*)\s*", text)
            if not m:
                cells.append(text or "-")
                continue
            value, change = m.group(1) + m.group(2), None
            if i == 0:
                base = float(m.group(1))
            elif base:
                change = (float(m.group(1)) - base) / base * 100.0
        cells.append(f"{value} (0.0%)" if i == 0 else f"{value} ({change:+.2f}%)" if change is not None else value)
    return cells


def by_kernel(metric):
    return {v["variant"]: v for v in metric["variants"]}


def print_rows(metrics, rows, title, kernels=KERNELS):
    width = max(len(label) for label, _, _ in rows) + 2
    head = f"{'metric':<{width}}" + "".join(f"{k:>24}" for k in kernels)
    print(title)
    print(head)
    print("-" * len(head))
    for label, key, unit in rows:
        m = metrics.get(key)
        if not m:
            continue
        v = by_kernel(m)
        sim = "".join(f"{cell(v[k], unit, k == kernels[0]) if k in v else '-':>24}" for k in kernels)
        pub = "".join(f"{c:>24}" for c in published_cells(v, kernels))
        print(f"{label:<{width}}{sim}")
        if kernels == KERNELS and any(v[k].get("published") for k in kernels if k in v):
            print(f"{'  published':<{width}}{pub}")
    print()


def residency(metrics, clusters, title, kernels=KERNELS):
    """The thread's kernel / cluster / idle_state / time table, one line per
    cluster and state with the kernels side by side (the published column
    only for the thread's three)."""
    print(title)
    published = kernels == KERNELS
    head = f"{'cluster':<8}{'idle_state':>11}" + "".join(f"{k:>22}" for k in kernels) + \
           ("  | published " + " / ".join(kernels) if published else "")
    print(head)
    print("-" * len(head))
    for cluster in clusters:
        for state in (-1, 0, 1):
            m = metrics.get(f"cluster:{cluster}.residency_s.{state}")
            if not m:
                continue
            v = by_kernel(m)
            cells = ""
            for k in kernels:
                if k not in v or v[k].get("mean") is None:
                    cells += f"{'n/a':>22}"
                    continue
                text = f"{v[k]['mean']:.2f}"
                change = v[k].get("change_pct")
                if k != kernels[0] and change is not None:
                    text += f" ({'~' if v[k].get('noise') else ''}{change:+.1f}%)"
                cells += f"{text:>22}"
            if not published:
                print(f"{cluster:<8}{state:>11}{cells}")
                continue
            pubs = [(v[k].get("published") or "-").replace(" s", "") if k in v else "-" for k in kernels]
            pub = " / ".join(pubs) if any(p != "-" for p in pubs) else ""
            print(f"{cluster:<8}{state:>11}{cells}  | {pub}")
    print()


def report(doc):
    exp = doc.get("experiment", {})
    metrics = {m["name"]: m for m in doc.get("metrics", [])}
    runs = exp.get("runs")
    print(f"== {exp.get('name', '?')} ({exp.get('scenario_name', '')})")
    print(f"   {runs} runs per kernel of {exp.get('duration_s', 0) - exp.get('warmup_s', 0):.0f} s measured; "
          "value (change vs teo), ~ = 95% interval includes 0; published = the thread's\n")
    geekbench = exp.get("name", "").endswith("geekbench") or "task:AsyncTask_1.work_rate" in metrics
    if geekbench:
        rows = GEEKBENCH_ROWS + GEEKBENCH_CONTEXT
        print_rows(metrics, GEEKBENCH_ROWS, "1. Geekbench 6 (scores: X1 equivalents while the workload runs)")
        print_rows(metrics, GEEKBENCH_CONTEXT, "   context")
        residency(metrics, ["little", "mid", "big"], "Idle residency (seconds per run, summed over the cluster's CPUs):")
    else:
        rows = JETNEWS_ROWS + JETNEWS_CONTEXT
        print_rows(metrics, JETNEWS_ROWS, "2. JetNews")
        print_rows(metrics, JETNEWS_CONTEXT, "   context")
        residency(metrics, ["little", "mid", "big"],
                  "Running (-1) and idle time, seconds per run, summed over the cluster's CPUs:")
    later = {v["variant"] for m in metrics.values() for v in m.get("variants", [])}
    present = [k for k in LATER if k in later]  # JSON from before a version was added lacks it
    if len(present) > 1 and present[0] == LATER[0]:
        print_rows(metrics, rows, f"   later teo versions (simulated only; change vs teo v6.5): {exp.get('name', '')}",
                   present)
        residency(metrics, ["little", "mid", "big"], "   their running (-1) and idle time, seconds per run:", present)


def main(argv):
    files = []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("--geekbench", "--jetnews"):
            if not args:
                raise SystemExit(f"{a} needs a file")
            files.append(args.pop(0))
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            files.append(a)
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    for path in files:
        with open(path) as f:
            report(json.load(f))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
