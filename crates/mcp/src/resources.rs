//! Pending actions as MCP resources, so a client that shows resources can show the person what
//! waits without the window: `resources/list` names each pending action
//! (`resolve-desk://pending/<id>`: label, status, who pushed it), `resources/read` gives its
//! review text (label, status, source, who pushed it, an agent's proposal, then the unified
//! diff, cut at [`DIFF_WINDOW_BYTES`] for big actions), and a subscriber is sent
//! `notifications/resources/updated` when the action turns stale, gets a proposal or is
//! decided; every push and pop sends `notifications/resources/list_changed`.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use resolve_engine::{ActionInfo, Session, StoreChange};
use rmcp::model::{ReadResourceResult, Resource, ResourceContents};
use rmcp::ErrorData as McpError;

/// The URI of every pending action: this prefix and its id.
pub const PENDING_URI_PREFIX: &str = "resolve-desk://pending/";

/// How much of an action's unified diff a read returns (the rest is named, not sent).
pub const DIFF_WINDOW_BYTES: usize = 64 * 1024;

pub(crate) fn uri_of(id: &str) -> String {
    format!("{PENDING_URI_PREFIX}{id}")
}

fn pushed_by(info: &ActionInfo) -> String {
    info.pushed_by.clone().unwrap_or_else(|| "the person".into())
}

/// `resources/list`: every pending action, top first.
pub(crate) fn list(session: &Session) -> Vec<Resource> {
    session
        .store()
        .list()
        .iter()
        .map(|a| {
            Resource::new(uri_of(&a.id), a.id.clone())
                .with_title(a.label.clone())
                .with_description(format!(
                    "Pending action ({}), pushed by {}, from {}",
                    a.status.as_str(),
                    pushed_by(a),
                    a.source_tool_name
                ))
                .with_mime_type("text/plain")
        })
        .collect()
}

/// `resources/read` of a pending action's URI.
pub(crate) fn read(session: &Session, uri: &str) -> Result<ReadResourceResult, McpError> {
    let unknown = || {
        McpError::resource_not_found(
            format!(
                "No pending action at {uri}: it was decided or removed, or never existed. `resources/list` names \
                 the pending ones ({PENDING_URI_PREFIX}<id>)."
            ),
            None,
        )
    };
    let id = uri.strip_prefix(PENDING_URI_PREFIX).ok_or_else(unknown)?;
    let info = session.store().info(id).ok_or_else(unknown)?;
    let mut text = format!(
        "{}\nid: {}\nstatus: {}\nsource: {}\npushed by: {}\n",
        info.label,
        info.id,
        info.status.as_str(),
        info.source_tool_name,
        pushed_by(&info)
    );
    if let Some(p) = &info.proposal {
        text.push_str(&format!(
            "proposal: {} proposes {}: {}{}\n",
            p.client.as_deref().unwrap_or("an agent"),
            p.choice.as_str(),
            p.reason,
            if p.waiting { " (waiting for the person)" } else { "" }
        ));
    }
    if let Some(action) = session.store().get(id) {
        if let Some(cs) = &action.change_set {
            text.push('\n');
            text.push_str(&window(&cs.unified_diff(3)));
        } else if let Some(renames) = &action.renames {
            text.push('\n');
            for r in renames.iter() {
                text.push_str(&format!("rename {} -> {}\n", r.from, r.to));
            }
        }
    }
    Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]))
}

/// `diff` whole, or its first [`DIFF_WINDOW_BYTES`] cut at a line, and what was left out.
fn window(diff: &str) -> String {
    if diff.len() <= DIFF_WINDOW_BYTES {
        return diff.to_string();
    }
    let mut end = DIFF_WINDOW_BYTES;
    while !diff.is_char_boundary(end) {
        end -= 1;
    }
    let cut = diff[..end].rfind('\n').map(|i| i + 1).unwrap_or(end);
    format!(
        "{}\n(The diff is {} bytes; the first {} are shown. The Resolve Desk window shows every file.)\n",
        &diff[..cut],
        diff.len(),
        cut
    )
}

/// The URIs a client subscribed to.
#[derive(Clone, Default)]
pub(crate) struct Subscriptions(Arc<Mutex<BTreeSet<String>>>);

impl Subscriptions {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub(crate) fn add(&self, uri: String) {
        self.lock().insert(uri);
    }
    pub(crate) fn remove(&self, uri: &str) {
        self.lock().remove(uri);
    }
    fn has(&self, uri: &str) -> bool {
        self.lock().contains(uri)
    }
    fn all(&self) -> Vec<String> {
        self.lock().iter().cloned().collect()
    }
}

/// What a store change means for a client: whether the list changed, and which subscribed
/// URIs were updated.
pub(crate) fn on_change(change: &StoreChange, subscribed: &Subscriptions) -> (bool, Vec<String>) {
    let updated = |id: &str| {
        let uri = uri_of(id);
        if subscribed.has(&uri) {
            vec![uri]
        } else {
            Vec::new()
        }
    };
    match change {
        StoreChange::Pushed { .. } => (true, Vec::new()),
        StoreChange::Removed { id } | StoreChange::Decided { id } => (true, updated(id)),
        StoreChange::StatusChanged { id }
        | StoreChange::ProposalChanged { id }
        | StoreChange::CommentsChanged { id } => (false, updated(id)),
        StoreChange::Cleared { .. } | StoreChange::Restored { .. } => (true, subscribed.all()),
    }
}

/// A missed change (the event queue overflowed): everything may have changed.
pub(crate) fn on_lag(subscribed: &Subscriptions) -> (bool, Vec<String>) {
    (true, subscribed.all())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_diff_is_cut_at_a_line_and_says_how_much_was_left_out() {
        let line = "+".repeat(99) + "\n";
        let diff = line.repeat(DIFF_WINDOW_BYTES / 100 + 10);
        let shown = window(&diff);
        assert!(shown.len() < DIFF_WINDOW_BYTES + 200, "{}", shown.len());
        let (body, note) = shown.split_once("\n(The diff is").unwrap();
        assert!(body.ends_with('\n') && body.lines().all(|l| l.len() == 99), "cut at a line");
        assert!(note.contains(&format!("{} bytes", diff.len())), "{note}");
        assert_eq!(window("small\n"), "small\n");
    }

    #[test]
    fn only_subscribed_actions_are_updated_and_pushes_and_pops_change_the_list() {
        let subs = Subscriptions::default();
        subs.add(uri_of("pa-1"));
        let id = |s: &str| s.to_string();
        assert_eq!(on_change(&StoreChange::Pushed { id: id("pa-2") }, &subs), (true, vec![]));
        assert_eq!(on_change(&StoreChange::StatusChanged { id: id("pa-2") }, &subs), (false, vec![]));
        assert_eq!(on_change(&StoreChange::ProposalChanged { id: id("pa-1") }, &subs), (false, vec![uri_of("pa-1")]));
        assert_eq!(on_change(&StoreChange::Decided { id: id("pa-1") }, &subs), (true, vec![uri_of("pa-1")]));
        subs.remove(&uri_of("pa-1"));
        assert_eq!(on_change(&StoreChange::Removed { id: id("pa-1") }, &subs), (true, vec![]));
    }
}
