#!/bin/sh
# Rebuild the shim, re-record and convert every allocation trace.
#
# usage: capture.sh [--force] [--keep] [--only NAME]... [OUTDIR]
#
#   OUTDIR   where <name>.trace.gz and <name>.summary.txt go
#            (default: the directory of this script, i.e. bench/traces)
#   --force  overwrite existing output files (without it the script stops
#            before recording anything if an output file already exists)
#   --keep   keep the work directory (shim.so, raw traces, program output)
#   --only   capture only these traces (python, cc1, sqlite, git, awk,
#            perl, selftest)
#
# Build outputs and raw traces go to a fresh directory under ${TMPDIR:-/tmp}.
# Runs one program at a time, under nice.  Needs: cc, python3, gcc,
# sqlite3, git, mawk, perl, and /work/main (or $TERN_REPO) as the repository for the git
# trace (it is only read: cloned with --no-local into the work directory).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
force=0
keep=0
only=""
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --force) force=1 ;;
        --keep) keep=1 ;;
        --only) shift; only="$only $1" ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        -*) echo "capture.sh: unknown option $1" >&2; exit 2 ;;
        *) out=$1 ;;
    esac
    shift
done
[ -n "$out" ] || out=$here
[ -n "$only" ] || only="selftest python cc1 sqlite git awk perl"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# ---- inputs (override through the environment) ----
PY=${TERN_PYTHON:-$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')}
PYLIB=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
PY_INPUT=${TERN_PY_INPUT:-$PYLIB/shutil.py}
CC_SRC_DIR=${TERN_CC_SRC_DIR:-$(ls -d "$HOME"/.cargo/registry/src/*/libmimalloc-sys-0.1.49/c_src/mimalloc/v2 2>/dev/null | head -n 1)}
CC_INPUT=${TERN_CC_INPUT:-$CC_SRC_DIR/src/segment.c}
GIT_REPO=${TERN_REPO:-/work/main}
GIT_COMMIT=${TERN_GIT_COMMIT:-1ece79785a2a5e929e4ccb805af2b366c8e41333}

for name in $only; do
    for f in "$out/$name.trace.gz" "$out/$name.summary.txt"; do
        if [ "$name" != selftest ] && [ -e "$f" ] && [ $force = 0 ]; then
            echo "capture.sh: $f exists; use --force to overwrite" >&2
            exit 1
        fi
    done
done

work=$(mktemp -d "${TMPDIR:-/tmp}/tern-traces.XXXXXX")
if [ $keep = 0 ]; then
    trap 'rm -rf "$work"' EXIT
else
    echo "work directory: $work"
fi

# same environment for every capture
export LC_ALL=C
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export PYTHONHASHSEED=0
unset PYTHONMALLOC TERN_TRACE_OUT

cc -O2 -Wall -shared -fPIC -o "$work/shim.so" "$here/shim.c"
SHIM=$work/shim.so

# traced NAME CMD...: run CMD with the shim, raw files in $work/NAME/raw.<pid>
traced() {
    dir=$work/$1
    shift
    mkdir -p "$dir"
    env TERN_TRACE_OUT="$dir/raw" LD_PRELOAD="$SHIM" nice -n 10 "$@"
}

# exe_of RAW: program name from the meta record (bytes 8..31)
exe_of() {
    head -c 32 "$1" | tail -c 24 | tr -d '\000'
}

# pick NAME EXE: the one raw file of program EXE
pick() {
    found=""
    for r in "$work/$1"/raw.*; do
        if [ "$(exe_of "$r")" = "$2" ]; then
            [ -z "$found" ] || { echo "capture.sh: several $2 traces" >&2; exit 1; }
            found=$r
        fi
    done
    [ -n "$found" ] || { echo "capture.sh: no $2 trace in $work/$1" >&2; exit 1; }
    echo "$found"
}

# convert NAME RAW [convert.py options]
convert() {
    name=$1
    raw=$2
    shift 2
    python3 "$here/convert.py" "$@" --gzip "$raw" "$work/$name.trace.gz" \
        > "$work/$name.summary.txt"
    python3 "$here/check.py" "$work/$name.trace.gz"
    cp "$work/$name.trace.gz" "$work/$name.summary.txt" "$out/"
    echo "== $name"
    cat "$work/$name.summary.txt"
}

fail() {
    echo "capture.sh: $*" >&2
    exit 1
}

for name in $only; do
    case $name in
    selftest)
        # threads + fork + edge cases; every raw file must convert cleanly
        cc -O2 -Wall -pthread -o "$work/shim_test" "$here/shim_test.c"
        traced selftest "$work/shim_test"
        for r in "$work/selftest"/raw.*; do
            python3 "$here/convert.py" "$r" "$r.trace" > "$r.summary"
            grep -q '^anomalies: none$' "$r.summary" || fail "selftest: anomalies in $r"
            python3 "$here/check.py" "$r.trace"
        done
        [ "$(ls "$work/selftest"/raw.* | grep -c 'raw\.[0-9]*$')" = 2 ] ||
            fail "selftest: expected two raw files (parent and child)"
        ;;
    python)
        # CPython's tokenizer module on a stdlib file; PYTHONMALLOC=malloc
        # sends every object allocation through malloc
        traced python env PYTHONMALLOC=malloc "$PY" -m tokenize "$PY_INPUT" \
            > "$work/python.out"
        tail -n 1 "$work/python.out" | grep -q ENDMARKER || fail "python: bad output"
        convert python "$(pick python "$(basename "$PY")")"
        ;;
    cc1)
        [ -f "$CC_INPUT" ] || fail "cc1: $CC_INPUT not found (set TERN_CC_INPUT)"
        traced cc1 gcc -O2 -I"$CC_SRC_DIR/include" -c "$CC_INPUT" -o "$work/cc1.o"
        [ -s "$work/cc1.o" ] || fail "cc1: no object file"
        convert cc1 "$(pick cc1 cc1)"
        ;;
    sqlite)
        traced sqlite sqlite3 :memory: < "$here/sqlite.sql" > "$work/sqlite.out"
        tail -n 1 "$work/sqlite.out" | grep -qx ok || fail "sqlite: integrity_check failed"
        convert sqlite "$(pick sqlite sqlite3)"
        ;;
    git)
        git clone --quiet --no-local --no-checkout "$GIT_REPO" "$work/repo"
        git -C "$work/repo" cat-file -e "$GIT_COMMIT^{commit}" ||
            fail "git: commit $GIT_COMMIT not in $GIT_REPO (set TERN_GIT_COMMIT)"
        traced git git -C "$work/repo" --no-pager log -p --stat -M "$GIT_COMMIT" \
            > "$work/git.out"
        head -n 1 "$work/git.out" | grep -q "^commit $GIT_COMMIT" || fail "git: bad output"
        convert git "$(pick git git)"
        ;;
    awk)
        # mawk grouping 200 000 shuffled numbers into 4 000 strings that
        # grow by one field per line (`a[k] = a[k] " " $1`): each line
        # allocates the longer string and frees the shorter
        "$PY" -c 'import random; random.seed(27); a = list(range(1, 200001)); random.shuffle(a); print("\n".join(map(str, a)))' \
            > "$work/awk.in"
        traced awk mawk '{ k = $1 % 4000; a[k] = a[k] " " $1 } END { n = 0; for (k in a) n += length(a[k]); print n }' \
            "$work/awk.in" > "$work/awk.out"
        grep -qx 1288895 "$work/awk.out" || fail "awk: bad output"
        convert awk "$(pick awk mawk)"
        ;;
    perl)
        # perl appending short pieces to 3 000 strings picked at random
        # (`$h{$k} .= ...`), the hash emptied every 70 000 appends: each
        # append grows its string by realloc, which mostly moves it (the
        # block after it is another string's); a fixed hash seed, so that the
        # hash's own allocations repeat
        traced perl env PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 perl -e 'srand(7); my %h; for my $i (1..300000) { my $k = int(rand(3000)); $h{$k} .= ("ab" x (1 + $i % 9)); %h = () if $i % 70000 == 0 } print scalar(keys %h), "\n"' \
            > "$work/perl.out"
        grep -qx 2998 "$work/perl.out" || fail "perl: bad output"
        convert perl "$(pick perl perl)"
        ;;
    *)
        fail "unknown trace $name"
        ;;
    esac
done

echo "== versions"
python3 --version
"$PY" --version
gcc --version | head -n 1
sqlite3 --version
git --version
mawk -W version 2>&1 | head -n 1
perl -e 'print "perl $^V\n"'
ldd --version | head -n 1
