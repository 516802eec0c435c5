//! The `snake_case` form of a shared word, for the readers that were promised it: agents,
//! `rdesk`'s JSON and the journal read `directory_skipped` and `waiting_for_person` where the
//! window reads `directorySkipped` and `waitingForPerson`. One definition of the word (its
//! derive gives the window's form); a field in an agent's or the journal's type takes the
//! other with `#[serde(with = "resolve_protocol::snake")]`.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};

/// A plain enum with a `snake_case` name for each value.
pub trait SnakeCase: Sized + Copy + 'static {
    /// Every value, for reading a name back.
    const ALL: &'static [Self];
    /// The value's `snake_case` name.
    fn snake(self) -> &'static str;
}

pub fn serialize<S: Serializer, T: SnakeCase>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(value.snake())
}

pub fn deserialize<'de, D: Deserializer<'de>, T: SnakeCase>(d: D) -> Result<T, D::Error> {
    let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
    T::ALL.iter().copied().find(|v| v.snake() == name).ok_or_else(|| {
        let known: Vec<&str> = T::ALL.iter().map(|v| v.snake()).collect();
        D::Error::custom(format!("unknown value `{name}`, expected one of: {}", known.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RenameStatus, TurnOutcome};

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Row {
        #[serde(with = "crate::snake")]
        status: RenameStatus,
    }

    #[test]
    fn a_field_reads_and_writes_the_snake_case_name_and_the_word_itself_the_windows() {
        let row = Row { status: RenameStatus::DirectorySkipped };
        let text = serde_json::to_string(&row).unwrap();
        assert_eq!(text, r#"{"status":"directory_skipped"}"#);
        assert_eq!(serde_json::from_str::<Row>(&text).unwrap(), row);
        assert_eq!(serde_json::to_string(&RenameStatus::DirectorySkipped).unwrap(), r#""directorySkipped""#);
        let err = serde_json::from_str::<Row>(r#"{"status":"directorySkipped"}"#).unwrap_err().to_string();
        assert!(
            err.contains("unknown value `directorySkipped`, expected one of: rename, unchanged, directory_skipped"),
            "{err}"
        );
        let names: Vec<&str> = TurnOutcome::ALL.iter().map(|o| o.snake()).collect();
        assert_eq!(names, ["answered", "waiting_for_person", "cancelled", "max_steps", "failed"]);
    }
}
