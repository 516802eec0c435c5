//! The built-in demo: a small project copied to a fresh temporary folder, with the demo
//! script's previews (an ast_edit and a batch rename) queued on the stack.

use std::path::Path;

/// The demo's files (workspace-relative path, contents).
const FILES: &[(&str, &[u8])] = &[
    ("README.md", include_bytes!("../demo/README.md")),
    (".gitignore", include_bytes!("../demo/.gitignore")),
    ("src/cart.ts", include_bytes!("../demo/src/cart.ts")),
    ("src/checkout.ts", include_bytes!("../demo/src/checkout.ts")),
    ("src/logger.ts", include_bytes!("../demo/src/logger.ts")),
    ("photos/IMG_0001.JPG", include_bytes!("../demo/photos/IMG_0001.JPG")),
    ("photos/IMG_0002.JPG", include_bytes!("../demo/photos/IMG_0002.JPG")),
    ("photos/IMG_0003.JPG", include_bytes!("../demo/photos/IMG_0003.JPG")),
    ("photos/IMG_0004.JPG", include_bytes!("../demo/photos/IMG_0004.JPG")),
    ("photos/IMG_0005.JPG", include_bytes!("../demo/photos/IMG_0005.JPG")),
    ("photos/IMG_0006.JPG", include_bytes!("../demo/photos/IMG_0006.JPG")),
];

/// The script run in the demo session (the `rdesk run` format).
pub const SCRIPT: &str = include_str!("../demo/demo.jsonl");

/// Writes the demo project into `dir` (an empty folder).
pub fn write_files(dir: &Path) -> std::io::Result<()> {
    for (rel, bytes) in FILES {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    Ok(())
}
