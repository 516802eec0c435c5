//! Lean transcript entries: what the session keeps of a call's result for its whole life.
//!
//! Why: the transcript lives as long as the session, and a preview's result can be large (a
//! tool's text with hundreds of kilobytes of diffs, details listing thousands of files).
//! Keeping every one whole makes memory grow with every preview. So once the observers have
//! seen an entry whole (the journal, the app's history), the transcript keeps at most
//! [`TRANSCRIPT_TEXT_BYTES`] of its result text and [`TRANSCRIPT_DETAILS_BYTES`] of its
//! details, and says how many bytes it dropped (`TranscriptEntry::elided`).
//!
//! Entries of the calls that decide (`resolve`, `undo`, `redo`) are kept whole: the history
//! is read from them ([`HistoryEntry::from_transcript`](crate::HistoryEntry::from_transcript)),
//! and they are small.

use serde_json::{Map, Value};

use crate::resolve::RESOLVE_TOOL_NAME;
use crate::session::TranscriptEntry;
use crate::tool::Content;

/// Bytes of result text a transcript entry keeps (the start of the text).
pub const TRANSCRIPT_TEXT_BYTES: usize = 4 * 1024;
/// Bytes of details (as compact JSON) a transcript entry keeps, at most. Small on purpose: in
/// memory a `serde_json::Value` of many small objects takes several times its JSON size
/// (16 KiB of details kept 1.77x the memory after 100 previews; 4 KiB keeps 1.26x).
pub const TRANSCRIPT_DETAILS_BYTES: usize = 4 * 1024;

/// Whether the transcript keeps `tool`'s entries whole (the calls the history is read from).
pub(crate) fn kept_whole(tool: &str) -> bool {
    tool == RESOLVE_TOOL_NAME || tool == crate::undo::UNDO_TOOL_NAME || tool == crate::undo::REDO_TOOL_NAME
}

/// Trims `entry`'s result to the transcript's budget (unless it is kept whole) and adds the
/// bytes dropped to `entry.elided`.
pub(crate) fn trim_entry(entry: &mut TranscriptEntry) {
    if kept_whole(&entry.call.tool) {
        return;
    }
    let mut elided = 0;
    let mut budget = TRANSCRIPT_TEXT_BYTES;
    for Content::Text { text } in entry.result.content.iter_mut() {
        if text.len() <= budget {
            budget -= text.len();
            continue;
        }
        let cut = floor_char_boundary(text, budget);
        elided += text.len() - cut;
        text.truncate(cut);
        text.push('…');
        text.shrink_to_fit(); // truncating keeps the whole allocation
        budget = 0;
    }
    if let Some(details) = entry.result.details.as_mut() {
        let before = json_len(details);
        if before > TRANSCRIPT_DETAILS_BYTES {
            *details = trim_value(std::mem::take(details), TRANSCRIPT_DETAILS_BYTES);
            elided += before.saturating_sub(json_len(details));
        }
    }
    entry.elided += elided;
}

/// The compact JSON length of `v`.
pub(crate) fn json_len(v: &Value) -> usize {
    serde_json::to_vec(v).map(|b| b.len()).unwrap_or(0)
}

/// The largest index `<= at` on a char boundary of `s`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    let mut i = at.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `v` cut to about `budget` bytes of JSON, keeping its shape: an object keeps its smallest
/// members whole (ids, counts, summaries) and cuts the large ones, in its own key order; an
/// array keeps a prefix; a string keeps its start. Numbers, booleans and null stay.
fn trim_value(v: Value, budget: usize) -> Value {
    if json_len(&v) <= budget {
        return v;
    }
    match v {
        Value::String(mut s) => {
            let cut = floor_char_boundary(&s, budget.saturating_sub(8));
            s.truncate(cut);
            s.push('…');
            s.shrink_to_fit();
            Value::String(s)
        }
        Value::Array(items) => {
            let mut kept = Vec::new();
            let mut used = 2;
            for item in items {
                let n = json_len(&item) + 1;
                if used + n > budget {
                    let left = budget.saturating_sub(used + 1);
                    if kept.is_empty() && left > 16 {
                        kept.push(trim_value(item, left));
                    }
                    break;
                }
                used += n;
                kept.push(item);
            }
            kept.shrink_to_fit();
            Value::Array(kept)
        }
        Value::Object(map) => {
            let sizes: Vec<usize> = map.iter().map(|(k, v)| k.len() + 4 + json_len(v)).collect();
            let mut order: Vec<usize> = (0..sizes.len()).collect();
            order.sort_by_key(|&i| sizes[i]);
            // Smallest first, each gets at most an equal share of what is left: small members
            // stay whole and what they do not use goes to the large ones.
            let mut budgets = vec![0usize; sizes.len()];
            let mut left = budget.saturating_sub(2);
            for (rank, &i) in order.iter().enumerate() {
                let share = left / (order.len() - rank);
                budgets[i] = sizes[i].min(share);
                left -= budgets[i];
            }
            let mut out = Map::new();
            for (i, (k, v)) in map.into_iter().enumerate() {
                let room = budgets[i].saturating_sub(k.len() + 4);
                out.insert(k, trim_value(v, room));
            }
            Value::Object(out)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn small_values_stay_as_they_are() {
        let v = json!({"a": 1, "b": [1, 2, 3], "c": "text"});
        assert_eq!(trim_value(v.clone(), 1000), v);
    }

    #[test]
    fn large_values_keep_their_small_members_and_a_prefix_of_their_lists() {
        let files: Vec<Value> = (0..5000).map(|i| json!({"path": format!("src/f{i}.ts"), "replacements": 5})).collect();
        let v = json!({"summary": {"replacements": 25000, "files": 5000}, "files": files, "action_id": "pa-1"});
        let t = trim_value(v, TRANSCRIPT_DETAILS_BYTES);
        assert!(json_len(&t) <= TRANSCRIPT_DETAILS_BYTES, "{}", json_len(&t));
        assert_eq!(t["action_id"], "pa-1");
        assert_eq!(t["summary"]["files"], 5000);
        let kept = t["files"].as_array().unwrap();
        assert!(kept.len() > 10 && kept.len() < 5000, "{}", kept.len());
        assert_eq!(kept[0]["path"], "src/f0.ts");
        let keys: Vec<&str> = t.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["summary", "files", "action_id"], "key order kept");
    }

    #[test]
    fn long_strings_keep_their_start_on_a_char_boundary() {
        let v = Value::String("é".repeat(10_000));
        let t = trim_value(v, 1001);
        let s = t.as_str().unwrap();
        assert!(s.starts_with("éé") && s.ends_with('…') && s.len() <= 1001);
    }
}
