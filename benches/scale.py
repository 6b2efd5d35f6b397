#!/usr/bin/env python3
"""Programs of a chosen shape and size, and the time and memory the driver
needs for them: how compile cost grows with program size.

    python3 benches/scale.py gen SHAPE N > prog.tern     # one program
    python3 benches/scale.py table [--tern PATH] [--runs R] [--sizes N,N] [--shapes S,S]

`table` writes the programs to a temporary directory, runs the driver on each
(default `target/release/tern`; build it first with `cargo build --release`
and `cargo build --release -p tern-runtime`) and prints Markdown tables: the
fastest of R runs, wall time, CPU time (user + system) and peak memory of
`tern check` and `tern build` for 1k, 10k and 100k functions, then `tern check`
of the shapes that once took quadratic time, each at several sizes.

Shapes (N is the size):
  functions   N plain functions calling each other as a binary tree from main
  sum         one expression `1 + 1 + ... + 1` of N terms
  elseif      a function with an `if ... else if ...` chain of N arms
  statements  a function of N statements
  errors      N type errors on one line (a rejected program)
  fields      a struct with N fields, built by one literal
  params      a function with N parameters, called once
  locals      a function with N `let` bindings, each reading the first
  array       an array literal of N elements on one line
"""

import os
import subprocess
import sys
import tempfile
import time


def functions(n):
    out = []
    for i in range(n):
        kids = [c for c in (2 * i + 1, 2 * i + 2) if c < n]
        calls = "".join(f" + f{c}(x + {i % 7})" for c in kids)
        out.append(f"fn f{i}(x: i64) -> i64 {{\n    return (x & 1023){calls};\n}}\n")
    out.append("fn main() -> i64 {\n    return f0(1) & 127;\n}\n")
    return "".join(out)


def sum_(n):
    terms = " + ".join(["1"] * n)
    return f"fn main() -> i64 {{\n    let x = {terms};\n    print(x);\n    return 0;\n}}\n"


def elseif(n):
    arms = [f"if x == {i} {{\n        return {i};\n    }}" for i in range(n)]
    chain = " else ".join(arms)
    return (
        f"fn pick(x: i64) -> i64 {{\n    {chain} else {{\n        return -1;\n    }}\n}}\n"
        f"fn main() {{\n    print(pick({n - 1}));\n}}\n"
    )


def statements(n):
    body = "".join(f"    t += {i % 7};\n" for i in range(n))
    return f"fn main() {{\n    var t = 0;\n{body}    print(t);\n}}\n"


def errors(n):
    line = " ".join("let a: i64 = true;" for _ in range(n))
    return f"fn main() {{ {line} }}\n"


def fields(n):
    decl = ", ".join(f"f{i}: i64" for i in range(n))
    init = ", ".join(f"f{i}: {i % 10}" for i in range(n))
    return (
        f"struct S {{ {decl} }}\n"
        f"fn main() {{\n    let s = S {{ {init} }};\n    print(s.f{n - 1});\n}}\n"
    )


def params(n):
    decl = ", ".join(f"p{i}: i64" for i in range(n))
    args = ", ".join(str(i % 10) for i in range(n))
    return (
        f"fn f({decl}) -> i64 {{\n    return p0 + p{n - 1};\n}}\n"
        f"fn main() {{\n    print(f({args}));\n}}\n"
    )


def locals_(n):
    body = "".join(f"    let v{i} = v0 + {i % 10};\n" for i in range(1, n))
    return f"fn main() {{\n    let v0 = 1;\n{body}    print(v{n - 1});\n}}\n"


def array(n):
    elems = ", ".join(str(i % 10) for i in range(n))
    return f"fn main() {{\n    let a = [{elems}];\n    print(a[{n - 1}]);\n}}\n"


SHAPES = {
    "functions": functions,
    "sum": sum_,
    "elseif": elseif,
    "statements": statements,
    "errors": errors,
    "fields": fields,
    "params": params,
    "locals": locals_,
    "array": array,
}


def measure(cmd, cwd):
    """Wall seconds, peak RSS (MiB), status and CPU seconds (user + system)
    of one run of `cmd`."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    cpu = usage.ru_utime + usage.ru_stime
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), cpu


def best(cmd, cwd, runs=3):
    """The fastest of `runs` runs (the least disturbed by other load)."""
    results = [measure(cmd, cwd) for _ in range(runs)]
    return min(results, key=lambda r: r[0])


def table(tern, runs, sizes, shapes):
    tern = os.path.abspath(tern)
    with tempfile.TemporaryDirectory(prefix="tern-scale-") as d:

        def write(shape, n):
            path = os.path.join(d, f"{shape}_{n}.tern")
            with open(path, "w") as f:
                f.write(SHAPES[shape](n))
            return path

        if "functions" in shapes:
            print("| functions | lines | `tern check` | cpu | memory | `tern build` (-O2) | cpu | memory |")
            print("|---|---|---|---|---|---|---|---|")
        for n in ((1_000, 10_000, 100_000) if "functions" in shapes else ()):
            path = write("functions", n)
            lines = sum(1 for _ in open(path))
            c = best([tern, "check", path], d, runs)
            b = best([tern, "build", path, "-o", os.path.join(d, "a.out")], d, runs=1)
            status = "" if c[2] == 0 and b[2] == 0 else f" (status {c[2]}, {b[2]})"
            print(
                f"| {n:,} | {lines:,} | {c[0]:.2f} s | {c[3]:.2f} s | {c[1]:.0f} MiB "
                f"| {b[0]:.2f} s | {b[3]:.2f} s | {b[1]:.0f} MiB |{status}"
            )
        print()
        print("| shape | N | `tern check` | cpu | memory | status |")
        print("|---|---|---|---|---|---|")
        for shape in [s for s in shapes if s != "functions"]:
            for n in sizes:
                path = write(shape, n)
                c = best([tern, "check", path], d, runs)
                print(f"| {shape} | {n:,} | {c[0]:.2f} s | {c[3]:.2f} s | {c[1]:.0f} MiB | {c[2]} |")


def main(argv):
    if len(argv) == 4 and argv[1] == "gen" and argv[2] in SHAPES:
        sys.stdout.write(SHAPES[argv[2]](int(argv[3])))
        return 0
    if len(argv) >= 2 and argv[1] == "table":
        opts = dict(zip(argv[2::2], argv[3::2]))
        tern = opts.get("--tern", "target/release/tern")
        runs = int(opts.get("--runs", "3"))
        sizes = [int(n) for n in opts.get("--sizes", "10000,40000,100000").split(",")]
        default = "functions,errors,elseif,fields,params,locals,array,sum,statements"
        shapes = opts.get("--shapes", default).split(",")
        table(tern, runs, sizes, shapes)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
