"""The abstraction study's accuracy experiment (docs/study.md, "Accuracy"): the MNIST
CNN and CapsNet trained for a fixed number of epochs at each level from the same
explicit initialisation, the same batches in the same order and Adam at lr 1e-3; then
the same with only the initialisation changed.

    python bench/study_accuracy.py --data ../shared/data/mnist [--models cnn,capsnet]
        [--levels eager,libtorch,tenet-module] [--inits pytorch-default,xavier]
        [--epochs 3] [--batch 64] [--limit-train N] [--limit-test N]

Levels: PyTorch eager and Tenet through Program.module() (bench/study_worker.py's
train_mnist) and the LibTorch C++ program (bench/study_libtorch, --mnist). Each
(model, level, initialisation) is a process; its per-epoch lines (mean training loss,
test accuracy, seconds) go to <out>/accuracy.jsonl, and a run already there is not
repeated. bench/study_report.py --accuracy draws the curves.
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import study  # noqa: E402

FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
         "t10k-labels-idx1-ubyte")


def raw_mnist(data):
    """A folder with MNIST's IDX files uncompressed (LibTorch's reader needs them so)."""
    if all(os.path.exists(os.path.join(data, f)) for f in FILES):
        return data
    out = os.path.join(ROOT, "build-study", "mnist")
    os.makedirs(out, exist_ok=True)
    for f in FILES:
        if not os.path.exists(os.path.join(out, f)):
            with gzip.open(os.path.join(data, f + ".gz")) as src, \
                    open(os.path.join(out, f), "wb") as dst:
                shutil.copyfileobj(src, dst)
    return out


def command(job, binary):
    if job["level"] == "libtorch":
        return [binary, "--model", job["model"], "--batch", str(job["batch"]),
                "--mnist", job["data"], "--epochs", str(job["epochs"]),
                "--limit-train", str(job["limit_train"]), "--limit-test", str(job["limit_test"]),
                "--init", job["init"], "--seed", str(job["seed"]),
                "--threads", str(job["threads"])]
    return [sys.executable, os.path.join(HERE, "study_worker.py"), json.dumps(job)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "mnist"))
    parser.add_argument("--models", default="cnn,capsnet")
    parser.add_argument("--levels", default="eager,libtorch,tenet-module")
    parser.add_argument("--inits", default="pytorch-default,xavier")
    parser.add_argument("--init-levels", default="eager,tenet-module",
                        help="the levels that run the initialisations after the first")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--limit-train", type=int, default=0)
    parser.add_argument("--limit-test", type=int, default=0)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--out", default=os.path.join(HERE, "results", "study"))
    args = parser.parse_args()
    data = raw_mnist(args.data)
    os.makedirs(args.out, exist_ok=True)
    results = os.path.join(args.out, "accuracy.jsonl")
    done = set()
    if os.path.exists(results):
        with open(results) as f:
            for line in f:
                r = json.loads(line)
                if r["epoch"] == r["epochs"]:
                    done.add((r["model"], r["level"], r["init"], r["epochs"], r["limit_train"]))
    levels = args.levels.split(",")
    binary = study.libtorch_binary("cpu") if "libtorch" in levels else None
    os.environ.setdefault("TENET_CACHE_DIR", os.path.join(ROOT, "build-study", "tenet-cache"))
    inits = args.inits.split(",")
    for model in args.models.split(","):
        for init in inits:
            for level in levels:
                if init != inits[0] and level not in args.init_levels.split(","):
                    continue
                job = {"task": "mnist", "model": model, "level": level, "init": init,
                       "data": data, "epochs": args.epochs, "batch": args.batch,
                       "limit_train": args.limit_train, "limit_test": args.limit_test,
                       "seed": 0, "threads": args.threads}
                if (model, level, init, args.epochs, args.limit_train) in done:
                    continue
                proc = subprocess.Popen(command(job, binary), stdout=subprocess.PIPE, text=True,
                                        cwd=HERE)
                for line in proc.stdout:
                    if not line.startswith("{"):
                        continue
                    event = json.loads(line)
                    record = {k: job[k] for k in ("model", "level", "init", "epochs", "batch",
                                                  "limit_train", "limit_test")}
                    record.update({k: v for k, v in event.items() if k != "event"})
                    with open(results, "a") as f:
                        f.write(json.dumps(record) + "\n")
                    print(f"{model:8} {level:13} {init:16} epoch {record['epoch']}: "
                          f"loss {record['train_loss']:.4f}, test accuracy "
                          f"{100 * record['test_accuracy']:.2f}% ({record['seconds']:.0f} s)",
                          flush=True)
                if proc.wait() != 0:
                    print(f"{model} {level} {init}: failed (exit {proc.returncode})", flush=True)


if __name__ == "__main__":
    main()
