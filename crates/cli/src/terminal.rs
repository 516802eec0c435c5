//! Text printed to a terminal. A file, a manifest, a tool's message or a model's words may
//! hold escape sequences (clear the screen, move the cursor, rewrite the window title, set the
//! clipboard with OSC 52) or bidirectional controls that make a line read differently from
//! what it is. Everything `rdesk` prints for a person that it did not write itself goes
//! through [`safe`]; the JSON Lines outputs do not need it (serde escapes control characters,
//! and bidi controls are data there, not display).
//!
//! The rule of which characters are unsafe is the engine's (`resolve_engine::hidden`), the
//! same one the window uses to show them as `⟨U+202E⟩`.

use std::borrow::Cow;

/// `text` ready for a terminal: C0/C1 controls (ESC, BEL, a lone CR…), bidi controls and
/// invisible characters written as `\x1b` / `\u{202e}` escapes; line feeds, tabs and CRLF kept.
pub fn safe(text: &str) -> Cow<'_, str> {
    resolve_engine::hidden::escape(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_from_a_file_cannot_reach_the_terminal() {
        // Clear the screen, then set the clipboard (OSC 52), then a red prompt.
        let hostile = "-    x\n+\u{1b}[2J\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[31m$ \n";
        let shown = safe(hostile);
        assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "no raw ESC or BEL: {shown:?}");
        assert_eq!(shown, "-    x\n+\\x1b[2J\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[31m$ \n");
    }

    #[test]
    fn a_trojan_source_diff_line_shows_its_bidi_controls() {
        let line = "+    if access_level != \"user\u{202E} \u{2066}// Check if admin\u{2069} \u{2066}\" {";
        let shown = safe(line);
        assert_eq!(shown, "+    if access_level != \"user\\u{202e} \\u{2066}// Check if admin\\u{2069} \\u{2066}\" {");
    }

    #[test]
    fn a_carriage_return_cannot_overwrite_what_came_before_but_crlf_stays() {
        assert_eq!(safe("ok\r\ndone"), "ok\r\ndone");
        assert_eq!(safe("harmless\rrm -rf /"), "harmless\\rrm -rf /");
    }

    #[test]
    fn ordinary_text_is_printed_as_it_is() {
        let text = "ast_edit — AST Edit\n    Rewrite code (café, 日本語, emoji 🎉).\n";
        assert!(matches!(safe("plain ascii\n\tindented"), Cow::Borrowed(_)));
        assert_eq!(safe(text), text);
    }
}
