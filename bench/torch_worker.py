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
import copy
import json
import os
import resource
import time
import traceback
import warnings

import numpy as np
import torch

import capsnet_torch
import models_torch
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
    if workload.mode == "vjp" and not workload.imported:
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
        if err > tolerance:
            rows[-1]["torch32"] = ref.reshape(-1)  # for diagnose(); not sent back
    return rows


def diagnose(check, workload, job):
    """After a failed check of an imported workload: is the problem one that float32
    computes badly, or is Tenet's program wrong?

    Runs the module in float64 (the exact answer), and a second time in float32 with
    oneDNN off (PyTorch's other summation orders for convolutions and GEMMs). Per
    tensor it records Tenet's error and both float32 runs' errors against float64.
    The check then passes as "within PyTorch's float32 spread" when Tenet's worst
    error over all tensors is at most twice the worst of PyTorch's own float32 runs
    (the worst error is a random variable: which masks flip depends on rounding): in a
    training-mode network with batch norm and ReLU (the ResNets), a pre-activation
    within rounding of 0 flips its ReLU mask in either library, and the gradients
    through it differ by much more than the tolerance in PyTorch too. A wrong program
    shows as Tenet's error far above both."""
    _, reference64 = imported_job(workload, "eager", job["data_dir"], torch.float64)
    exact = reference64()
    _, reference_other = imported_job(workload, "eager", job["data_dir"])
    with torch.backends.mkldnn.flags(enabled=False):
        other = reference_other()
    tenet_worst, torch_worst = 0.0, 0.0
    for c in check:
        if c["name"] not in exact:
            continue
        ref = exact[c["name"]].detach().numpy().astype(np.float64).reshape(-1)
        scale = max(float(np.abs(ref).max()), 1e-30)

        def error(values):
            return float(np.abs(values.astype(np.float64).reshape(-1) - ref).max()) / scale
        tenet = np.load("%s/%s.npy" % (job["check_against"], c["name"]))
        if tenet.size != ref.size:
            return  # a size mismatch is not a rounding question
        c["tenet_vs_f64"] = error(tenet)
        c["torch_vs_f64"] = max(error(c["torch32"]) if "torch32" in c else 0.0,
                                error(other[c["name"]].detach().numpy()))
        tenet_worst = max(tenet_worst, c["tenet_vs_f64"])
        torch_worst = max(torch_worst, c["torch_vs_f64"])
    if tenet_worst <= 2 * torch_worst:
        for c in check:
            if not c["ok"]:
                c["ok"] = True
                c["within_torch_spread"] = True


# ---- imported workloads (issue 17) ---------------------------------------------

IMPORT_META = "import.json"


def build_module(workload):
    """The workload's module of bench/models_torch.py, in its mode."""
    kind, name = workload.torch_fn.split(":")
    if kind == "model":
        module = models_torch.model(name, workload.training)
    else:
        module = models_torch.layer(name)
    return module.train(workload.training)


def state_of(module):
    """Every parameter and buffer by state_dict key (non-persistent buffers too)."""
    found = dict(module.named_parameters())
    found.update(module.named_buffers())
    return found


def load_state(module, data_dir):
    """The weights the import step wrote (DATA_DIR/state/<key>.npy), into the module."""
    with torch.no_grad():
        for key, tensor in state_of(module).items():
            tensor.copy_(torch.from_numpy(np.load(os.path.join(data_dir, "state", key + ".npy"))))


def flatten(outputs):
    return list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]


def count_flops(workload, module, args):
    """torch.utils.flop_counter's count of one call: the forward, plus the backward
    of the loss (train: the parameters' gradients) or of all outputs (vjp: the
    parameters' and the float arguments' gradients)."""
    from torch.utils.flop_counter import FlopCounterMode
    module = copy.deepcopy(module)
    args = [a.clone() for a in args]
    differentiated = [a for a in args if a.is_floating_point()] if workload.mode == "vjp" else []
    for a in differentiated:
        a.requires_grad_(True)
    with FlopCounterMode(display=False) as counter:
        if workload.mode == "forward":
            with torch.no_grad():
                module(*args)
        else:
            outputs = flatten(module(*args))
            if workload.mode == "train":
                outputs[-1].backward()
            else:
                torch.autograd.backward(outputs, [torch.ones_like(o) for o in outputs])
    return float(counter.get_total_flops())


