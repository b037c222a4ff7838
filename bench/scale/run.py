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
and prints one line per run: shape, N, stage, wall seconds (or "timeout",
"exit N"), CPU seconds (user + system), peak memory (MiB). After a timeout the larger N of that shape and stage are skipped.
"""

import argparse
import os
import pathlib
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
    """(wall seconds, CPU seconds, peak RSS in MiB, error text) of one run; wall is
    "timeout" or "exit N" when it did not finish well. CPU time (user + system)
    is the steadier number on a shared machine."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                proc.kill()
                os.wait4(proc.pid, 0)
                return "timeout", "", "", ""
            time.sleep(0.005)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")[-300:]
    cpu = f"{usage.ru_utime + usage.ru_stime:.2f}"
    peak = f"{usage.ru_maxrss / 1024:.0f}"
    if proc.returncode != 0:
        return f"exit {proc.returncode}", cpu, peak, text
    return f"{wall:.2f}", cpu, peak, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tenet", default=str(HERE.parents[1] / "build" / "tools" / "tenet"))
    ap.add_argument("--shapes", default="chain,funcs,calls,wide,reads,mixed,loops,rank")
    ap.add_argument("--stages", default="check,ir,cpp,interp,grad")
    ap.add_argument("--sizes", default=None, help="N values (default 1k..100k; rank: 10..300)")
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()

    print(f"{'shape':<8} {'N':>7} {'stage':<7} {'wall s':>9} {'cpu s':>7} {'peak MiB':>8}  note")
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
                    result, cpu, peak, err = measure(
                        command(args.tenet, stage, shape, n, str(path)), args.timeout)
                    note = err.strip().splitlines()[-1][:100] if err.strip() else ""
                    print(f"{shape:<8} {n:>7} {stage:<7} {result:>9} {cpu:>7} {peak:>8}  {note}",
                          flush=True)
                    if result == "timeout":
                        given_up.add(stage)


if __name__ == "__main__":
    main()
