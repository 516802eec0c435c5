//! Characters a person cannot see, or that look like others, in a text the UI shows.
//!
//! The engine's `hidden` rule decides which characters these are and where they sit; the UI
//! renders each one visibly (a `⟨U+202E⟩` chip in place of a hidden character, an outline
//! around a look-alike letter) and decides nothing. Every field that carries them is a list
//! that is **absent when empty** (TypeScript: optional), so the payload of a clean text — nearly
//! all of them — is unchanged.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One character of a text that a person cannot see, or that looks like another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HiddenChar {
    /// Half-open `[start, end)` in UTF-16 code units of the text it was found in (what
    /// JavaScript strings index by; 2 units for a character outside the BMP).
    pub start: u32,
    pub end: u32,
    /// The Unicode scalar value (`0x202E`).
    pub code_point: u32,
    pub kind: HiddenKind,
    /// What it is, for a tooltip: `U+202E RIGHT-TO-LEFT OVERRIDE`,
    /// `U+0430 Cyrillic letter that looks like "a"`.
    pub name: String,
    /// What is shown in place of a hidden character: `⟨U+202E⟩`. A look-alike is shown as
    /// itself, outlined, with `name` as its tooltip.
    pub marker: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum HiddenKind {
    /// Changes the reading order (Trojan Source).
    Bidi,
    /// Zero-width, format and tag characters.
    Invisible,
    /// C0/C1 control characters other than tab, line feed and carriage return.
    Control,
    /// Spaces other than U+0020.
    Whitespace,
    /// A letter or digit that looks like an ASCII one but is not.
    Confusable,
}

impl HiddenKind {
    /// `bidi`, `invisible`, `control`, `whitespace` or `confusable`.
    pub fn as_str(self) -> &'static str {
        match self {
            HiddenKind::Bidi => "bidi",
            HiddenKind::Invisible => "invisible",
            HiddenKind::Control => "control",
            HiddenKind::Whitespace => "whitespace",
            HiddenKind::Confusable => "confusable",
        }
    }

    /// True for the kinds a person cannot see at all (everything but look-alikes).
    pub fn is_hidden(self) -> bool {
        !matches!(self, HiddenKind::Confusable)
    }
}

/// The characters found on one line of a whole text ([`crate::FileTexts`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LineHidden {
    /// 1-based, as the diff numbers lines.
    pub line: u32,
    pub chars: Vec<HiddenChar>,
}
