//! A pool's memory is what its slices touch: a slice of 1 GiB allocated in a
//! fresh pool of each kind (the builtin, `slice_pool`, `slice_pool_pure`),
//! written at both ends and freed, leaves the run far below 1 GiB resident.
//! The zero fill skips the arena past its high-water mark, still the zero
//! pages the OS gave (`slice_pool_pure` once wrote the whole gigabyte); and
//! the builtin's and `slice_pool`'s fill of a gigabyte allocated again where
//! the freed one lay writes only the pages the first touched, discarding the
//! rest (each such allocation committed the whole gigabyte).
//! Alone in its test binary so that the child's peak RSS it reads is its own.

mod child_support;

use std::process::Command;

const PROGRAM: &str = "use slice_pool;
use slice_pool_pure;
const N: i64 = 1 << 27;
fn main() {
    var r = reusable::alloc::<i64>(N);
    r[0] = 1;
    r[N - 1] = 2;
    print(r[0] + r[N - 1] + r[N / 2]);
    reusable::free(r);
    r = reusable::alloc::<i64>(N);
    print(r[0] + r[N - 1] + r[N / 2]);
    reusable::free(r);
    var p = slice_pool::new(N * 8);
    var s = slice_pool::alloc_slice::<i64>(ref p, N);
    s[0] = 3;
    s[N - 1] = 4;
    print(s[0] + s[N - 1] + s[N / 2]);
    slice_pool::free_slice(ref p, s);
    s = slice_pool::alloc_slice::<i64>(ref p, N);
    print(s[0] + s[N - 1] + s[N / 2]);
    slice_pool::free_slice(ref p, s);
    slice_pool::finish(ref p);
    var q = slice_pool_pure::new(N * 16);
    var t = slice_pool_pure::alloc_slice::<i64>(ref q, N);
    t[0] = 5;
    t[N - 1] = 6;
    t = slice_pool_pure::realloc_slice::<i64>(ref q, t, N + 1);
    print(t[0] + t[N - 1] + t[N]);
    slice_pool_pure::free_slice(ref q, t);
    slice_pool_pure::finish(ref q);
}
";

#[test]
fn a_gigabyte_slice_touches_only_its_ends() {
    let dir = std::env::temp_dir().join(format!("tern-pool-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.tern");
    std::fs::write(&file, PROGRAM).unwrap();
    let out = child_support::output(
        Command::new(env!("CARGO_BIN_EXE_tern"))
            .arg("run")
            .arg(&file)
            .env_remove("TERN_STDLIB"),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "3\n0\n7\n0\n11\n");
    assert_eq!(out.status.code(), Some(0));
    // SAFETY: getrusage fills the struct it is given.
    let peak_kib = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage.ru_maxrss
    };
    // Each slice is 1 GiB; writing any of them whole would pass this bound
    // four times over.
    assert!(peak_kib < 256 * 1024, "peak RSS {peak_kib} KiB");
    let _ = std::fs::remove_dir_all(&dir);
}
