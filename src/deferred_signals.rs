//! The signals that end a process from outside (SIGINT, SIGTERM, SIGHUP),
//! held back while `tern build` has files to remove: a handler only notes
//! the signal, the build stops at its next step, every scratch file is
//! removed as on any other failure (their `Drop`s), and then the process
//! ends by the same signal, so the shell still sees it (status 130 for
//! Ctrl-C). Killed during its link, a build used to leave its scratch folder
//! (`tern-build-XXXXXX`, with the object and perhaps the runtime library) in
//! `$TMPDIR`. SIGKILL cannot be held back; nothing is left behind but what
//! such a kill leaves of any compiler.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signals held back.
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The first signal that arrived while a [`Deferred`] was alive; 0 for none.
static PENDING: AtomicI32 = AtomicI32::new(0);

/// Notes the signal (an atomic store: async-signal-safe).
extern "C" fn note(sig: libc::c_int) {
    let _ = PENDING.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
}

/// While alive, [`SIGNALS`] are noted instead of ending the process; when
/// dropped, the earlier dispositions come back and a noted signal is raised
/// again. Declare it before the values whose `Drop` must run first.
pub struct Deferred {
    /// The dispositions replaced, restored on drop.
    earlier: Vec<(libc::c_int, libc::sigaction)>,
}

impl Deferred {
    /// Installs the handler for every signal of [`SIGNALS`] not ignored
    /// (`nohup` makes SIGHUP ignored: it stays so).
    pub fn install() -> Self {
        let mut earlier = Vec::new();
        for sig in SIGNALS {
            // SAFETY: sigaction with a handler that only stores to an atomic;
            // `old` is written by the call.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = note as *const () as usize;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                if libc::sigaction(sig, &sa, std::ptr::null_mut()) == 0 {
                    earlier.push((sig, old));
                }
            }
        }
        Deferred { earlier }
    }

    /// Whether a signal arrived: the caller stops at this step.
    pub fn pending(&self) -> bool {
        PENDING.load(Ordering::SeqCst) != 0
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        for (sig, old) in &self.earlier {
            // SAFETY: restores a disposition `sigaction` returned.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
        let sig = PENDING.swap(0, Ordering::SeqCst);
        if sig != 0 {
            // SAFETY: raising a signal whose earlier disposition is back
            // (the default one ends the process here).
            unsafe { libc::raise(sig) };
        }
    }
}
