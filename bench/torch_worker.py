"""PyTorch's side of the benchmark: one (framework, workload) measurement in
a process of its own (bench.py starts it from a fork server that has imported
torch, so its peak RSS and page faults are its own).

Frameworks: "eager"; "compile" (torch.compile, inductor, default mode; for
training the model is compiled, so AOTAutograd compiles the backward, and the
Adam step runs eagerly); "script" (torch.jit.script of the same functions).
Every framework uses 2 intra-op threads.

Measurement (the same rule as bench/tenet_bench.cpp): `warmup` untimed steps,
then timed steps until both min_steps and min_time are reached (at most
max_steps); the median wall time; minor page faults (getrusage) over the
timed steps divided by their number; ru_maxrss at the end.
"""
import resource
import time
import traceback
import warnings

import numpy as np
import torch

import capsnet_torch
from workloads import all_workloads

# TorchScript is what this benchmark measures, deprecated or not.
warnings.filterwarnings("ignore", message=".*torch.jit.script.*is deprecated",
                        category=FutureWarning)


def rss_mib():
    with open("/proc/self/statm") as f:
        resident = int(f.read().split()[1])
    return resident * resource.getpagesize() / 2**20


def peak_rss_mib():
    """VmHWM: the peak resident set of this process (from the fork on)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure(step, warmup, min_steps, min_time, max_steps):
    first_call = 0.0
    for i in range(warmup):
        t0 = time.perf_counter()
        step()
        if i == 0:
            first_call = time.perf_counter() - t0
    faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    wall, cpu = [], []
    start = time.perf_counter()
    while len(wall) < max(max_steps, min_steps) and (
            len(wall) < min_steps or time.perf_counter() - start < min_time):
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults0
    return {"median_s": float(np.median(wall)), "cpu_median_s": float(np.median(cpu)),
            "steps": len(wall), "warmup": warmup, "times_s": wall, "first_call_s": first_call,
            "minflt_per_step": faults / len(wall)}


def load_inputs(workload, data_dir):
    def load(name):
        return torch.from_numpy(np.load("%s/%s.npy" % (data_dir, name)))
    args = [load(name) for name in workload.arg_names]
    cotangents = []
    if workload.mode == "vjp":
        cotangents = [load("d_" + name) for name, _ in workload.outputs]
    return args, cotangents


def wrap(framework, fn):
    if framework == "compile":
        return torch.compile(fn)
    if framework == "script":
        return torch.jit.script(fn)
    return fn


def model_job(workload, framework, data_dir):
    """(step, reference) for a whole model (capsnet_torch.MODELS): `reference()`
    returns the outputs and gradients at the initial parameters by Tenet's
    names (called before any step)."""
    module, shapes, names = capsnet_torch.MODELS[workload.torch_fn]
    initial = {name: np.load("%s/%s.npy" % (data_dir, name)) for name, _ in shapes}
    args, _ = load_inputs(workload, data_dir)
    model = module(initial)
    forward = wrap(framework, model)

    if workload.mode == "forward":
        def step():
            with torch.no_grad():
                return forward(*args)

        def reference():
            return dict(zip(names, step()))
        return step, reference

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        loss = forward(*args)[-1]
        loss.backward()
        optimizer.step()

    def reference():
        outputs = forward(*args)
        outputs[-1].backward()
        result = dict(zip(names, [o.detach() for o in outputs]))
        for name, p in model.named_parameters():
            result["d_" + name] = p.grad.clone()
        optimizer.zero_grad(set_to_none=True)
        return result
    return train_step, reference


def operator_job(workload, framework, data_dir):
    args, cotangents = load_inputs(workload, data_dir)
    fn = wrap(framework, capsnet_torch.OPERATORS[workload.torch_fn])
    names = [name for name, _ in workload.outputs]

    if workload.mode == "forward":
        def step():
            with torch.no_grad():
                out = fn(*args)
            return out if isinstance(out, tuple) else (out,)

        def reference():
            return dict(zip(names, step()))
        return step, reference

    differentiated = [args[workload.arg_names.index(name)] for name in workload.wrt]
    for t in differentiated:
        t.requires_grad_(True)

    def vjp_step():
        for t in differentiated:
            t.grad = None
        out = fn(*args)
        out = out if isinstance(out, tuple) else (out,)
        torch.autograd.backward(out, cotangents)
        return out

    def reference():
        result = {name: o.detach() for name, o in zip(names, vjp_step())}
        for name, t in zip(workload.wrt, differentiated):
            result["d_" + name] = t.grad.clone()
        return result
    return vjp_step, reference


def compare(reference, tenet_dir, tolerance):
    """Max |tenet - torch| / max |torch| per tensor, against Tenet's outputs
    of its first call (tenet_dir/<name>.npy)."""
    rows = []
    for name, ref in reference.items():
        ref = ref.detach().contiguous().numpy().astype(np.float64)
        tenet = np.load("%s/%s.npy" % (tenet_dir, name)).astype(np.float64)
        if tenet.size != ref.size:
            rows.append({"name": name, "ok": False, "error": float("inf"),
                         "why": "size %d vs %d" % (tenet.size, ref.size)})
            continue
        scale = max(float(np.abs(ref).max()), 1e-30)
        err = float(np.abs(tenet.reshape(-1) - ref.reshape(-1)).max()) / scale
        rows.append({"name": name, "ok": bool(err <= tolerance), "error": err,
                     "max_abs_ref": scale})
    return rows


def run_job(job):
    """Runs one measurement; returns a JSON-ready dict (with "error" when it failed)."""
    try:
        torch.set_num_threads(job["threads"])
        workload = {w.name: w for w in all_workloads(job["op_batch"])}[job["workload"]]
        framework = job["framework"]
        rss_start = rss_mib()
        t0 = time.perf_counter()
        make = model_job if workload.torch_fn in capsnet_torch.MODELS else operator_job
        step, reference = make(workload, framework, job["data_dir"])
        check = None
        if job.get("check_against"):
            check = compare(reference(), job["check_against"], job["tolerance"])
        setup = time.perf_counter() - t0
        result = measure(step, job["warmup"], job["min_steps"], job["min_time"], job["max_steps"])
        result.update({"framework": framework, "workload": workload.name, "setup_s": setup,
                       "rss_start_mib": rss_start,
                       "peak_rss_mib": peak_rss_mib(),
                       "torch": torch.__version__, "threads": torch.get_num_threads()})
        if check is not None:
            result["check"] = check
        return result
    except Exception:  # reported by the driver, which fails the run
        return {"framework": job["framework"], "workload": job["workload"],
                "error": traceback.format_exc()}


def run_mm(job):
    """The GEMM floor through torch.mm: two N x N float32 matrices."""
    torch.set_num_threads(job["threads"])
    n = job["n"]
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(n, n, generator=g), torch.rand(n, n, generator=g)
    c = torch.empty(n, n)
    result = measure(lambda: torch.mm(a, b, out=c), job["warmup"], job["min_steps"],
                     job["min_time"], job["max_steps"])
    result.update({"framework": "torch.mm", "workload": "sgemm_%d" % n,
                   "gflops": 2 * n**3 / result["median_s"] * 1e-9})
    return result

