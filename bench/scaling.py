"""The scaling report of `bench.py --threads 1,2,4,...` (docs/benchmark.md):
every framework's median time per workload at each thread count, the
speed-up and parallel efficiency from the fewest threads to the most, Tenet's
ratio against each PyTorch mode at every count, and a plot (time against
threads, log scales, one line per framework, Tenet's ideal scaling dashed).

write(out_dir, env, workloads, frameworks, runs) takes `runs`, a list of
(threads, results) in the order measured, and writes scaling.md, scaling.png
and scaling.jsonl.
"""
import json
import os

import report


def _cell(r):
    if r is None:
        return ""
    return report.ms(r["median_s"]) if report.ok(r) else report.failure(r)


def times_table(workloads, frameworks, runs):
    counts = [t for t, _ in runs]
    tables = [report.by_key(results) for _, results in runs]
    lines = ["| workload | framework | %s | speed-up %d→%d | efficiency |" % (
        " | ".join("%d thr (ms)" % t for t in counts), counts[0], counts[-1]),
             "|---|---|%s---:|---:|" % ("---:|" * len(counts))]
    for w in workloads:
        for f in frameworks:
            rows = [table.get((f, w.name)) for table in tables]
            if all(r is None for r in rows):
                continue
            first, last = rows[0], rows[-1]
            speedup = efficiency = ""
            if report.ok(first) and report.ok(last):
                s = first["median_s"] / last["median_s"]
                speedup = "%.2fx" % s
                efficiency = "%.0f%%" % (100 * s * counts[0] / counts[-1])
            lines.append("| %s | %s | %s | %s | %s |" % (
                w.title, f, " | ".join(_cell(r) for r in rows), speedup, efficiency))
    return "\n".join(lines)


def ratio_table(workloads, frameworks, runs):
    """Tenet's speed against each PyTorch mode (above 1: Tenet is faster)."""
    others = [f for f in frameworks if f != "tenet"]
    if "tenet" not in frameworks or not others:
        return ""
    counts = [t for t, _ in runs]
    lines = ["| workload | against | %s |" % " | ".join("%d thr" % t for t in counts),
             "|---|---|%s" % ("---:|" * len(counts))]
    for w in workloads:
        for f in others:
            cells = []
            for _, results in runs:
                table = report.by_key(results)
                t, o = table.get(("tenet", w.name)), table.get((f, w.name))
                cells.append("%.2fx" % (o["median_s"] / t["median_s"])
                             if report.ok(t) and report.ok(o) else "")
            if any(cells):
                lines.append("| %s | %s | %s |" % (w.title, f, " | ".join(cells)))
    return "\n".join(lines)


def plot(path, workloads, frameworks, runs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = [t for t, _ in runs]
    tables = [report.by_key(results) for _, results in runs]
    shown = [w for w in workloads if any(report.ok(t.get((f, w.name)))
                                         for t in tables for f in frameworks)]
    if not shown:
        return
    columns = min(3, len(shown))
    rows = (len(shown) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 4.2 * rows), squeeze=False)
    for ax, w in zip(axes.flat, shown):
        for i, f in enumerate(frameworks):
            points = [(t, table[(f, w.name)]["median_s"] * 1e3) for t, table in zip(counts, tables)
                      if report.ok(table.get((f, w.name)))]
            if not points:
                continue
            ax.plot([p[0] for p in points], [p[1] for p in points], "o-", color="C%d" % i,
                    label=f)
            if f == "tenet":
                t0, ms0 = points[0]
                ax.plot(counts, [ms0 * t0 / t for t in counts], "--", color="C%d" % i,
                        alpha=0.5, label="tenet, ideal")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(counts)
        ax.set_xticklabels([str(t) for t in counts])
        ax.set_xlabel("threads")
        ax.set_ylabel("median ms per step")
        ax.set_title(w.title, fontsize=9)
        ax.grid(which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(shown):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def write(out_dir, env, workloads, frameworks, runs):
    """Writes scaling.md, scaling.png and scaling.jsonl; returns the markdown."""
    os.makedirs(out_dir, exist_ok=True)
    counts = ", ".join(str(t) for t, _ in runs)
    parts = ["# Scaling with threads (CPU, float32, %s threads)" % counts,
             "- Run: %s, %s mode, %.1f minutes; the same build and inputs at every count; "
             "OMP_NUM_THREADS and torch.set_num_threads" % (env["date"], env["mode"],
                                                             env["minutes"]),
             "- Machine: %s, %s cores; load average %s at the start, %s at the end" % (
                 env["cpu"], env["cores"], "/".join("%.1f" % x for x in env["load_start"]),
                 "/".join("%.1f" % x for x in env["load_end"])),
             "- Efficiency: the speed-up from the fewest threads to the most over the ratio "
             "of the thread counts. Each count's full tables: `threads-N/benchmark.md`.",
             "## Median time per step", times_table(workloads, frameworks, runs)]
    ratios = ratio_table(workloads, frameworks, runs)
    if ratios:
        parts += ["## Tenet's speed against PyTorch (above 1: Tenet is faster)", ratios]
    parts.append("![time against threads](scaling.png)")
    text = "\n\n".join(parts) + "\n"
    with open(os.path.join(out_dir, "scaling.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "scaling.jsonl"), "w") as f:
        f.write(json.dumps({"environment": env}) + "\n")
        for threads, results in runs:
            for r in results:
                f.write(json.dumps(dict(r, threads=threads)) + "\n")
    plot(os.path.join(out_dir, "scaling.png"), workloads, frameworks, runs)
    return text
