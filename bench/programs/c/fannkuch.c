/* fannkuch: the Computer Language Benchmarks Game's fannkuch-redux, the
 * standard sequential algorithm (as in its Java/C #1 programs): for every
 * permutation of 0..n-1, generated in the benchmark's fixed order by
 * successive rotations (perm1, with the counter array count), count the
 * "pancake flips" (reverse the first perm[0]+1 elements) until 0 comes first.
 * The result is the maximum flip count and a checksum: the flip counts added
 * for even-indexed permutations and subtracted for odd-indexed ones.
 * Published answer for n=10 (the benchmark's output file):
 * "73196" and "Pfannkuchen(10) = 38".
 * C twin of bench/programs/fannkuch.tern (same algorithm, same output). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef REPS
#define REPS 1
#endif

#define N 10
#define EXPECTED_CHECKSUM 73196
#define EXPECTED_MAX_FLIPS 38

typedef struct { int64_t checksum, max_flips; } FannkuchResult;

static int64_t *xcalloc(int64_t n) {
    int64_t *p = calloc((size_t)n, sizeof(int64_t));
    if (!p) { fputs("fannkuch: out of memory\n", stderr); exit(2); }
    return p;
}

static FannkuchResult fannkuch(int64_t n) {
    int64_t *perm = xcalloc(n);
    int64_t *perm1 = xcalloc(n);
    int64_t *count = xcalloc(n);
    int64_t max_flips = 0, perm_count = 0, checksum = 0;
    for (int64_t i = 0; i < n; i++) perm1[i] = i;
    int64_t r = n;
    for (;;) {
        while (r != 1) {
            count[r - 1] = r;
            r--;
        }
        /* Flip a copy: perm1 must stay to generate the next permutation. */
        for (int64_t i = 0; i < n; i++) perm[i] = perm1[i];
        int64_t flips = 0;
        int64_t k = perm[0];
        while (k != 0) {
            int64_t k2 = (k + 1) >> 1;
            for (int64_t i = 0; i < k2; i++) {
                int64_t t = perm[i];
                perm[i] = perm[k - i];
                perm[k - i] = t;
            }
            flips++;
            k = perm[0];
        }
        if (flips > max_flips) max_flips = flips;
        if (perm_count % 2 == 0) checksum += flips; else checksum -= flips;

        /* Next permutation: rotate the first r+1 elements left by one; when
         * count[r] runs out, move on to a longer prefix. */
        for (;;) {
            if (r == n) {
                free(perm);
                free(perm1);
                free(count);
                FannkuchResult res = { checksum, max_flips };
                return res;
            }
            int64_t perm0 = perm1[0];
            int64_t i = 0;
            while (i < r) {
                int64_t j = i + 1;
                perm1[i] = perm1[j];
                i = j;
            }
            perm1[r] = perm0;
            count[r]--;
            if (count[r] > 0) break;
            r++;
        }
        perm_count++;
    }
}

int main(void) {
    /* Every repetition is checked, so none of them can be skipped. */
    int64_t failures = 0;
    FannkuchResult bad = { 0, 0 };
    for (int64_t rep = 0; rep < REPS; rep++) {
        FannkuchResult res = fannkuch(N);
        if (res.checksum != EXPECTED_CHECKSUM || res.max_flips != EXPECTED_MAX_FLIPS) {
            failures++;
            bad = res;
        }
    }
    if (failures > 0) {
        printf("fannkuch(10): wrong result: checksum %lld max flips %lld (expected 73196, 38), FAILED\n",
               (long long)bad.checksum, (long long)bad.max_flips);
        return 1;
    }
    printf("fannkuch(10): checksum 73196, max flips 38, ok\n");
    return 0;
}
