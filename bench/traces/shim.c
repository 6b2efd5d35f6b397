/*
 * LD_PRELOAD allocation-trace shim (glibc, Linux, x86-64/aarch64 little-endian).
 *
 * Intercepts malloc, calloc, realloc, reallocarray, free, posix_memalign,
 * aligned_alloc, memalign, valloc and pvalloc, forwards them to glibc's
 * internal entry points (__libc_malloc & co., so no dlsym bootstrapping is
 * needed) and logs every call as a 32-byte little-endian record to
 * "$TERN_TRACE_OUT.<pid>".  If TERN_TRACE_OUT is unset, calls are forwarded
 * and nothing is logged.
 *
 * Raw record (32 bytes, little-endian):
 *   off  0  u8   op      0 = alloc, 1 = free, 2 = realloc, 0xFF = meta
 *   off  1  u8   fn      which function was called (enum fn below)
 *   off  2  u16  0
 *   off  4  u32  thread  small per-process thread serial number (1, 2, ...)
 *   off  8  u64  arg     free/realloc: the pointer passed in;
 *                        aligned allocs: the alignment; otherwise 0
 *   off 16  u64  size    requested size (calloc: nmemb*size; reallocarray:
 *                        nmemb*size; pvalloc: size rounded up to a page); 0 for free
 *   off 24  u64  result  pointer returned (0 for free, and for a realloc that
 *                        freed its argument because the size was 0)
 * The first record of every file is a meta record: op 0xFF, fn 1 (version),
 * u32 pid at offset 4, and the first 24 bytes of the basename of
 * /proc/self/exe (NUL padded) at offset 8.
 *
 * Failed allocations (NULL result) are not logged, except realloc(p, 0)
 * with p != NULL, which glibc turns into free(p) and which is logged as a
 * realloc with result 0.  free(NULL) is logged (the converter drops it).
 *
 * Ordering: an address can only be handed out again after it was freed, so
 * free() logs *before* releasing the memory, allocations log *after* the
 * call returns, and realloc() holds the log lock across the call.  So the
 * order of records in the file is a valid sequential history even for
 * multithreaded programs.
 *
 * Reentrancy: a thread-local guard (initial-exec TLS, which never allocates)
 * makes nested calls (e.g. from a signal handler interrupting the shim) pass
 * straight through without logging; the shim itself never allocates.
 *
 * fork(): a pthread_atfork handler takes the lock around fork(); in the
 * child it discards the parent's buffered records, closes the inherited
 * descriptor and lazily opens "$TERN_TRACE_OUT.<childpid>".
 *
 * Build: cc -O2 -shared -fPIC -o shim.so shim.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);
extern char **environ;

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

enum op { OP_ALLOC = 0, OP_FREE = 1, OP_REALLOC = 2, OP_META = 0xFF };
enum fn {
    FN_MALLOC = 0, FN_CALLOC = 1, FN_REALLOC = 2, FN_REALLOCARRAY = 3,
    FN_FREE = 4, FN_POSIX_MEMALIGN = 5, FN_ALIGNED_ALLOC = 6,
    FN_MEMALIGN = 7, FN_VALLOC = 8, FN_PVALLOC = 9
};

struct rec {
    uint8_t op;
    uint8_t fn;
    uint16_t zero;
    uint32_t thread;
    uint64_t arg;
    uint64_t size;
    uint64_t result;
};
_Static_assert(sizeof(struct rec) == 32, "record must be 32 bytes");

#define NREC (1u << 15) /* 32768 records = 1 MiB */
static struct rec buf[NREC];
static unsigned nbuf;
static int fd = -1;
static int owner_pid;           /* pid the open file belongs to */
static int state;               /* 0 = undecided, 1 = logging, 2 = off */
static int exiting;             /* after the destructor ran: flush every record */
static int lock_word;
static uint32_t thread_counter;

static TLS int in_shim;
static TLS uint32_t thread_id;

