/* are-we-fast-yet List (smarr/are-we-fast-yet: benchmarks/Java/src/List.java,
 * benchmarks/C++/src/list.h): linked lists made by makeList(15), makeList(10) and
 * makeList(6), then the recursive, Takeuchi-like `tail` over them, which walks
 * the lists with isShorterThan; published answer (verifyResult): the returned
 * list has length 10.
 * C port of the C++ version: each element malloc'ed, the three lists freed at the
 * end of the iteration. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef REPS
#define REPS 18000
#endif
#define EXPECTED 10

typedef struct Element {
    int64_t val;
    struct Element *next;
} Element;

static int32_t length(Element *e) {
    if (e->next == NULL) return 1;
    return 1 + length(e->next);
}

static Element *make_list(int32_t length) {
    if (length == 0) return NULL;
    Element *e = malloc(sizeof(Element));
    if (e == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    e->val = length;
    e->next = make_list(length - 1);
    return e;
}

static void free_list(Element *e) {
    while (e != NULL) {
        Element *next = e->next;
        free(e);
        e = next;
    }
}

static int is_shorter_than(Element *x, Element *y) {
    Element *x_tail = x;
    Element *y_tail = y;
    while (y_tail != NULL) {
        if (x_tail == NULL) return 1;
        x_tail = x_tail->next;
        y_tail = y_tail->next;
    }
    return 0;
}

static Element *tail(Element *x, Element *y, Element *z) {
    if (is_shorter_than(y, x)) {
        return tail(tail(x->next, y, z), tail(y->next, z, x), tail(z->next, x, y));
    }
    return z;
}

static int32_t benchmark(void) {
    Element *x = make_list(15);
    Element *y = make_list(10);
    Element *z = make_list(6);
    Element *result = tail(x, y, z);
    int32_t l = length(result);
    free_list(x);
    free_list(y);
    free_list(z);
    return l;
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
        printf("list: wrong result %d expected %d\n", result, EXPECTED);
        return 1;
    }
    printf("list: %d elements, ok\n", result);
    return 0;
}
