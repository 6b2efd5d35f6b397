//! The runtime's static library `tern build` links: `TERN_RUNTIME_LIB` if
//! set, else the copy embedded in this binary at build time (`build.rs`),
//! kept in the user's cache directory under a name carrying its hash, so a
//! `tern` installed anywhere builds programs with no source tree and no
//! environment, and two versions never share a file.
//!
//! The cache is a place another local user must not be able to steer
//! (docs/security.md): the directory is created private (0700) and used only
//! when it is a real directory owned by this user that nobody else can write,
//! below parents nobody else can rename it out of; a cached file is linked
//! only when its bytes equal the embedded library; a new copy is written to a
//! fresh name opened with `O_CREAT|O_EXCL|O_NOFOLLOW` and renamed into place.
//! Without a usable cache (no `XDG_CACHE_HOME` or `HOME`, or a directory
//! refused), the library is unpacked into the build's private temporary
//! directory instead.
//!
//! Comparing 13 MB of bytes on every build would cost a hello-world build
//! about 15 ms, so a verified copy gets a stamp beside it
//! (`libtern_runtime-HASH.a.ok`, written like the library): its device,
//! inode, size, and modification and change times. A build whose fstat of
//! the library matches the stamp links it without reading it; any write to
//! the file changes its change time (which no user can set), so a stamp can
//! only describe the bytes it was written for. Without a matching stamp the
//! bytes are compared, and a new stamp written when they match.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

/// The runtime library this binary was built with (release, no debug info).
static EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libtern_runtime.a"));

/// Hash of [`EMBEDDED`] (computed by `build.rs`).
const HASH: &str = env!("TERN_RUNTIME_HASH");

/// The library's file name, in the cache or the scratch directory.
fn file_name() -> String {
    format!("libtern_runtime-{HASH}.a")
}

/// Locates the runtime's static library or explains what is missing.
/// `scratch` is the build's private temporary directory (mode 0700, removed
/// after the link): the library is unpacked there when no cache directory
/// can be trusted, and a refused one is named in a warning on stderr.
pub fn find_runtime_lib(scratch: &Path) -> Result<PathBuf, String> {
    if let Some(path) = crate::config::runtime_lib() {
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "TERN_RUNTIME_LIB is set to `{}`, which is not a file",
                path.display()
            ))
        };
    }
    if let Some(dir) = crate::config::cache_dir() {
        match private_dir(&dir) {
            // The checked folder by its resolved path: the linker gets a
            // path no link another user owns can redirect after the checks.
            Ok(real) => match cached(&real) {
                Ok(path) => return Ok(path),
                // A full disk or a read-only cache costs the cache, not the
                // build: the scratch directory may have room.
                Err(why) => {
                    say!("warning: {why}; linking from a private temporary directory instead")
                }
            },
            Err(why) => say!(
                "warning: not using the cache directory `{}`: {why}; linking from a private temporary directory instead",
                dir.display()
            ),
        }
    }
    let path = scratch.join(file_name());
    write_fresh(scratch, &path, temp_names(), EMBEDDED)
        .map_err(|e| format!("cannot unpack the runtime library: {e}"))?;
    Ok(path)
}

/// The cached copy in the trusted directory `dir`, written (or rewritten)
/// unless a file there already holds exactly the embedded bytes.
fn cached(dir: &Path) -> Result<PathBuf, String> {
    let path = dir.join(file_name());
    let stamp = dir.join(format!("{}.ok", file_name()));
    let fail = |e: std::io::Error| {
        format!(
            "cannot write the runtime library in `{}`: {e} (set XDG_CACHE_HOME to a writable directory, or TERN_RUNTIME_LIB to the library)",
            dir.display()
        )
    };
    match verify(&path, &stamp) {
        Verified::Stamped => return Ok(path),
        Verified::Compared(fingerprint) => {
            write_fresh(dir, &stamp, temp_names(), fingerprint.as_bytes()).map_err(fail)?
        }
        Verified::No => {
            write_fresh(dir, &path, temp_names(), EMBEDDED).map_err(fail)?;
            if let Verified::Compared(fingerprint) = verify(&path, &stamp) {
                write_fresh(dir, &stamp, temp_names(), fingerprint.as_bytes()).map_err(fail)?;
            }
        }
    }
    Ok(path)
}

/// What [`verify`] found.
enum Verified {
    /// The library's metadata matches its stamp: not read.
    Stamped,
    /// Its bytes were compared and are the embedded library's; the stamp to
    /// write for it.
    Compared(String),
    /// Not the embedded library (or not a file to trust).
    No,
}

/// The stamp of a verified library file: what changes whenever its bytes do.
fn fingerprint(meta: &std::fs::Metadata) -> String {
    format!(
        "tern runtime {HASH}: dev {} ino {} size {} mtime {}.{} ctime {}.{}\n",
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec()
    )
}

