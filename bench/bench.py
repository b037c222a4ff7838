"""The Tenet vs PyTorch benchmark driver (docs/benchmark.md; run it with
`bash scripts/bench.sh`, which builds everything first).

For every workload of workloads.py it writes the inputs once (.npy, fixed
seeds), then measures, each in a process of its own:
  tenet    build/bench/tenet_bench (C++: parse, AD, JIT, timed calls)
  eager    PyTorch eager       } torch_worker.py, in children of a fork server
  compile  torch.compile       } that imported torch once
  script   torch.jit.script    }
The eager process first checks PyTorch's outputs and gradients against
Tenet's (its first call, dumped by tenet_bench): a mismatch stops the run
with a non-zero exit status and no results are written. It also measures the
GEMM floor (sgemm of two 2048 x 2048 matrices, through OpenBLAS from
tenet_bench and through torch.mm; the faster is the floor). Then it prints
the markdown tables and writes them, the raw JSON lines and a PNG plot to
the output folder (default bench/results/).

Usage: python bench/bench.py [--quick] [--only REGEX] [--frameworks LIST]
                             [--build-dir DIR] [--out DIR] [--op-batch N] [--threads N]
"""
import argparse
import datetime
import json
import multiprocessing
import os
import platform
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
FRAMEWORKS = ["tenet", "eager", "compile", "script"]
TOLERANCE = 1e-3  # max |tenet - torch| / max |torch|, per tensor
JOB_TIMEOUT_S = 1200

sys.path.insert(0, HERE)
from workloads import all_workloads, write_inputs  # noqa: E402
import report  # noqa: E402
import worker_entry  # noqa: E402


class CheckFailed(Exception):
    pass


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="1 warm-up and 2 timed steps per measurement (checks everything works)")
    p.add_argument("--only", default="", help="regular expression on workload names")
    p.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    p.add_argument("--op-batch", type=int, default=100, help="batch size of the operator rows")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2,
                   help="threads for every framework (the comparison is defined at 2; 1 is\n"
                        "steadier on a machine that other jobs load)")
    return p.parse_args()


def step_options(quick):
    if quick:
        return {"warmup": 1, "min_steps": 2, "min_time": 0.0, "max_steps": 2}
    return {"warmup": 2, "min_steps": 3, "min_time": 1.0, "max_steps": 30}


def run_tenet(args, workload, data_dir, steps, dump_dir):
    exe = os.path.join(args.build_dir, "bench", "tenet_bench")
    cmd = [exe, "train" if workload.mode == "train" else workload.mode,
           os.path.join(ROOT, workload.tn_file), workload.tn_fn, "--inputs", data_dir,
           "--label", workload.name, "--dump", dump_dir,
           "--warmup", str(steps["warmup"]), "--min-steps", str(steps["min_steps"]),
           "--min-time", str(steps["min_time"]), "--max-steps", str(steps["max_steps"])]
    if workload.wrt:
        cmd += ["--wrt", ",".join(workload.wrt)]
    if workload.loss_output:
        cmd += ["--output", workload.loss_output]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
    if proc.returncode != 0:
        return {"framework": "tenet", "workload": workload.name,
                "error": "%s\n%s" % (" ".join(cmd), proc.stderr.strip())}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_torch(context, target, job):
    """Runs torch_worker.<target>(job) in a child of the fork server."""
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=worker_entry.serve, args=(target, job, sender))
    child.start()
    sender.close()
    result = None
    if receiver.poll(JOB_TIMEOUT_S):
        try:
            result = receiver.recv()
        except EOFError:
            result = None
    child.join(5)
    if child.is_alive():
        child.kill()
        child.join()
    if result is None:
        result = {"framework": job.get("framework", target), "workload": job.get("workload"),
                  "error": "the worker died or timed out (exit code %s)" % child.exitcode}
    return result


def check_rows(result):
    failed = [c for c in result.get("check", []) if not c["ok"]]
    if "check" not in result or failed:
        lines = ["%s: %s" % (c["name"], c.get("why", "max rel. error %.3g > %g" % (
            c["error"], TOLERANCE))) for c in failed] or ["no comparison was made"]
        raise CheckFailed("Tenet and PyTorch disagree on %s:\n  %s" % (
            result["workload"], "\n  ".join(lines)))
    worst = max(result["check"], key=lambda c: c["error"])
    print("  check vs PyTorch: %d tensors agree (worst %s, %.2g)" % (
        len(result["check"]), worst["name"], worst["error"]), flush=True)


def describe(result):
    if "error" in result:
        return "ERROR"
    return "%.4g s (peak RSS %.0f MiB, %.0f minor faults/step)" % (
        result["median_s"], result["peak_rss_mib"], result["minflt_per_step"])


