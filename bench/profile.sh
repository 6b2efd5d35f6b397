#!/bin/sh
# Where the instructions of the application workloads go: runs each executable
# a `tern bench` run built (under OUT/bin) once under callgrind and prints, per
# program, the share of its instructions in the program's own code, in the
# allocator (the runtime's pools and their externs, the stdlib's pool and arena
# code where it is not inlined; glibc malloc for C), in libc's memset/memcpy
# (zero fill, moves) and elsewhere (startup, output), then the functions with
# the largest self cost: the figures of docs/workloads.md, "Where the time goes".
#
#   tern bench --quick --workloads graph,... --modes aot --out OUT
#   sh bench/profile.sh OUT [SIZE] [TOP] > profiles.txt
set -eu
out=$1
size=${2:-8}
top=${3:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for exe in "$out"/bin/*-O2/*-"$size" "$out"/bin/c/*-"$size"; do
    [ -x "$exe" ] || continue
    side=$(basename "$(dirname "$exe")")
    valgrind --tool=callgrind -q --callgrind-out-file="$tmp/cg" "$exe" > /dev/null
    # Self cost per function: "Ir (pct) file:function [object]".
    # The "file:function" summary only (the source annotations follow it).
    callgrind_annotate --threshold=100 "$tmp/cg" 2>/dev/null \
        | awk '/^Ir +file:function/ { on = 1; getline; next } on && /^---/ { exit } on && NF' \
        > "$tmp/fns"
    awk -v name="$side/$(basename "$exe")" -v exe="[$exe]" '
        { ir = $1; gsub(",", "", ir); total += ir
          if ($0 ~ /tern_runtime::|tern_span_|tern_reusable_|tern_mem_|malloc\/.*(malloc|arena)\.c:|stdlib\/(slice_pool|slice_pool_pure|arena)\.tern:/) alloc += ir
          else if ($0 ~ /memset|memcpy|memmove/) mem += ir
          else if (index($0, exe) && $0 !~ /std::|core::|alloc::|tern_rt_|tern_print|tern_write/) prog += ir
          else other += ir }
        END { printf "== %s: %.1f M instructions: program %.0f %%, allocator %.0f %%, memset/memcpy %.0f %%, other %.0f %%\n",
                     name, total / 1e6, 100 * prog / total, 100 * alloc / total, 100 * mem / total, 100 * other / total }
    ' "$tmp/fns"
    head -n "$top" "$tmp/fns"
done
