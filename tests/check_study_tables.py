#!/usr/bin/env python3
"""Checks the tables a study's run.sh prints (ctest runs it on a short run).

usage: check_study_tables.py pm_wq|teo TABLE_FILE

Beyond "the table is there": every simulated cell the checks read is a
number (not n/a), the numbers obey what must hold whatever the model
computes (idle residency per cluster adds up to its CPUs x the measured
time; both variants see the same frames), and the study's robust direction
holds (teo_tick, stopping the tick, moves the big CPUs from WFI to the deep
state: a rise of more than double in the study, far outside run-to-run
noise). Exit 1 with the
failed check on stderr.
"""
import re
import sys

NUMBER = r"[-+]?[0-9][0-9,]*(?:\.[0-9]+)?"


def fail(msg):
    print(f"check_study_tables: {msg}", file=sys.stderr)
    sys.exit(1)


def number(text):
    return float(text.replace(",", ""))


def row(lines, label, start=0):
    """The first line from `start` on whose text before the columns is `label`."""
    for i in range(start, len(lines)):
        if lines[i].startswith(label + " ") and lines[i][len(label):len(label) + 2].strip() == "":
            return i, lines[i]
    fail(f"no row '{label}'")


def section(lines, heading):
    for i, line in enumerate(lines):
        if line.startswith(heading):
            return i
    fail(f"no section '{heading}'")


def check_pm_wq(lines):
    for phone in ("pm_wq_highpri_a", "pm_wq_highpri_b"):
        start = section(lines, f"== {phone} ")
        # The simulated columns (nice 0, WQ_HIGHPRI, change) are numbers; the
        # change is n/a only when the nice 0 value is 0 (no percentage of 0).
        for label in ("pm_runtime_work CPU wait mean", "pm_runtime_work CPU wait P99", "pm_runtime_work CPU wait max"):
            _, line = row(lines, label, start)
            m = re.match(rf"{re.escape(label)}\s+({NUMBER}) (us|ms)\s+({NUMBER}) (us|ms)\s+(({NUMBER})%|n/a)", line)
            if not m:
                fail(f"{phone}: '{label}' has no simulated values: {line!r}")
            if m.group(5) == "n/a" and number(m.group(1)) != 0:
                fail(f"{phone}: '{label}' has no change between two values: {line!r}")
        _, items = row(lines, "pm_runtime_work items / run", start)
        m = re.match(rf"pm_runtime_work items / run\s+({NUMBER})\s+({NUMBER})", items)
        if not m or number(m.group(1)) <= 0 or number(m.group(2)) <= 0:
            fail(f"{phone}: no runtime-PM work items ran: {items!r}")
        # Both variants see the same display: the frame count hardly moves
        # (a frame's count depends only on vsync and the UI thread keeping up).
        _, frames = row(lines, "frames / run", start)
        m = re.match(rf"frames / run\s+({NUMBER})\s+({NUMBER})", frames)
        if not m or number(m.group(1)) <= 0 or abs(number(m.group(1)) - number(m.group(2))) > 0.05 * number(m.group(1)):
            fail(f"{phone}: frames differ between variants or are missing: {frames!r}")
        who = section(lines[start:], "who pays") + start
        _, power = row(lines, "total.avg_power_mw", who)
        if not re.match(rf"total.avg_power_mw\s+({NUMBER})\s", power) or number(power.split()[1]) <= 0:
            fail(f"{phone}: no power in who pays: {power!r}")


def residency_table(lines, start):
    """{(cluster, state): [seconds per kernel column]} of the residency table after `start`."""
    i = start
    while not lines[i].startswith("cluster  idle_state"):
        i += 1
    table = {}
    for line in lines[i + 2:]:
        if not line.strip() or line.startswith("=="):
            break
        cells = line.split("|")[0].split()
        cluster, state = cells[0], int(cells[1])
        values = [number(c) for c in cells[2:] if re.fullmatch(NUMBER, c)]
        if len(values) != 3:
            fail(f"residency row without three kernels' values: {line!r}")
        table[(cluster, state)] = values
    return table


def check_teo(lines):
    cpus = {"little": 4, "mid": 2, "big": 2}  # gs101
    for workload in ("teo_tick_geekbench", "teo_tick_jetnews"):
        start = section(lines, f"== {workload} ")
        m = re.search(r"(\d+) runs per kernel of (\d+) s measured", lines[start + 1])
        if not m:
            fail(f"{workload}: no 'runs per kernel of N s measured' line")
        measured = float(m.group(2))
        table = residency_table(lines, start)
        # Per cluster and kernel: running (-1) + every idle state = CPUs x
        # measured seconds (the table prints two decimals per row).
        for cluster, n in cpus.items():
            for k in range(3):
                total = sum(v[k] for (c, _), v in table.items() if c == cluster)
                if abs(total - n * measured) > 0.02 * len([1 for (c, _) in table if c == cluster]):
                    fail(f"{workload}: {cluster} residency adds to {total:.2f} s, not {n} x {measured:.0f} s")
        # teo_tick stops the tick on the big CPUs: deeper state more.
        if not table[("big", 1)][1] > table[("big", 1)][0]:
            fail(f"{workload}: big CPUs' deep-state residency does not rise with teo_tick: {table[('big', 1)]}")
    geek = section(lines, "== teo_tick_geekbench ")
    _, score = row(lines, "multicore_score", geek)
    if not re.match(rf"multicore_score\s+({NUMBER}) \(0\.0%\)\s+({NUMBER}) \(~?{NUMBER}%\)", score):
        fail(f"multicore_score has no simulated values: {score!r}")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("pm_wq", "teo"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[2], encoding="utf-8") as f:
        lines = f.read().splitlines()
    {"pm_wq": check_pm_wq, "teo": check_teo}[sys.argv[1]](lines)
    print(f"check_study_tables: {sys.argv[1]}: OK")


if __name__ == "__main__":
    main()
