/* Self-test for shim.so: threads, fork, edge cases.  Run by capture.sh
 * (selftest step):
 *   cc -O2 -pthread -o /tmp/x/shim_test shim_test.c
 *   TERN_TRACE_OUT=/tmp/x/t LD_PRELOAD=/tmp/x/shim.so /tmp/x/shim_test
 * then every /tmp/x/t.<pid> must convert without anomalies and with the
 * counts printed here. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4

void *volatile sink;
#define ITERS 200000

static void *worker(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg;
    void *slot[64] = {0};
    for (int i = 0; i < ITERS; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned k = (seed >> 8) % 64;
        size_t n = (seed >> 16) % 300;
        switch ((seed >> 24) % 4) {
        case 0: free(slot[k]); slot[k] = malloc(n); break;
        case 1: slot[k] = realloc(slot[k], n); break;  /* n may be 0 */
        case 2: free(slot[k]); slot[k] = calloc(1, n + 1); break;
        case 3: free(slot[k]); slot[k] = NULL; break;
        }
    }
    for (int k = 0; k < 64; k++)
        free(slot[k]);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (size_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));

    /* fork while the other threads are allocating */
    pid_t pid = fork();
    if (pid == 0) {
        worker((void *)99);
        void *p = malloc(10);
        free(p);
        exit(0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    int st;
    waitpid(pid, &st, 0);

    void *a = NULL, *b, *c, *d, *e;
    if (posix_memalign(&a, 64, 100) != 0)
        return 1;
    b = aligned_alloc(4096, 8192);
    c = memalign(32, 40);
    d = valloc(10);
    e = reallocarray(NULL, 10, 10);
    e = reallocarray(e, 20, 10);
    /* let the pointers escape so gcc cannot elide the malloc/free pairs */
    sink = a; sink = b; sink = c; sink = d; sink = e;
    free(a); free(b); free(c); free(d); free(e);
    free(NULL);
    char *s = realloc(NULL, 0);   /* glibc: malloc(0) */
    s = realloc(s, 0);            /* glibc: free, returns NULL */
    void *big = malloc((size_t)1 << 62); /* fails: not logged */
    printf("shim_test ok child status %d s=%p big=%p\n", WEXITSTATUS(st),
           (void *)s, big);
    return 0;
}