/// Whether `path` is a regular file (not a link) of this user's, writable by
/// nobody else, whose content is the embedded library (by its `stamp`, else
/// by its bytes). Any doubt is a "no": the caller then writes a fresh copy.
fn verify(path: &Path, stamp: &Path) -> Verified {
    let Ok(mut file) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    else {
        return Verified::No;
    };
    let Ok(meta) = file.metadata() else {
        return Verified::No;
    };
    if !meta.is_file()
        || meta.uid() != effective_uid()
        || meta.mode() & 0o022 != 0
        || meta.len() != EMBEDDED.len() as u64
    {
        return Verified::No;
    }
    let expected = fingerprint(&meta);
    if read_small(stamp).is_some_and(|s| s == expected.as_bytes()) {
        return Verified::Stamped;
    }
    if holds_embedded(&mut file) {
        Verified::Compared(expected)
    } else {
        Verified::No
    }
}

/// The content of a small regular file of this user's (a stamp), read
/// without following a link; `None` for anything else.
fn read_small(path: &Path) -> Option<Vec<u8>> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.uid() != effective_uid() || meta.mode() & 0o022 != 0 {
        return None;
    }
    let mut bytes = Vec::new();
    std::io::Read::take(&mut file, 4096)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// Whether the rest of `file` (of the embedded library's size) is exactly
/// the embedded bytes.
fn holds_embedded(file: &mut File) -> bool {
    // Compare in blocks: no second copy of the library in memory.
    let mut block = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < EMBEDDED.len() {
        let want = block.len().min(EMBEDDED.len() - at);
        if file.read_exact(&mut block[..want]).is_err() || block[..want] != EMBEDDED[at..at + want]
        {
            return false;
        }
        at += want;
    }
    // Nothing past the expected end (the file may have grown since fstat).
    file.read(&mut block[..1]).is_ok_and(|n| n == 0)
}

/// Temporary names for a new copy: unpredictable, so another user cannot
/// place anything at them in advance (and a collision is only a retry).
fn temp_names() -> impl Iterator<Item = String> {
    let seed = std::collections::hash_map::RandomState::new();
    (0u32..64).map(move |i| {
        use std::hash::BuildHasher as _;
        let salt = seed.hash_one((std::process::id(), i));
        format!(".libtern_runtime-{HASH}.{salt:016x}.tmp")
    })
}

