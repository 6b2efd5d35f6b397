/* What a large zero fill costs by each way of clearing, on a private
 * anonymous mapping (what a pool arena is): the measurement behind
 * `memory::zero_by_residency` (docs/benchmarks.md, "Thirty-second pass").
 *
 *   cc -O2 bench/probes/page_fill.c -o /tmp/page_fill && /tmp/page_fill
 *
 * Per size, milliseconds a round (median of 7 runs of the round loop):
 *   resident: memset      the pages were written before; clear by memset,
 *                         then the program writes them all again
 *   resident: discard     the same, cleared by MADV_DONTNEED (every page
 *                         faults back in when written)
 *   resident: by-res.     the same, cleared as the runtime does (mincore,
 *                         then memset the resident runs, discard the others)
 *   untouched: memset     the pages were never touched (or given back);
 *                         clear by memset, the program touches one byte,
 *                         the pages are given back for the next round
 *   untouched: by-res.    the same, cleared as the runtime does
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static unsigned char vec[4096];

static void by_residency(char *p, size_t n) {
    size_t pages = n >> 12;
    for (size_t c = 0; c < pages; c += sizeof vec) {
        size_t k = pages - c < sizeof vec ? pages - c : sizeof vec;
        if (mincore(p + (c << 12), k << 12, vec) != 0) memset(vec, 1, k);
        for (size_t i = 0; i < k;) {
            int r = vec[i] & 1;
            size_t j = i;
            while (j < k && (vec[j] & 1) == r) j++;
            char *a = p + ((c + i) << 12);
            size_t len = (j - i) << 12;
            if (r || madvise(a, len, MADV_DONTNEED) != 0) memset(a, 0, len);
            i = j;
        }
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over 7 runs of `reps` rounds of `way`, ms a round. */
static double measure(char *p, size_t n, int way, int reps) {
    double t[7];
    for (int k = 0; k < 7; k++) {
        if (way <= 2) memset(p, 1, n); else madvise(p, n, MADV_DONTNEED);
        double t0 = now();
        for (int r = 0; r < reps; r++) {
            switch (way) {
            case 0: memset(p, 0, n); memset(p, r, n); break;
            case 1: madvise(p, n, MADV_DONTNEED); memset(p, r, n); break;
            case 2: by_residency(p, n); memset(p, r, n); break;
            case 3: memset(p, 0, n); p[0] = 1; madvise(p, n, MADV_DONTNEED); break;
            case 4: by_residency(p, n); p[0] = 1; madvise(p, n, MADV_DONTNEED); break;
            }
        }
        t[k] = (now() - t0) / reps * 1e3;
    }
    qsort(t, 7, sizeof t[0], cmp);
    return t[3];
}

int main(void) {
    printf("%10s %18s %18s %18s %18s %18s\n", "KiB", "resident: memset",
           "resident: discard", "resident: by-res.", "untouched: memset",
           "untouched: by-res.");
    for (size_t n = 1 << 20; n <= 256u << 20; n <<= 2) {
        char *p = mmap(0, n, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return 1;
        int reps = (int)((256u << 20) / n);
        printf("%10zu", n >> 10);
        for (int way = 0; way < 5; way++) printf(" %18.3f", measure(p, n, way, reps));
        printf("\n");
        munmap(p, n);
    }
    return 0;
}
