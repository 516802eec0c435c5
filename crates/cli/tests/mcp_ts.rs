//! `rdesk mcp` against the official MCP TypeScript SDK with its default options
//! (`crates/mcp/tests/ts/waits.test.js`, the SDK pinned in its package.json and installed by
//! `scripts/setup.sh` with `npm ci`), run with `node --test`.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn official_typescript_mcp_client_passes_the_waits_suite() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/ts");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "the TypeScript MCP SDK is not installed in {}: run scripts/setup.sh (it runs `npm ci` there)",
        dir.display()
    );
    let out = Command::new("node")
        .args(["--test", "--test-concurrency=1", "--test-reporter=spec"])
        .current_dir(&dir)
        .env("RDESK_BIN", env!("CARGO_BIN_EXE_rdesk"))
        .output()
        .expect("node starts (install Node.js: scripts/setup.sh)");
    let report = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the TypeScript MCP client tests failed:\n{report}");
    println!("{report}");
}
