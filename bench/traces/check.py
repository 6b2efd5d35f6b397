#!/usr/bin/env python3
"""Validate TERNTRC1 traces (plain or .gz): header, record count, id range,
and liveness (every alloc names a non-live id, every free/realloc a live one,
no realloc to size 0).  Prints one line of statistics per file.

Usage: check.py TRACE...   (exit status 1 if any file is invalid)
"""
import gzip
import struct
import sys


def check(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if len(data) < 16 or data[:8] != b"TERNTRC1":
        raise ValueError("bad magic")
    n, ids = struct.unpack_from("<II", data, 8)
    if len(data) != 16 + 8 * n:
        raise ValueError("length %d != 16 + 8 * %d" % (len(data), n))
    live = bytearray(ids)
    sizes = [0] * ids
    nlive = peak = 0
    bytes_live = peak_bytes = 0
    counts = [0, 0, 0]
    max_id = -1
    for i, (w, size) in enumerate(struct.iter_unpack("<II", data[16:])):
        op, oid = w >> 30, w & ((1 << 30) - 1)
        if op == 3:
            raise ValueError("record %d: op 3" % i)
        if oid >= ids:
            raise ValueError("record %d: id %d >= id count %d" % (i, oid, ids))
        max_id = max(max_id, oid)
        counts[op] += 1
        if op == 0:
            if live[oid]:
                raise ValueError("record %d: alloc of live id %d" % (i, oid))
            live[oid] = 1
            sizes[oid] = size
            nlive += 1
            bytes_live += size
        elif op == 1:
            if not live[oid]:
                raise ValueError("record %d: free of non-live id %d" % (i, oid))
            if size != 0:
                raise ValueError("record %d: free with size %d" % (i, size))
            live[oid] = 0
            nlive -= 1
            bytes_live -= sizes[oid]
        else:
            if not live[oid]:
                raise ValueError("record %d: realloc of non-live id %d"
                                 % (i, oid))
            if size == 0:
                raise ValueError("record %d: realloc to size 0" % i)
            bytes_live += size - sizes[oid]
            sizes[oid] = size
        peak = max(peak, nlive)
        peak_bytes = max(peak_bytes, bytes_live)
    if max_id + 1 != ids:
        raise ValueError("id count %d but largest id is %d" % (ids, max_id))
    if counts[0] - counts[1] != nlive:
        raise ValueError("allocs - frees != live at end")
    return ("%s: OK  records %d (alloc %d, free %d, realloc %d)  ids %d  "
            "peak live %d  live at end %d  peak live bytes %d"
            % (path, n, counts[0], counts[1], counts[2], ids, peak, nlive,
               peak_bytes))


def main():
    bad = 0
    for p in sys.argv[1:]:
        try:
            print(check(p))
        except (OSError, ValueError, struct.error) as e:
            print("%s: INVALID: %s" % (p, e))
            bad = 1
    sys.exit(bad)


if __name__ == "__main__":
    main()
