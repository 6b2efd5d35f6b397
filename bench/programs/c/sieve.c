/* sieve: the "are we fast yet" benchmark Sieve (smarr/are-we-fast-yet,
 * benchmarks/Java/src/Sieve.java), a port of the SOM class library's version:
 * the sieve of Eratosthenes over a fresh array of 5000 boolean flags (flag
 * i-1 stands for the number i), counting the primes up to 5000.
 * Published answer (Sieve.verifyResult): 669 primes.
 * C twin of bench/programs/sieve.tern (same algorithm, same output). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef REPS
#define REPS 18000
#endif

#define SIZE 5000
#define EXPECTED 669

static int64_t sieve(bool *flags, int64_t size) {
    int64_t prime_count = 0;
    for (int64_t i = 2; i <= size; i++) {
        if (flags[i - 1]) {
            prime_count++;
            int64_t k = i + i;
            while (k <= size) {
                flags[k - 1] = false;
                k += i;
            }
        }
    }
    return prime_count;
}

/* One benchmark() of the original: a new array (Java's `new boolean[5000]`)
 * filled with true, sieved. */
static int64_t benchmark(void) {
    bool *flags = malloc(SIZE * sizeof(bool));
    if (!flags) { fputs("sieve: out of memory\n", stderr); exit(2); }
    for (int64_t i = 0; i < SIZE; i++) flags[i] = true;
    int64_t result = sieve(flags, SIZE);
    free(flags);
    return result;
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
        printf("sieve: wrong prime count %lld (expected 669), FAILED\n", (long long)bad);
        return 1;
    }
    printf("sieve: 669 primes, ok\n");
    return 0;
}
