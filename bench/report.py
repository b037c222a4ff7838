"""Turns the benchmark's measurements into markdown tables, a PNG plot and a
JSON-lines file (bench.py calls write()).

Definitions (docs/benchmark.md): "x Tenet" is a framework's median time
divided by Tenet's (above 1: Tenet is faster); GFLOP/s is the workload's
analytic flop count over the median time; "% floor" is that over the GEMM
floor, the faster of the two sgemm measurements; "above start" is the peak
RSS minus the RSS the process had before it built the workload (PyTorch's
import alone is several hundred MiB).
"""
import json
import os

FLOOR_FRAMEWORKS = ("openblas", "torch.mm")


def ms(seconds):
    v = seconds * 1e3
    return "%.3g" % v if v < 1000 else "%.0f" % v


def by_key(results):
    return {(r["framework"], r["workload"]): r for r in results
            if r["framework"] not in FLOOR_FRAMEWORKS}


def floor_gflops(results):
    rates = [r["gflops"] for r in results if r["framework"] in FLOOR_FRAMEWORKS and "gflops" in r]
    return max(rates) if rates else None


def ok(r):
    """A measurement that ran (and, for Tenet, agreed with PyTorch)."""
    return r is not None and "error" not in r and "mismatch" not in r


def failure(r):
    """The table cell of a failed measurement."""
    if "mismatch" in r:
        return "mismatch"
    return "%s error" % r["stage"].split()[0] if r.get("stage") else "error"


def header(env, results):
    floor = floor_gflops(results)
    floors = ", ".join("%s %.1f GFLOP/s" % (r["framework"], r["gflops"]) for r in results
                       if r["framework"] in FLOOR_FRAMEWORKS and "gflops" in r)
    lines = [
        "# Tenet vs PyTorch (CPU, float32, %d threads)" % env["threads"],
        "",
        "- Run: %s, %s mode, %.1f minutes; `bash scripts/bench.sh%s`" % (
            env["date"], env["mode"], env["minutes"], " --quick" if env["mode"] == "quick" else ""),
        "- Machine: %s, %s cores; load average %s at the start, %s at the end" % (
            env["cpu"], env["cores"], "/".join("%.1f" % x for x in env["load_start"]),
            "/".join("%.1f" % x for x in env["load_end"])),
        "- PyTorch %s, Python %s; every framework at %d threads (OMP_NUM_THREADS, "
        "torch.set_num_threads), OPENBLAS_CORETYPE unset" % (
            env["torch"], env["python"], env["threads"]),
        "- Steps: %d warm-up, then at least %d timed steps and %.0f s (at most %d); "
        "medians of wall time" % (env["warmup"], env["min_steps"], env["min_time"],
                                   env["max_steps"]),
        "- GEMM floor (sgemm 2048 x 2048 x 2048): %s; floor = %s" % (
            floors or "not measured", "%.1f GFLOP/s" % floor if floor else "n/a"),
    ]
    return "\n".join(lines)


