"""The cost of abstraction, measured (issue 32; docs/study.md): the study's models
(bench/study_models.py) at each level, over batch sizes and input resolutions.

    bash scripts/study.sh [--quick] [--device cpu|cuda] [--levels a,b] [--models a,b]
                          [--batches 1,2,4] [--resolutions 28,56] [--out DIR]

Levels: PyTorch eager ("eager"), TorchScript ("script"), torch.compile
("compile"; on CUDA also mode="reduce-overhead"), a LibTorch C++ program
("libtorch", bench/study_libtorch/), the same program with CapsNet's capsule
layers as a Tenet operator ("libtorch-tenet": bench/study_ops/capsules.tn
emitted with `tenet emit --target torch`), and Tenet through Program.module()
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
import filecmp
import json
import os
import pathlib
import re
import shutil
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
LEVELS = ("eager", "script", "compile", "compile-reduce-overhead", "libtorch", "libtorch-tenet",
          "tenet-module", "tenet-standalone")
CUDA_ONLY = ("compile-reduce-overhead",)
# The emitted extension has CPU kernels only so far; standalone projects are for the CPU.
CPU_ONLY = ("libtorch-tenet", "tenet-standalone")
# Levels that run some models only: LibTorch + Tenet ops needs a custom part to
# make a Tenet operator of, and only CapsNet has one (its capsule layers).
LEVEL_MODELS = {"libtorch-tenet": ("capsnet",)}
# Standalone training programs read MNIST (28x28 images; training steps only): the
# bundled 5000-image sample, so that their RSS holds 15 MB of images, not 190.
STANDALONE_DATA = [os.path.join(ROOT, "data", "mnist-sample")]


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
    cmake = cmake_command()
    ninja = shutil.which("ninja", path=os.path.dirname(sys.executable)) or shutil.which("ninja")
    configure = [cmake, "-S", os.path.join(HERE, "study_libtorch"), "-B", build,
                 *(["-G", "Ninja"] if ninja else []),
                 f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}",
                 f"-DSTUDY_CUDA={'ON' if device == 'cuda' else 'OFF'}"]
    if device == "cpu":  # the capsule layers as a Tenet operator (libtorch-tenet)
        import tenet
        ops = os.path.join(ROOT, "build-study", "capsules_ops")
        emit_synced(lambda folder: tenet.emit_torch_extension(
            pathlib.Path(HERE, "study_ops", "capsules.tn"), folder, "capsules",
            namespace="study_capsules", overwrite=True), ops)
        configure.append(f"-DSTUDY_TENET_OPS={ops}")
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        subprocess.run(configure, check=True)
    subprocess.run([cmake, "--build", build], check=True)
    return binary


def emit_synced(emit, project):
    """Calls emit(folder) into a fresh staging folder and copies into `project` only the
    files whose contents changed, so that an unchanged project is not rebuilt and a
    changed one (a newer Tenet) is, incrementally."""
    with tempfile.TemporaryDirectory() as staging:
        emit(staging)
        for folder, _, files in os.walk(staging):
            for name in files:
                source = os.path.join(folder, name)
                target = os.path.join(project, os.path.relpath(source, staging))
                if not (os.path.exists(target) and filecmp.cmp(source, target, shallow=False)):
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    shutil.copy2(source, target)


def cmake_command():
    cmake = os.path.join(os.path.dirname(sys.executable), "cmake")
    return cmake if os.path.exists(cmake) else "cmake"


_STANDALONE = {}  # model -> its train program, emitted and built in this run


def standalone_binary(model):
    """The `train` program of the model's standalone project (tenet emit --train) under
    build-study/standalone/<model>, emitted and built once per run: the study's module
    imported and emitted (Program.emit) for the CNN and ResNet-20, models/capsnet.tn for
    CapsNet (the same architecture; its loss is not a classifier's cross-entropy, which
    Program.emit needs)."""
    if model in _STANDALONE:
        return _STANDALONE[model]
    import tenet
    project = os.path.join(ROOT, "build-study", "standalone", model)

    def emit(folder):
        if model == "capsnet":
            tenet.emit_standalone(os.path.join(ROOT, "models", "capsnet.tn"), folder,
                                  overwrite=True)
            return
        net = study_models.initialise(study_models.build(model, 28))
        images, _ = study_models.example_batch(model, 2, 28)
        program = tenet.from_torch(study_models.Scores(net).train(), (images,))
        program.emit(folder, name=f"study_{model}", overwrite=True,
                     loss="nll" if model == "cnn" else "cross_entropy")

    emit_synced(emit, project)
    build = os.path.join(project, "build")
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        subprocess.run([cmake_command(), "-S", project, "-B", build, "-DCMAKE_BUILD_TYPE=Release"],
                       check=True, capture_output=True)
    subprocess.run([cmake_command(), "--build", build], check=True, capture_output=True)
    _STANDALONE[model] = os.path.join(build, "train")
    return _STANDALONE[model]


def run_program(command, timeout):
    """Runs a program to its end: (output, exit code, rusage, wall seconds, peak RSS in
    MiB). The peak is its VmHWM, read every 5 ms while it runs (wait4's ru_maxrss would
    count this process's pages at the fork too)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    peak = [0.0]

    def watch():
        while proc.returncode is None:
            try:
                with open(f"/proc/{proc.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            peak[0] = max(peak[0], int(line.split()[1]) / 1024)
            except OSError:
                return
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    watchdog = threading.Timer(timeout, proc.kill)
    watchdog.start()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    watchdog.cancel()
    watcher.join()
    return out, proc.returncode, usage, time.perf_counter() - start, peak[0]


def run_standalone(job, timeout):
    """A standalone `train` program's step: runs of 1 step and of N steps (N such that
    they take about 2 min_time), the step time and faults per step from their difference
    (the program's own timer, and wait4), start-up to first result from the one-step
    run's wall time, the peak RSS from the long run, the deployment from ldd (the binary
    and the libraries it loads)."""
    record = dict(job)
    try:
        binary = standalone_binary(job["model"])
    except Exception as e:  # noqa: BLE001 (reported as the measurement's error)
        return dict(record, error=f"{type(e).__name__}: {e}"[:300])
    data = next(d for d in STANDALONE_DATA if os.path.isdir(d))
    runs = {}
    steps = [1, 1 + max(job["min_steps"], 10)]
    while len(runs) < 3:
        n = steps[len(runs)]
        out, code, usage, wall, peak = run_program(
            [binary, "--data", data, "--batch", str(job["batch"]), "--steps", str(n),
             "--epochs", "1000000", "--limit-test", "1"], timeout)
        found = re.search(r"trained (\d+) steps in ([0-9.]+) s", out)
        if code != 0 or not found:
            return dict(record, error=(out.strip().splitlines() or ["no output"])[-1][:300])
        runs[n] = (int(found.group(1)), float(found.group(2)), usage, wall, peak)
        if len(runs) == 2:  # the estimate; then enough steps for 2 min_time seconds
            estimate = max((runs[steps[1]][1] - runs[1][1]) / (steps[1] - 1), 1e-4)
            steps.append(max(steps[1] + 1, min(5000, int(2 * job["min_time"] / estimate))))
    (n1, t1, u1, wall1, _), (n2, t2, u2, _, peak2) = runs[1], runs[steps[2]]
    record["step_ms"] = 1e3 * (t2 - t1) / (n2 - n1)
    record["steps"] = n2 - n1
    record["minflt_per_step"] = max(0.0, (u2.ru_minflt - u1.ru_minflt) / (n2 - n1))
    record["peak_rss_mib"] = peak2
    record["startup_s"] = wall1
    record["deploy_bytes"] = linked_bytes(binary)
    return record


def linked_bytes(binary):
    """The binary and every shared library ldd says it loads."""
    listing = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    paths = {binary} | set(re.findall(r"(/\S+) \(0x", listing))
    return sum(os.path.getsize(p) for p in paths if os.path.isfile(p))


def command(job, binary):
    if job["level"] in ("libtorch", "libtorch-tenet"):
        cmd = [binary, "--tenet-ops", "1" if job["level"] == "libtorch-tenet" else "0"]
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
        # the worker's own VmHWM (ru_maxrss also counts this process's pages at the fork)
        record.setdefault("peak_rss_mib", usage.ru_maxrss / 1024)
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
        [lv for lv in LEVELS if lv not in (CPU_ONLY if args.device == "cuda" else CUDA_ONLY)]
    os.makedirs(args.out, exist_ok=True)
    results = os.path.join(args.out, "results.jsonl")
    done = {}
    if os.path.exists(results):
        with open(results) as f:
            for line in f:
                record = json.loads(line)
                done[key(record)] = record
    binary = libtorch_binary(args.device) if {"libtorch", "libtorch-tenet"} & set(levels) \
        else None
    os.environ.setdefault("TENET_CACHE_DIR", os.path.join(ROOT, "build-study", "tenet-cache"))
    timing = {"warmup": 1 if args.quick else 3, "min_steps": 3 if args.quick else 10,
              "min_time": 0.5 if args.quick else 2.0, "max_steps": 200}
    for mode in args.modes.split(","):
        for level in levels:
            stopped = set()  # (model, along resolution?) that failed or grew too slow
            for model, batch, resolution in grid(args):
                axis = (model, resolution != 28)
                if axis in stopped or model not in LEVEL_MODELS.get(level, (model,)) or (
                        level == "tenet-standalone" and (resolution != 28 or mode != "train")):
                    continue
                job = dict(timing, level=level, model=model, batch=batch, resolution=resolution,
                           mode=mode, device=args.device, threads=args.threads)
                record = done.get(key(job))
                if record is None:
                    record = run_standalone(job, args.timeout) \
                        if level == "tenet-standalone" else run_job(job, binary, args.timeout)
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
