//! The next round of a review (issue 27): what a preview answering a "Request changes" keeps
//! of the round before it, and the person's "viewed" marks.
//!
//! When an agent's preview is discarded with Request changes, the store remembers it
//! (`PriorRound`, per agent; kept across a restart as a [`StoredRound`]). The next preview that agent pushes is round N+1 ([`Round`]):
//! it names the review's first label and the previous preview, lists the files proposed
//! exactly as before ([`Round::unchanged`]), keeps the previous round's proposal of every
//! other file ([`ReviewState::round_base`], for the interdiff), and carries the previous
//! round's comments ([`EarlierComment`]) to where their lines are now, each marked with
//! whether this round changed those lines ([`carry_comments`]).
//!
//! "Viewed" marks are per file and pinned to the proposal they were given for
//! ([`ReviewState::viewed`]: path → hash of the proposed bytes): a next round keeps the mark
//! of a file proposed exactly as before and drops it from a file whose proposal changed.
//! Everything here is data ([`ReviewState`]) kept with the pending action through the
//! store's persistence hook, so a round and its marks survive a restart.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use similar::{DiffOp, TextDiff};

use crate::changeset::{Change, ChangeSet, ContentHash};
use crate::review::{Comment, CommentSide};

/// Where a preview stands in a review: its round, what the review began with, the files
/// whose proposed text is the same as in the previous round (nothing to re-read there), and
/// the previous round's comments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// 2 for the first preview answering a "Request changes", and so on.
    pub number: u32,
    /// The label of the review's first preview.
    pub first_label: String,
    /// The id of the previous round's preview (discarded).
    pub previous_id: String,
    /// Files this preview proposes exactly as the previous round did (workspace-relative).
    pub unchanged: Vec<String>,
    /// The previous round's comments, placed on this round's lines (in file order).
    #[serde(default)]
    pub earlier: Vec<EarlierComment>,
}

/// A comment of the previous round, shown beside the lines it was on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EarlierComment {
    /// The round it was written in.
    pub round: u32,
    /// As written: path, side, the lines of that round and their quote.
    pub comment: Comment,
    /// Where its lines are in this round's diff (same side, 1-based, inclusive); `None` when
    /// this round no longer has them (the file left the change, or has no text).
    pub now_lines: Option<(u32, u32)>,
    /// Whether this round changed those lines (what the agent was asked to look at).
    pub changed: bool,
}

/// What a pending action keeps of its review besides its comments (persisted with it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ReviewState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<Round>,
    /// The previous round's proposed text of each file of this action that changed since
    /// (empty for a file the previous round did not propose), for the interdiff.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub round_base: BTreeMap<String, String>,
    /// Files the person marked viewed: path → hash of the proposed bytes they viewed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub viewed: BTreeMap<String, String>,
}

impl ReviewState {
    /// Whether there is nothing to keep.
    pub fn is_empty(&self) -> bool {
        self.round.is_none() && self.round_base.is_empty() && self.viewed.is_empty()
    }

    /// The files marked viewed, in path order.
    pub fn viewed_paths(&self) -> Vec<String> {
        self.viewed.keys().cloned().collect()
    }
}

/// A preview discarded with "Request changes", kept until its agent pushes the next round
/// (and, through the persistence hook, across a restart: [`StoredRound`]).
#[derive(Debug, Clone)]
pub(crate) struct PriorRound {
    pub number: u32,
    pub first_label: String,
    pub id: String,
    pub change_set: Option<std::sync::Arc<ChangeSet>>,
    /// The comments to show in the next round, each with the round it was written in: the
    /// ones that went with the Request changes, and earlier rounds' comments still on this
    /// round's lines (anchored to them).
    pub comments: Vec<(u32, Comment)>,
    pub viewed: BTreeMap<String, String>,
}

/// A prior round as data, kept beside the discarded preview's stored action (whose changes
/// are the previous proposal) until its agent pushes the next round: so a restart between a
/// Request changes and the agent's answer still makes that answer round N+1 with the
/// person's comments beside their lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRound {
    /// The agent (client) whose next preview is the next round.
    pub agent: String,
    /// The round the discarded preview was.
    pub number: u32,
    pub first_label: String,
    /// The comments the next round shows, each with the round it was written in.
    pub comments: Vec<(u32, Comment)>,
    /// The files marked viewed (path → hash of the proposal they were viewed at).
    pub viewed: BTreeMap<String, String>,
}

impl PriorRound {
    pub(crate) fn stored(&self, agent: &str) -> StoredRound {
        StoredRound {
            agent: agent.to_string(),
            number: self.number,
            first_label: self.first_label.clone(),
            comments: self.comments.clone(),
            viewed: self.viewed.clone(),
        }
    }