/// Writes `bytes` (the library, or its stamp) to `path` through a temporary
/// file in `dir`, created exclusively (never through a link, never over an
/// existing file) under the first of `names` that is free, then renamed into
/// place, so a concurrent `tern build` never links half a file.
fn write_fresh(
    dir: &Path,
    path: &Path,
    names: impl Iterator<Item = String>,
    bytes: &[u8],
) -> std::io::Result<()> {
    let (tmp, mut file) = create_exclusive(dir, names)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Creates a new file (mode 0600) in `dir` under the first free name of
/// `names`: `O_CREAT|O_EXCL|O_NOFOLLOW`, so an existing file or a planted
/// symbolic link at a name is skipped, never opened.
fn create_exclusive(
    dir: &Path,
    names: impl Iterator<Item = String>,
) -> std::io::Result<(PathBuf, File)> {
    let mut last = std::io::Error::other("no temporary name left");
    for name in names {
        let tmp = dir.join(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
        {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// Makes sure `dir` is a directory only this user controls: created with
/// mode 0700 when missing; refused (with the reason) when it is a symbolic
/// link, not a directory, owned by another user or writable by group or
/// others, or when one of its parents lets another user rename it away
/// (writable by others without the sticky bit, or owned by another user
/// who is not root). `Ok` holds its resolved path, the one every check was
/// of: use it, not `dir` (a link on the way could be swapped after).
pub(crate) fn private_dir(dir: &Path) -> Result<PathBuf, String> {
    // The parents first: nothing is created inside a folder another user
    // could rename away (the cache folder, then the missing folders above
    // it, were made, then refused). The deepest one that exists is checked
    // before the missing ones are made under it, and the whole chain after.
    let uid = effective_uid();
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        let existing = parent
            .ancestors()
            .find(|a| a.as_os_str().is_empty() || a.exists())
            .filter(|a| !a.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let real = std::fs::canonicalize(existing).map_err(|e| e.to_string())?;
        trusted_parents(&real, uid)?;
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
        let real = std::fs::canonicalize(parent).map_err(|e| e.to_string())?;
        trusted_parents(&real, uid)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create it: {e}")),
    }
    if std::fs::symlink_metadata(dir)
        .map_err(|e| e.to_string())?
        .file_type()
        .is_symlink()
    {
        return Err("it is a symbolic link".into());
    }
    // Every check below is of the resolved path, which is also the one
    // returned: a link on the way (`XDG_CACHE_HOME` through another user's
    // link) is resolved once, here, and never again.
    let real = std::fs::canonicalize(dir).map_err(|e| e.to_string())?;
    let meta = std::fs::symlink_metadata(&real).map_err(|e| e.to_string())?;
    if !meta.is_dir() {
        return Err("it is not a directory".into());
    }
    if meta.uid() != uid {
        return Err(format!(
            "it is owned by uid {}, not by this user (uid {uid})",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "it is writable by other users (mode {:04o}); `chmod go-w` it",
            meta.mode() & 0o7777
        ));
    }
    // Again, of the resolved path: a parent may have been swapped since.
    trusted_parents(real.parent().unwrap_or(Path::new("/")), uid)?;
    Ok(real)
}

/// Whether `real` (a resolved path) and every folder above it are safe
/// parents for a private folder: each owned by this user or root, and not
/// writable by others unless sticky (`/tmp`).
fn trusted_parents(real: &Path, uid: u32) -> Result<(), String> {
    for parent in real.ancestors() {
        let meta = std::fs::metadata(parent).map_err(|e| e.to_string())?;
        let sticky = meta.mode() & 0o1000 != 0;
        if meta.uid() != uid && meta.uid() != 0 {
            return Err(format!(
                "its parent `{}` is owned by uid {}",
                parent.display(),
                meta.uid()
            ));
        }
        if meta.mode() & 0o022 != 0 && !sticky {
            return Err(format!(
                "its parent `{}` is writable by other users (mode {:04o})",
                parent.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn private_scratch() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("tern-staticlib-")
            .tempdir()
            .unwrap()
    }

    #[test]
    fn a_planted_link_at_a_temporary_name_is_not_followed() {
        let dir = private_scratch();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("first.tmp")).unwrap();
        let path = dir.path().join(file_name());
        let names = ["first.tmp".to_string(), "second.tmp".to_string()];
        write_fresh(dir.path(), &path, names.into_iter(), EMBEDDED).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(&path).unwrap(), EMBEDDED);
        // The link is left alone, the second name was used and renamed away.
        assert!(
            std::fs::symlink_metadata(dir.path().join("first.tmp"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(!dir.path().join("second.tmp").exists());
    }

    #[test]
    fn only_taken_names_fail() {
        let dir = private_scratch();
        std::fs::write(dir.path().join("taken.tmp"), b"x").unwrap();
        let path = dir.path().join(file_name());
        let err = write_fresh(
            dir.path(),
            &path,
            ["taken.tmp".to_string()].into_iter(),
            EMBEDDED,
        )
        .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(dir.path().join("taken.tmp")).unwrap(), b"x");
    }

    #[test]
    fn a_file_of_the_right_size_must_also_have_the_right_bytes() {
        let dir = private_scratch();
        let path = dir.path().join(file_name());
        let stamp = dir.path().join("stamp");
        let mut planted = EMBEDDED.to_vec();
        let mid = planted.len() / 2;
        planted[mid] ^= 1;
        std::fs::write(&path, &planted).unwrap();
        assert!(matches!(verify(&path, &stamp), Verified::No));
        std::fs::write(&path, EMBEDDED).unwrap();
        let Verified::Compared(fingerprint) = verify(&path, &stamp) else {
            panic!("the right bytes");
        };
        std::fs::write(&stamp, &fingerprint).unwrap();
        assert!(matches!(verify(&path, &stamp), Verified::Stamped));
        // Rewriting the bytes changes the change time: the stamp no longer
        // vouches for them, and the bytes are compared again.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, &planted).unwrap();
        assert!(matches!(verify(&path, &stamp), Verified::No));
        // A link to the right bytes is not trusted either.
        std::fs::write(&path, EMBEDDED).unwrap();
        let link = dir.path().join("link.a");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(matches!(verify(&link, &stamp), Verified::No));
    }

    #[test]
    fn cache_directories_others_can_write_are_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = private_scratch();
        let cache = dir.path().join("tern");
        private_dir(&cache).unwrap();
        let mode = std::fs::metadata(&cache).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700, "created private");
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(
            private_dir(&cache).unwrap_err(),
            "it is writable by other users (mode 0777); `chmod go-w` it"
        );
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&cache).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&cache, &link).unwrap();
        assert_eq!(private_dir(&link).unwrap_err(), "it is a symbolic link");
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = private_dir(&open.join("tern")).unwrap_err();
        assert!(
            err.contains("is writable by other users (mode 0777)"),
            "{err}"
        );
        // A link on the way is resolved once: the folder is named by its
        // real path, which the linker then gets (a link swapped after the
        // checks once sent it another user's file).
        let via = dir.path().join("via");
        std::os::unix::fs::symlink(dir.path(), &via).unwrap();
        let real = private_dir(&via.join("tern")).unwrap();
        assert_eq!(real, std::fs::canonicalize(&cache).unwrap());
    }
}
