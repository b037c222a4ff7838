"""Tables and plots of the abstraction study (bench/study.py's results.jsonl):
writes the generated part of docs/study.md (between its `<!-- study:DEVICE -->`
markers) and PNG plots into docs/study/.

    python bench/study_report.py [--results bench/results/study/results.jsonl]
                                 [--doc docs/study.md] [--device cpu]
"""
import argparse
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LEVEL_ORDER = ("eager", "script", "compile", "compile-reduce-overhead", "libtorch",
               "libtorch-tenet", "tenet-module", "tenet-standalone")
LEVEL_TITLES = {"eager": "PyTorch eager", "script": "TorchScript", "compile": "torch.compile",
                "compile-reduce-overhead": "torch.compile (reduce-overhead)",
                "libtorch": "LibTorch C++", "libtorch-tenet": "LibTorch C++ + Tenet ops",
                "tenet-module": "Tenet (Program.module())",
                "tenet-standalone": "Tenet standalone (emit --train)"}
MODEL_TITLES = {"cnn": "MNIST CNN", "resnet20": "ResNet-20", "capsnet": "CapsNet"}


def load(path, device):
    with open(path) as f:
        records = [json.loads(line) for line in f]
    return [r for r in records if r["device"] == device]


def levels_of(records):
    present = {r["level"] for r in records}
    return [lv for lv in LEVEL_ORDER if lv in present]


def cell(record, field, fmt):
    if record is None:
        return ""
    if "error" in record:
        return "fails"
    value = record.get(field)
    return fmt(value) if value is not None else ""


def ms(value):
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def table(records, model, mode, axis, field="step_ms", fmt=ms):
    """Levels down, batch sizes (axis "batch") or resolutions across."""
    rows = [r for r in records if r["model"] == model and r["mode"] == mode and
            ((r["resolution"] == 28) if axis == "batch" else (r["resolution"] != 28 or
                                                               r["batch"] == _rb(records)))]
    columns = sorted({r[axis] for r in rows})
    if not columns:
        return ""
    index = {(r["level"], r[axis]): r for r in rows}
    head = "| level | " + " | ".join(f"{axis[0]}={c}" for c in columns) + " |"
    lines = [head, "|---|" + "---:|" * len(columns)]
    for level in levels_of(rows):
        lines.append(f"| {LEVEL_TITLES[level]} | " +
                     " | ".join(cell(index.get((level, c)), field, fmt) for c in columns) + " |")
    return "\n".join(lines)


def _rb(records):
    """The batch size the resolution sweep ran at."""
    sizes = [r["batch"] for r in records if r["resolution"] != 28]
    return max(set(sizes), key=sizes.count) if sizes else None


