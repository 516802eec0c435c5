//! Everything the journal can refuse or fail at, each naming the file and what to do.

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("the decision journal has a row with {column} `{value}`, which this version does not know; update Resolve Desk or move the journal aside")]
    Unknown { column: &'static str, value: String },
    #[error("cannot open the decision journal {path}: {source}")]
    Open { path: String, source: rusqlite::Error },
    #[error(
        "the decision journal {path} has schema version {found}, newer than this Resolve Desk knows (version {known}); \
         it was written by a newer Resolve Desk. Update Resolve Desk, or move {path} aside to start a new journal \
         (the old one is left as it is)"
    )]
    TooNew { path: String, found: i64, known: i64 },
    #[error("cannot update the decision journal {path} to schema version {version}: {source}")]
    Migrate { path: String, version: i64, source: rusqlite::Error },
    #[error(
        "cannot open the decision journal {path}: {source} (while making it and its folder readable by you only; \
         it holds file contents)"
    )]
    Private { path: String, source: std::io::Error },
    #[error("cannot start the decision journal's writer thread: {0}")]
    Thread(std::io::Error),
    #[error("decision journal error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("cannot export the history: {0}")]
    Export(String),
    #[error("cannot encode a row for the decision journal: {0}")]
    Encode(String),
}
