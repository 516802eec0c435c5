//! The journal holds file contents (pending change sets, undo data): its database, the
//! database's `-wal` / `-shm` / `-journal` files and its folder are the user's alone.
//!
//! On Unix, before SQLite touches the file: the folder is created `0700` (and an existing one
//! of ours tightened to `0700`, unless it is a shared folder: not ours, or sticky like
//! `/tmp`), the database is created `0600` (and an existing one tightened to `0600`), and an
//! existing `-wal`/`-shm`/`-journal` too. SQLite creates its `-wal` and `-shm` files with the
//! database's own mode (`robust_open`, whatever the umask), so they are `0600` from their
//! creation. Elsewhere nothing is changed.

use std::path::Path;

/// The files SQLite keeps beside a database.
#[cfg(unix)]
const SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Makes `path` (the database) and its folder private, creating them if missing.
#[cfg(unix)]
pub(crate) fn make_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};

    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        let meta = std::fs::metadata(dir)?;
        let ours = meta.uid() == rustix::process::geteuid().as_raw();
        let sticky = meta.mode() & 0o1000 != 0;
        if ours && !sticky && meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let mut files = vec![path.to_path_buf()];
    for suffix in SIDE_FILES {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        files.push(side.into());
    }
    for file in files {
        let meta = match std::fs::metadata(&file) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        // Exactly 0600 (the umask may have taken bits away from what we asked for too).
        if meta.is_file() && meta.mode() & 0o777 != 0o600 {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn make_private(path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    Ok(())
}
