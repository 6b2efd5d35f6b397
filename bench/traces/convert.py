#!/usr/bin/env python3
"""Convert one raw shim trace (TERN_TRACE_OUT.<pid>) into the TERNTRC1 format.

Usage: convert.py RAW OUT [--limit N] [--gzip] [--json SUMMARY.json]

Raw input: 32-byte little-endian records written by shim.c
    u8 op (0 alloc, 1 free, 2 realloc, 0xFF meta), u8 fn, u16 0, u32 thread,
    u64 arg (pointer passed in / alignment), u64 size, u64 result.

Output (little-endian):
    header: b"TERNTRC1", u32 record count, u32 id count (largest id + 1)
    records: u32 (op << 30 | id), u32 size   (op 0 alloc, 1 free, 2 realloc)

Object ids: each new object gets the smallest id not currently live, so the
id count equals the peak number of live objects.  realloc(NULL, n) is an
alloc, realloc(p, 0) returning NULL is a free, a moving realloc keeps the
id.  free(NULL) and frees/reallocs of never-seen pointers are dropped and
counted.  --limit N keeps the first N output operations.  With --gzip the
output is written with gzip -9.
"""
import argparse
import gzip
import heapq
import json
import struct
import sys
from collections import Counter

OP_ALLOC, OP_FREE, OP_REALLOC, OP_META = 0, 1, 2, 0xFF
FN_NAMES = ["malloc", "calloc", "realloc", "reallocarray", "free",
            "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc"]
RAW = struct.Struct("<BBHIQQQ")
MAX_ID = 1 << 30
U32 = 1 << 32


class ConvertError(Exception):
    pass


