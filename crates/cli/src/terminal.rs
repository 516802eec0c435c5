//! Text from files, manifests and tools printed to a terminal: control characters (which could
//! move the cursor, recolour or retitle the terminal) and bidirectional controls (which could
//! reorder what is read) are shown as escapes, so what is printed is what is there.

/// `text` with C0/C1 controls (but newline and tab) and bidi controls as `\x1b` / `\u{202e}`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (0x80..0xa0).contains(&(c as u32)) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}' => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_control_and_bidi_characters_and_keeps_the_rest() {
        assert_eq!(escape("a\x1b]0;x\x07b"), "a\\x1b]0;x\\x07b");
        assert_eq!(escape("ok\u{202e}txt.exe"), "ok\\u{202e}txt.exe");
        assert_eq!(escape("line\n\ttab é"), "line\n\ttab é");
        assert_eq!(escape("\u{9b}31m"), "\\u{9b}31m");
    }
}
