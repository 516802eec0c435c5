//! `rdesk tools new NAME --lang js|ts|python [--user]`: a working external tool from a
//! template (manifest, program, short README) in the workspace's `.resolve/tools/NAME/` or
//! the user's `<config>/resolve-desk/tools/NAME/`, pointing at the SDK this `rdesk` came with
//! (`rdesk sdk-path`). The template proposes adding a line to a file as a change set, so it
//! shows the whole round: push, apply with a reason, discard.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::json;

use crate::terminal::safe as escape;

/// The tool protocol the templates are written for (the SDKs' and the host's).
const PROTOCOL: u32 = resolve_external::PROTOCOL_VERSION;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// JavaScript (an ES module run by `node`).
    Js,
    /// TypeScript, run by `tsx` (no build step).
    Ts,
    /// Python 3 (standard library only).
    Python,
}

#[derive(Args, Debug)]
pub struct NewToolArgs {
    /// The tool's name, as an agent calls it: letters, digits, '_' or '-'.
    pub name: String,
    /// The language of the program.
    #[arg(long, value_enum)]
    pub lang: Lang,
    /// Write it into your own tools folder ($XDG_CONFIG_HOME/resolve-desk/tools or
    /// ~/.config/…), offered in every folder, instead of the workspace's .resolve/tools.
    #[arg(long, conflicts_with = "workspace")]
    pub user: bool,
    /// The workspace whose .resolve/tools to write into (default: the current folder).
    #[arg(long, short = 'w')]
    pub workspace: Option<PathBuf>,
}

pub const NEW_HELP: &str = "\
Write a working tool from a template: tool.json (the manifest), the program (tool.mjs,
tool.ts or tool.py) and a short README.md, into WORKSPACE/.resolve/tools/NAME/ (or, with
--user, into your own tools folder). The program uses the tool SDK installed with Resolve
Desk (`rdesk sdk-path`), so it needs no network and no clone. As it comes, the tool proposes
adding a line to a file; `rdesk tools` lists it at once.

TypeScript runs through tsx: the tsx found on PATH now is written into tool.json; without one,
the command says how to get it.

A folder's own tools run only once you trust the folder (`rdesk trust DIR`); your own tools
(--user) need no trust.

Exit status: 0 written; 1 the files could not be written or no SDK was found; 2 a bad name or
the tool's folder exists already.";

/// What `rdesk tools new` writes: each file's name and contents, plus notes for the person.
#[derive(Debug)]
pub struct Scaffold {
    pub files: Vec<(&'static str, String)>,
    pub notes: Vec<String>,
}

/// `Label From Name` of `name_with-separators`.
fn label_of(name: &str) -> String {
    name.split(['_', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(first) => first.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Checks a tool name (the manifest's rule) and says what would be accepted.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(format!(
            "the tool name \"{}\" must be letters, digits, '_' or '-' (what an agent calls), e.g. add_line",
            escape(name)
        ));
    }
    if name.starts_with('-') || name.starts_with('.') {
        return Err(format!("the tool name \"{}\" must not start with '-'", escape(name)));
    }
    Ok(())
}

/// The files of a tool named `name` in `lang`, running with the SDK at `sdk`; `tsx` is the
/// TypeScript runner found (TypeScript only). `workspace` is shown in the README's example.
pub fn scaffold(name: &str, lang: Lang, sdk: &Path, tsx: Option<&Path>, workspace: Option<&Path>) -> Scaffold {
    let label = label_of(name);
    let node_run = sdk.join("node/run.js").display().to_string();
    let mut notes = Vec::new();
    let (program, template, language, command, args, extra) = match lang {
        Lang::Js => (
            "tool.mjs",
            include_str!("../templates/tool.mjs"),
            "JavaScript",
            "node".to_string(),
            vec![node_run, "tool.mjs".into()],
            String::new(),
        ),
        Lang::Ts => {
            let command = match tsx {
                Some(path) => path.display().to_string(),
                None => {
                    notes.push(
                        "tsx was not found on PATH, and the tool needs it to run TypeScript: install it with \
                         `npm install --global tsx` (or put its path in `command` of tool.json). Or use --lang js."
                            .to_string(),
                    );
                    "tsx".to_string()
                }
            };
            let extra = format!(
                "- TypeScript runs through tsx (`command` in tool.json). For your editor's types, \
                 `npm install --save-dev {}` in this folder.\n",
                sdk.join("node").display()
            );
            (
                "tool.ts",
                include_str!("../templates/tool.ts"),
                "TypeScript",
                command,
                vec![node_run, "tool.ts".into()],
                extra,
            )
        }
        Lang::Python => (
            "tool.py",
            include_str!("../templates/tool.py"),
            "Python",
            "python3".to_string(),
            vec![sdk.join("python/run.py").display().to_string(), "tool.py".into()],
            String::new(),
        ),
    };
    let manifest = json!({
        "name": name,
        "label": label,
        "description": "Proposes adding a line at the end of a text file of the workspace (created if missing); nothing is written until the proposal is applied.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "description": "Workspace-relative file"},
                "line": {"type": "string", "description": "The line to add"}
            },
            "required": ["path", "line"],
            "additionalProperties": false
        },
        "command": command,
        "args": args,
        "protocol": PROTOCOL,
    });
    let manifest = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
    let fill = |t: &str| t.replace("{{NAME}}", name).replace("{{LABEL}}", &label);
    let (workspace_arg, workspace_shown) = match workspace {
        Some(w) => (format!(" -w {}", w.display()), w.display().to_string()),
        None => (String::new(), "DIR".to_string()),
    };
    let readme = fill(include_str!("../templates/README.md"))
        .replace("{{LANGUAGE}}", language)
        .replace("{{PROGRAM}}", program)
        .replace("{{SDK}}", &sdk.display().to_string())
        .replace("{{EXTRA}}", &extra)
        .replace("{{WORKSPACE_ARG}}", &workspace_arg)
        .replace("{{WORKSPACE}}", &workspace_shown);
    Scaffold { files: vec![("tool.json", manifest), (program, fill(template)), ("README.md", readme)], notes }
}