def costs_table(records, mode, batch):
    """Per level and model at one batch size: RSS, faults, start-up, deployment; and the
    throughput at the largest batch measured."""
    largest = max(r["batch"] for r in records if r["resolution"] == 28)
    lines = ["| level | model | peak RSS (MiB) | minor faults / step | start-up to first "
             f"result (s) | mapped files (MiB) | images/s at batch {largest} |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for level in levels_of(records):
        for model in MODEL_TITLES:
            match = [r for r in records if r["level"] == level and r["model"] == model and
                     r["mode"] == mode and r["batch"] == batch and r["resolution"] == 28]
            if not match or "error" in match[0]:
                continue
            r = match[0]
            big = [b for b in records if b["level"] == level and b["model"] == model and
                   b["mode"] == mode and b["batch"] == largest and b["resolution"] == 28 and
                   "error" not in b]
            rate = f"{1e3 * largest / big[0]['step_ms']:.0f}" if big else ""
            lines.append(f"| {LEVEL_TITLES[level]} | {MODEL_TITLES[model]} | "
                         f"{r['peak_rss_mib']:.0f} | {r['minflt_per_step']:.0f} | "
                         f"{r.get('startup_s', float('nan')):.2f} | "
                         f"{r['deploy_bytes'] / 2**20:.0f} | {rate} |")
    return "\n".join(lines)


def plot(records, device, out_dir):
    """time and peak RSS against batch size, and time against resolution (log scales)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(out_dir, exist_ok=True)
    files = []
    for mode in ("train", "infer"):
        models = [m for m in MODEL_TITLES if any(r["model"] == m for r in records)]
        fig, axes = plt.subplots(2, len(models), figsize=(5 * len(models), 8), squeeze=False)
        for col, model in enumerate(models):
            for row, (field, label) in enumerate((("step_ms", "ms per step"),
                                                  ("peak_rss_mib", "peak RSS (MiB)"))):
                ax = axes[row][col]
                for level in levels_of(records):
                    points = sorted((r["batch"], r[field]) for r in records
                                    if r["level"] == level and r["model"] == model and
                                    r["mode"] == mode and r["resolution"] == 28 and
                                    "error" not in r)
                    if points:
                        ax.plot(*zip(*points), marker="o", label=LEVEL_TITLES[level],
                                color=f"C{LEVEL_ORDER.index(level)}")
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xlabel("batch size")
                ax.set_ylabel(label)
                ax.set_title(f"{MODEL_TITLES[model]}, {mode}")
                ax.grid(True, which="both", alpha=0.3)
        handles = {}
        for ax in axes.flat:
            for h, label in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(label, h)
        fig.tight_layout(rect=(0, 0.06, 1, 1))
        fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=4, fontsize=9)
        name = f"{device}-{mode}-batch.png"
        fig.savefig(os.path.join(out_dir, name), dpi=80)
        plt.close(fig)
        files.append(name)
    files.append(plot_resolution(records, device, out_dir, plt))
    return files


def plot_resolution(records, device, out_dir, plt):
    """Training step time against the input resolution (the resolution sweep's batch)."""
    batch = _rb(records)
    models = [m for m in MODEL_TITLES
              if len({r["resolution"] for r in records if r["model"] == m}) > 1]
    fig, axes = plt.subplots(1, max(1, len(models)), figsize=(5 * max(1, len(models)), 4),
                             squeeze=False)
    for ax, model in zip(axes[0], models):
        for level in levels_of(records):
            points = sorted((r["resolution"], r["step_ms"]) for r in records
                            if r["level"] == level and r["model"] == model and
                            r["mode"] == "train" and r["batch"] == batch and "error" not in r)
            if len(points) > 1:
                ax.plot(*zip(*points), marker="o", label=LEVEL_TITLES[level],
                        color=f"C{LEVEL_ORDER.index(level)}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("input resolution (pixels per side)")
        ax.set_ylabel("ms per training step")
        ax.set_title(f"{MODEL_TITLES[model]}, batch {batch}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    name = f"{device}-train-resolution.png"
    fig.savefig(os.path.join(out_dir, name), dpi=80)
    plt.close(fig)
    return name


def section(records, device, plots):
    out = [f"Generated by `python bench/study_report.py` from "
           f"`bench/results/study/results.jsonl` ({len(records)} measurements).", ""]
    for mode, what in (("train", "Training step (forward, backward, Adam), ms"),
                       ("infer", "Inference (no-grad forward, evaluation mode), ms per batch")):
        for model in MODEL_TITLES:
            t = table(records, model, mode, "batch")
            if t:
                out += [f"**{MODEL_TITLES[model]}: {what}** (28x28 images)", "", t, ""]
            t = table(records, model, mode, "resolution")
            if t and mode == "train":
                out += [f"**{MODEL_TITLES[model]}: {what}, against the input resolution** "
                        f"(batch {_rb(records)})", "", t, ""]
    batches = sorted({r["batch"] for r in records if r["resolution"] == 28})
    mid = min(batches, key=lambda b: abs(b - 8)) if batches else 8
    out += [f"**Costs besides time** (training, batch {mid}, 28x28)", "",
            costs_table(records, "train", mid), ""]
    out += [f"![{p}](study/{p})" for p in plots]
    return "\n".join(out)


def accuracy_section(path, out_dir):
    """The accuracy experiment's table (test accuracy after each epoch, and the mean
    training loss of the last) and curves, from accuracy.jsonl."""
    with open(path) as f:
        records = [json.loads(line) for line in f]
    runs = {}
    for r in records:
        runs.setdefault((r["model"], r["init"], r["level"]), []).append(r)
    epochs = max(r["epoch"] for r in records)
    lines = ["| model | training / test images | initialisation | level | " +
             " | ".join(f"epoch {e}" for e in range(1, epochs + 1)) +
             " | last epoch's mean loss |", "|---|---|---|---|" + "---:|" * (epochs + 1)]
    for (model, init, level), rows in sorted(runs.items(), key=lambda kv: (
            kv[0][0], kv[0][1] != "pytorch-default", LEVEL_ORDER.index(kv[0][2]))):
        acc = {r["epoch"]: r["test_accuracy"] for r in rows}
        last = max(rows, key=lambda r: r["epoch"])
        images = f"{last['limit_train'] or 60000} / {last['limit_test'] or 10000}"
        lines.append(f"| {MODEL_TITLES[model]} | {images} | {init} | {LEVEL_TITLES[level]} | " +
                     " | ".join(f"{100 * acc[e]:.2f}%" if e in acc else ""
                                for e in range(1, epochs + 1)) +
                     f" | {last['train_loss']:.6f} |")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = sorted({m for m, _, _ in runs})
    fig, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 4), squeeze=False)
    for ax, model in zip(axes[0], models):
        for (m, init, level), rows in sorted(runs.items()):
            if m != model:
                continue
            rows = sorted(rows, key=lambda r: r["epoch"])
            ax.plot([r["epoch"] for r in rows], [100 * r["test_accuracy"] for r in rows],
                    marker="o", linestyle="-" if init == "pytorch-default" else "--",
                    label=f"{LEVEL_TITLES[level]}, {init}")
        ax.set_xlabel("epoch")
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(MODEL_TITLES[model])
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    fig.savefig(os.path.join(out_dir, "accuracy.png"), dpi=80)
    plt.close(fig)
    sample = records[0]
    head = (f"Generated by `python bench/study_report.py --accuracy` from "
            f"`bench/results/study/accuracy.jsonl`: batch {sample['batch']}, Adam at lr 1e-3.")
    return "\n".join([head, ""] + lines + ["", "![accuracy](study/accuracy.png)"])


def replace_section(doc_path, name, text):
    begin, end = f"<!-- study:{name} -->", f"<!-- /study:{name} -->"
    with open(doc_path) as f:
        doc = f.read()
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(doc):
        raise SystemExit(f"{doc_path} has no {begin} ... {end} section to fill")
    with open(doc_path, "w") as f:
        f.write(pattern.sub(lambda _: f"{begin}\n{text}\n{end}", doc))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=os.path.join(HERE, "results", "study",
                                                          "results.jsonl"))
    parser.add_argument("--doc", default=os.path.join(ROOT, "docs", "study.md"))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--accuracy", action="store_true",
                        help="the accuracy experiment's section instead (accuracy.jsonl)")
    args = parser.parse_args()
    out_dir = os.path.join(os.path.dirname(args.doc), "study")
    if args.accuracy:
        path = os.path.join(os.path.dirname(args.results), "accuracy.jsonl")
        replace_section(args.doc, "accuracy", accuracy_section(path, out_dir))
        print(f"wrote {args.doc} (accuracy)")
        return
    records = load(args.results, args.device)
    plots = plot(records, args.device, out_dir)
    replace_section(args.doc, args.device, section(records, args.device, plots))
    print(f"wrote {args.doc} ({args.device}) and {len(plots)} plots")


if __name__ == "__main__":
    main()
