//! resolve-tool-batch-rename