static void lock(void)
{
    unsigned spins = 0;
    while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&lock_word, __ATOMIC_RELAXED)) {
            if (++spins < 64)
                __builtin_ia32_pause();
            else
                sched_yield();
        }
    }
}

static void unlock(void)
{
    __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

static void write_all(const void *p, size_t n)
{
    const char *c = p;
    while (n > 0 && fd >= 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            /* give up: stop logging rather than loop forever */
            close(fd);
            fd = -1;
            state = 2;
            return;
        }
        c += w;
        n -= (size_t)w;
    }
}

static void flush_locked(void)
{
    if (nbuf && fd >= 0) {
        int e = errno;
        write_all(buf, (size_t)nbuf * sizeof(struct rec));
        errno = e;
    }
    nbuf = 0;
}

static const char *env_out(void)
{
    /* getenv() does not allocate; avoid it before environ is set up */
    if (environ == NULL)
        return NULL;
    const char *s = getenv("TERN_TRACE_OUT");
    return (s && *s) ? s : NULL;
}

/* Open "$TERN_TRACE_OUT.<pid>" and write the meta record.  Called with the
 * lock held.  Never allocates. */
static void open_locked(void)
{
    const char *base = env_out();
    if (base == NULL) {
        if (environ != NULL)
            state = 2;
        return;
    }
    char path[4096];
    size_t n = strlen(base);
    if (n > sizeof(path) - 32) {
        state = 2;
        return;
    }
    memcpy(path, base, n);
    path[n++] = '.';
    int pid = (int)syscall(SYS_getpid);
    char digits[16];
    int nd = 0;
    unsigned v = (unsigned)pid;
    do {
        digits[nd++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (nd)
        path[n++] = digits[--nd];
    path[n] = 0;

    int e = errno;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        errno = e;
        state = 2;
        return;
    }
    owner_pid = pid;
    state = 1;
    nbuf = 0;

    struct rec m;
    memset(&m, 0, sizeof m);
    m.op = OP_META;
    m.fn = 1;
    m.thread = (uint32_t)pid;
    char exe[512];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        const char *b = strrchr(exe, '/');
        b = b ? b + 1 : exe;
        size_t bl = strlen(b);
        if (bl > 24)
            bl = 24;
        memcpy(&m.arg, b, bl);
    }
    buf[nbuf++] = m;
    errno = e;
}

static void log_locked(uint8_t op, uint8_t fn, uint64_t arg, uint64_t size,
                       uint64_t result)
{
    if (state == 0)
        open_locked();
    if (state != 1)
        return;
    if (thread_id == 0)
        thread_id = __atomic_add_fetch(&thread_counter, 1, __ATOMIC_RELAXED);
    struct rec *r = &buf[nbuf++];
    r->op = op;
    r->fn = fn;
    r->zero = 0;
    r->thread = thread_id;
    r->arg = arg;
    r->size = size;
    r->result = result;
    if (nbuf == NREC || exiting)
        flush_locked();
}

static inline int active(void)
{
    return __atomic_load_n(&state, __ATOMIC_RELAXED) != 2;
}

static void log_rec(uint8_t op, uint8_t fn, uint64_t arg, uint64_t size,
                    uint64_t result)
{
    lock();
    log_locked(op, fn, arg, size, result);
    unlock();
}

/* ---- fork handling ---- */

static void atfork_prepare(void)
{
    lock();
}

static void atfork_parent(void)
{
    unlock();
}

static void atfork_child(void)
{
    /* The parent's buffered records are the parent's: drop our copy. */
    nbuf = 0;
    if (fd >= 0)
        close(fd);
    fd = -1;
    thread_counter = 0;
    thread_id = 0;
    if (state == 1)
        state = 0; /* reopen lazily under our own pid */
    lock_word = 0;
}

__attribute__((constructor)) static void shim_init(void)
{
    in_shim++;
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    lock();
    if (state == 0)
        open_locked();
    unlock();
    in_shim--;
}

