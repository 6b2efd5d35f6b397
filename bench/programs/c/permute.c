/* permute: the "are we fast yet" benchmark Permute (smarr/are-we-fast-yet,
 * benchmarks/Java/src/Permute.java), a port of the SOM class library's version:
 * generate the permutations of a 6-element array by the recursive swap
 * algorithm, counting the calls of permute (1 + n * calls for n-1 each level).
 * Published answer (Permute.verifyResult): count = 8660.
 * C twin of bench/programs/permute.tern (same algorithm, same output). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef REPS
#define REPS 12000
#endif

#define EXPECTED 8660

/* The original's object state: the call counter and the array permuted. */
typedef struct {
    int64_t count;
    int64_t *v;
} Permute;

static void swap(Permute *p, int64_t i, int64_t j) {
    int64_t tmp = p->v[i];
    p->v[i] = p->v[j];
    p->v[j] = tmp;
}

static void permute(Permute *p, int64_t n) {
    p->count++;
    if (n != 0) {
        int64_t n1 = n - 1;
        permute(p, n1);
        for (int64_t i = n1; i >= 0; i--) {
            swap(p, n1, i);
            permute(p, n1);
            swap(p, n1, i);
        }
    }
}

/* One benchmark() of the original: a fresh array of 6 (Java's `new int[6]`,
 * zeroed). */
static int64_t benchmark(void) {
    Permute p;
    p.count = 0;
    p.v = calloc(6, sizeof(int64_t));
    if (!p.v) { fputs("permute: out of memory\n", stderr); exit(2); }
    permute(&p, 6);
    free(p.v);
    return p.count;
}

int main(void) {
    /* Every repetition is checked, so none of them can be skipped. */
    int64_t failures = 0, bad = 0;
    for (int64_t rep = 0; rep < REPS; rep++) {
        int64_t result = benchmark();
        if (result != EXPECTED) {
            failures++;
            bad = result;
        }
    }
    if (failures > 0) {
        printf("permute: wrong count %lld (expected 8660), FAILED\n", (long long)bad);
        return 1;
    }
    printf("permute: count 8660, ok\n");
    return 0;
}
