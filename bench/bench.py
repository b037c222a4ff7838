"""The Tenet vs PyTorch benchmark driver (docs/benchmark.md; run it with
`bash scripts/bench.sh`, which builds everything first).

For every workload of workloads.py it writes the inputs once (.npy, fixed
seeds), then measures, each in a process of its own:
  tenet    build/bench/tenet_bench (C++: parse, AD, JIT, timed calls)
  eager    PyTorch eager       } torch_worker.py, in children of a fork server
  compile  torch.compile       } that imported torch once
  script   torch.jit.script    }
The eager process first checks PyTorch's outputs and gradients against
Tenet's (its first call, dumped by tenet_bench): a mismatch makes Tenet's row
a failure ("mismatch", its times kept in the JSON only) and the exit status 2.
The driver also measures the
GEMM floor (sgemm of two 2048 x 2048 matrices, through OpenBLAS from
tenet_bench and through torch.mm; the faster is the floor). Then it prints
the markdown tables and writes them, the raw JSON lines and a PNG plot to
the output folder (default bench/results/).

Imported workloads (issue 17: whole models and layers written in PyTorch,
bench/models_torch.py) first go through an import step, in a PyTorch process of
its own: tenet.from_torch translates the module, and the program and every
input are written to the workload's data folder (torch_worker.run_import). An
import that fails, a Tenet compilation that fails and a numerical mismatch are
failed rows of the tables (with the message under "Failures"); the other
frameworks are still measured, and the exit status is non-zero.

Usage: python bench/bench.py [--quick] [--only REGEX] [--group LIST] [--frameworks LIST]
                             [--build-dir DIR] [--out DIR] [--op-batch N] [--threads N[,N...]]
"""
import argparse
import datetime
import json
import multiprocessing
import os
import platform
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
FRAMEWORKS = ["tenet", "eager", "compile", "script"]
GROUPS = ["capsnet", "cnn", "model", "lltm", "op", "layer"]
GROUP_ALIASES = {"models": ["capsnet", "cnn", "model", "lltm"], "layers": ["layer"],
                 "ops": ["op"]}
TOLERANCE = 1e-3  # max |tenet - torch| / max |torch|, per tensor
JOB_TIMEOUT_S = 1200

sys.path.insert(0, HERE)
from workloads import all_workloads, write_inputs  # noqa: E402
import report  # noqa: E402
import scaling  # noqa: E402
import worker_entry  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="1 warm-up and 2 timed steps per measurement (checks everything works)")
    p.add_argument("--only", default="", help="regular expression on workload names")
    p.add_argument("--group", default="",
                   help="comma-separated workload groups: %s (model: the imported\n"
                        "whole models; layer: the layer rows); 'models' is every whole model\n"
                        "(capsnet,cnn,model,lltm), 'layers' = layer, 'ops' = op" % ",".join(GROUPS))
    p.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    p.add_argument("--op-batch", type=int, default=100, help="batch size of the operator rows")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", default="2",
                   help="threads for every framework (the comparison is defined at 2; 1 is\n"
                        "steadier on a machine that other jobs load); several, e.g.\n"
                        "1,2,4,8,16: each count's tables in OUT/threads-N/ and a scaling\n"
                        "table and plot in OUT/scaling.md")
    return p.parse_args()


def step_options(quick):
    if quick:
        return {"warmup": 1, "min_steps": 2, "min_time": 0.0, "max_steps": 2}
    return {"warmup": 2, "min_steps": 3, "min_time": 1.0, "max_steps": 30}


def tenet_command(build_dir, workload, data_dir, steps):
    """The tenet_bench command that times `workload` (steps: step_options' keys)."""
    cmd = [os.path.join(build_dir, "bench", "tenet_bench"),
           "train" if workload.mode == "train" else workload.mode,
           os.path.join(ROOT, workload.tn_file), workload.tn_fn, "--inputs", data_dir,
           "--label", workload.name,
           "--warmup", str(steps["warmup"]), "--min-steps", str(steps["min_steps"]),
           "--min-time", str(steps["min_time"]), "--max-steps", str(steps["max_steps"])]
    if workload.wrt:
        cmd += ["--wrt", ",".join(workload.wrt)]
    if workload.loss_output:
        cmd += ["--output", workload.loss_output]
    return cmd


