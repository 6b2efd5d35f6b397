/* The C side of the `trace-*` workloads: the allocation trace in the file
 * argv[1] (`TERNTRC1`, bench/traces/README.md) replayed with
 * malloc/realloc/free, every allocation touched at both ends when it is
 * made or resized and read back at both ends when it is freed (or at the
 * end), exactly as bench/workloads/trace.tern does, so both print the same
 * checksum (the first line; the Tern sides add a second). Built with
 * -DZERO_FILL (`tern bench --sides c-zeroed`) it zero-fills each allocation
 * and growth as the Tern sides do. With a second
 * argument `dry` it keeps the books but allocates nothing and prints
 * `dry PEAK`: what `tern bench` subtracts. Built with `cc -O2`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { unsigned char *p; int64_t len; } object;

static void die(const char *what) {
    fprintf(stderr, "error: %s\n", what);
    exit(101);
}

static int64_t u32_at(const unsigned char *b) {
    return (int64_t)b[0] | ((int64_t)b[1] << 8) | ((int64_t)b[2] << 16) | ((int64_t)b[3] << 24);
}

static int64_t round8(int64_t n) { return (n + 7) & -8; }

/* The Tern side's `fold`: i64 arithmetic, which wraps. */
static uint64_t fold(uint64_t sum, object o) {
    if (o.len == 0) return sum * 31 + 7;
    return sum * 31 + (uint64_t)o.p[0] * 257 + (uint64_t)o.p[o.len - 1];
}

static void touch(object o, int64_t id) {
    if (o.len > 0) {
        o.p[0] = (unsigned char)(id & 255);
        o.p[o.len - 1] = (unsigned char)((id >> 8) & 255);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) die("usage: trace FILE [dry]");
    int dry = argc > 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f) die("cannot open the trace file");
    unsigned char head[16];
    if (fread(head, 1, 16, f) != 16 || memcmp(head, "TERNTRC1", 8) != 0)
        die("not a trace file (no TERNTRC1 header)");
    int64_t records = u32_at(head + 8), ids = u32_at(head + 12);
    int64_t *lens = calloc((size_t)ids + 1, sizeof *lens);
    object *objs = calloc(dry ? 1 : (size_t)ids + 1, sizeof *objs);
    if (!lens || !objs) die("out of memory for the object table");
    static unsigned char buf[65536];
    int64_t have = 0, at = 0, live = 0, peak = 0;
    uint64_t sum = 0;
    for (int64_t r = 0; r < records; r++) {
        if (at + 8 > have) {
            int64_t rest = have - at;
            memmove(buf, buf + at, (size_t)rest);
            have = rest + (int64_t)fread(buf + rest, 1, sizeof buf - (size_t)rest, f);
            at = 0;
            if (have < 8) die("trace file ends before its last record");
        }
        int64_t w = u32_at(buf + at), size = u32_at(buf + at + 4);
        at += 8;
        int64_t op = w >> 30, id = w & 0x3fffffff;
        if (id >= ids) die("trace record names an object id past the header's count");
        /* `lens`: size + 1 while the object is live, 0 otherwise. */
        if (op == 1) {
            live -= round8(lens[id] - 1);
            lens[id] = 0;
            if (!dry) {
                sum = fold(sum, objs[id]);
                free(objs[id].p);
            }
        } else {
            live += round8(size) - round8(lens[id] - 1);
            lens[id] = size + 1;
            if (!dry) {
                unsigned char *p = op == 0 ? malloc((size_t)size) : realloc(objs[id].p, (size_t)size);
                if (!p && size > 0) die("out of memory");
#ifdef ZERO_FILL
                /* `--sides c-zeroed`: Tern's zero fill, what it costs a malloc. */
                int64_t kept = op == 0 ? 0 : objs[id].len;
                if (size > kept) memset(p + kept, 0, (size_t)(size - kept));
#endif
                objs[id] = (object){p, size};
                touch(objs[id], id);
            }
            if (live > peak) peak = live;
        }
    }
    if (!dry) {
        for (int64_t id = 0; id < ids; id++) {
            if (lens[id] > 0) {
                sum = fold(sum, objs[id]);
                free(objs[id].p);
            }
        }
        printf("%lld\n", (long long)(int64_t)sum);
    } else {
        printf("dry %lld\n", (long long)peak);
    }
    /* The Tern sides' second line (`records peak`) only they print: the C
     * baseline is held to the first (bench/src/checksum.rs). */
    return 0;
}
