"""Where a Tenet workload's step spends its time, region by region, and a model of
its time at more threads than the machine has (docs/performance.md, "The parallel
decomposition").

It runs the benchmark's Tenet side (build/bench/tenet_bench) on one workload of
workloads.py with TENET_PROFILE (runtime/tenet_profile.h: each top-level statement
of the compiled step is a region; its wall time, calls, and the pieces its parallel
work is cut into) at each of --threads, with the parallel decomposition made for a
machine of --cores cores (TENET_PARALLEL_CORES: the cut a 16-core machine makes,
measured on this one). Then, per region, from its time at 1 and 2 threads:

  p        the share of its time that ran in parallel: t2 = t1 (1 - p) + t1 p / busy(2)
  busy(T)  the threads its pieces keep busy: P / ceil(P / T) for P pieces
  t(T)     t1 (1 - p) + t1 p / busy(T)

and the sum over the regions at each --model thread count. The model knows the
decomposition and the serial parts; it does not know memory bandwidth, the clock
a loaded chip runs at, or what OpenMP's fork and join cost at many threads, so it
is an upper bound on the speed-up (a lower bound on the time).

Usage: .venv/bin/python bench/step_profile.py capsnet_train_b100 [--threads 1,2]
           [--cores 16] [--model 4,8,16] [--top 15] [--build-dir DIR]
"""
import argparse
import collections
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from bench import tenet_command  # noqa: E402
from workloads import all_workloads, write_inputs  # noqa: E402

Region = collections.namedtuple("Region", "function index calls seconds pieces label")


def parse(text):
    """The profile lines of a run: {(function, index): Region}."""
    regions = {}
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) != 7 or fields[0] != "profile":
            continue
        r = Region(fields[1], int(fields[2]), int(fields[3]), float(fields[4]), int(fields[5]),
                   fields[6])
        regions[(r.function, r.index)] = r
    return regions


def busy(pieces, threads):
    """The threads that `pieces` equal pieces keep busy."""
    if pieces <= 1:
        return 1.0
    return pieces / math.ceil(pieces / threads)


def model(t1, t2, pieces, threads):
    """A region's modelled time at `threads`, from its times at 1 and 2 threads."""
    gain = 1.0 - 1.0 / busy(pieces, 2)
    p = min(1.0, max(0.0, (1.0 - t2 / t1) / gain)) if gain > 0 and t1 > 0 else 0.0
    return t1 * (1.0 - p) + t1 * p / busy(pieces, threads)


def measure(workload, data_dir, build_dir, threads, cores, steps):
    """One tenet_bench run with the profile on; its regions and median step time."""
    with tempfile.NamedTemporaryFile("r", suffix=".profile") as out:
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), TENET_PROFILE=out.name,
                   TENET_PARALLEL_CORES=str(cores))
        cmd = tenet_command(build_dir, workload, data_dir, {
            "warmup": 1, "min_steps": steps, "min_time": 0, "max_steps": steps})
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            sys.exit("step_profile: %s failed:\n%s" % (" ".join(cmd), proc.stderr.strip()))
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        return parse(out.read()), result["median_s"]


def imported(workload, data_dir):
    """Fills an imported workload's Tenet side from an earlier import (bench.py's)."""
    path = os.path.join(data_dir, "import.json")
    if not os.path.exists(path):
        sys.exit("step_profile: %s is imported from PyTorch: run bench.py --only '^%s$' once first"
                 % (workload.name, workload.name))
    with open(path) as f:
        info = json.load(f)
    workload.tn_file = os.path.join(data_dir, "model.tn")
    workload.tn_fn, workload.wrt, workload.loss_output = info["entry"], info["wrt"], info["output"]


def table(runs, counts, modelled, top):
    """The markdown: the costliest regions, then the totals."""
    first, second = runs[counts[0]][0], runs[counts[1]][0]
    rows = []
    for key, r in first.items():
        other = second.get(key)
        if other is None or r.calls == 0:
            continue
        t1, t2 = r.seconds / r.calls, other.seconds / other.calls
        rows.append((t1, t2, r, [model(t1, t2, r.pieces, t) for t in modelled]))
    rows.sort(key=lambda row: -row[0])
    total1 = sum(row[0] for row in rows)
    head = "| region | pieces | %d thr ms | %d thr ms | %s |" % (
        counts[0], counts[1], " | ".join("model %d thr ms" % t for t in modelled))
    lines = [head, "|---|---:|---:|---:|%s" % ("---:|" * len(modelled))]
    for t1, t2, r, ts in rows[:top]:
        label = r.label if len(r.label) <= 70 else r.label[:67] + "..."
        lines.append("| %s | %d | %.2f | %.2f | %s |" % (
            label.replace("|", "\\|"), r.pieces, t1 * 1e3, t2 * 1e3,
            " | ".join("%.2f" % (t * 1e3) for t in ts)))
    rest = rows[top:]
    if rest:
        lines.append("| (%d more regions) | | %.2f | %.2f | %s |" % (
            len(rest), sum(x[0] for x in rest) * 1e3, sum(x[1] for x in rest) * 1e3,
            " | ".join("%.2f" % (sum(x[3][i] for x in rest) * 1e3)
                       for i in range(len(modelled)))))
    sums = [sum(row[3][i] for row in rows) for i in range(len(modelled))]
    lines.append("| **regions in all** | | **%.1f** | **%.1f** | %s |" % (
        total1 * 1e3, sum(row[1] for row in rows) * 1e3,
        " | ".join("**%.1f**" % (s * 1e3) for s in sums)))
    lines.append("| step, measured (median) | | %.1f | %.1f | %s |" % (
        runs[counts[0]][1] * 1e3, runs[counts[1]][1] * 1e3, " | ".join("" for _ in modelled)))
    lines.append("")
    lines.append("Modelled parallel efficiency from %d thread: %s." % (counts[0], ", ".join(
        "%.0f%% at %d" % (100 * total1 / (t * s), t) for t, s in zip(modelled, sums))))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", help="a workload name of bench/workloads.py")
    p.add_argument("--threads", default="1,2", help="the two measured thread counts")
    p.add_argument("--cores", type=int, default=16,
                   help="the machine the decomposition is made for (TENET_PARALLEL_CORES)")
    p.add_argument("--model", default="4,8,16", help="thread counts to model")
    p.add_argument("--top", type=int, default=15, help="regions listed one by one")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    args = p.parse_args()
    counts = [int(t) for t in args.threads.split(",")]
    if len(counts) != 2 or counts[0] != 1:
        sys.exit("step_profile: --threads takes 1 and one more count, e.g. 1,2")
    workload = next((w for w in all_workloads() if w.name == args.workload), None)
    if workload is None:
        sys.exit("step_profile: no workload %r (bench/workloads.py)" % args.workload)
    data_dir = os.path.join(args.build_dir, "bench-data", workload.name)
    if workload.imported:
        imported(workload, data_dir)
    else:
        write_inputs(workload, data_dir, 1)
    runs = {t: measure(workload, data_dir, args.build_dir, t, args.cores, args.steps)
            for t in counts}
    print("# %s: regions at %s threads, cut for %d cores; modelled at %s\n" % (
        workload.title, args.threads, args.cores, args.model))
    print(table(runs, counts, [int(t) for t in args.model.split(",")], args.top))


if __name__ == "__main__":
    main()
