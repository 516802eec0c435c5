//! The person's comments on a pending action, through the session.

use crate::review::{anchor, check_text, Comment, CommentDraft, CommentError, MAX_COMMENTS};

use super::Session;

impl Session {
    /// Adds the comment `draft` describes to pending action `action_id` (anchored and quoted by
    /// [`anchor`]); kept with the action until it is decided, and sent with the decision.
    pub fn add_comment(&self, action_id: &str, draft: &CommentDraft) -> Result<Comment, CommentError> {
        let action = self.store().get(action_id).ok_or_else(|| CommentError::NoAction { id: action_id.to_string() })?;
        let cs = action.change_set.clone().ok_or_else(|| CommentError::NoFiles { label: action.label.clone() })?;
        self.store().change_comments(action_id, |comments, next| {
            if comments.len() >= MAX_COMMENTS {
                return Err(CommentError::Refused(format!(
                    "An action carries at most {MAX_COMMENTS} comments; edit or delete one first."
                )));
            }
            let comment = anchor(&cs, draft, format!("c{next}")).map_err(CommentError::Refused)?;
            *next += 1;
            comments.push(comment.clone());
            Ok(comment)
        })
    }

    /// Replaces the text of comment `comment_id` of pending action `action_id` (its anchor and
    /// quote stay as written).
    pub fn edit_comment(&self, action_id: &str, comment_id: &str, text: &str) -> Result<Comment, CommentError> {
        let text = check_text(text).map_err(CommentError::Refused)?;
        self.store().change_comments(action_id, |comments, _| {
            let c = comments.iter_mut().find(|c| c.id == comment_id).ok_or_else(|| CommentError::NoComment {
                action_id: action_id.to_string(),
                comment_id: comment_id.to_string(),
            })?;
            c.text = text;
            Ok(c.clone())
        })
    }

    /// Deletes comment `comment_id` of pending action `action_id`.
    pub fn delete_comment(&self, action_id: &str, comment_id: &str) -> Result<(), CommentError> {
        self.store().change_comments(action_id, |comments, _| {
            let before = comments.len();
            comments.retain(|c| c.id != comment_id);
            if comments.len() == before {
                return Err(CommentError::NoComment {
                    action_id: action_id.to_string(),
                    comment_id: comment_id.to_string(),
                });
            }
            Ok(())
        })
    }

    /// Marks file `path` of pending action `action_id` viewed, or clears the mark (see
    /// [`crate::rounds::ReviewState::viewed`]): a next round keeps it only if the file is
    /// proposed exactly as when it was viewed.
    pub fn set_viewed(&self, action_id: &str, path: &str, viewed: bool) -> Result<(), CommentError> {
        self.store().set_viewed(action_id, path.strip_prefix("./").unwrap_or(path), viewed)
    }
}