def measure_floor(args, context, steps):
    exe = os.path.join(args.build_dir, "bench", "tenet_bench")
    opts = ["--warmup", "1", "--min-steps", str(max(3, steps["min_steps"])), "--min-time",
            str(steps["min_time"]), "--max-steps", "20"]
    proc = subprocess.run([exe, "gemm", "2048", "--label", "sgemm_2048"] + opts,
                          capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
    results = []
    if proc.returncode == 0:
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        r["framework"] = "openblas"
        results.append(r)
    else:
        print("GEMM floor through OpenBLAS failed: %s" % proc.stderr.strip(), file=sys.stderr)
    job = {"threads": args.threads, "n": 2048, "warmup": 1,
           "min_steps": max(3, steps["min_steps"]), "min_time": steps["min_time"],
           "max_steps": 20}
    r = run_torch(context, "run_mm", job)
    if "error" not in r:
        results.append(r)
    for r in results:
        print("GEMM floor, %s: %.1f GFLOP/s" % (r["framework"], r["gflops"]), flush=True)
    return results


def environment(threads):
    import numpy
    env = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "host": platform.node(), "cpu": "?", "cores": os.cpu_count(),
           "load_start": os.getloadavg(), "threads": threads, "numpy": numpy.__version__,
           "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            env["cpu"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return env


def main():
    args = parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ.pop("OPENBLAS_CORETYPE", None)
    frameworks = [f for f in args.frameworks.split(",") if f]
    unknown = set(frameworks) - set(FRAMEWORKS)
    if unknown:
        sys.exit("bench: unknown frameworks %s (known: %s)" % (sorted(unknown), FRAMEWORKS))
    exe = os.path.join(args.build_dir, "bench", "tenet_bench")
    if not os.path.exists(exe):
        sys.exit("bench: %s is missing: build it (bash scripts/build.sh) or pass --build-dir" % exe)
    if not {"tenet", "eager"} <= set(frameworks):
        print("bench: no numerical check (it needs both tenet and eager)", file=sys.stderr)
    steps = step_options(args.quick)
    workloads = [w for w in all_workloads(args.op_batch) if re.search(args.only, w.name)]
    if not workloads:
        sys.exit("bench: no workload matches --only %r" % args.only)
    work = os.path.join(args.build_dir, "bench-data")

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["torch", "torch_worker"])
    env = environment(args.threads)
    started = time.time()
    print("bench: %d workloads x %s, %s; load average %.1f %.1f %.1f" % (
        len(workloads), ",".join(frameworks), "quick" if args.quick else "full",
        *env["load_start"]), flush=True)

    results = measure_floor(args, context, steps)
    for w in workloads:
        print("== %s (%.3g GFLOP)" % (w.title, w.flops * 1e-9), flush=True)
        data_dir = os.path.join(work, w.name)
        dump_dir = os.path.join(data_dir, "tenet-out")
        write_inputs(w, data_dir, args.seed)
        tenet_ok = False
        for framework in frameworks:
            if framework == "tenet":
                r = run_tenet(args, w, data_dir, steps, dump_dir)
                tenet_ok = "error" not in r
            else:
                job = dict(steps, threads=args.threads, op_batch=args.op_batch, workload=w.name,
                           framework=framework, data_dir=data_dir, tolerance=TOLERANCE)
                if framework == "eager" and tenet_ok:
                    job["check_against"] = dump_dir
                r = run_torch(context, "run_job", job)
                if "error" not in r and "check_against" in job:
                    check_rows(r)
            r["load"] = os.getloadavg()[0]
            r.setdefault("flops", w.flops)
            results.append(r)
            print("  %-8s %s" % (framework, describe(r)), flush=True)
            if "error" in r:
                print(r["error"], file=sys.stderr, flush=True)
    env["load_end"] = os.getloadavg()
    env["minutes"] = (time.time() - started) / 60
    env["mode"] = "quick" if args.quick else "full"
    env["op_batch"] = args.op_batch
    env["torch"] = next((r["torch"] for r in results if "torch" in r), "?")
    env.update(step_options(args.quick))

    tables = report.write(args.out, env, workloads, frameworks, results)
    print(tables)
    print("bench: wrote %s (%.1f minutes)" % (args.out, env["minutes"]))
    errors = [r for r in results if "error" in r]
    if errors:
        print("bench: %d measurements failed (see above)" % len(errors), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CheckFailed as e:
        print("\nbench: NUMERICAL CHECK FAILED\n%s\nNo results were written." % e, file=sys.stderr)
        sys.exit(2)