def targets_table(results):
    """The issue's targets for Tenet, where the measurements exist."""
    table = by_key(results)
    floor = floor_gflops(results)
    rows = []

    def get(framework, workload):
        r = table.get((framework, workload))
        return r if ok(r) else None

    def add(what, target, value, passed):
        rows.append("| %s | %s | %s | %s |" % (what, target, value, "yes" if passed else "**no**"))

    t, e, c = (get(f, "capsnet_train_b100") for f in ("tenet", "eager", "compile"))
    if t and e:
        ratio = e["median_s"] / t["median_s"]
        add("CapsNet training step, batch 100, vs eager", ">= 4x faster", "%.2fx" % ratio,
            ratio >= 4)
    if t and c:
        ratio = c["median_s"] / t["median_s"]
        add("CapsNet training step, batch 100, vs torch.compile", ">= 1.5x faster",
            "%.2fx" % ratio, ratio >= 1.5)
    if t and floor:
        ideal = t["flops"] / (floor * 1e9)
        add("CapsNet training step, batch 100, vs the GEMM floor", "<= 1.5x the floor time",
            "%.2fx (%.3g s vs %.3g s)" % (t["median_s"] / ideal, t["median_s"], ideal),
            t["median_s"] <= 1.5 * ideal)
    if t and e:
        add("CapsNet training step, batch 100, peak RSS", "<= 1/2 of eager's",
            "%.0f vs %.0f MiB (%.2f); above start: %.0f vs %.0f MiB (%.2f)" % (
                t["peak_rss_mib"], e["peak_rss_mib"], t["peak_rss_mib"] / e["peak_rss_mib"],
                above(t), above(e), above(t) / max(above(e), 1e-9)),
            t["peak_rss_mib"] <= 0.5 * e["peak_rss_mib"] and above(t) <= 0.5 * above(e))
        add("CapsNet training step, batch 100, minor page faults per step", "< 1% of eager's",
            "%.0f vs %.0f (%.2f%%)" % (t["minflt_per_step"], e["minflt_per_step"],
                                       100 * t["minflt_per_step"] / max(e["minflt_per_step"], 1)),
            t["minflt_per_step"] < 0.01 * e["minflt_per_step"])
    t, e = get("tenet", "capsnet_infer_b100"), get("eager", "capsnet_infer_b100")
    if t and e:
        ratio = e["median_s"] / t["median_s"]
        add("CapsNet inference, batch 100, vs eager", ">= 3x faster", "%.2fx" % ratio, ratio >= 3)
    t, e = get("tenet", "lltm_fwdbwd"), get("eager", "lltm_fwdbwd")
    if t and e:
        ratio = e["median_s"] / t["median_s"]
        add("LLTM forward+backward vs eager", "faster", "%.2fx" % ratio, ratio > 1)
    if not rows:
        return ""
    return "\n".join(["| target | wanted | measured | met |", "|---|---|---|---|"] + rows)


def above(r):
    return r["peak_rss_mib"] - r["rss_start_mib"]


WHOLE_MODELS = ("capsnet", "cnn", "model")
TORCH_MODES = ("eager", "compile", "script")


def issue17_targets(workloads, results):
    """Issue 17's targets: whole models, per-layer rows, memory. A target whose
    Tenet measurement failed is not met; one without PyTorch's is not listed."""
    table = by_key(results)
    rows = []

    def add(what, target, value, passed):
        rows.append("| %s | %s | %s | %s |" % (what, target, value, "yes" if passed else "**no**"))

    def tenet_of(w):
        r = table.get(("tenet", w.name))
        if r is None:
            return None, None
        return (r, None) if ok(r) else (None, "Tenet failed (%s)" % failure(r))

    def versus(w, framework, wanted, label, what=None):
        t, why = tenet_of(w)
        other = table.get((framework, w.name))
        if not ok(other) or (t is None and why is None):
            return
        if why:
            add(what or w.title, label, why, False)
            return
        ratio = other["median_s"] / t["median_s"]
        add(what or w.title, label, "%.2fx" % ratio, ratio >= wanted)

    trains = [w for w in workloads if w.group in WHOLE_MODELS and w.mode == "train"]
    for w in trains:
        versus(w, "eager", 1.3, ">= 1.3x faster than eager")
        versus(w, "compile", 1.0, "at least as fast as torch.compile")
    by_name = {w.name: w for w in workloads}
    if "capsnet_train_b100" in by_name:
        w = by_name["capsnet_train_b100"]
        versus(w, "eager", 3.0, ">= 3x faster than eager")
        versus(w, "compile", 2.0, ">= 2x faster than torch.compile")
    if "capsnet_infer_b100" in by_name:
        versus(by_name["capsnet_infer_b100"], "eager", 3.0, ">= 3x faster than eager")

    for w in [w for w in workloads if w.group == "layer"]:
        t, why = tenet_of(w)
        fastest = min([table[(f, w.name)] for f in TORCH_MODES if ok(table.get((f, w.name)))],
                      key=lambda r: r["median_s"], default=None)
        if fastest is None or (t is None and why is None):
            continue
        if why:
            add(w.title, "<= 1.1x the fastest PyTorch mode", why, False)
            continue
        ratio = t["median_s"] / fastest["median_s"]
        add(w.title, "<= 1.1x the fastest PyTorch mode",
            "%.2fx %s (%s vs %s ms)" % (ratio, fastest["framework"], ms(t["median_s"]),
                                        ms(fastest["median_s"])), ratio <= 1.1)

    # Memory: every whole model, both as one row each (the list says which miss).
    wholes = [w for w in workloads if w.group in WHOLE_MODELS]
    rss, missed_rss, faults, missed_faults = 0, [], 0, []
    for w in wholes:
        t, e = table.get(("tenet", w.name)), table.get(("eager", w.name))
        if not ok(t) or not ok(e):
            continue
        rss += 1
        if not (t["peak_rss_mib"] <= 0.5 * e["peak_rss_mib"] and above(t) <= 0.5 * above(e)):
            missed_rss.append("%s: %.0f vs %.0f MiB, above start %.0f vs %.0f" % (
                w.name, t["peak_rss_mib"], e["peak_rss_mib"], above(t), above(e)))
    for r in results:
        if r["framework"] == "tenet" and ok(r):
            faults += 1
            if r["minflt_per_step"] > 0:
                missed_faults.append("%s: %.3g" % (r["workload"], r["minflt_per_step"]))
    if rss:
        add("peak RSS, every whole model (training and inference)",
            "<= 1/2 of eager's (whole process and above start)",
            "%d of %d%s" % (rss - len(missed_rss), rss,
                            "; not: " + "; ".join(missed_rss) if missed_rss else ""),
            not missed_rss)
    if faults:
        add("minor page faults per steady step, every Tenet row", "0",
            "%d of %d rows at 0%s" % (faults - len(missed_faults), faults,
                                      "; not: " + ", ".join(missed_faults) if missed_faults
                                      else ""), not missed_faults)
    if not rows:
        return ""
    return "\n".join(["| target | wanted | measured | met |", "|---|---|---|---|"] + rows)