    pub(crate) fn from_stored(id: String, change_set: Option<std::sync::Arc<ChangeSet>>, s: StoredRound) -> Self {
        PriorRound {
            number: s.number,
            first_label: s.first_label,
            id,
            change_set,
            comments: s.comments,
            viewed: s.viewed,
        }
    }
}

/// The hash of the bytes `change` proposes for its file: an edit's or a creation's; `None`
/// for a deletion or a rename (they propose no bytes).
pub(crate) fn proposed_hash(change: &Change) -> Option<String> {
    match change {
        Change::Edit { after, .. } => Some(ContentHash::of(after).to_string()),
        Change::Create { contents, .. } => Some(ContentHash::of(contents).to_string()),
        Change::Delete { .. } | Change::Rename { .. } => None,
    }
}

/// The hash of the bytes each edited or created file of `cs` would have (by path).
pub(crate) fn proposed_hashes(cs: Option<&ChangeSet>) -> BTreeMap<String, String> {
    let changes = cs.map(|cs| cs.changes()).unwrap_or_default();
    changes.iter().filter_map(|c| Some((c.path().to_string(), proposed_hash(c)?))).collect()
}

/// The review state of a preview pushed as the answer to `prior`, with `now` its change set.
pub(crate) fn next_round(prior: PriorRound, now: Option<&ChangeSet>) -> ReviewState {
    let before = proposed_hashes(prior.change_set.as_deref());
    let after = proposed_hashes(now);
    let unchanged: Vec<String> =
        after.iter().filter(|(p, h)| before.get(*p) == Some(*h)).map(|(p, _)| p.clone()).collect();
    let mut round_base = BTreeMap::new();
    if let Some(now) = now {
        for c in now.changes() {
            let path = c.path();
            if unchanged.iter().any(|u| u == path) {
                continue;
            }
            let text = prior.change_set.as_deref().and_then(|cs| cs.file_texts(path)).and_then(|(_, new)| new);
            round_base.insert(path.to_string(), text.unwrap_or_default());
        }
    }
    let earlier = match (prior.change_set.as_deref(), now) {
        (Some(was), Some(now)) => carry_comments(was, now, &prior.comments, &unchanged),
        _ => prior
            .comments
            .iter()
            .map(|(round, c)| EarlierComment { round: *round, comment: c.clone(), now_lines: None, changed: true })
            .collect(),
    };
    // A mark stays only on a file proposed exactly as when it was viewed.
    let viewed = prior.viewed.into_iter().filter(|(p, h)| after.get(p) == Some(h)).collect();
    ReviewState {
        round: Some(Round {
            number: prior.number + 1,
            first_label: prior.first_label,
            previous_id: prior.id,
            unchanged,
            earlier,
        }),
        round_base,
        viewed,
    }
}

/// How long one file's line mapping may take before it is called changed wholesale.
const MAP_DEADLINE: Duration = Duration::from_millis(500);

/// For each line of `before` (0-based), the line of `after` it became: `(start, end)`, end
/// exclusive (empty for a deleted line: where it was); `equal` when kept as it was.
struct LineMap {
    spans: Vec<(u32, u32, bool)>,
    after_lines: u32,
}

fn line_map(before: &str, after: &str) -> LineMap {
    let diff = TextDiff::configure().timeout(MAP_DEADLINE).diff_lines(before, after);
    let mut spans = Vec::new();
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { new_index, len, .. } => {
                spans.extend((0..len).map(|k| ((new_index + k) as u32, (new_index + k + 1) as u32, true)))
            }
            DiffOp::Delete { old_len, new_index, .. } => {
                spans.extend((0..old_len).map(|_| (new_index as u32, new_index as u32, false)))
            }
            DiffOp::Insert { .. } => {}
            // Rewritten lines: the k-th becomes the k-th of the new run (its last when shorter).
            DiffOp::Replace { old_len, new_index, new_len, .. } => spans.extend((0..old_len).map(|k| {
                let at = (new_index + k.min(new_len - 1)) as u32;
                (at, at + 1, false)
            })),
        }
    }
    LineMap { spans, after_lines: diff.new_slices().len() as u32 }
}

impl LineMap {
    /// Where lines `start..=end` (1-based) went, and whether every one is kept as it was.
    fn place(&self, start: u32, end: u32) -> (Option<(u32, u32)>, bool) {
        let range = &self.spans[(start as usize - 1).min(self.spans.len())..(end as usize).min(self.spans.len())];
        if range.is_empty() || self.after_lines == 0 {
            return (None, false);
        }
        let kept = range.len() == (end - start + 1) as usize && range.iter().all(|s| s.2);
        let from = range.iter().map(|s| s.0).min().unwrap_or(0);
        let to = range.iter().map(|s| s.1).max().unwrap_or(0).max(from + 1);
        let first = (from + 1).min(self.after_lines);
        let last = to.min(self.after_lines).max(first);
        (Some((first, last)), kept)
    }
}

