#!/usr/bin/env python3
"""How often do `schedlab compare`'s intervals hold the value? (README.md here)

usage: coverage.py SEED.json [SEED.json ...]     (run.sh's output for one experiment)

Each file is one base seed of the same experiment. Runs are independent
draws by construction, within and across seeds, so every row's "truth" is
taken as its change over all seeds' runs together (the tested seed
included, which lifts a correct interval's expected share to 95.1-95.3%
with 125-40 seeds), and each seed's interval either holds it or not.
Only per-run means are measured (`change_pct`), not the pooled statistics. For every row (a per-run metric of a variant against the
baseline), and for four ways to read an interval off the same paired
bootstrap, this prints the share of seeds whose 95% interval holds the
truth:

  plain      the 2.5th and 97.5th percentiles (schedlab before 2026-12)
  expanded   Hesterberg's expanded percentile interval (schedlab now)
  bca        Efron's bias-corrected and accelerated interval
  delta_t    no bootstrap: the delta-method standard error of the ratio of
             means with Student's t

and, per row, a one-way ANOVA F of the runs' paired differences by seed
with its permutation p-value (runs shuffled across seeds): F about 1 when
the seeds' runs are exchangeable, as independent runs are.

The resampling here uses numpy's generator, not schedlab's stream, so the
plain column is the method, not schedlab's printed intervals to the digit.
Rows whose values the JSON's 3 decimals make too coarse to judge (fewer
than 20 distinct values) are skipped.
"""
import json
import math
import sys
from statistics import NormalDist

import numpy as np

B = 2000
NORMAL = NormalDist()
METHODS = ["plain", "expanded", "bca", "delta_t"]


def t_quantile(p, df):
    """Student's t quantile by bisection on its CDF (regularized incomplete beta, continued fraction)."""
    def betacf(a, b, x):
        c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
        d = 1.0 / d
        h = d
        for m in range(1, 300):
            for aa in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                       -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
                d = 1.0 / (1.0 + aa * d)
                c = 1.0 + aa / c
                h *= d * c
            if abs(d * c - 1.0) < 1e-15:
                break
        return h

    def ibeta(a, b, x):
        if x <= 0 or x >= 1:
            return max(0.0, min(1.0, x))
        front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x))
        if x < (a + 1) / (a + b + 2):
            return front * betacf(a, b, x) / a
        return 1.0 - front * betacf(b, a, 1 - x) / b

    def cdf(t):
        tail = 0.5 * ibeta(df / 2, 0.5, df / (df + t * t))
        return 1 - tail if t > 0 else tail

    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def rel(a, b):
    return 100.0 * (b - a) / abs(a)


def intervals(a, b, rng):
    """Each method's 95% interval of the relative change of the mean of b against a (paired)."""
    n = len(a)
    est = rel(a.mean(), b.mean())
    idx = rng.integers(0, n, size=(B, n))
    am, bm = a[idx].mean(axis=1), b[idx].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        stats = 100.0 * (bm - am) / np.abs(am)
    stats = stats[np.isfinite(stats)]
    if len(stats) < 0.95 * B:
        return None
    out = {"plain": tuple(np.quantile(stats, [0.025, 0.975]))}
    t = t_quantile(0.975, n - 1)
    tail = NORMAL.cdf(-math.sqrt(n / (n - 1)) * t)
    out["expanded"] = tuple(np.quantile(stats, [tail, 1 - tail]))
    below = (np.sum(stats < est) + 0.5 * np.sum(stats == est)) / len(stats)
    z0 = NORMAL.inv_cdf(min(max(below, 1.0 / B), 1 - 1.0 / B))
    with np.errstate(divide="ignore", invalid="ignore"):
        jack = 100.0 * ((b.sum() - b) - (a.sum() - a)) / np.abs(a.sum() - a)
    if np.all(np.isfinite(jack)):
        d = jack.mean() - jack
        den = 6.0 * np.sum(d * d) ** 1.5
        acc = np.sum(d ** 3) / den if den > 0 else 0.0
        levels = [NORMAL.cdf(z0 + (z0 + z) / (1 - acc * (z0 + z))) for z in (NORMAL.inv_cdf(0.025), NORMAL.inv_cdf(0.975))]
        out["bca"] = tuple(np.quantile(stats, levels))
    r = b.mean() / a.mean()
    var = (b.var(ddof=1) - 2 * r * np.cov(a, b, ddof=1)[0, 1] + r * r * a.var(ddof=1)) / n / a.mean() ** 2
    se = 100.0 * math.sqrt(max(var, 0.0))
    out["delta_t"] = (est - t * se, est + t * se)
    return out


