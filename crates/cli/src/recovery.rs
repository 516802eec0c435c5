//! Telling the person about an apply a killed process interrupted in the workspace, which
//! opening it just finished (rolled back, or cleaned up), or about an apply record opening
//! it refused to act on (`Recovery::refused`: which record, why, what to do): one line on
//! stderr. Never stdout: it carries the JSON Lines output, or the MCP protocol.

use resolve_engine::Recovery;

/// The stderr line for `recovery` (`rdesk: <message>`), when there was one.
pub fn line(recovery: Option<&Recovery>) -> Option<String> {
    recovery.map(|r| format!("rdesk: {}", crate::terminal::safe(&r.message())))
}

/// Prints [`line()`] on stderr.
pub fn report(recovery: Option<&Recovery>) {
    if let Some(l) = line(recovery) {
        eprintln!("{l}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recovered_apply_is_one_stderr_line_with_its_message_and_nothing_is_said_otherwise() {
        let r = Recovery {
            context: Some(resolve_engine::ApplyContext {
                action_id: "pa-3".into(),
                label: "Batch rename: 2 files".into(),
                source_tool_name: "batch_rename_preview".into(),
                actor: None,
                client: None,
            }),
            outcome: resolve_engine::RecoveryOutcome::RolledBack,
            started_at: Default::default(),
            files: 2,
            problems: vec![],
        };
        let l = line(Some(&r)).expect("a line");
        assert_eq!(l, format!("rdesk: {}", r.message()));
        assert!(l.starts_with("rdesk: Applying \"Batch rename: 2 files\" was interrupted"), "{l}");
        assert!(!l.contains('\n'), "one line: {l}");
        assert_eq!(line(None), None);
    }

    #[test]
    fn a_refused_record_is_one_stderr_line_naming_the_record_and_what_to_do() {
        let refusal = resolve_engine::Refusal {
            record: "/w/.rdesk-apply.log".into(),
            reason: resolve_engine::RefusalReason::Mode { mode: 0o644 },
        };
        let r = Recovery {
            context: None,
            outcome: resolve_engine::RecoveryOutcome::Refused(refusal),
            started_at: Default::default(),
            files: 0,
            problems: vec![],
        };
        let l = line(Some(&r)).expect("a line");
        assert!(
            l.starts_with("rdesk: The apply record /w/.rdesk-apply.log was refused, because its mode is 0644"),
            "{l}"
        );
        assert!(l.contains("nothing was done") && l.contains("delete /w/.rdesk-apply.log"), "what to do: {l}");
        assert!(!l.contains('\n'), "one line: {l}");
    }
}
