//! Builds the power-loss shim (`powerloss/powerloss.c`, an `LD_PRELOAD` library the
//! durability tests load into the apply probe) with the C compiler the cc crate finds, and
//! tells the tests where it is (`POWERLOSS_SHIM`).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=powerloss/powerloss.c");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let lib = out.join("libpowerloss.so");
    let compiler = cc::Build::new().pic(true).opt_level(1).cargo_metadata(false).get_compiler();
    let mut cmd: Command = compiler.to_command();
    cmd.args(["-shared", "-fPIC", "-Wall", "-Werror", "-o"]).arg(&lib).arg("powerloss/powerloss.c").arg("-ldl");
    let status = cmd.status().unwrap_or_else(|e| panic!("cannot run the C compiler for the power-loss shim: {e}"));
    assert!(status.success(), "the power-loss shim did not compile: {cmd:?}");
    println!("cargo:rustc-env=POWERLOSS_SHIM={}", lib.display());
}
