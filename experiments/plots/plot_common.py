"""What compare_plots.py and sweep_plots.py share: reading the JSON that
schedlab writes for them, and a grid of panels. The scripts run by path, so
this module, beside them, is on their import path."""
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402


def read_input(usage, fmt, what):
    """The command line INPUT.json OUTDIR: the input (its "format" must be
    `fmt`, else exit naming it `what`) and OUTDIR, created. Exits with
    `usage` for any other command line."""
    if len(sys.argv) != 3:
        sys.exit(usage)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    if data.get("format") != fmt:
        sys.exit(f"{sys.argv[1]}: not {what}")
    os.makedirs(sys.argv[2], exist_ok=True)
    return data, sys.argv[2]


def panel_grid(n, width, height):
    """A figure of n panels of width x height inches, at most 3 a row;
    the grid's unused panels are hidden."""
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.axis("off")
    return fig, axes
