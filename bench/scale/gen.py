#!/usr/bin/env python3
"""Writes a .tn program of a given shape and size N to stdout, for compile-time scaling.

    python3 bench/scale/gen.py SHAPE N > prog.tn

Shapes (each has one function `f`, or N functions `f0..`, with input x and output y):
  chain   N chained statements:  t1(i) = t0(i) + 1, t2(i) = t1(i) + 1, ...
  funcs   N small functions, each  y(i) = x(i) * 2 + 1
  calls   N statements, each a call of one small function:  t1 = g(t0), ...
  wide    one statement reading N inputs:  y(i) = (x0(i) + x1(i)) + (x2(i) + x3(i)) ... (balanced)
  reads   one statement with N reads of one input:  y(i) = (x(i, 0) + x(i, 1)) + ... (balanced)
  deep    one statement nested N deep:  y(i) = x(i) * (1 + x(i) * (1 + ...))
  parens  one statement inside N parentheses:  y(i) = ((((x(i)))))
  rank    a copy of rank N:  y(i0, ..., iN-1) = x(i0, ..., iN-1)
  mixed   N statements of a small layer each (reductions, reads of earlier values)
  loops   N loops in a row, each carrying t0:  for itk in 0:2 { t0(i) = t0(i) + 1 }
"""

import sys


def chain(n):
    body = "\n".join(f"  t{k + 1}(i) = t{k}(i) + 1" for k in range(n))
    return f"def f(float(N) t0) -> (t{n}) {{\n{body}\n}}\n"


def funcs(n):
    return "".join(f"def f{k}(float(N) x) -> (y) {{\n  y(i) = x(i) * 2 + 1\n}}\n" for k in range(n))


def calls(n):
    body = "\n".join(f"  t{k + 1} = g(t{k})" for k in range(n))
    return (
        "def g(float(N) x) -> (y) {\n  y(i) = x(i) * 2 + 1\n}\n"
        f"def f(float(N) t0) -> (t{n}) {{\n{body}\n}}\n"
    )


def balanced_sum(terms):
    """The sum of `terms` as a balanced tree of parenthesised pairs (depth log2 N)."""
    while len(terms) > 1:
        pairs = [f"({terms[k]} + {terms[k + 1]})" for k in range(0, len(terms) - 1, 2)]
        terms = pairs + ([terms[-1]] if len(terms) % 2 else [])
    return terms[0]


def wide(n):
    params = ", ".join(f"float(N) x{k}" for k in range(n))
    terms = balanced_sum([f"x{k}(i)" for k in range(n)])
    return f"def f({params}) -> (y) {{\n  y(i) = {terms}\n}}\n"


def reads(n):
    terms = balanced_sum([f"x(i, {k})" for k in range(n)])
    return f"def f(float(N, {n}) x) -> (y) {{\n  y(i) = {terms}\n}}\n"


def deep(n):
    # Built as a string of n nested levels without Python recursion.
    text = "x(i) * (1 + " * (n - 1) + "x(i)" + ")" * (n - 1)
    return f"def f(float(N) x) -> (y) {{\n  y(i) = {text}\n}}\n"


def parens(n):
    return f"def f(float(N) x) -> (y) {{\n  y(i) = {'(' * n}x(i){')' * n}\n}}\n"


def rank(n):
    dims = ", ".join(f"N{k}" for k in range(n))
    idx = ", ".join(f"i{k}" for k in range(n))
    return f"def f(float({dims}) x) -> (y) {{\n  y({idx}) = x({idx})\n}}\n"


def mixed(n):
    lines = []
    for k in range(n):
        prev = f"t{k}"
        lines.append(f"  s{k}(b) +=! {prev}(b, j) * {prev}(b, j)")
        lines.append(f"  t{k + 1}(b, j) = {prev}(b, j) / (1 + s{k}(b))")
    body = "\n".join(lines)
    return f"def f(float(B, J) t0) -> (t{n}) {{\n{body}\n}}\n"


def loops(n):
    body = "\n".join(f"  for it{k} in 0:2 {{ t0(i) = t0(i) + 1 }}" for k in range(n))
    return f"def f(float(N) x) -> (y) {{\n  t0(i) = x(i)\n{body}\n  y(i) = t0(i)\n}}\n"


SHAPES = {f.__name__: f for f in (chain, funcs, calls, wide, reads, deep, parens, rank, mixed, loops)}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in SHAPES:
        sys.exit(f"usage: gen.py {{{'|'.join(SHAPES)}}} N")
    sys.stdout.write(SHAPES[sys.argv[1]](int(sys.argv[2])))


if __name__ == "__main__":
    main()
