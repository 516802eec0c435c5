//! A small server-sent events parser (the WHATWG event-stream format), fed raw bytes as
//! they arrive.
//!
//! Why not a crate: the ones available decode each network chunk as UTF-8 on its own or
//! only split on `\n\n`. Here bytes are buffered until a whole line is there (line breaks
//! are ASCII, so a multi-byte character is never cut), and lines end at LF, CRLF or CR —
//! a CR at the end of a chunk waits for the next byte to know whether an LF follows.
//! Lines starting with `:` are comments; `data:` lines of one event are joined with `\n`;
//! an event is dispatched at a blank line. Other fields (`event`, `id`, `retry`) are read
//! and ignored: Chat Completions only uses `data`.

/// One dispatched event: its data lines joined with `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub data: String,
}

/// Why bytes could not be read as an event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("the event stream has a line that is not UTF-8: {0:?}")]
    NotUtf8(String),
}

#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    data: Option<String>,
    /// The previous chunk ended with CR: an LF at the start of the next one belongs to it.
    pending_cr: bool,
    started: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut events = Vec::new();
        if self.pending_cr {
            self.pending_cr = false;
            if bytes.first() == Some(&b'\n') {
                bytes = &bytes[1..];
            }
        }
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            let b = self.buf[i];
            if b == b'\n' || b == b'\r' {
                let line_end = i;
                if b == b'\r' {
                    if i + 1 < self.buf.len() {
                        if self.buf[i + 1] == b'\n' {
                            i += 1;
                        }
                    } else {
                        self.pending_cr = true;
                    }
                }
                let line = self.buf[start..line_end].to_vec();
                self.line(&line, &mut events)?;
                start = i + 1;
            }
            i += 1;
        }
        self.buf.drain(..start);
        Ok(events)
    }

    /// Bytes received after the last complete line (for error messages).
    pub fn unfinished(&self) -> String {
        String::from_utf8_lossy(&self.buf).into_owned()
    }

    fn line(&mut self, raw: &[u8], events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut raw = raw;
        if !self.started {
            self.started = true;
            raw = raw.strip_prefix("\u{feff}".as_bytes()).unwrap_or(raw);
        }
        let line = std::str::from_utf8(raw).map_err(|_| SseError::NotUtf8(String::from_utf8_lossy(raw).into()))?;
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                events.push(SseEvent { data });
            }
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(parser: &mut SseParser, chunks: &[&[u8]]) -> Vec<String> {
        chunks.iter().flat_map(|c| parser.feed(c).unwrap()).map(|e| e.data).collect()
    }

    #[test]
    fn events_split_anywhere_come_out_whole() {
        let stream = "data: {\"a\":\"é€\"}\n\n: keep-alive\n\ndata: [DONE]\n\n".as_bytes();
        for cut in 0..stream.len() {
            let mut p = SseParser::new();
            let got = all(&mut p, &[&stream[..cut], &stream[cut..]]);
            assert_eq!(got, vec!["{\"a\":\"é€\"}", "[DONE]"], "cut at byte {cut}");
        }
    }

    #[test]
    fn crlf_and_cr_line_endings_work_even_split_between_chunks() {
        let mut p = SseParser::new();
        assert_eq!(all(&mut p, &[b"data: x\r", b"\n\r", b"\ndata:y\r\r"]), vec!["x", "y"]);
    }

    #[test]
    fn multi_line_data_is_joined_and_other_fields_ignored() {
        let mut p = SseParser::new();
        assert_eq!(all(&mut p, &[b"event: message\nid: 3\ndata: {\ndata: }\n\n"]), vec!["{\n}"]);
    }

    #[test]
    fn an_unfinished_event_is_not_dispatched() {
        let mut p = SseParser::new();
        assert!(all(&mut p, &[b"data: {\"half"]).is_empty());
        assert_eq!(p.unfinished(), "data: {\"half");
    }
}