def quartiles(values):
    """Nearest-rank min, Q1, median, Q3, max of a list of ints."""
    if not values:
        return None
    v = sorted(values)
    n = len(v)

    def q(p):
        return v[min(n - 1, max(0, -(-p * n // 4) - 1))]

    return {"min": v[0], "q1": q(1), "median": q(2), "q3": q(3), "max": v[-1],
            "mean": round(sum(v) / n, 1)}


def convert(raw, limit=None):
    if len(raw) % RAW.size:
        raise ConvertError("raw file length %d is not a multiple of %d"
                           % (len(raw), RAW.size))
    out = []                 # packed u64 per record: (op<<30|id) | size<<32
    live = {}                # address -> [id, size]
    free_ids = []            # min-heap of released ids below next_id
    next_id = 0
    live_bytes = live_bytes8 = 0
    peak_live = peak_bytes = peak_bytes8 = 0
    ops = Counter()
    fns = Counter()
    dropped = Counter()
    anomalies = Counter()
    sizes = []               # sizes of allocs and of reallocs (new size)
    alloc_sizes = []
    grow = shrink = same = moved = 0
    realloc_free = realloc_alloc = 0
    meta = []
    threads = set()

    def new_id():
        nonlocal next_id
        if free_ids:
            return heapq.heappop(free_ids)
        i = next_id
        next_id += 1
        if i >= MAX_ID:
            raise ConvertError("more than 2^30 live objects")
        return i

    def emit(op, oid, size):
        if size >= U32:
            raise ConvertError("size %d does not fit in u32" % size)
        out.append((op << 30 | oid) | (size << 32))
        ops[op] += 1

    def do_alloc(addr, size):
        nonlocal live_bytes, live_bytes8, peak_live, peak_bytes, peak_bytes8
        if addr in live:          # a free we never saw; treat it as done
            anomalies["alloc of a live address"] += 1
            do_free(addr)
        oid = new_id()
        live[addr] = [oid, size]
        emit(OP_ALLOC, oid, size)
        sizes.append(size)
        alloc_sizes.append(size)
        live_bytes += size
        live_bytes8 += (size + 7) & ~7
        peak_live = max(peak_live, len(live))
        peak_bytes = max(peak_bytes, live_bytes)
        peak_bytes8 = max(peak_bytes8, live_bytes8)

    def do_free(addr):
        nonlocal live_bytes, live_bytes8
        oid, size = live.pop(addr)
        heapq.heappush(free_ids, oid)
        emit(OP_FREE, oid, 0)
        live_bytes -= size
        live_bytes8 -= (size + 7) & ~7

    for op, fn, _z, thread, arg, size, result in RAW.iter_unpack(raw):
        if op == OP_META:
            name = struct.pack("<QQQ", arg, size, result).rstrip(b"\0")
            meta.append({"pid": thread, "exe": name.decode("utf-8", "replace")})
            continue
        threads.add(thread)
        if limit is not None and len(out) >= limit:
            break
        if fn < len(FN_NAMES):
            fns[FN_NAMES[fn]] += 1
        if op == OP_ALLOC:
            if result == 0:
                anomalies["alloc with NULL result"] += 1
                continue
            do_alloc(result, size)
        elif op == OP_FREE:
            if arg == 0:
                dropped["free(NULL)"] += 1
            elif arg not in live:
                dropped["free of unknown pointer"] += 1
            else:
                do_free(arg)
        elif op == OP_REALLOC:
            if arg == 0:                         # realloc(NULL, n) = malloc(n)
                if result == 0:
                    anomalies["realloc(NULL, n) with NULL result"] += 1
                    continue
                realloc_alloc += 1
                do_alloc(result, size)
            elif arg not in live:
                dropped["realloc of unknown pointer"] += 1
            elif result == 0:                    # realloc(p, 0) freed p
                realloc_free += 1
                do_free(arg)
            elif size == 0:
                # realloc(p, 0) that returned a fresh block: free + alloc(0)
                if limit is not None and len(out) + 2 > limit:
                    break
                anomalies["realloc(p, 0) with non-NULL result"] += 1
                do_free(arg)
                do_alloc(result, 0)
            else:
                ent = live.pop(arg)
                oid, old = ent
                if result != arg and result in live:
                    anomalies["realloc onto a live address"] += 1
                    do_free(result)
                live[result] = [oid, size]
                emit(OP_REALLOC, oid, size)
                sizes.append(size)
                if size > old:
                    grow += 1
                elif size < old:
                    shrink += 1
                else:
                    same += 1
                if result != arg:
                    moved += 1
                live_bytes += size - old
                live_bytes8 += ((size + 7) & ~7) - ((old + 7) & ~7)
                peak_bytes = max(peak_bytes, live_bytes)
                peak_bytes8 = max(peak_bytes8, live_bytes8)
        else:
            raise ConvertError("unknown raw op %d" % op)

    raw_records = len(raw) // RAW.size - raw[0::RAW.size].count(b"\xff")
    id_count = next_id
    header = b"TERNTRC1" + struct.pack("<II", len(out), id_count)
    body = struct.pack("<%dQ" % len(out), *out)
    summary = {
        "programs": meta,
        "raw_records": raw_records,
        "threads": len(threads),
        "records": len(out),
        "limit": limit,
        "ops": {"alloc": ops[OP_ALLOC], "free": ops[OP_FREE],
                "realloc": ops[OP_REALLOC]},
        "calls_by_function": dict(sorted(fns.items())),
        "alloc_from_realloc_null": realloc_alloc,
        "free_from_realloc_zero": realloc_free,
        "dropped": dict(dropped),
        "anomalies": dict(anomalies),
        "id_count": id_count,
        "peak_live_objects": peak_live,
        "live_at_end": len(live),
        "live_bytes_at_end": live_bytes,
        "peak_live_bytes": peak_bytes,
        "peak_live_bytes_round8": peak_bytes8,
        "sizes_all": quartiles(sizes),
        "sizes_alloc": quartiles(alloc_sizes),
        "realloc_grow": grow,
        "realloc_shrink": shrink,
        "realloc_same": same,
        "realloc_moved": moved,
    }
    if ops[OP_ALLOC] - ops[OP_FREE] != len(live):
        raise ConvertError("internal: allocs - frees != live at end")
    if id_count != peak_live:
        raise ConvertError("internal: id count %d != peak live %d"
                           % (id_count, peak_live))
    return header + body, summary


def print_summary(s, f=sys.stdout):
    p = lambda *a: print(*a, file=f)
    for m in s["programs"]:
        p("program: %s (pid %d)" % (m["exe"], m["pid"]))
    p("raw records: %d   threads: %d" % (s["raw_records"], s["threads"]))
    o = s["ops"]
    p("records: %d%s" % (s["records"],
                         "  (--limit %d)" % s["limit"] if s["limit"] else ""))
    p("  alloc   %9d  (of which realloc(NULL, n): %d)"
      % (o["alloc"], s["alloc_from_realloc_null"]))
    p("  free    %9d  (of which realloc(p, 0): %d)"
      % (o["free"], s["free_from_realloc_zero"]))
    p("  realloc %9d  (grow %d, shrink %d, same %d; moved %d)"
      % (o["realloc"], s["realloc_grow"], s["realloc_shrink"],
         s["realloc_same"], s["realloc_moved"]))
    p("calls by function: " + ", ".join("%s %d" % kv for kv in
                                        s["calls_by_function"].items()))
    p("dropped: " + (", ".join("%s %d" % kv for kv in s["dropped"].items())
                     or "none"))
    p("anomalies: " + (", ".join("%s %d" % kv
                                 for kv in s["anomalies"].items()) or "none"))
    p("id count (peak live objects): %d" % s["id_count"])
    p("live at end: %d objects, %d bytes  (allocs - frees = %d)"
      % (s["live_at_end"], s["live_bytes_at_end"], o["alloc"] - o["free"]))
    p("peak live bytes: %d  (sizes rounded up to 8: %d)"
      % (s["peak_live_bytes"], s["peak_live_bytes_round8"]))
    for key, label in (("sizes_alloc", "alloc sizes"),
                       ("sizes_all", "alloc+realloc sizes")):
        q = s[key]
        if q:
            p("%s: min %d  q1 %d  median %d  q3 %d  max %d  mean %.1f"
              % (label, q["min"], q["q1"], q["median"], q["q3"], q["max"],
                 q["mean"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("out", nargs="?", help="output trace (omit: summary only)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--gzip", action="store_true",
                    help="write OUT gzip-compressed (level 9)")
    ap.add_argument("--json", help="also write the summary as JSON here")
    a = ap.parse_args()
    with open(a.raw, "rb") as f:
        raw = f.read()
    try:
        data, summary = convert(raw, a.limit)
    except ConvertError as e:
        sys.exit("convert.py: %s: %s" % (a.raw, e))
    if a.out:
        if a.gzip:
            with open(a.out, "wb") as f:
                # mtime=0 and no file name: reproducible output
                with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=9,
                                   filename="", mtime=0) as g:
                    g.write(data)
        else:
            with open(a.out, "wb") as f:
                f.write(data)
    print_summary(summary)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