/// What each line of the original became in a proposal: kept (`None`) or the hash of the
/// text that replaced its run of lines (empty text for a deletion).
fn fates(old: &str, new: &str) -> Fates {
    let diff = TextDiff::configure().timeout(MAP_DEADLINE).diff_lines(old, new);
    let new_lines = diff.new_slices();
    let mut out = Vec::new();
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { len, .. } => out.extend((0..len).map(|_| None)),
            DiffOp::Delete { old_len, .. } => out.extend((0..old_len).map(|_| Some(blake3::hash(b"")))),
            DiffOp::Insert { .. } => {}
            DiffOp::Replace { old_len, new_index, new_len, .. } => {
                let mut h = blake3::Hasher::new();
                for line in &new_lines[new_index..new_index + new_len] {
                    h.update(line.as_bytes());
                }
                let h = h.finalize();
                out.extend((0..old_len).map(|_| Some(h)));
            }
        }
    }
    out
}

/// How long placing all the earlier comments of one round may take. Past it, the rest keep
/// their line numbers and are marked changed (read them again rather than trust a guess).
const CARRY_BUDGET: Duration = Duration::from_secs(2);

/// One file's maps from the previous round to this one, computed once for all its comments.
#[derive(Default)]
struct FileMaps {
    /// The previous proposal → this one.
    new: Option<Option<LineMap>>,
    /// The previous original → this one, and what each original line became in each round.
    old: Option<Option<OldMaps>>,
}

/// What each line of the original became in a proposal ([`fates`]).
type Fates = Vec<Option<blake3::Hash>>;

/// The previous original → this one, with the fates of its lines before and after.
struct OldMaps {
    map: LineMap,
    before: Fates,
    after: Fates,
}

