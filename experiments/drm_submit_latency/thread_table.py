#!/usr/bin/env python3
"""Print the DRM submit-latency study in the shape of the thread's tables.

Reads the JSON of `schedlab compare configs/experiments/drm_submit_latency.yaml
--json FILE` and prints, for median / 95% / 98% of push_job -> run_job (us),
one column per submit policy ('.' SCHED_OTHER, 'N' nice -1, 'RT' FIFO 1) per
kernel, simulated beside published ("sim/pub"), as
../../../shared/seeds/drm_sched_submit_latency.md lays them out.

usage: thread_table.py COMPARE.json
"""
import json
import sys

KERNELS = [("stock", "STOCK"), ("rfc_cap", "--RFC"), ("rfc_fifo", "Full RFC"), ("highpri", "WQ_HIGHPRI"),
           ("rtpri", "WQ_RTPRI")]
POLICIES = [("other", "."), ("nice", "N"), ("fifo", "RT")]
ROWS = [("p50", "M"), ("p95", "95%"), ("p98", "98%")]


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    try:
        with open(argv[1]) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"error: {argv[1]}: {e}", file=sys.stderr)
        return 2
    cells = {}
    for metric in doc.get("metrics", []):
        name = metric["name"]
        if ".push_to_run." not in name:
            continue
        stat = name.rsplit(".", 1)[1]
        for v in metric["variants"]:
            cells[(v["variant"], stat)] = (v.get("mean"), v.get("published"))
    if not cells:
        print("error: no drm:*.push_to_run.* metrics in the file", file=sys.stderr)
        return 2
    runs = doc["metrics"][0]["variants"][0].get("runs")
    print(f"push_job -> run_job latency in microseconds, simulated/published "
          f"(simulated: mean over {runs} runs of each run's percentile)\n")
    width = 11
    head1 = " " * 5 + "".join(f"{title:^{3 * width}}" for _, title in KERNELS)
    head2 = " " * 5 + "".join(f"{sym:>{width}}" for _ in KERNELS for _, sym in POLICIES)
    print(head1)
    print(head2)
    for stat, label in ROWS:
        line = f"{label:>4} "
        for kernel, _ in KERNELS:
            for policy, _ in POLICIES:
                sim, pub = cells.get((f"{kernel}_{policy}", stat), (None, None))
                s = "-" if sim is None else f"{sim:.0f}"
                p = pub if pub not in (None, "") else "-"
                line += f"{s + '/' + p:>{width}}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