def failures(workloads, results):
    """Every failed measurement and mismatch, with its message (the full text is in
    results.jsonl)."""
    titles = {w.name: w.title for w in workloads}
    lines = []
    for r in results:
        if r["framework"] in FLOOR_FRAMEWORKS or ok(r):
            continue
        text = r.get("mismatch") or r["error"]
        if len(text) > 3000:
            text = text[:1500] + "\n...\n" + text[-1500:]
        lines += ["- **%s**, %s: %s" % (titles.get(r["workload"], r["workload"]),
                                        r["framework"], failure(r)), "", "  ```"]
        lines += ["  " + line for line in text.strip().splitlines()] + ["  ```", ""]
    return "\n".join(lines)


def spread_checks(workloads, results):
    """The workloads whose numerical check passed only against float64: Tenet differs
    from PyTorch float32 by more than the tolerance, but its worst error against the
    exact answer is at most twice PyTorch float32's own (torch_worker.diagnose)."""
    titles = {w.name: w.title for w in workloads}
    lines = []
    for r in results:
        spread = [c for c in r.get("check", []) if c.get("within_torch_spread")]
        if not spread:
            continue
        worst = max(spread, key=lambda c: c["tenet_vs_f64"])
        torch = max(c["torch_vs_f64"] for c in r["check"] if "torch_vs_f64" in c)
        lines.append("- **%s**: %d of %d tensors differ from PyTorch float32 by more than "
                     "the tolerance; against float64, Tenet's worst is %.2g (%s) and PyTorch "
                     "float32's worst %.2g." % (titles.get(r["workload"], r["workload"]),
                                                len(spread), len(r["check"]),
                                                worst["tenet_vs_f64"], worst["name"], torch))
    return "\n".join(lines)


def times_table(workloads, frameworks, results):
    table = by_key(results)
    head = "| workload | GFLOP | " + " | ".join(
        "%s ms%s" % (f, " (x Tenet)" if f != "tenet" else "") for f in frameworks) + " |"
    lines = [head, "|---|---:|" + "---:|" * len(frameworks)]
    for w in workloads:
        tenet = table.get(("tenet", w.name))
        cells = []
        for f in frameworks:
            r = table.get((f, w.name))
            if not ok(r):
                cells.append("**%s**%s" % (failure(r), " (%s)" % ms(r["median_s"])
                                           if "median_s" in r else "") if r else "")
            elif f == "tenet" or not ok(tenet):
                cells.append(ms(r["median_s"]))
            else:
                cells.append("%s (%.2f)" % (ms(r["median_s"]), r["median_s"] / tenet["median_s"]))
        lines.append("| %s | %.3g | %s |" % (w.title, w.flops * 1e-9, " | ".join(cells)))
    return "\n".join(lines)


