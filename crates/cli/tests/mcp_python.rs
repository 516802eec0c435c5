//! `rdesk mcp` against a client nobody here wrote: the official MCP SDK for Python
//! (`crates/mcp/tests/python/test_mcp.py`, pinned in its requirements.txt), run with pytest
//! from the venv `scripts/setup.sh` creates at `.venv` (or the interpreter in `RD_PYTHON`).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn official_python_mcp_client_passes_the_mcp_suite() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var_os("RD_PYTHON").map(PathBuf::from).unwrap_or_else(|| repo.join(".venv/bin/python"));
    assert!(
        python.exists(),
        "no Python for the MCP client tests at {}: run scripts/setup.sh (it creates .venv with the pinned `mcp` SDK), or set RD_PYTHON",
        python.display()
    );
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "crates/mcp/tests/python"])
        .current_dir(&repo)
        .env("RDESK_BIN", env!("CARGO_BIN_EXE_rdesk"))
        .output()
        .expect("pytest starts");
    let report = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the Python MCP client tests failed:\n{report}");
    println!("{report}");
}