/// `tsx` on PATH, if any.
fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

pub fn run(args: NewToolArgs) -> ExitCode {
    if let Err(e) = check_name(&args.name) {
        eprintln!("rdesk tools new: {e}.");
        return ExitCode::from(2);
    }
    let sdk = match crate::sdk::sdk_dir() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("rdesk tools new: {e}");
            return ExitCode::from(1);
        }
    };
    let (tools_dir, workspace) = if args.user {
        match resolve_external::user_tools_dir() {
            Some(dir) => (dir, None),
            None => {
                eprintln!("rdesk tools new: there is no config folder for your tools; set HOME or XDG_CONFIG_HOME.");
                return ExitCode::from(1);
            }
        }
    } else {
        let ws = args.workspace.clone().unwrap_or_else(|| PathBuf::from("."));
        let ws = match std::fs::canonicalize(&ws) {
            Ok(p) if p.is_dir() => p,
            _ => {
                eprintln!(
                    "rdesk tools new: the workspace {} is not a folder; pass an existing folder with -w, or use --user.",
                    escape(&ws.display().to_string())
                );
                return ExitCode::from(2);
            }
        };
        (ws.join(resolve_external::WORKSPACE_TOOLS_DIR), Some(ws))
    };
    let dir = tools_dir.join(&args.name);
    if dir.exists() {
        eprintln!(
            "rdesk tools new: {} exists already; pick another name or remove that folder.",
            escape(&dir.display().to_string())
        );
        return ExitCode::from(2);
    }
    let tsx = if args.lang == Lang::Ts { find_on_path("tsx") } else { None };
    let made = scaffold(&args.name, args.lang, &sdk, tsx.as_deref(), workspace.as_deref());
    // Written into a temporary folder beside it, then moved in whole: a watching desk never
    // loads a half-written tool.
    let written = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(&tools_dir)?;
        let tmp = tempfile::Builder::new().prefix(".rdesk-new-").tempdir_in(&tools_dir)?;
        for (name, contents) in &made.files {
            std::fs::write(tmp.path().join(name), contents)?;
        }
        // Moved whole; the guard then finds nothing left to remove.
        std::fs::rename(tmp.path(), &dir)
    })();
    if let Err(e) = written {
        eprintln!("rdesk tools new: cannot write {}: {e}", escape(&dir.display().to_string()));
        return ExitCode::from(1);
    }
    println!(
        "Wrote {} ({} files: {}).",
        escape(&dir.display().to_string()),
        made.files.len(),
        made.files.iter().map(|f| f.0).collect::<Vec<_>>().join(", ")
    );
    for note in &made.notes {
        eprintln!("rdesk tools new: {note}");
    }
    match workspace {
        Some(ws) => println!(
            "It runs once you trust this folder's tools: `rdesk trust {}`. Then `rdesk tools -w {}` lists it.",
            escape(&ws.display().to_string()),
            escape(&ws.display().to_string())
        ),
        None => println!("`rdesk tools` lists it; it is offered in every folder."),
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_like_titles() {
        assert_eq!(label_of("add_line"), "Add Line");
        assert_eq!(label_of("fix-imports_now"), "Fix Imports Now");
    }

    #[test]
    fn names_outside_the_manifest_rule_are_refused_with_an_example() {
        assert!(check_name("add_line").is_ok());
        let e = check_name("add line").unwrap_err();
        assert!(e.contains("\"add line\"") && e.contains("e.g. add_line"), "{e}");
        assert!(check_name("").is_err());
        assert!(check_name("../x").is_err());
    }

    #[test]
    fn every_template_is_a_loadable_manifest_with_the_protocol() {
        let sdk = Path::new("/usr/share/resolve-desk/sdk");
        for lang in [Lang::Js, Lang::Ts, Lang::Python] {
            let made = scaffold("add_line", lang, sdk, None, None);
            let dir = tempfile::tempdir().unwrap();
            for (name, text) in &made.files {
                assert!(!text.contains("{{"), "{name} of {lang:?} has every placeholder filled");
                std::fs::write(dir.path().join(name), text).unwrap();
            }
            let m = resolve_external::Manifest::load(dir.path()).expect("the template's manifest loads");
            assert_eq!(m.name, "add_line");
            assert_eq!(m.label, "Add Line");
            assert!(m.args[0].starts_with("/usr/share/resolve-desk/sdk/"), "points at the SDK: {:?}", m.args);
        }
        let ts = scaffold("t", Lang::Ts, sdk, None, None);
        assert!(ts.notes[0].contains("npm install --global tsx"), "says how to get tsx: {:?}", ts.notes);
        let with_tsx = scaffold("t", Lang::Ts, sdk, Some(Path::new("/opt/bin/tsx")), None);
        assert!(with_tsx.notes.is_empty());
        assert!(with_tsx.files[0].1.contains("\"command\": \"/opt/bin/tsx\""), "{}", with_tsx.files[0].1);
    }
}
