/* collatz: Project Euler problem 14 ("Longest Collatz sequence",
 * https://projecteuler.net/problem=14): which starting number under one
 * million produces the longest Collatz chain (n -> n/2 when n is even,
 * n -> 3n+1 when odd, until 1)? Brute force: every start is walked to 1
 * with plain 64-bit arithmetic (chains climb past 2^32), no memoisation.
 * Published answer: 837799, whose chain has 525 terms (counting the start
 * and the final 1).
 * C twin of bench/programs/collatz.tern (same loop, same output). */
#include <stdint.h>
#include <stdio.h>

#ifndef REPS
#define REPS 1
#endif

#define LIMIT 1000000
#define EXPECTED_START 837799
#define EXPECTED_TERMS 525

/* Terms in the chain from `start` down to 1, both included. */
static int64_t chain_length(int64_t start) {
    int64_t n = start;
    int64_t terms = 1;
    while (n != 1) {
        if (n % 2 == 0) {
            n = n / 2;
        } else {
            n = 3 * n + 1;
        }
        terms++;
    }
    return terms;
}

int main(void) {
    /* Every repetition is checked, so none of them can be skipped. */
    int64_t failures = 0, best_start = 0, best_terms = 0;
    for (int64_t rep = 0; rep < REPS; rep++) {
        best_start = 0;
        best_terms = 0;
        for (int64_t start = 1; start < LIMIT; start++) {
            int64_t terms = chain_length(start);
            if (terms > best_terms) {
                best_terms = terms;
                best_start = start;
            }
        }
        if (best_start != EXPECTED_START || best_terms != EXPECTED_TERMS) failures++;
    }
    if (failures > 0) {
        printf("collatz: wrong answer %lld %lld (expected 837799, 525 terms), FAILED\n",
               (long long)best_start, (long long)best_terms);
        return 1;
    }
    printf("collatz: 837799 has the longest chain under 1000000, 525 terms, ok\n");
    return 0;
}
