//! resolve-tool-ast-edit