def anova_f(x):
    k, n = x.shape
    between = n * ((x.mean(1) - x.mean()) ** 2).sum() / (k - 1)
    within = ((x - x.mean(1, keepdims=True)) ** 2).sum() / (k * (n - 1))
    return between / within if within > 0 else float("nan")


def main(files):
    if len(files) < 3:
        sys.exit("coverage.py: give at least 3 per-seed JSON files (run.sh's output)")
    docs = [json.load(open(f)) for f in files]
    rng = np.random.default_rng(12345)
    names = [m["name"] for m in docs[0]["metrics"]]
    for f, d in zip(files, docs):  # rows are looked up by position below: every seed must list the same rows
        if [m["name"] for m in d["metrics"]] != names:
            sys.exit(f"coverage.py: {f} lists other rows than {files[0]} (a wildcard group missing at one seed?)")
    nvar = len(docs[0]["metrics"][0]["variants"])
    runs = len(docs[0]["metrics"][0]["variants"][0]["values"])
    rows = []
    for k, name in enumerate(names):
        for v in range(1, nvar):
            seeds = []
            for d in docs:
                m = d["metrics"][k]
                pairs = [(x, y) for x, y in zip(m["variants"][0]["values"], m["variants"][v]["values"])
                         if x is not None and y is not None]
                seeds.append((np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])))
            if any(len(a) < 5 for a, _ in seeds):
                continue
            a_all = np.concatenate([a for a, _ in seeds])
            b_all = np.concatenate([b for _, b in seeds])
            if a_all.mean() == 0 or len(np.unique(a_all)) < 20 or len(np.unique(b_all - a_all)) < 20:
                continue
            truth = rel(a_all.mean(), b_all.mean())
            hits = {m: [] for m in METHODS}
            changes = []
            for a, b in seeds:
                if a.mean() == 0:
                    continue
                iv = intervals(a, b, rng)
                if iv is None:
                    continue
                changes.append(rel(a.mean(), b.mean()))
                for m in METHODS:
                    if m in iv:
                        hits[m].append(iv[m][0] <= truth <= iv[m][1])
            if len(hits["plain"]) < 10:
                continue
            f, p = float("nan"), float("nan")
            if all(len(a) == runs for a, _ in seeds):
                diff = np.array([b - a for a, b in seeds])
                f = anova_f(diff)
                perm = [anova_f(rng.permutation(diff.ravel()).reshape(diff.shape)) for _ in range(400)]
                p = (np.sum(np.array(perm) >= f) + 1) / (len(perm) + 1)
            label = name + ("" if nvar == 2 else "/" + docs[0]["metrics"][k]["variants"][v]["variant"])
            rows.append((label, len(hits["plain"]), truth, np.std(changes, ddof=1),
                         {m: np.mean(hits[m]) if hits[m] else float("nan") for m in METHODS}, f, p))
    if not rows:
        sys.exit(f"coverage.py: no row has a judgeable value at 10 or more of the {len(docs)} seeds: run more seeds")
    print(f"{docs[0]['experiment']['name']}: {len(docs)} seeds x {runs} runs per variant; "
          f"coverage of the all-seed change by each seed's 95% interval")
    print(f"{'row':60s} {'seeds':>5s} {'truth %':>8s} {'sd %':>6s} " + " ".join(f"{m:>8s}" for m in METHODS)
          + f" {'F':>5s} {'p':>6s}")
    for label, n, truth, sd, cover, f, p in sorted(rows, key=lambda r: r[4]["plain"]):
        print(f"{label[:60]:60s} {n:5d} {truth:8.2f} {sd:6.2f} " + " ".join(f"{100 * cover[m]:7.0f}%" for m in METHODS)
              + f" {f:5.2f} {p:6.3f}")
    print(f"{len(rows)} rows; mean coverage: " + ", ".join(
        f"{m} {100 * np.nanmean([r[4][m] for r in rows]):.1f}%" for m in METHODS)
        + "; rows below 90%: " + ", ".join(f"{m} {sum(r[4][m] < 0.9 for r in rows)}" for m in METHODS))
    ps = [r[6] for r in rows if not math.isnan(r[6])]
    if ps:
        print(f"seed effect: {sum(p < 0.05 for p in ps)} of {len(ps)} rows at p < 0.05 "
              f"({0.05 * len(ps):.1f} expected by chance), {sum(p < 0.01 for p in ps)} at p < 0.01")


if __name__ == "__main__":
    main(sys.argv[1:])
