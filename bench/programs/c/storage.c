/* are-we-fast-yet Storage (smarr/are-we-fast-yet: benchmarks/Java/src/Storage.java,
 * benchmarks/C++/src/storage.h, som/Random): buildTreeDepth(7, random) builds a tree
 * of arrays, each inner array of 4 children, each leaf a fresh array of
 * `random.next() % 10 + 1` empty slots, with the AWFY Random (seed 74755,
 * `seed = ((seed * 1309) + 13849) & 65535`), counting every array made; published
 * answer (verifyResult): 5461 arrays (1 + 4 + ... + 4^6).
 * C port of the C++ version: ArrayTree is one pointer; every array calloc'ed (the
 * original's arrays start out null), the tree freed at the end of the iteration. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef REPS
#define REPS 1600
#endif
#define EXPECTED 5461

typedef struct { int32_t seed; } Random;

static int32_t next(Random *r) {
    r->seed = ((r->seed * 1309) + 13849) & 65535;
    return r->seed;
}

typedef struct ArrayTree {
    struct ArrayTree *children;
} ArrayTree;

static int32_t count;

static ArrayTree *new_array(int32_t n) {
    ArrayTree *a = calloc((size_t)n, sizeof(ArrayTree));
    if (a == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return a;
}

static ArrayTree *build_tree_depth(int32_t depth, Random *random) {
    count += 1;
    if (depth == 1) return new_array(next(random) % 10 + 1);
    ArrayTree *arr = new_array(4);
    for (int i = 0; i < 4; i++) arr[i].children = build_tree_depth(depth - 1, random);
    return arr;
}

/* The C++ `delete[]` runs each element's destructor, which deletes its children. */
static void free_tree(ArrayTree *arr, int32_t depth) {
    if (depth > 1) {
        for (int i = 0; i < 4; i++) free_tree(arr[i].children, depth - 1);
    }
    free(arr);
}

static int32_t benchmark(void) {
    Random random = {74755};
    count = 0;
    ArrayTree *result = build_tree_depth(7, &random);
    free_tree(result, 7);
    return count;
}

int main(void) {
    /* Every repetition is verified, as the AWFY harness's inner loop does. */
    int64_t failures = 0;
    int32_t result = 0;
    for (int64_t rep = 0; rep < REPS; rep++) {
        result = benchmark();
        if (result != EXPECTED) failures += 1;
    }
    if (failures != 0) {
        printf("storage: wrong result %d expected %d\n", result, EXPECTED);
        return 1;
    }
    printf("storage: %d arrays, ok\n", result);
    return 0;
}
