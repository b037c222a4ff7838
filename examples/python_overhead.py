"""How much does calling Tenet from Python cost? (the numbers in docs/python.md)

For a small element-wise op and a small matmul, CPU microseconds per call
(process CPU time, single thread, median of rounds), for:

  C++, generated code only   Executable::run_raw: the generated code, bound once
  C++, Executable::run       bound once: checks input shapes, runs (no allocation)
  C++, CompiledFunction::run binds and checks inputs, allocates outputs and workspace
  Python, numpy              tenet Function called on numpy arrays
  Python, torch              the same Function called on torch tensors
  Python, torch op           torch.ops.tenet.<op> through the dispatcher
  Python, torch op + grad    forward and backward through autograd
  PyTorch built-in           the same computation with PyTorch operators
  PyTorch built-in + grad    forward and backward through autograd

    OMP_NUM_THREADS=1 python examples/python_overhead.py [--calls 2000] [--rounds 7]
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.pop("OPENBLAS_CORETYPE", None)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import tenet  # noqa: E402

ELEMENTWISE = """
def axpb(float(N) x, float(N) y) -> (z) {
  z(i) = 2 * x(i) + y(i)
}
"""
MATMUL = """
def matmul(float(M, K) a, float(K, N) b) -> (c) {
  c(i, j) +=! a(i, k) * b(k, j)
}
"""


def cpu_us_per_call(call, calls, rounds):
    samples = []
    for _ in range(rounds):
        start = time.process_time_ns()
        for _ in range(calls):
            call()
        samples.append((time.process_time_ns() - start) / calls / 1e3)
    return statistics.median(samples)


def measure(title, source, arrays, builtin, calls, rounds):
    f = tenet.compile(source)
    op = f.torch_op()
    op.compile()
    tensors = [torch.from_numpy(a) for a in arrays]
    leaves = [t.clone().requires_grad_() for t in tensors]
    cpp_run, cpp_executable, cpp_raw = f.kernel().time_calls_from_cpp(arrays, {}, calls, rounds)

    def op_with_grad():
        op(*leaves).sum().backward()

    def builtin_with_grad():
        builtin(*leaves).sum().backward()

    rows = [
        ("C++, generated code only", cpp_raw * 1e6),
        ("C++, Executable::run", cpp_executable * 1e6),
        ("C++, CompiledFunction::run", cpp_run * 1e6),
        ("Python, numpy", cpu_us_per_call(lambda: f(*arrays), calls, rounds)),
        ("Python, torch", cpu_us_per_call(lambda: f(*tensors), calls, rounds)),
        ("Python, torch op", cpu_us_per_call(lambda: op(*tensors), calls, rounds)),
        ("Python, torch op + grad", cpu_us_per_call(op_with_grad, calls // 4, rounds)),
        ("PyTorch built-in", cpu_us_per_call(lambda: builtin(*tensors), calls, rounds)),
        ("PyTorch built-in + grad", cpu_us_per_call(builtin_with_grad, calls // 4, rounds)),
    ]
    print(f"\n{title}")
    print("| call | CPU us per call |")
    print("|---|---|")
    for name, us in rows:
        print(f"| {name} | {us:.2f} |")
    return rows


def main(calls=2000, rounds=7):
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(1024).astype(np.float32) for _ in range(2))
    a, b = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2))
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}, OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
    measure("element-wise z = 2 x + y, N = 1024 (float32)", ELEMENTWISE, [x, y],
            lambda x, y: 2 * x + y, calls, rounds)
    measure("matmul 32 x 32 x 32 (float32)", MATMUL, [a, b], torch.mm, calls, rounds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    main(args.calls, args.rounds)
