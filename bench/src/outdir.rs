//! The output folder of a run. It is always new: an explicit `--out` that
//! exists is refused, and the default name gets a suffix instead.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Creates `explicit` (refusing an existing path), or else a new folder
/// `<base>/<UTC timestamp>[-N]`. Returns the created folder.
pub fn create(explicit: Option<&Path>, base: &Path, now: SystemTime) -> Result<PathBuf, String> {
    if let Some(dir) = explicit {
        if dir.exists() {
            return Err(format!(
                "--out `{}` already exists; tern bench never overwrites an earlier run (choose a new folder)",
                dir.display()
            ));
        }
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                // `create_dir_all` says `File exists` of a file in the way.
                match parent.ancestors().find(|a| a.exists() && !a.is_dir()) {
                    Some(file) => format!(
                        "cannot create `{}`: `{}` is a file, not a folder",
                        parent.display(),
                        file.display()
                    ),
                    None => format!("cannot create `{}`: {e}", parent.display()),
                }
            })?;
        }
        // `create_dir` fails if the folder appeared meanwhile: never shared.
        return std::fs::create_dir(dir)
            .map(|()| dir.to_path_buf())
            .map_err(|e| format!("cannot create --out `{}`: {e}", dir.display()));
    }
    std::fs::create_dir_all(base)
        .map_err(|e| format!("cannot create `{}`: {e}", base.display()))?;
    let stamp = timestamp(now);
    for n in 1..1000 {
        let name = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
        let dir = base.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create `{}`: {e}", dir.display())),
        }
    }
    Err(format!(
        "cannot find a free folder name under `{}`",
        base.display()
    ))
}

/// `YYYY-MM-DDTHH-MM-SS` in UTC (colons avoided: they are awkward in paths).
pub fn timestamp(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}-{:02}-{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day): Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_civil_time() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00-00-00");
        // 2026-11-30T02:40:00Z
        let t = UNIX_EPOCH + Duration::from_secs(1_796_006_400);
        assert_eq!(timestamp(t), "2026-11-30T02-40-00");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400); // leap day
        assert_eq!(timestamp(t), "2000-02-29T00-00-00");
    }

    #[test]
    fn never_reuses_a_folder() {
        let base = std::env::temp_dir().join(format!("tern-bench-outdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let now = UNIX_EPOCH + Duration::from_secs(1_796_006_400);
        let a = create(None, &base, now).unwrap();
        let b = create(None, &base, now).unwrap();
        assert_eq!(a, base.join("2026-11-30T02-40-00"));
        assert_eq!(b, base.join("2026-11-30T02-40-00-2"));
        let e = create(Some(&a), &base, now).unwrap_err();
        assert_eq!(
            e,
            format!(
                "--out `{}` already exists; tern bench never overwrites an earlier run (choose a new folder)",
                a.display()
            )
        );
        let fresh = base.join("x/y");
        assert_eq!(create(Some(&fresh), &base, now).unwrap(), fresh);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