def details_table(workloads, frameworks, results):
    table = by_key(results)
    floor = floor_gflops(results)
    lines = ["| workload | framework | median ms | x Tenet | peak RSS MiB | above start MiB | "
             "minor faults / step | GFLOP/s | % floor |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for w in workloads:
        tenet = table.get(("tenet", w.name))
        for f in frameworks:
            r = table.get((f, w.name))
            if r is None:
                continue
            if not ok(r):
                lines.append("| %s | %s | **%s** | | | | | | |" % (w.title, f, failure(r)))
                continue
            rate = w.flops / r["median_s"] * 1e-9
            lines.append("| %s | %s | %s | %s | %.0f | %.0f | %.0f | %.1f | %s |" % (
                w.title, f, ms(r["median_s"]),
                "%.2f" % (r["median_s"] / tenet["median_s"]) if ok(tenet) else "",
                r["peak_rss_mib"], above(r), r["minflt_per_step"], rate,
                "%.1f" % (100 * rate / floor) if floor else ""))
    return "\n".join(lines)


def plot(path, env, workloads, frameworks, results):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = by_key(results)
    groups = [("whole models and the LLTM cell",
               [w for w in workloads if w.group not in ("op", "layer")]),
              ("CapsNet operators (batch %d) and embedding bag" % env["op_batch"],
               [w for w in workloads if w.group == "op"]),
              ("layers", [w for w in workloads if w.group == "layer"])]
    groups = [(title, ws) for title, ws in groups if ws]
    widest = max(len(ws) for _, ws in groups)
    fig, axes = plt.subplots(len(groups), 1, figsize=(max(14, 0.6 * widest), 6 * len(groups)),
                             squeeze=False)
    width = 0.8 / len(frameworks)
    for ax, (title, ws) in zip(axes[:, 0], groups):
        for i, f in enumerate(frameworks):
            xs, ys = [], []
            for j, w in enumerate(ws):
                r = table.get((f, w.name))
                x = j + (i - (len(frameworks) - 1) / 2) * width
                if ok(r):
                    xs.append(x)
                    ys.append(r["median_s"] * 1e3)
                elif r is not None:  # a failed measurement: marked, not drawn
                    ax.text(x, 0.02, failure(r), transform=ax.get_xaxis_transform(),
                            rotation=90, ha="center", va="bottom", fontsize=7, color="red")
            ax.bar(xs, ys, width, label=f, color="C%d" % i)
        ax.set_xlim(-0.5, len(ws) - 0.5)
        ax.set_yscale("log")
        ax.set_ylabel("median time per call (ms, log scale)")
        ax.set_title(title)
        ax.set_xticks(range(len(ws)))
        ax.set_xticklabels([w.title for w in ws], rotation=30, ha="right", fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def write(out_dir, env, workloads, frameworks, results):
    """Writes benchmark.md, benchmark.png and results.jsonl; returns the markdown."""
    os.makedirs(out_dir, exist_ok=True)
    parts = [header(env, results)]
    targets = targets_table(results)
    if targets:
        parts += ["## Targets (issue 4)", targets]
    targets = issue17_targets(workloads, results)
    if targets:
        parts += ["## Targets (issue 17)", targets]
    parts += ["## Median time per call", times_table(workloads, frameworks, results)]
    failed = failures(workloads, results)
    if failed:
        parts += ["## Failures", failed]
    spread = spread_checks(workloads, results)
    if spread:
        parts += ["## Checks passed against float64 (ill-conditioned in float32)", spread]
    parts += ["## Details", details_table(workloads, frameworks, results),
              "![time per workload](benchmark.png)"]
    text = "\n\n".join(parts) + "\n"
    with open(os.path.join(out_dir, "benchmark.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "results.jsonl"), "w") as f:
        f.write(json.dumps({"environment": env}) + "\n")
        for r in results:
            f.write(json.dumps(r) + "\n")
    plot(os.path.join(out_dir, "benchmark.png"), env, workloads, frameworks, results)
    return text
