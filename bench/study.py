"""The cost of abstraction, measured (issue 32; docs/study.md): the study's models
(bench/study_models.py) at each level, over batch sizes and input resolutions.

    bash scripts/study.sh [--quick] [--device cpu|cuda] [--levels a,b] [--models a,b]
                          [--batches 1,2,4] [--resolutions 28,56] [--out DIR]

Levels: PyTorch eager ("eager"), TorchScript ("script"), torch.compile
("compile"; on CUDA also mode="reduce-overhead"), a LibTorch C++ program
("libtorch", bench/study_libtorch/), and Tenet through Program.module()
("tenet-module"). Each measurement runs in a process of its own: the parent
times process start to the first step's end (start-up to first result) and
reads the child's peak RSS from wait4; the child reports the median step time,
minor page faults per step and the bytes of the files mapped into it (what a
deployment must carry: binary, interpreter, libraries). Results go to
<out>/results.jsonl, one line per measurement; a measurement already there is
not run again (delete the file to start over). bench/study_report.py writes the
tables and plots.

A level stops growing the batch (or the resolution) of a model once a step
fails or takes longer than --step-limit seconds.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import study_models  # noqa: E402

PYTHON_LEVELS = ("eager", "script", "compile", "compile-reduce-overhead", "tenet-module")
LEVELS = ("eager", "script", "compile", "compile-reduce-overhead", "libtorch", "tenet-module")
CUDA_ONLY = ("compile-reduce-overhead",)


def grid(args):
    """The (model, batch, resolution) points of a run, in the order they run."""
    quick = args.quick
    batches = args.batches or ([1, 8, 64] if quick else [2 ** k for k in range(11)])
    resolutions = args.resolutions or ([28, 56, 112] if quick else [28, 56, 112, 224])
    # the resolution sweep runs at --resolution-batch, 28 included
    points = []
    for model in args.models:
        for b in batches:
            points.append((model, b, 28))
        if model in study_models.RESOLUTION_MODELS:
            for r in resolutions:
                point = (model, args.resolution_batch, r)
                if point not in points:
                    points.append(point)
    return points


def libtorch_binary(device):
    """Configures and builds bench/study_libtorch once (build-study/libtorch[-cuda])."""
    import torch
    build = os.path.join(ROOT, "build-study", "libtorch" + ("-cuda" if device == "cuda" else ""))
    binary = os.path.join(build, "study_libtorch")
    venv_bin = os.path.dirname(sys.executable)
    cmake = os.path.join(venv_bin, "cmake") if os.path.exists(os.path.join(venv_bin, "cmake")) \
        else "cmake"
    if not os.path.exists(os.path.join(build, "build.ninja")):
        subprocess.run([cmake, "-S", os.path.join(HERE, "study_libtorch"), "-B", build,
                        "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}",
                        f"-DSTUDY_CUDA={'ON' if device == 'cuda' else 'OFF'}"], check=True)
    subprocess.run([cmake, "--build", build], check=True)
    return binary


def command(job, binary):
    if job["level"] == "libtorch":
        cmd = [binary]
        for key in ("model", "batch", "resolution", "mode", "device", "threads", "warmup",
                    "min_steps", "min_time", "max_steps"):
            cmd += ["--" + key.replace("_", "-"), str(job[key])]
        return cmd
    return [sys.executable, os.path.join(HERE, "study_worker.py"), json.dumps(job)]


def run_job(job, binary, timeout):
    """Runs one measurement; returns the record (with "error" when it failed)."""
    record = dict(job)
    with tempfile.TemporaryFile(mode="w+") as errors:
        start = time.perf_counter()
        proc = subprocess.Popen(command(job, binary), stdout=subprocess.PIPE, stderr=errors,
                                text=True, cwd=HERE)
        watchdog = threading.Timer(timeout, proc.kill)
        watchdog.start()
        for line in proc.stdout:
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("event") == "first":
                record["startup_s"] = time.perf_counter() - start
                record["first_value"] = event.get("value")
            elif event.get("event") == "result":
                record.update({k: v for k, v in event.items() if k != "event"})
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        watchdog.cancel()
        record["peak_rss_mib"] = usage.ru_maxrss / 1024
        if "step_ms" not in record:
            errors.seek(0)
            lines = errors.read().strip().splitlines()
            why = "timed out after %g s" % timeout if proc.returncode == -9 else \
                (lines or ["exit %d" % proc.returncode])[-1]
            record["error"] = why[:300]
    return record


def key(record):
    return tuple(record[k] for k in ("device", "level", "model", "batch", "resolution", "mode"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (a few points)")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--levels", default=None, help="comma-separated (default: all)")
    parser.add_argument("--models", default=",".join(study_models.MODELS))
    parser.add_argument("--modes", default="train,infer")
    parser.add_argument("--batches", default=None)
    parser.add_argument("--resolutions", default=None)
    parser.add_argument("--resolution-batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--step-limit", type=float, default=10.0)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "study"))
    args = parser.parse_args()
    args.models = args.models.split(",")
    args.batches = [int(b) for b in args.batches.split(",")] if args.batches else None
    args.resolutions = [int(r) for r in args.resolutions.split(",")] if args.resolutions else None
    levels = args.levels.split(",") if args.levels else \
        [lv for lv in LEVELS if args.device == "cuda" or lv not in CUDA_ONLY]
    os.makedirs(args.out, exist_ok=True)
    results = os.path.join(args.out, "results.jsonl")
    done = {}
    if os.path.exists(results):
        with open(results) as f:
            for line in f:
                record = json.loads(line)
                done[key(record)] = record
    binary = libtorch_binary(args.device) if "libtorch" in levels else None
    os.environ.setdefault("TENET_CACHE_DIR", os.path.join(ROOT, "build-study", "tenet-cache"))
    timing = {"warmup": 1 if args.quick else 3, "min_steps": 3 if args.quick else 10,
              "min_time": 0.5 if args.quick else 2.0, "max_steps": 200}
    for mode in args.modes.split(","):
        for level in levels:
            stopped = set()  # (model, along resolution?) that failed or grew too slow
            for model, batch, resolution in grid(args):
                axis = (model, resolution != 28)
                if axis in stopped:
                    continue
                job = dict(timing, level=level, model=model, batch=batch, resolution=resolution,
                           mode=mode, device=args.device, threads=args.threads)
                record = done.get(key(job))
                if record is None:
                    record = run_job(job, binary, args.timeout)
                    with open(results, "a") as f:
                        f.write(json.dumps(record) + "\n")
                    done[key(job)] = record
                shown = record.get("error") or f"{record['step_ms']:.2f} ms/step, " \
                    f"start-up {record.get('startup_s', float('nan')):.2f} s, " \
                    f"RSS {record['peak_rss_mib']:.0f} MiB"
                print(f"{args.device} {mode:5} {level:24} {model:8} b={batch:<5} "
                      f"r={resolution:<4} {shown}", flush=True)
                if "error" in record or record["step_ms"] > 1e3 * args.step_limit:
                    stopped.add(axis)


if __name__ == "__main__":
    main()
