#!/usr/bin/env python3
"""Where the instructions of a callgrind run go, by inlined function.

The span tree's operations are inlined into their callers, so callgrind's own
report names only the outer function. This attributes every instruction to the
innermost function of a given list that it was inlined from (`addr2line -i`
over the binary's line tables), and can subtract a setup-only run:

    valgrind --tool=callgrind --dump-instr=yes --dump-line=no \\
        --callgrind-out-file=run.out target/release/deps/span_icount-<hash> churn span
    valgrind --tool=callgrind --dump-instr=yes --dump-line=no \\
        --callgrind-out-file=setup.out target/release/deps/span_icount-<hash> none span
    python3 bench/benches/inline_profile.py BINARY run.out [--minus setup.out] [--per N] \\
        [--functions fit_index,max,count_le,fix_up_entry,...]

Prints `instructions  function` rows (divided by --per, e.g. the number of
steps), largest first; instructions inlined from none of the listed functions
are reported under the outermost function they belong to. `--event K` takes the
K-th event column instead of instructions (with `--branch-sim=yes`: 3 is
mispredicted conditional branches). Needs binutils' addr2line; nothing else.
"""

import collections
import re
import subprocess
import sys

DEFAULT_FUNCTIONS = (
    "fit_index,max,count_le,fix_up_entry,fix_up,remove_at,insert_at,next_leaf,find_exact,"
    "neighbours,descend_by_key,alloc,free_range,check_span,take,record,first_fit,summary"
)


def costs(path, event):
    """{address: cost} of one callgrind output written with --dump-instr=yes --dump-line=no."""
    out = collections.Counter()
    addr = 0
    after_calls = False
    with open(path) as f:
        for line in f:
            if line.startswith("calls="):
                after_calls = True  # the next cost line is the call's inclusive cost
                continue
            if not line or not (line[0].isdigit() or line[0] in "+-*"):
                continue
            parts = line.split()
            pos = parts[0]
            if pos[0] == "+":
                addr += int(pos[1:], 0)
            elif pos[0] == "-":
                addr -= int(pos[1:], 0)
            elif pos != "*":
                addr = int(pos, 0)
            if after_calls:
                after_calls = False
                continue
            if len(parts) > event:
                out[addr] += int(parts[event])
    return out


def short(name):
    """`a::b::Type<..>::function` → `function`."""
    for _ in range(5):
        name = re.sub(r"<[^<>]*>", "", name)
    return name.split("::")[-1]


def inline_chains(binary, addresses):
    """{address: [function, ...]} innermost first."""
    args = ["addr2line", "-a", "-i", "-f", "-C", "-e", binary] + [hex(a) for a in addresses]
    lines = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split("\n")
    chains, current, i = {}, None, 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            current = int(lines[i], 16)
            chains[current] = []
            i += 1
        elif current is not None and i + 1 < len(lines):
            chains[current].append(short(lines[i]))
            i += 2  # function, then file:line
        else:
            i += 1
    return chains


def by_function(binary, cost, wanted):
    chains = inline_chains(binary, sorted(cost))
    out = collections.Counter()
    for addr, c in cost.items():
        names = chains.get(addr, [])
        key = next((n for n in names if n in wanted), names[-1] if names else "?")
        out[key] += c
    return out


def main(argv):
    if len(argv) < 2 or argv[0].startswith("-"):
        sys.exit(__doc__)
    binary, run = argv[0], argv[1]
    minus, per, event, functions = None, 1.0, 1, DEFAULT_FUNCTIONS
    rest = argv[2:]
    while rest:
        flag = rest.pop(0)
        if not rest:
            sys.exit(f"{flag} needs a value")
        value = rest.pop(0)
        if flag == "--minus":
            minus = value
        elif flag == "--per":
            per = float(value)
        elif flag == "--event":
            event = int(value)
        elif flag == "--functions":
            functions = value
        else:
            sys.exit(f"unknown option {flag}")
    wanted = set(functions.split(","))
    total = by_function(binary, costs(run, event), wanted)
    if minus:
        for k, v in by_function(binary, costs(minus, event), wanted).items():
            total[k] -= v
    for name, v in sorted(total.items(), key=lambda kv: -kv[1]):
        if abs(v) / per >= 0.05:
            print(f"{v / per:10.1f}  {name}")
    print(f"{sum(total.values()) / per:10.1f}  (total)")


if __name__ == "__main__":
    main(sys.argv[1:])
