"""One measurement of the abstraction study in a process of its own: a level
that runs in Python (PyTorch eager, TorchScript, torch.compile, Tenet through
Program.module()), one model, batch size, resolution and mode.

    python bench/study_worker.py '{"level": "eager", "model": "cnn", "batch": 64,
        "resolution": 28, "mode": "train", "device": "cpu", "threads": 2, ...}'

Prints one JSON line {"event": "first"} when the first step is done (the
parent times process start to it: start-up to first result), then one with the
measurement: the median step time over the timed steps (after `warmup`
untimed ones; at least min_steps and min_time, at most max_steps), minor page
faults per timed step (getrusage), and the bytes of every file mapped into the
process (the binary and the libraries a deployment must carry). The parent
adds the peak RSS (wait4). A "train" step is forward, backward and an Adam
step; an "infer" step is a no-grad forward in evaluation mode. On CUDA each
step ends with a synchronisation, and kernel launches per step are counted
with the profiler.
"""
import json
import os
import resource
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import study_models  # noqa: E402

warnings.filterwarnings("ignore", message=".*torch.jit.*deprecated", category=FutureWarning)


def peak_rss_mib():
    """VmHWM: this process's peak resident set since it started (its own program;
    wait4's ru_maxrss would also count the parent's pages at the fork)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def mapped_bytes():
    """The sizes of the distinct files mapped into this process."""
    paths = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/"):
                paths.add(parts[5].strip())
    return sum(os.path.getsize(p) for p in paths if os.path.isfile(p))


def make_step(job):
    device, mode = job["device"], job["mode"]
    model = study_models.initialise(study_models.build(job["model"], job["resolution"]),
                                    job.get("init", "pytorch-default"), job.get("seed", 0))
    model = model.to(device).train(mode == "train")
    torch.manual_seed(job.get("seed", 0))  # dropout's masks
    x, y = study_models.example_batch(job["model"], job["batch"], job["resolution"],
                                      device=device)
    level = job["level"]
    if level == "script":
        run = torch.jit.script(model)
    elif level in ("compile", "compile-reduce-overhead"):
        run = torch.compile(model, mode="reduce-overhead" if level.endswith("overhead") else None)
    elif level == "tenet-module":
        import tenet
        run = tenet.from_torch(model, (x, y)).module()
    elif level == "eager":
        run = model
    else:
        raise ValueError(f"unknown Python level {level!r}")
    if mode == "infer":
        def step():
            with torch.no_grad():
                return run(x, y)[0]
        return step
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        optimiser.zero_grad(set_to_none=True)
        loss = run(x, y)[1]
        loss.backward()
        optimiser.step()
        return loss
    return step


def timed(step, sync):
    t0 = time.perf_counter()
    step()
    sync()
    return time.perf_counter() - t0


def first_step(step, sync):
    """(seconds, the loss of a training step or the first score of an inference)."""
    t0 = time.perf_counter()
    out = step()
    sync()
    seconds = time.perf_counter() - t0
    return seconds, float(out.detach().flatten()[0])


def launches_per_step(step, sync):
    """CUDA kernel launches of one step, from the profiler's CUDA runtime events."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        sync()
    names = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cudaGraphLaunch")
    return sum(e.count for e in prof.key_averages() if e.key in names)


def main(job):
    torch.set_num_threads(job.get("threads", 2))
    sync = torch.cuda.synchronize if job["device"] == "cuda" else (lambda: None)
    step = make_step(job)
    first, value = first_step(step, sync)
    print(json.dumps({"event": "first", "first_step_s": first, "value": value}), flush=True)
    for _ in range(job.get("warmup", 2)):
        timed(step, sync)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    times, start = [], time.perf_counter()
    while len(times) < job.get("max_steps", 200) and (
            len(times) < job.get("min_steps", 5) or
            time.perf_counter() - start < job.get("min_time", 1.0)):
        times.append(timed(step, sync))
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    result = {"event": "result", "step_ms": 1e3 * sorted(times)[len(times) // 2],
              "steps": len(times), "minflt_per_step": faults / len(times),
              "deploy_bytes": mapped_bytes(), "peak_rss_mib": peak_rss_mib()}
    if job["device"] == "cuda":
        result["launches_per_step"] = launches_per_step(step, sync)
        result["device_peak_bytes"] = torch.cuda.max_memory_allocated()
    print(json.dumps(result), flush=True)


def read_idx(directory, name):
    """An MNIST IDX file of `directory`, gzipped or not, as a uint8 array."""
    import gzip
    import numpy as np
    path = os.path.join(directory, name)
    opener = gzip.open if not os.path.exists(path) else open
    with opener(path if os.path.exists(path) else path + ".gz", "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def mnist(directory, split, limit):
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(directory, f"{prefix}-images-idx3-ubyte")[:limit or None]
    labels = read_idx(directory, f"{prefix}-labels-idx1-ubyte")[:limit or None]
    return (torch.from_numpy(images.astype("float32") / 255.0).unsqueeze(1),
            torch.from_numpy(labels.astype("int64")))


def train_mnist(job):
    """The accuracy experiment (bench/study_accuracy.py): trains on MNIST for
    job["epochs"] epochs, each in the order torch.randperm gives from seed + epoch
    (the LibTorch program draws the same), Adam at lr 1e-3; prints after each epoch
    the mean training loss, the test accuracy and the epoch's seconds."""
    torch.set_num_threads(job.get("threads", 2))
    x, y = mnist(job["data"], "train", job.get("limit_train", 0))
    test_x, test_y = mnist(job["data"], "test", job.get("limit_test", 0))
    seed, batch = job.get("seed", 0), job["batch"]
    model = study_models.initialise(study_models.build(job["model"], 28),
                                    job.get("init", "pytorch-default"), seed)
    torch.manual_seed(seed)
    run = model
    if job["level"] == "tenet-module":
        import tenet
        run = tenet.from_torch(model.train(), (x[:batch], y[:batch])).module()
    elif job["level"] != "eager":
        raise ValueError(f"the accuracy experiment runs eager and tenet-module in Python, "
                         f"not {job['level']!r}")
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(job["epochs"]):
        start, losses = time.perf_counter(), []
        model.train()
        order = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed + epoch))
        for first in range(0, len(x) - batch + 1, batch):
            idx = order[first:first + batch]
            optimiser.zero_grad(set_to_none=True)
            loss = run(x[idx], y[idx])[1]
            loss.backward()
            optimiser.step()
            losses.append(float(loss))
        seconds = time.perf_counter() - start
        model.eval()
        correct = 0
        with torch.no_grad():
            for first in range(0, len(test_x), 1000):
                scores = model(test_x[first:first + 1000], test_y[first:first + 1000])[0]
                correct += int((scores.argmax(1) == test_y[first:first + 1000]).sum())
        print(json.dumps({"event": "epoch", "epoch": epoch + 1,
                          "train_loss": sum(losses) / len(losses),
                          "test_accuracy": correct / len(test_x), "seconds": seconds}),
              flush=True)


if __name__ == "__main__":
    job = json.loads(sys.argv[1])
    train_mnist(job) if job.get("task") == "mnist" else main(job)
