//! `rdesk sdk-path`: where the tool SDKs (Node in `node/`, Python in `python/`) are.
//!
//! Decided by where this `rdesk` is: installed as `<prefix>/bin/rdesk` (the packages:
//! `/usr/bin`, or `usr/bin` inside the AppImage), the SDKs are in
//! `<prefix>/share/resolve-desk/sdk`; run from a build of a checkout, they are the checkout's
//! `tools/sdk` (the folder this crate was compiled from). Tools written by `rdesk tools new`
//! point at this folder.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The folder, below an installation prefix, that holds the SDKs.
pub const INSTALLED_SDK_DIR: &str = "share/resolve-desk/sdk";

/// The checkout this binary was built from (its `tools/sdk`).
fn checkout_sdk() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/sdk")
}

/// The SDK folder for the executable at `exe`: `<prefix>/share/resolve-desk/sdk` when `exe`
/// is `<prefix>/bin/rdesk` and that folder exists, else the checkout's `tools/sdk` if it
/// exists. `Err` names every place looked at.
pub fn sdk_dir_for(exe: &Path) -> Result<PathBuf, String> {
    let exe = std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
    let mut looked = Vec::new();
    if let Some(bin) = exe.parent() {
        if let Some(prefix) = bin.parent().filter(|_| bin.file_name().is_some_and(|n| n == "bin")) {
            let installed = prefix.join(INSTALLED_SDK_DIR);
            if is_sdk(&installed) {
                return Ok(installed);
            }
            looked.push(installed);
        }
    }
    let checkout = checkout_sdk();
    if is_sdk(&checkout) {
        return Ok(std::fs::canonicalize(&checkout).unwrap_or(checkout));
    }
    looked.push(checkout);
    let places: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
    Err(format!(
        "no Resolve Desk tool SDK found for {} (looked in {}). Reinstall the package, which puts it in /usr/{INSTALLED_SDK_DIR}.",
        exe.display(),
        places.join(" and ")
    ))
}

/// This `rdesk`'s SDK folder.
pub fn sdk_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot tell where this rdesk is: {e}"))?;
    sdk_dir_for(&exe)
}

fn is_sdk(dir: &Path) -> bool {
    dir.join("node/run.js").is_file() && dir.join("python/run.py").is_file()
}

pub fn run() -> ExitCode {
    match sdk_dir() {
        Ok(dir) => {
            println!("{}", dir.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rdesk sdk-path: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_in_the_checkout_finds_the_checkouts_sdk() {
        let exe = std::env::current_exe().unwrap();
        let dir = sdk_dir_for(&exe).expect("the checkout has tools/sdk");
        assert!(dir.ends_with("tools/sdk"), "{}", dir.display());
    }

    #[test]
    fn an_installed_rdesk_finds_the_sdk_under_its_prefix() {
        let prefix = tempfile::tempdir().unwrap();
        let sdk = prefix.path().join(INSTALLED_SDK_DIR);
        std::fs::create_dir_all(sdk.join("node")).unwrap();
        std::fs::create_dir_all(sdk.join("python")).unwrap();
        std::fs::write(sdk.join("node/run.js"), "").unwrap();
        std::fs::write(sdk.join("python/run.py"), "").unwrap();
        std::fs::create_dir(prefix.path().join("bin")).unwrap();
        let exe = prefix.path().join("bin/rdesk");
        std::fs::write(&exe, "").unwrap();
        let found = sdk_dir_for(&exe).unwrap();
        assert_eq!(found, std::fs::canonicalize(&sdk).unwrap(), "the installed SDK wins over the checkout's");
    }
}