def run_import(job):
    """The import step of an imported workload, before any measurement: makes the
    module (torch.manual_seed(seed): PyTorch's default initialisation), writes its
    weights (DATA_DIR/state/<key>.npy, what every PyTorch worker loads), translates it
    with tenet.from_torch at the workload's own inputs, saves the program
    (DATA_DIR/model.tn, weights.safetensors) and writes every input of the Tenet
    function under its name (DATA_DIR/<name>.npy), the cotangents d_<output> of
    vjp workloads, and DATA_DIR/import.json: the entry, each input's and output's
    meaning, --wrt and --output for tenet_bench, the flop count. Returns
    {"ok": True, ...import.json} or {"error": ...}; the weights are written even
    when the translation fails, so that PyTorch can still be measured."""
    data_dir = job["data_dir"]
    try:
        torch.manual_seed(job["seed"])
        workload = {w.name: w for w in all_workloads(job["op_batch"])}[job["workload"]]
        module = build_module(workload)
        os.makedirs(os.path.join(data_dir, "state"), exist_ok=True)
        state = {key: t.detach().contiguous().numpy().copy()
                 for key, t in state_of(module).items()}
        for key, array in state.items():
            np.save(os.path.join(data_dir, "state", key + ".npy"), array)
        arrays = {name: np.load(os.path.join(data_dir, name + ".npy"))
                  for name in workload.arg_names}
        args = [torch.from_numpy(arrays[name]) for name in workload.arg_names]
        flops = count_flops(workload, module, args)
    except Exception:
        return {"workload": job["workload"], "error": traceback.format_exc()}
    meta_path = os.path.join(data_dir, IMPORT_META)
    if os.path.exists(meta_path):
        os.remove(meta_path)
    try:
        import tenet
        t0 = time.perf_counter()
        program = tenet.from_torch(module, tuple(args))
        import_s = time.perf_counter() - t0
        program.save(data_dir)
        entry = program.entry(workload.training)
        signature = program.signature(workload.training)
        for spec in signature["inputs"]:
            if spec["kind"] == "user":
                array = arrays[workload.arg_names[int(spec["key"])]]
            elif spec["kind"] in ("parameter", "buffer"):
                array = state[spec["key"]]
            elif spec["kind"] == "constant":
                array = program.weights[spec["key"]].detach().contiguous().numpy()
            else:
                raise ValueError("input %s of kind %s: the benchmark gives none" % (
                    spec["name"], spec["kind"]))
            # (not np.ascontiguousarray: it makes 0-d arrays, num_batches_tracked, 1-d)
            np.save(os.path.join(data_dir, spec["name"] + ".npy"), np.array(array, order="C"))
        # Output shapes (for the cotangents), from one PyTorch call on a copy.
        with torch.no_grad():
            results = flatten(copy.deepcopy(module)(*args))
        user_outputs = [o for o in signature["outputs"] if o["kind"] == "user"]
        params = [i["name"] for i in signature["inputs"] if i["kind"] == "parameter"]
        meta = {"entry": entry, "inputs": signature["inputs"], "outputs": signature["outputs"],
                "wrt": [], "output": None, "flops": flops, "import_s": import_s,
                "source_lines": len(program.source.splitlines())}
        if workload.mode == "train":
            meta["wrt"] = params
            meta["output"] = user_outputs[-1]["name"]
        elif workload.mode == "vjp":
            meta["wrt"] = params + [i["name"] for i in signature["inputs"] if i["kind"] == "user"
                                    and arrays[workload.arg_names[int(i["key"])]].dtype.kind == "f"]
            if len(user_outputs) != 1:
                raise ValueError("a vjp layer needs one output, the module has %d" %
                                 len(user_outputs))
            meta["output"] = user_outputs[0]["name"]
            rng = np.random.default_rng(job["seed"] + 1)
            shape = tuple(results[int(user_outputs[0]["key"])].shape)
            np.save(os.path.join(data_dir, "d_" + meta["output"] + ".npy"),
                    rng.uniform(-1.0, 1.0, size=shape).astype(np.float32))
        with open(meta_path, "w") as f:
            json.dump(meta, f, indent=1)
        return dict(meta, ok=True)
    except Exception as e:
        return {"workload": job["workload"], "flops": flops,
                "error": "tenet.from_torch failed: %s: %s\n%s" % (
                    type(e).__name__, e, traceback.format_exc())}