/// The previous round's `comments` (on `was`, each with the round it was written in) placed
/// on this round's lines (`now`), each marked with whether this round changed them. A comment
/// on a new line follows that line into this round's proposal; a comment on an old line (the
/// original) stays on it and is changed when this round treats that line differently (keeps
/// it, or rewrites it another way). Comments on files in `unchanged` stay where they were,
/// unchanged. Each file is diffed once, within `CARRY_BUDGET` (2 s) for the whole round.
pub fn carry_comments(
    was: &ChangeSet,
    now: &ChangeSet,
    comments: &[(u32, Comment)],
    unchanged: &[String],
) -> Vec<EarlierComment> {
    let started = std::time::Instant::now();
    let mut maps: BTreeMap<&str, FileMaps> = BTreeMap::new();
    comments
        .iter()
        .map(|(round, c)| {
            let gone = EarlierComment { round: *round, comment: c.clone(), now_lines: None, changed: true };
            if unchanged.contains(&c.path) {
                return EarlierComment { now_lines: Some((c.start_line, c.end_line)), changed: false, ..gone };
            }
            let entry = maps.entry(c.path.as_str()).or_default();
            let slot = match c.side {
                CommentSide::New => entry.new.is_none(),
                CommentSide::Old => entry.old.is_none(),
            };
            if slot && started.elapsed() > CARRY_BUDGET {
                // Out of time: same lines, and say "changed" so that the person looks.
                return EarlierComment { now_lines: Some((c.start_line, c.end_line)), ..gone };
            }
            let texts = || Some((was.file_texts(&c.path)?, now.file_texts(&c.path)?));
            match c.side {
                CommentSide::New => {
                    let map = entry.new.get_or_insert_with(|| {
                        let ((_, was_new), (_, now_new)) = texts()?;
                        Some(line_map(&was_new?, &now_new?))
                    });
                    let Some(map) = map else { return gone };
                    let (now_lines, kept) = map.place(c.start_line, c.end_line);
                    EarlierComment { now_lines, changed: !kept, ..gone }
                }
                CommentSide::Old => {
                    let maps = entry.old.get_or_insert_with(|| {
                        let ((was_old, was_new), (now_old, now_new)) = texts()?;
                        let (was_old, now_old) = (was_old?, now_old?);
                        let before = fates(&was_old, was_new.as_deref().unwrap_or(""));
                        let after = fates(&now_old, now_new.as_deref().unwrap_or(""));
                        Some(OldMaps { map: line_map(&was_old, &now_old), before, after })
                    });
                    let Some(OldMaps { map, before, after }) = maps else { return gone };
                    let (now_lines, same_original) = map.place(c.start_line, c.end_line);
                    let Some((first, last)) = now_lines else { return gone };
                    let lines = |f: &[Option<blake3::Hash>], a: u32, b: u32| {
                        f.get(a as usize - 1..(b as usize).min(f.len())).map(<[_]>::to_vec)
                    };
                    let same = lines(before, c.start_line, c.end_line) == lines(after, first, last);
                    EarlierComment { now_lines, changed: !same_original || !same, ..gone }
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment(path: &str, side: CommentSide, start: u32, end: u32) -> Comment {
        Comment {
            id: format!("c{start}"),
            path: path.into(),
            side,
            start_line: start,
            end_line: end,
            quote: String::new(),
            text: "t".into(),
            replacement_id: None,
        }
    }

    fn edit(old: &str, new: &str) -> ChangeSet {
        let mut cs = ChangeSet::new();
        cs.edit("a.ts", old.as_bytes().to_vec(), new.as_bytes().to_vec());
        cs
    }

    #[test]
    fn a_new_side_comment_follows_its_lines_and_says_whether_they_changed() {
        let old = "a\nb\nc\nd\n";
        let was = edit(old, "a\nB\nc\nd\n");
        // Round 2 inserts a line on top, keeps `c`, rewrites `B` again.
        let now = edit(old, "top\na\nBee\nc\nd\n");
        let out = carry_comments(
            &was,
            &now,
            &[(1, comment("a.ts", CommentSide::New, 2, 2)), (1, comment("a.ts", CommentSide::New, 3, 4))],
            &[],
        );
        assert_eq!((out[0].now_lines, out[0].changed), (Some((3, 3)), true), "B → Bee: changed, now on line 3");
        assert_eq!((out[1].now_lines, out[1].changed), (Some((4, 5)), false), "c, d kept: moved down one line");
    }

    #[test]
    fn a_comment_in_a_run_of_rewritten_lines_stays_on_its_own_line() {
        let old = "a\nb\nc\n";
        let was = edit(old, "a\nB1\nC1\n");
        let now = edit(old, "a\nB2\nC2\n");
        let out = carry_comments(&was, &now, &[(1, comment("a.ts", CommentSide::New, 3, 3))], &[]);
        assert_eq!((out[0].now_lines, out[0].changed), (Some((3, 3)), true), "C1 → C2, not the whole run");
    }

    #[test]
    fn an_old_side_comment_is_changed_when_the_line_is_treated_differently() {
        let old = "keep\ncheck()\nrest\n";
        let was = edit(old, "keep\nrest\n");
        let still = edit(old, "keep\nrest\nmore\n");
        let fixed = edit(old, "keep\ncheck()\nrest\nmore\n");
        let c = [(1, comment("a.ts", CommentSide::Old, 2, 2))];
        let same = carry_comments(&was, &still, &c, &[]);
        assert_eq!((same[0].now_lines, same[0].changed), (Some((2, 2)), false), "still removed: not changed");
        let kept = carry_comments(&was, &fixed, &c, &[]);
        assert_eq!((kept[0].now_lines, kept[0].changed), (Some((2, 2)), true), "now kept: changed");
    }

    #[test]
    fn a_comment_on_a_file_this_round_dropped_has_no_place() {
        let was = edit("a\n", "b\n");
        let mut now = ChangeSet::new();
        now.edit("other.ts", b"x\n".to_vec(), b"y\n".to_vec());
        let out = carry_comments(&was, &now, &[(2, comment("a.ts", CommentSide::New, 1, 1))], &[]);
        assert_eq!((out[0].now_lines, out[0].changed, out[0].round), (None, true, 2));
    }

    #[test]
    fn a_next_round_keeps_viewed_marks_only_on_files_proposed_as_before() {
        let mut was = ChangeSet::new();
        was.edit("same.ts", b"1\n".to_vec(), b"2\n".to_vec()).edit("moved.ts", b"1\n".to_vec(), b"2\n".to_vec());
        let mut now = ChangeSet::new();
        now.edit("same.ts", b"1\n".to_vec(), b"2\n".to_vec()).edit("moved.ts", b"1\n".to_vec(), b"3\n".to_vec());
        let viewed = proposed_hashes(Some(&was));
        let prior = PriorRound {
            number: 1,
            first_label: "first".into(),
            id: "pa-1".into(),
            change_set: Some(std::sync::Arc::new(was)),
            comments: vec![(1, comment("moved.ts", CommentSide::New, 1, 1))],
            viewed,
        };
        let state = next_round(prior, Some(&now));
        assert_eq!(state.viewed_paths(), vec!["same.ts"], "the changed file's mark is cleared");
        let round = state.round.unwrap();
        assert_eq!((round.number, round.unchanged.clone()), (2, vec!["same.ts".to_string()]));
        assert_eq!(state.round_base.keys().collect::<Vec<_>>(), vec!["moved.ts"], "only a changed file keeps its base");
        assert_eq!(state.round_base["moved.ts"], "2\n");
        assert!(round.earlier[0].changed);
    }
}
