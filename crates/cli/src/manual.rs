//! `rdesk completions SHELL` and `rdesk man`: shell completion scripts (clap_complete) and
//! manual pages (clap_mangen) generated from the same clap definition `rdesk` parses with,
//! so they can never list a subcommand or an option that does not exist. The packages
//! (scripts/package.sh) run both at build time and install what they print.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Command};
use clap_complete::Shell;

pub const COMPLETIONS_HELP: &str = "\
Print a completion script for SHELL on standard output, generated from rdesk's own
definition of its subcommands and options.

Install it where your shell looks (the packages do this for you):
  bash: rdesk completions bash > ~/.local/share/bash-completion/completions/rdesk
  zsh:  rdesk completions zsh > ~/.zfunc/_rdesk   (with `fpath+=~/.zfunc` before `compinit`)
  fish: rdesk completions fish > ~/.config/fish/completions/rdesk.fish";

pub const MAN_HELP: &str = "\
Print the manual page rdesk(1) (roff) on standard output, or with --out-dir write rdesk.1
and one page per subcommand (rdesk-run.1, rdesk-tools.1, …) into that folder.

Read it without installing: rdesk man | man -l -";

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

#[derive(Args)]
pub struct ManArgs {
    /// Write rdesk.1 and a page per subcommand into this folder (created if missing)
    /// instead of printing rdesk.1.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

/// Writes the completion script for `shell` of the command `cmd`.
pub fn completion_script(shell: Shell, mut cmd: Command) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "rdesk", &mut out);
    out
}

/// The top page, rdesk(1), in roff.
pub fn man_page(cmd: Command) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out)?;
    Ok(out)
}

/// Every page: rdesk.1, then one per visible subcommand at any depth (rdesk-tools-new.1),
/// each with its file name.
pub fn man_pages(cmd: Command) -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    fn add(cmd: &Command, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), std::io::Error> {
        let man = clap_mangen::Man::new(cmd.clone());
        let mut page = Vec::new();
        man.render(&mut page)?;
        out.push((man.get_filename(), page));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            add(sub, out)?;
        }
        Ok(())
    }
    let mut cmd = cmd.disable_help_subcommand(true);
    // Names the subcommands' pages `rdesk-tools`, `rdesk-tools-new`, ….
    cmd.build();
    let mut out = Vec::new();
    add(&cmd, &mut out)?;
    Ok(out)
}

pub fn completions(args: CompletionsArgs, cmd: Command) -> ExitCode {
    write_out(&completion_script(args.shell, cmd))
}

pub fn man(args: ManArgs, cmd: Command) -> ExitCode {
    match args.out_dir {
        None => match man_page(cmd) {
            Ok(page) => write_out(&page),
            Err(e) => {
                eprintln!("rdesk: cannot render the manual page: {e}");
                ExitCode::from(1)
            }
        },
        Some(dir) => {
            let written = std::fs::create_dir_all(&dir).and_then(|_| {
                for (name, page) in man_pages(cmd)? {
                    std::fs::write(dir.join(name), page)?;
                }
                Ok(())
            });
            match written {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("rdesk: cannot write the manual pages into {}: {e}", dir.display());
                    ExitCode::from(1)
                }
            }
        }
    }
}

fn write_out(bytes: &[u8]) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`rdesk man | head`) is the reader's choice, not a failure to report.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rdesk: cannot write the output: {e}");
            ExitCode::from(1)
        }
    }
}