static void final_flush(void)
{
    in_shim++;
    lock();
    if (state == 1 && owner_pid == (int)syscall(SYS_getpid))
        flush_locked();
    exiting = 1; /* records logged from now on are written at once */
    unlock();
    in_shim--;
}

__attribute__((destructor)) static void shim_fini(void)
{
    final_flush();
}

/* Programs that leave with _exit()/_Exit() skip destructors; flush first.
 * (In a vfork child the pid differs from owner_pid, so nothing is written.) */
EXPORT void _exit(int status)
{
    final_flush();
    for (;;)
        syscall(SYS_exit_group, status);
}

EXPORT void _Exit(int status)
{
    _exit(status);
}

/* ---- the interposed functions ---- */

#define ENTER() int logit = !in_shim && active(); in_shim++
#define LEAVE() in_shim--

EXPORT void *malloc(size_t n)
{
    ENTER();
    void *p = __libc_malloc(n);
    if (logit && p)
        log_rec(OP_ALLOC, FN_MALLOC, 0, n, (uintptr_t)p);
    LEAVE();
    return p;
}

EXPORT void *calloc(size_t a, size_t b)
{
    ENTER();
    void *p = __libc_calloc(a, b);
    if (logit && p)
        log_rec(OP_ALLOC, FN_CALLOC, 0, (uint64_t)a * b, (uintptr_t)p);
    LEAVE();
    return p;
}

static void *do_realloc(void *old, size_t n, uint8_t fn, int logit)
{
    void *p;
    if (!logit)
        return __libc_realloc(old, n);
    /* Hold the lock across the call: once realloc has released `old`,
     * another thread may get it back from malloc, and its record must come
     * after ours. */
    lock();
    p = __libc_realloc(old, n);
    if (p || (old && n == 0))
        log_locked(OP_REALLOC, fn, (uintptr_t)old, n, (uintptr_t)p);
    unlock();
    return p;
}

EXPORT void *realloc(void *old, size_t n)
{
    ENTER();
    void *p = do_realloc(old, n, FN_REALLOC, logit);
    LEAVE();
    return p;
}

EXPORT void *reallocarray(void *old, size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    ENTER();
    void *p = do_realloc(old, n, FN_REALLOCARRAY, logit);
    LEAVE();
    return p;
}

EXPORT void free(void *p)
{
    ENTER();
    if (logit)
        log_rec(OP_FREE, FN_FREE, (uintptr_t)p, 0, 0); /* before releasing */
    __libc_free(p);
    LEAVE();
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0 || align == 0)
        return EINVAL;
    ENTER();
    int e = errno;
    void *p = __libc_memalign(align, n);
    int rc = 0;
    if (p) {
        *out = p;
        if (logit)
            log_rec(OP_ALLOC, FN_POSIX_MEMALIGN, align, n, (uintptr_t)p);
    } else {
        rc = ENOMEM;
    }
    errno = e;
    LEAVE();
    return rc;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    ENTER();
    void *p = __libc_memalign(align, n);
    if (logit && p)
        log_rec(OP_ALLOC, FN_ALIGNED_ALLOC, align, n, (uintptr_t)p);
    LEAVE();
    return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
    ENTER();
    void *p = __libc_memalign(align, n);
    if (logit && p)
        log_rec(OP_ALLOC, FN_MEMALIGN, align, n, (uintptr_t)p);
    LEAVE();
    return p;
}

EXPORT void *valloc(size_t n)
{
    ENTER();
    void *p = __libc_valloc(n);
    if (logit && p)
        log_rec(OP_ALLOC, FN_VALLOC, (uint64_t)sysconf(_SC_PAGESIZE), n,
                (uintptr_t)p);
    LEAVE();
    return p;
}

EXPORT void *pvalloc(size_t n)
{
    ENTER();
    void *p = __libc_pvalloc(n);
    if (logit && p) {
        uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
        uint64_t rounded = n ? (n + pg - 1) / pg * pg : pg;
        log_rec(OP_ALLOC, FN_PVALLOC, pg, rounded, (uintptr_t)p);
    }
    LEAVE();
    return p;
}
