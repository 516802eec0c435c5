//! Why a batch rename was refused (every message names the offending value), and what an
//! agent is told for each reason.

use resolve_engine::{ToolError, WorkspaceError};

/// Why a batch rename was refused. Every message names the offending value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenameError {
    #[error("`find` is not a valid regular expression: `{pattern}`. {message}")]
    InvalidRegex { pattern: String, message: String },
    #[error(
        "`replace` refers to `{reference}`, which is not a capture group of `find` (`{find}`). {hint}Write `$$` for a literal `$`."
    )]
    UnknownCapture { reference: String, find: String, hint: String },
    #[error("`files` has an empty entry (`{0}`); give file paths or globs relative to the workspace, such as `photos/*.jpg`.")]
    EmptyFilesEntry(String),
    #[error("Invalid glob in `files`: `{pattern}`: {message}.")]
    InvalidGlob { pattern: String, message: String },
    #[error("No file matches `files` ({patterns}){folders}. Check the paths or globs (they are relative to the workspace; `*` does not cross `/`, `**` does).")]
    NoMatch { patterns: String, folders: String },
    #[error("The new name of `{from}` would be empty. Change `find` or `replace` so that every file keeps a name.")]
    EmptyName { from: String },
    #[error("The new name of `{from}` would be `{name}`, which is not a file name. Change `find` or `replace`.")]
    DotName { from: String, name: String },
    #[error("The new name of `{from}` would be `{name}`, which contains a path separator `/`. Batch rename changes names inside their folder; it does not move files: change `find` or `replace` so that no `/` is inserted.")]
    Separator { from: String, name: String },
    #[error("The new name of `{from}` would be `{name}`, which contains a NUL character. Change `find` or `replace`.")]
    Nul { from: String, name: String },
    #[error("The new name of `{from}` would be `{name}`, which contains {what} at character {position}. Such a character makes a name show differently from what it is (or not show at all); change `find` or `replace` so that the new names hold only visible characters.")]
    HiddenCharacter { from: String, name: String, position: usize, what: String },
    #[error("The new name of `{from}` would be {bytes} bytes long (`{name}`); a file name can be at most 255 bytes. Change `find` or `replace` so that every new name is shorter.")]
    TooLong { from: String, name: String, bytes: usize },
    #[error("Two files would get the same name `{target}`: {sources}. Change `find` or `replace` so that every new name is different.")]
    DuplicateTarget { target: String, sources: String },
    #[error("`{from}` would be renamed to `{to}`, which already exists and is not renamed away. Rename or move `{to}` first, or change `find` or `replace`.")]
    TargetExists { from: String, to: String },
    #[error("Path is outside the workspace: {0}")]
    Outside(String),
    #[error("Path not found: {0}")]
    NotFound(String),
    #[error("Cannot read {path}: {message}")]
    Unreadable { path: String, message: String },
    #[error("{0}")]
    Workspace(#[from] WorkspaceError),
    #[error("The batch rename preview was cancelled; nothing was queued.")]
    Cancelled,
}

impl From<RenameError> for ToolError {
    fn from(e: RenameError) -> Self {
        match e {
            RenameError::Outside(p) => ToolError::OutsideWorkspace(p),
            RenameError::NotFound(p) => ToolError::NotFound(p),
            RenameError::Workspace(w) => w.into(),
            RenameError::Unreadable { .. } => ToolError::Io(e.to_string()),
            RenameError::Cancelled => ToolError::Cancelled("the batch rename preview; nothing was queued".into()),
            RenameError::InvalidRegex { .. }
            | RenameError::UnknownCapture { .. }
            | RenameError::EmptyFilesEntry(_)
            | RenameError::InvalidGlob { .. }
            | RenameError::NoMatch { .. }
            | RenameError::EmptyName { .. }
            | RenameError::DotName { .. }
            | RenameError::Separator { .. }
            | RenameError::Nul { .. }
            | RenameError::HiddenCharacter { .. }
            | RenameError::TooLong { .. }
            | RenameError::DuplicateTarget { .. }
            | RenameError::TargetExists { .. } => ToolError::InvalidParams(e.to_string()),
        }
    }
}