def run_tenet(args, workload, data_dir, steps, dump_dir):
    if os.path.exists(dump_dir):
        shutil.rmtree(dump_dir)  # a failed call must not leave an older call's outputs
    cmd = tenet_command(args.build_dir, workload, data_dir, steps) + ["--dump", dump_dir]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"framework": "tenet", "workload": workload.name,
                "error": "%s\n%s" % (" ".join(cmd), e)}
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
    """None when Tenet's first call agrees with PyTorch, else the message."""
    failed = sorted([c for c in result.get("check", []) if not c["ok"]],
                    key=lambda c: -c["error"])
    if "check" not in result or failed:
        shown = 6
        lines = ["%s: %s%s" % (c["name"], c.get("why", "max rel. error %.3g > %g" % (
            c["error"], TOLERANCE)), " (against PyTorch in float64: Tenet %.3g, PyTorch float32 "
            "%.3g)" % (c["tenet_vs_f64"], c["torch_vs_f64"]) if "tenet_vs_f64" in c else "")
            for c in failed[:shown]] or ["no comparison was made"]
        if len(failed) > shown:
            lines.append("... %d more of the %d tensors compared exceed %g (all in results.jsonl)"
                         % (len(failed) - shown, len(result["check"]), TOLERANCE))
        return "Tenet and PyTorch disagree on %s (the worst first):\n  %s" % (
            result["workload"], "\n  ".join(lines))
    worst = max(result["check"], key=lambda c: c["error"])
    spread = [c for c in result["check"] if c.get("within_torch_spread")]
    if spread:
        worst = max(spread, key=lambda c: c["tenet_vs_f64"])
        print("  check vs PyTorch: %d of %d tensors differ by more than %g, but against "
              "float64 Tenet's worst (%s, %.2g) is within twice PyTorch float32's own (%.2g)" % (
                  len(spread), len(result["check"]), TOLERANCE, worst["name"],
                  worst["tenet_vs_f64"], max(c["torch_vs_f64"] for c in result["check"]
                                             if "torch_vs_f64" in c)), flush=True)
        return None
    print("  check vs PyTorch: %d tensors agree (worst %s, %.2g)" % (
        len(result["check"]), worst["name"], worst["error"]), flush=True)
    return None


def select_groups(text):
    groups = set()
    for g in [g for g in text.split(",") if g]:
        if g not in GROUPS and g not in GROUP_ALIASES:
            sys.exit("bench: unknown group %r (known: %s, %s)" % (
                g, ",".join(GROUPS), ",".join(GROUP_ALIASES)))
        groups.update(GROUP_ALIASES.get(g, [g]))
    return groups


def import_workload(context, args, workload, data_dir):
    """The import step (torch_worker.run_import) of an imported workload; fills the
    workload's Tenet side in from its result. Returns None or the error text."""
    job = {"workload": workload.name, "data_dir": data_dir, "seed": args.seed,
           "op_batch": args.op_batch}
    r = run_torch(context, "run_import", job)
    if not workload.flops:  # an analytic count (workloads.py) wins over torch's counter
        workload.flops = r.get("flops", 0.0)
    if "error" in r:
        return r["error"]
    workload.tn_file = os.path.join(data_dir, "model.tn")
    workload.tn_fn = r["entry"]
    workload.wrt = r["wrt"]
    workload.loss_output = r["output"]
    print("  imported: %s (%d lines) in %.1f s" % (r["entry"], r["source_lines"], r["import_s"]),
          flush=True)
    return None


def describe(result):
    if "error" in result:
        return "ERROR"
    if "mismatch" in result:
        return "MISMATCH (timed: %.4g s)" % result["median_s"]
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


def measure_workloads(args, context, steps, workloads, frameworks):
    """Every framework on every workload at args.threads; the results, with the floor's."""
    work = os.path.join(args.build_dir, "bench-data")
    results = measure_floor(args, context, steps)
    for w in workloads:
        print("== %s (%d threads)" % (w.title, args.threads), flush=True)
        data_dir = os.path.join(work, w.name)
        dump_dir = os.path.join(data_dir, "tenet-out")
        write_inputs(w, data_dir, args.seed)
        import_error = import_workload(context, args, w, data_dir) if w.imported else None
        if import_error:
            print("  import FAILED:\n%s" % import_error, file=sys.stderr, flush=True)
        print("  %.3g GFLOP" % (w.flops * 1e-9), flush=True)
        tenet = None
        for framework in frameworks:
            if framework == "tenet":
                if import_error:
                    r = {"framework": "tenet", "workload": w.name, "stage": "import",
                         "error": import_error}
                else:
                    r = run_tenet(args, w, data_dir, steps, dump_dir)
                    if "error" in r:
                        r["stage"] = "compile or run"
                tenet = r
            else:
                r = measure_torch(args, context, steps, w, framework, data_dir, tenet)
            r["load"] = os.getloadavg()[0]
            r["threads"] = args.threads
            r.setdefault("flops", w.flops)
            results.append(r)
            print("  %-8s %s" % (framework, describe(r)), flush=True)
            if "error" in r:
                print(r["error"], file=sys.stderr, flush=True)
    return results


