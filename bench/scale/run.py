#!/usr/bin/env python3
"""Compile-time scaling: times `tenet` stages on generated programs of growing size.

    python3 bench/scale/run.py [--tenet build/tools/tenet] [--shapes chain,wide]
                               [--stages check,ir,cpp] [--sizes 1000,2000] [--timeout 60]

For each shape (bench/scale/gen.py) and each N it writes the program to a
temporary folder and times, in a fresh process each:
  check    tenet check FILE
  ir       tenet print FILE --stage ir           (checker + the whole pass pipeline)
  cpp      tenet print FILE --stage cpp          (... + C++ code generation)
  interp   tenet run FILE --backend interp --sizes ... (checker + interpreter, tiny sizes)
  grad     tenet print FILE --grad f --vjp --stage ir   (AD + the pipeline on the gradient)
and prints one line per run: shape, N, stage, seconds (or "timeout"/"error"),
peak memory. After a timeout the larger N of that shape and stage are skipped.
"""

import argparse
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen  # noqa: E402

DEFAULT_SIZES = [1000, 2000, 5000, 10000, 20000, 50000, 100000]
RANK_SIZES = [10, 30, 100, 300]


def sizes_arg(shape, n):
    """--sizes for `tenet run`: every size parameter of the shape, small."""
    if shape == "rank":
        return ",".join(f"N{k}=1" for k in range(n))
    if shape == "mixed":
        return "B=2,J=3"
    return "N=2"


def command(tenet, stage, shape, n, path):
    fn = ["--fn", "f0"] if shape == "funcs" else []
    if stage == "check":
        return [tenet, "check", path]
    if stage in ("ir", "cpp"):
        return [tenet, "print", path, "--stage", stage] + fn
    if stage == "interp":
        return [tenet, "run", path, "--backend", "interp", "--sizes", sizes_arg(shape, n)] + fn
    if stage == "grad":
        name = "f0" if shape == "funcs" else "f"
        return [tenet, "print", path, "--grad", name, "--vjp", "--stage", "ir"]
    raise ValueError(stage)


def measure(cmd, timeout):
    """Seconds and peak RSS (MiB) of one run, or a word saying why not."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", None, ""
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if proc.returncode != 0:
        return f"exit {proc.returncode}", peak, proc.stderr.decode(errors="replace")[-300:]
    return f"{seconds:.2f}", peak, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tenet", default=str(HERE.parents[1] / "build" / "tools" / "tenet"))
    ap.add_argument("--shapes", default="chain,funcs,calls,wide,deep,parens,mixed,rank")
    ap.add_argument("--stages", default="check,ir,cpp,interp,grad")
    ap.add_argument("--sizes", default=None, help="N values (default 1k..100k; rank: 10..300)")
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()

    print(f"{'shape':<8} {'N':>7} {'stage':<7} {'seconds':>9}  note")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            if args.sizes:
                sizes = [int(s) for s in args.sizes.split(",")]
            else:
                sizes = RANK_SIZES if shape == "rank" else DEFAULT_SIZES
            given_up = set()
            for n in sizes:
                path = pathlib.Path(tmp) / f"{shape}{n}.tn"
                path.write_text(gen.SHAPES[shape](n))
                for stage in args.stages.split(","):
                    if stage in given_up:
                        continue
                    result, _, err = measure(command(args.tenet, stage, shape, n, str(path)),
                                             args.timeout)
                    note = err.strip().splitlines()[-1] if err.strip() else ""
                    print(f"{shape:<8} {n:>7} {stage:<7} {result:>9}  {note}", flush=True)
                    if result == "timeout":
                        given_up.add(stage)


if __name__ == "__main__":
    main()
