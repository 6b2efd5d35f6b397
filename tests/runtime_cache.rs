//! The runtime library cache under attack (docs/security.md): a library
//! planted with the right size is never linked, a cache directory another
//! user could write or owns is refused with a warning, and without `HOME`
//! and `XDG_CACHE_HOME` nothing is read from or written to a shared
//! directory. Each build's executable must print what the program says.

mod child_support;

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TERN: &str = env!("CARGO_BIN_EXE_tern");

struct Base(PathBuf);

impl Base {
    fn new(name: &str) -> Base {
        let dir = std::env::temp_dir().join(format!("tern-cache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("work")).unwrap();
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        std::fs::write(
            dir.join("work/hello.tern"),
            "fn main() {\n    print(\"the program speaks\");\n}\n",
        )
        .unwrap();
        Base(dir)
    }

    /// `tern build hello.tern` with only PATH, TMPDIR and `env` set.
    fn build(&self, env: &[(&str, &Path)]) -> Output {
        let mut cmd = Command::new(TERN);
        cmd.args(["build", "hello.tern", "-o", "hello"])
            .current_dir(self.0.join("work"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TMPDIR", self.0.join("tmp"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        child_support::output(&mut cmd)
    }

    /// Builds, asserts success and the program's own output, returns stderr.
    fn build_and_run(&self, env: &[(&str, &Path)]) -> String {
        let _ = std::fs::remove_file(self.0.join("work/hello"));
        let o = self.build(env);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "tern build: {err}");
        let run = child_support::output(&mut Command::new(self.0.join("work/hello")));
        assert_eq!(String::from_utf8_lossy(&run.stdout), "the program speaks\n");
        // The build's private temporary directory is gone.
        assert_eq!(entries(&self.0.join("tmp")), Vec::<String>::new());
        err
    }
}

impl Drop for Base {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The cached library's path after a clean build into `cache`.
fn cached_lib(base: &Base, cache: &Path) -> PathBuf {
    assert_eq!(base.build_and_run(&[("XDG_CACHE_HOME", cache)]), "");
    let dir = cache.join("tern");
    assert_eq!(
        std::fs::metadata(&dir).unwrap().mode() & 0o777,
        0o700,
        "the cache directory is created private"
    );
    // The library and the stamp of its compared bytes.
    let names = entries(&dir);
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with("libtern_runtime-") && names[0].ends_with(".a"));
    assert_eq!(names[1], format!("{}.ok", names[0]));
    dir.join(&names[0])
}

#[test]
fn a_planted_library_of_the_right_size_is_not_linked() {
    let base = Base::new("planted");
    let cache = base.0.join("cache");
    let lib = cached_lib(&base, &cache);
    let good = std::fs::read(&lib).unwrap();
    // Same size, other bytes: once an attacker's archive, here garbage that
    // would not even link (written in place: the stamp beside it stays).
    let planted = vec![b'!'; good.len()];
    std::fs::write(&lib, &planted).unwrap();
    assert_eq!(base.build_and_run(&[("XDG_CACHE_HOME", &cache)]), "");
    assert!(
        std::fs::read(&lib).unwrap() == good,
        "the copy was rewritten"
    );

    // Without HOME and XDG_CACHE_HOME, the old shared location
    // `$TMPDIR/tern` is neither read nor written.
    let shared = base.0.join("tmp/tern");
    std::fs::create_dir_all(&shared).unwrap();
    let name = lib.file_name().unwrap();
    std::fs::write(shared.join(name), &planted).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let _ = std::fs::remove_file(base.0.join("work/hello"));
    let o = base.build(&[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run = child_support::output(&mut Command::new(base.0.join("work/hello")));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "the program speaks\n");
    assert_eq!(entries(&shared), [name.to_string_lossy().into_owned()]);
    assert!(std::fs::read(shared.join(name)).unwrap() == planted);
}

/// A cache the library cannot be written into (a full disk; here a folder
/// in the way, which no permission lets a rename replace) costs the cache,
/// not the build: it links from its private temporary directory.
#[test]
fn a_cache_that_cannot_be_written_falls_back_to_the_scratch_directory() {
    let base = Base::new("unwritable");
    let cache = base.0.join("cache");
    let lib = cached_lib(&base, &cache);
    std::fs::remove_file(&lib).unwrap();
    std::fs::remove_file(lib.with_extension("a.ok")).unwrap();
    std::fs::create_dir_all(lib.join("in-the-way")).unwrap();
    let err = base.build_and_run(&[("XDG_CACHE_HOME", &cache)]);
    assert!(
        err.starts_with("warning: cannot write the runtime library in `")
            && err.ends_with("; linking from a private temporary directory instead\n"),
        "{err}"
    );
}

#[test]
fn a_cache_directory_others_can_write_is_refused() {
    let base = Base::new("mode");
    let cache = base.0.join("cache");
    let dir = cache.join("tern");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = base.build_and_run(&[("XDG_CACHE_HOME", &cache)]);
    assert_eq!(
        err,
        format!(
            "warning: not using the cache directory `{}`: it is writable by other users (mode 0777); `chmod go-w` it; linking from a private temporary directory instead\n",
            dir.display()
        )
    );
    assert_eq!(entries(&dir), Vec::<String>::new(), "nothing written there");
    // A link in place of the directory is refused too.
    std::fs::remove_dir(&dir).unwrap();
    let elsewhere = base.0.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
    let err = base.build_and_run(&[("XDG_CACHE_HOME", &cache)]);
    assert!(
        err.ends_with(
            ": it is a symbolic link; linking from a private temporary directory instead\n"
        ),
        "{err}"
    );
    assert_eq!(entries(&elsewhere), Vec::<String>::new());
    // Under a parent others can write, the cache folder is not even made,
    // nor the missing folders above it (`XDG_CACHE_HOME` named under the
    // shared folder is refused before it is made).
    let shared = base.0.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    for named in [shared.clone(), shared.join("x").join("cache")] {
        let err = base.build_and_run(&[("XDG_CACHE_HOME", &named)]);
        assert_eq!(
            err,
            format!(
                "warning: not using the cache directory `{}`: its parent `{}` is writable by other users (mode 0777); linking from a private temporary directory instead\n",
                named.join("tern").display(),
                shared.display()
            )
        );
        assert_eq!(entries(&shared), Vec::<String>::new(), "no folder made");
    }
}

#[test]
fn a_cache_directory_owned_by_another_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        // CI runs as root; a developer's run says what it could not check.
        eprintln!("SKIPPED: chown to another uid needs root");
        return;
    }
    let base = Base::new("owner");
    let cache = base.0.join("cache");
    let dir = cache.join("tern");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    let err = base.build_and_run(&[("XDG_CACHE_HOME", &cache)]);
    assert_eq!(
        err,
        format!(
            "warning: not using the cache directory `{}`: it is owned by uid 65534, not by this user (uid 0); linking from a private temporary directory instead\n",
            dir.display()
        )
    );
    assert_eq!(entries(&dir), Vec::<String>::new());
}