def measure_torch(args, context, steps, w, framework, data_dir, tenet):
    """One PyTorch mode on one workload; eager also checks Tenet's first call."""
    if w.imported and not os.path.exists(os.path.join(data_dir, "state")):
        return {"framework": framework, "workload": w.name,
                "error": "no weights: the import step failed before writing them"}
    dump_dir = os.path.join(data_dir, "tenet-out")
    job = dict(steps, threads=args.threads, op_batch=args.op_batch, workload=w.name,
               framework=framework, data_dir=data_dir, tolerance=TOLERANCE)
    if framework == "eager" and tenet is not None and "error" not in tenet:
        job["check_against"] = dump_dir
    r = run_torch(context, "run_job", job)
    if "error" not in r and "check_against" in job:
        mismatch = check_rows(r)
        if mismatch:
            # Tenet's times stay in the JSON, but the row is a failure.
            print("  NUMERICAL CHECK FAILED: %s" % mismatch, file=sys.stderr, flush=True)
            tenet["mismatch"] = mismatch
            tenet["check"] = r["check"]
    return r


def thread_counts(text):
    try:
        counts = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1 or counts != sorted(set(counts)):
        sys.exit("bench: --threads takes thread counts in increasing order, e.g. 2 or "
                 "1,2,4,8,16 (got %r)" % text)
    return counts


def main():
    args = parse_args()
    counts = thread_counts(args.threads)
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
    groups = select_groups(args.group)
    workloads = [w for w in all_workloads(args.op_batch) if re.search(args.only, w.name)
                 and (not groups or w.group in groups)]
    if not workloads:
        sys.exit("bench: no workload matches --only %r --group %r" % (args.only, args.group))

    os.environ["OMP_NUM_THREADS"] = str(counts[0])
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["torch", "torch_worker"])
    started = time.time()
    runs, all_results = [], []
    for threads in counts:
        args.threads = threads
        os.environ["OMP_NUM_THREADS"] = str(threads)  # tenet_bench's threads
        env = environment(threads)
        print("bench: %d workloads x %s, %s, %d threads; load average %.1f %.1f %.1f" % (
            len(workloads), ",".join(frameworks), "quick" if args.quick else "full", threads,
            *env["load_start"]), flush=True)
        round_started = time.time()
        results = measure_workloads(args, context, steps, workloads, frameworks)
        finish_environment(env, args, results, round_started)
        out = args.out if len(counts) == 1 else os.path.join(args.out, "threads-%d" % threads)
        tables = report.write(out, env, workloads, frameworks, results)
        if len(counts) == 1:
            print(tables)
        print("bench: wrote %s (%.1f minutes)" % (out, env["minutes"]))
        runs.append((threads, results))
        all_results += results
    if len(counts) > 1:
        env = environment(counts[-1])
        finish_environment(env, args, all_results, started)
        print(scaling.write(args.out, env, workloads, frameworks, runs))
        print("bench: wrote %s/scaling.md (%.1f minutes)" % (args.out, env["minutes"]))
    return exit_status(all_results)


def finish_environment(env, args, results, started):
    env["load_end"] = os.getloadavg()
    env["minutes"] = (time.time() - started) / 60
    env["mode"] = "quick" if args.quick else "full"
    env["op_batch"] = args.op_batch
    env["torch"] = next((r["torch"] for r in results if "torch" in r), "?")
    env.update(step_options(args.quick))


def exit_status(results):
    errors = [r for r in results if "error" in r]
    mismatches = [r for r in results if "mismatch" in r]
    if errors:
        print("bench: %d measurements failed (see above)" % len(errors), file=sys.stderr)
    if mismatches:
        print("bench: NUMERICAL CHECK FAILED on %s" % ", ".join(
            sorted({"%s (%d threads)" % (r["workload"], r.get("threads", 0))
                    for r in mismatches})), file=sys.stderr)
        return 2
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
