//! The names a user gives for a file the runtime or the driver writes (the
//! `TERN_POOL_STATS` report, `tern build -o`): which of the process's own
//! standard streams a name reaches, written through that descriptor rather
//! than opened anew, and whether a symbolic link at the name may be
//! followed. One rule for both writers.

/// Which of this process's stdout (1) and stderr (2) is the file `meta`
/// describes, if either (`/dev/stdout`, `/proc/self/fd/2`, or the file the
/// shell sent the stream to, however named): what writes a report or an
/// output through that descriptor, at its offset and in its append mode,
/// instead of opening the file anew.
pub fn descriptor_of(meta: &std::fs::Metadata) -> Option<i32> {
    use std::os::unix::fs::MetadataExt as _;
    [1, 2].into_iter().find(|&fd| {
        // SAFETY: all zeroes is a valid `stat`.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat of a descriptor number into a local buffer.
        let found = unsafe { libc::fstat(fd, &mut st) } == 0;
        found && st.st_dev as u64 == meta.dev() && st.st_ino as u64 == meta.ino()
    })
}

/// Refuses a symbolic link at `path` that someone else may have planted:
/// one in a sticky, world-writable folder (`/tmp`) owned neither by this
/// user nor by the folder's owner (the rule Linux's `protected_symlinks`
/// applies, which not every system turns on). Links the user or the system
/// made (`/dev/stderr`, `/proc/self/fd/2`) are followed: `Ok(true)` for
/// such a link, `Ok(false)` when `path` is no link.
pub fn refuse_planted_link(path: &std::path::Path) -> Result<bool, String> {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(link) = std::fs::symlink_metadata(path) else {
        return Ok(false);
    };
    if !link.file_type().is_symlink() {
        return Ok(false);
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let Ok(folder) = std::fs::metadata(dir) else {
        return Ok(true);
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let shared = folder.mode() & 0o1002 == 0o1002;
    if shared && link.uid() != me && link.uid() != folder.uid() {
        return Err(format!(
            "it is a symbolic link another user (uid {}) made in a shared folder; not followed",
            link.uid()
        ));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link in a sticky, world-writable folder is followed when this user
    /// or the folder's owner made it, refused when another user did; a name
    /// that is no link is none. (The other user's link needs root to make:
    /// skipped otherwise.)
    #[test]
    fn only_a_link_another_user_planted_in_a_shared_folder_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("tern-planted-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let file = dir.join("file");
        std::fs::write(&file, "").unwrap();
        assert_eq!(refuse_planted_link(&file), Ok(false));
        let mine = dir.join("mine");
        std::os::unix::fs::symlink("/dev/null", &mine).unwrap();
        assert_eq!(refuse_planted_link(&mine), Ok(true));
        let theirs = dir.join("theirs");
        std::os::unix::fs::symlink("/dev/null", &theirs).unwrap();
        let c = std::ffi::CString::new(theirs.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        if unsafe { libc::lchown(c.as_ptr(), 54321, 54321) } == 0 {
            assert_eq!(
                refuse_planted_link(&theirs),
                Err("it is a symbolic link another user (uid 54321) made in a shared folder; not followed".to_string())
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
