/* Leaving a failed REPL input (see src/repl/exec.rs).
 *
 * setjmp cannot be called from Rust (it returns twice), so the two ends of
 * the jump live here. The REPL's worker thread enters the generated code
 * through tern_repl_call; the runtime's failure hook and the fault and
 * interrupt paths come back to it through tern_repl_escape. Only frames of
 * the generated code and of runtime entry points with nothing left to drop
 * lie in between (runtime/src/abi/fail.rs, "Why owned"). */

#include <setjmp.h>
#include <stdint.h>

/* The innermost tern_repl_call of this thread, or NULL. */
static _Thread_local sigjmp_buf *active;

/* Calls entry(); returns 0 when it returned, else the code given to
 * tern_repl_escape. The signal mask is saved and restored by the jump, so
 * leaving a signal handler this way unblocks the signal again. */
int tern_repl_call(int64_t (*entry)(void)) {
    sigjmp_buf here;
    sigjmp_buf *outer = active;
    int code;
    active = &here;
    code = sigsetjmp(here, 1);
    if (code == 0) {
        entry();
    }
    active = outer;
    return code;
}

/* The address of this function's frame: its caller's stack pointer at the
 * call, less the return address and the saved frame pointer. The worker
 * measures its input stack from here (src/repl/exec.rs, INPUT_STACK); this
 * file is compiled with the same flags in every build profile, so the
 * distance from here to the generated code's first frame is the same too. */
uintptr_t tern_repl_stack_here(void) {
    return (uintptr_t)__builtin_frame_address(0);
}

/* Whether this thread is inside tern_repl_call. */
int tern_repl_inside(void) {
    return active != 0;
}

/* Returns from the innermost tern_repl_call of this thread with `code`
 * (nonzero). Async-signal-safe. Must not be called outside one. */
void tern_repl_escape(int code) {
    siglongjmp(*active, code);
}
