"""Checks the size budgets of the C++ sources (run it through scripts/check-budgets.sh).

Budgets:
  - a file: at most 600 lines (every *.h / *.cpp git tracks or would track, tests included: a test
    file over 600 lines is as hard to find one's way in as any other);
  - a function: at most 80 lines, the span of its whole definition from the line of
    its name to its closing brace, lambdas and local classes inside it included.
    Test code (tests/) is not held to it: a TEST body is one scenario or one table
    of cases, read top to bottom, and cutting it into helpers hides what it checks.

Function spans come from lizard (PyPI), which skips comments, strings and raw
strings and counts a lambda or local class as part of the function around it.
It does not see a lambda at namespace scope (`const auto t = [] {...}();`) as a
function; the project has none over 80 lines.

Known exceptions, in scripts/function-budget-exceptions.txt, are allowed up to their
listed length; an entry whose function grew fails. An entry no longer needed (within
budget, gone or moved) is reported with a note to remove it, without failing: the
functions listed are being rewritten by others at the same time, and a removal
forgotten in one commit should not fail everyone's CI.
"""

import argparse
import os
import subprocess
import sys
from collections import defaultdict

import lizard

FILE_BUDGET = 600
FUNCTION_BUDGET = 80

SOURCE_PATTERNS = ["*.h", "*.hpp", "*.cpp", "*.cc"]
# Golden files are generated code pinned by tests; third-party headers are not ours.
EXCLUDED_PREFIXES = ("tests/golden/", "third_party/")
EXCLUDED_NAMES = ("json.hpp",)
# Folders whose functions are not held to the function budget (see above).
NO_FUNCTION_BUDGET = ("tests/",)


def project_sources():
    """The working tree's sources: tracked ones still there and new ones git does not ignore."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *SOURCE_PATTERNS],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(
        p
        for p in set(out.split())
        if os.path.isfile(p)
        and not p.startswith(EXCLUDED_PREFIXES)
        and p.rsplit("/", 1)[-1] not in EXCLUDED_NAMES
    )


def read_exceptions(path):
    """Reads `path:function length` (a function) and `path length` (a file) lines."""
    functions, files = {}, {}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            try:
                key, length = line.split()
                length = int(length)
            except ValueError:
                sys.exit(f"{path}:{number}: expected `path:function length` or `path length`")
            table = functions if ":" in key else files
            table[key] = (length, number)
    return functions, files


def file_length(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--exceptions", required=True)
    args = parser.parse_args()
    exc_functions, exc_files = read_exceptions(args.exceptions)
    errors, notes = [], []
    # The longest definition of each path:function (overloads share an entry).
    longest = defaultdict(int)
    where = {}

    sources = project_sources()
    for path in sorted(set(exc_files) - set(sources)):
        notes.append(
            f"{args.exceptions}:{exc_files[path][1]}: {path} is not found any more: remove its "
            "entry (or fix its path)"
        )
    for path in sources:
        lines = file_length(path)
        allowed, _ = exc_files.get(path, (FILE_BUDGET, 0))
        if lines > max(allowed, FILE_BUDGET):
            errors.append(
                f"{path}: {lines} lines, over the file budget of {FILE_BUDGET}"
                + (f" and its listed {allowed}" if path in exc_files else "")
                + ": split it by topic"
            )
        if path in exc_files:
            if lines <= FILE_BUDGET:
                notes.append(
                    f"{args.exceptions}:{exc_files[path][1]}: {path} is {lines} lines now, within "
                    "budget: remove its entry"
                )
            elif lines < allowed:
                notes.append(f"{path} is {lines} lines now: lower its entry from {allowed}")
        if path.startswith(NO_FUNCTION_BUDGET):
            continue
        for fn in lizard.analyze_file(path).function_list:
            key = f"{path}:{fn.unqualified_name}"
            if fn.length > longest[key]:
                longest[key] = fn.length
                where[key] = f"{path}:{fn.start_line}: {fn.name}"

    for key, length in sorted(longest.items()):
        if length <= FUNCTION_BUDGET or key in exc_functions:
            continue
        errors.append(
            f"{where[key]} is {length} lines, over the function budget of {FUNCTION_BUDGET}: "
            "split it into named steps"
        )
    for key, (allowed, number) in sorted(exc_functions.items()):
        length = longest.get(key, 0)
        at = f"{args.exceptions}:{number}: {key}"
        if length > allowed:
            errors.append(
                f"{at} grew to {length} lines (listed {allowed}, budget {FUNCTION_BUDGET}): "
                "split it instead"
            )
        elif length == 0:
            notes.append(f"{at} is not found any more: remove its entry (or fix its path)")
        elif length <= FUNCTION_BUDGET:
            notes.append(f"{at} is {length} lines now, within budget: remove its entry")
        elif length < allowed:
            notes.append(f"{key} is {length} lines now: lower its entry from {allowed}")

    for note in notes:
        print(f"budgets: note: {note}")
    for error in errors:
        print(f"budgets: {error}", file=sys.stderr)
    if errors:
        print(
            f"budgets: {len(errors)} problem(s); files at most {FILE_BUDGET} lines, functions at "
            f"most {FUNCTION_BUDGET} (scripts/check-budgets.py)",
            file=sys.stderr,
        )
        return 1
    print(
        f"budgets: ok (files <= {FILE_BUDGET} lines, functions <= {FUNCTION_BUDGET}, "
        f"{len(exc_functions) + len(exc_files)} listed exceptions)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