def imported_job(workload, framework, data_dir, dtype=torch.float32):
    """(step, reference) for an imported workload: the module of models_torch with the
    weights of the import step. `reference()` returns, by Tenet's names, the outputs,
    the buffers a training-mode forward updated (`<buffer>_new`) and the gradients
    (train: every parameter's; vjp: the parameters' and float arguments').
    dtype=torch.float64 runs it in float64 (the diagnosis of a failed check)."""
    with open(os.path.join(data_dir, IMPORT_META)) as f:
        meta = json.load(f)
    module = build_module(workload)
    load_state(module, data_dir)
    args, _ = load_inputs(workload, data_dir)
    if dtype != torch.float32:
        module = module.to(dtype)
        args = [a.to(dtype) if a.is_floating_point() else a for a in args]
    forward = wrap(framework, module)
    by_key = state_of(module)
    outputs = meta["outputs"]

    def named(results):
        found = {}
        for o in outputs:
            if o["kind"] == "user":
                found[o["name"]] = results[int(o["key"])].detach()
            elif o["kind"] == "buffer":
                found[o["name"]] = by_key[o["key"]].detach().clone()
        return found

    if workload.mode == "forward":
        def step():
            with torch.no_grad():
                return flatten(forward(*args))

        def reference():
            return named(step())
        return step, reference

    inputs = {i["name"]: i for i in meta["inputs"]}
    if workload.mode == "train":
        optimizer = torch.optim.Adam(module.parameters(), lr=1e-3)

        def train_step():
            optimizer.zero_grad(set_to_none=True)
            loss = flatten(forward(*args))[-1]
            loss.backward()
            optimizer.step()

        def reference():
            results = flatten(forward(*args))
            results[-1].backward()
            found = named(results)
            for name in meta["wrt"]:
                found["d_" + name] = by_key[inputs[name]["key"]].grad.clone()
            optimizer.zero_grad(set_to_none=True)
            return found
        return train_step, reference

    differentiated = []
    for name in meta["wrt"]:
        spec = inputs[name]
        tensor = by_key[spec["key"]] if spec["kind"] == "parameter" else args[int(spec["key"])]
        tensor.requires_grad_(True)
        differentiated.append((name, tensor))
    position = int(next(o["key"] for o in outputs if o["name"] == meta["output"]))
    cotangent = torch.from_numpy(np.load(os.path.join(data_dir, "d_%s.npy" % meta["output"])))
    cotangent = cotangent.to(dtype)

    def vjp_step():
        for _, t in differentiated:
            t.grad = None
        results = flatten(forward(*args))
        torch.autograd.backward([results[position]], [cotangent])
        return results

    def reference():
        found = named(vjp_step())
        for name, t in differentiated:
            found["d_" + name] = t.grad.clone()
        return found
    return vjp_step, reference


def run_job(job):
    """Runs one measurement; returns a JSON-ready dict (with "error" when it failed)."""
    try:
        torch.set_num_threads(job["threads"])
        workload = {w.name: w for w in all_workloads(job["op_batch"])}[job["workload"]]
        framework = job["framework"]
        rss_start = rss_mib()
        t0 = time.perf_counter()
        if workload.imported:
            make = imported_job
        elif workload.torch_fn in capsnet_torch.MODELS:
            make = model_job
        else:
            make = operator_job
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
            # After the measurement, so that its float64 run does not count in its memory.
            if workload.imported and not all(c["ok"] for c in check):
                diagnose(check, workload, job)  # may pass it, within PyTorch's spread
            for c in check:
                c.pop("torch32", None)
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

