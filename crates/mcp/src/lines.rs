//! The line layer in front of the MCP service: each incoming line that is not JSON at all
//! is answered with a JSON-RPC parse error (`-32700`, id null), as JSON-RPC 2.0 asks; rmcp
//! alone drops such lines silently, which leaves a client waiting forever. A line longer than
//! [`max_line_bytes`] is never held whole: it is read on in chunks to its newline, dropped, and
//! answered with `-32600` (id null) naming its size, the limit and the setting. Every other
//! line passes through unchanged (rmcp answers JSON that is not a JSON-RPC message with
//! `-32600`).

use std::sync::{Arc, OnceLock};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

const PIPE: usize = 256 * 1024;

/// The setting for the longest incoming line (one JSON-RPC message), in bytes.
pub const MAX_LINE_BYTES_VAR: &str = "RESOLVE_DESK_MCP_MAX_LINE_BYTES";

/// The longest incoming line by default: 16 MiB. An MCP request is a tool name and its
/// parameters (a few KiB; `ast_edit` patterns, lists of paths); this bounds what one client can
/// make the desk hold while leaving room for any legitimate request.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The longest incoming line, in bytes (without its newline): [`MAX_LINE_BYTES_VAR`] when it
/// is set to a positive whole number, else [`DEFAULT_MAX_LINE_BYTES`] (a value that is not
/// one is reported once on stderr and ignored). Read once per process.
pub fn max_line_bytes() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let Some(raw) = std::env::var_os(MAX_LINE_BYTES_VAR) else {
            return DEFAULT_MAX_LINE_BYTES;
        };
        match parse_limit(&raw.to_string_lossy()) {
            Ok(limit) => limit,
            Err(problem) => {
                eprintln!("resolve-desk: {problem}");
                DEFAULT_MAX_LINE_BYTES
            }
        }
    })
}

/// A line limit from its setting's text, or why it is not one.
fn parse_limit(raw: &str) -> Result<usize, String> {
    match raw.trim().parse::<usize>() {
        Ok(limit) if limit > 0 => Ok(limit),
        _ => Err(format!(
            "{MAX_LINE_BYTES_VAR}={raw:?} is not a positive whole number of bytes; using the default, \
             {DEFAULT_MAX_LINE_BYTES} (16 MiB). Set it to e.g. 33554432 for 32 MiB, or unset it."
        )),
    }
}

/// The JSON-RPC parse error sent for a line that is not JSON.
pub(crate) fn parse_error(err: &serde_json::Error) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32700,
            "message": format!("Parse error: the line is not JSON ({err}). Send one JSON-RPC message per line."),
        }
    })
    .to_string()
}

/// The JSON-RPC error sent for a line of `bytes` bytes, over `limit`.
pub(crate) fn too_long_error(bytes: u64, limit: usize) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32600,
            "message": format!(
                "Invalid Request: the line is {bytes} bytes, over the limit of {limit} bytes for one JSON-RPC message \
                 (setting {MAX_LINE_BYTES_VAR}); it was dropped unread. Send smaller messages, or raise the limit \
                 where the desk starts."
            ),
        }
    })
    .to_string()
}

/// One line read by [`LineReader::next`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// The input ended.
    End,
    /// A line with its `\n` (the last line of the input may lack it).
    Whole(Vec<u8>),
    /// A line of `bytes` bytes (without its newline) over the limit, read to its end and dropped.
    TooLong { bytes: u64 },
}

/// Reads lines of at most `limit` bytes, in the reader's chunks: a longer line is counted and
/// dropped as it arrives, so no more than `limit` bytes of it are ever held. Cancel-safe: a
/// [`next`](Self::next) dropped mid-line (in a `select!`) loses nothing, the next call goes on.
pub(crate) struct LineReader<R> {
    reader: BufReader<R>,
    limit: usize,
    line: Vec<u8>,
    /// Bytes of the current line seen so far (without a newline).
    seen: u64,
    too_long: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, limit: usize) -> Self {
        Self { reader: BufReader::new(reader), limit, line: Vec::new(), seen: 0, too_long: false }
    }

    /// The next line. A read error ends the input like its end does.
    pub(crate) async fn next(&mut self) -> std::io::Result<Line> {
        loop {
            // Only `fill_buf` awaits, and it consumes nothing: the state below is always whole.
            let chunk = self.reader.fill_buf().await?;
            if chunk.is_empty() {
                return Ok(self.finish());
            }
            let newline = memchr::memchr(b'\n', chunk);
            let take = newline.map_or(chunk.len(), |i| i + 1);
            let body = newline.map_or(take, |i| i);
            self.seen += body as u64;
            if !self.too_long && self.seen > self.limit as u64 {
                self.too_long = true;
                self.line = Vec::new();
            }
            if !self.too_long {
                self.line.extend_from_slice(&chunk[..take]);
            }
            self.reader.consume(take);
            if newline.is_some() {
                return Ok(self.finish());
            }
        }
    }

    /// The line read so far as a [`Line`], and a fresh start.
    fn finish(&mut self) -> Line {
        let line = if self.too_long {
            Line::TooLong { bytes: self.seen }
        } else if self.line.is_empty() {
            Line::End
        } else {
            Line::Whole(std::mem::take(&mut self.line))
        };
        self.seen = 0;
        self.too_long = false;
        line
    }
}

/// Wraps a byte stream pair, with incoming lines of at most `limit` bytes: returns the streams
/// the service reads and writes, and the task that pumps both directions (it ends once the client's input ends and the service closed
/// its output).
pub(crate) fn checked<R, W>(reader: R, writer: W, limit: usize) -> (DuplexStream, DuplexStream, JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (service_in, mut to_service) = tokio::io::duplex(PIPE);
    let (from_service, service_out) = tokio::io::duplex(PIPE);
    let writer = Arc::new(Mutex::new(writer));

    let input_writer = writer.clone();
    let input = async move {
        let mut lines = LineReader::new(reader, limit);
        loop {
            let mut line = match lines.next().await {
                Ok(Line::End) | Err(_) => break,
                Ok(Line::Whole(line)) => line,
                Ok(Line::TooLong { bytes }) => {
                    let reply = format!("{}\n", too_long_error(bytes, limit));
                    if !reply_to_client(&input_writer, &reply).await {
                        break;
                    }
                    continue;
                }
            };
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
            if !body.iter().all(u8::is_ascii_whitespace) {
                if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
                    let reply = format!("{}\n", parse_error(&e));
                    if !reply_to_client(&input_writer, &reply).await {
                        break;
                    }
                    continue;
                }
            }
            if !line.ends_with(b"\n") {
                line.push(b'\n');
            }
            if to_service.write_all(&line).await.is_err() {
                break;
            }
        }
        // End of the client's input: the service sees end of file and finishes.
        let _ = to_service.shutdown().await;
    };

    let output = async move {
        let mut from_service = BufReader::new(from_service);
        let mut line = Vec::new();
        loop {
            line.clear();
            match from_service.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let mut w = writer.lock().await;
            if w.write_all(&line).await.is_err() || w.flush().await.is_err() {
                break;
            }
        }
        let _ = writer.lock().await.shutdown().await;
    };

    let pump = tokio::spawn(async move {
        let input = tokio::spawn(input);
        output.await;
        // The service is gone: nobody reads the client's input any more.
        input.abort();
    });
    (service_in, service_out, pump)
}

/// Writes `reply` to the client; false once the client is gone.
async fn reply_to_client<W: AsyncWrite + Unpin>(writer: &Mutex<W>, reply: &str) -> bool {
    let mut w = writer.lock().await;
    w.write_all(reply.as_bytes()).await.is_ok() && w.flush().await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_line_over_the_limit_is_answered_with_its_size_and_dropped_and_the_next_line_passes() {
        let limit = 1000;
        let (client, server_side) = tokio::net::UnixStream::pair().unwrap();
        let (server_read, server_write) = server_side.into_split();
        let (mut service_in, service_out, _pump) = checked(server_read, server_write, limit);
        let (client_read, mut client_write) = client.into_split();
        // Written while the server reads: the line arrives in many chunks.
        let writer = tokio::spawn(async move {
            let big = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"{}\"}}", "a".repeat(300_000));
            client_write.write_all(big.as_bytes()).await.unwrap();
            client_write.write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n").await.unwrap();
            (big.len(), client_write)
        });

        let mut reply = BufReader::new(client_read);
        let mut line = String::new();
        reply.read_line(&mut line).await.unwrap();
        let (size, _client_write) = writer.await.unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["error"]["code"], -32600, "{v}");
        assert_eq!(v["id"], serde_json::Value::Null);
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("{size} bytes"))
                && message.contains("limit of 1000 bytes")
                && message.contains(MAX_LINE_BYTES_VAR),
            "names the size, the limit and the setting: {message}"
        );

        let mut passed = vec![0u8; 64];
        let n = service_in.read(&mut passed).await.unwrap();
        assert_eq!(
            &passed[..n],
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n",
            "only the next line reaches the service"
        );
        drop(service_out);
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_never_held_whole() {
        let limit = 4096;
        let (mut client, server_side) = tokio::net::UnixStream::pair().unwrap();
        let mut lines = LineReader::new(server_side, limit);
        let writer = tokio::spawn(async move {
            for _ in 0..256 {
                client.write_all(&[b'x'; 4096]).await.unwrap();
            }
            client.write_all(b"\nshort\n").await.unwrap();
        });
        let first = lines.next().await.unwrap();
        assert_eq!(first, Line::TooLong { bytes: 256 * 4096 });
        assert!(lines.line.capacity() <= 2 * limit, "held {} bytes of a 1 MiB line", lines.line.capacity());
        assert_eq!(lines.next().await.unwrap(), Line::Whole(b"short\n".to_vec()));
        writer.await.unwrap();
        assert_eq!(lines.next().await.unwrap(), Line::End);
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_limit_passes() {
        let (mut client, server_side) = tokio::net::UnixStream::pair().unwrap();
        let mut lines = LineReader::new(server_side, 10);
        client.write_all(b"0123456789\n0123456789a\n").await.unwrap();
        drop(client);
        assert_eq!(lines.next().await.unwrap(), Line::Whole(b"0123456789\n".to_vec()));
        assert_eq!(lines.next().await.unwrap(), Line::TooLong { bytes: 11 });
        assert_eq!(lines.next().await.unwrap(), Line::End);
    }

    #[test]
    fn the_limit_setting_must_be_a_positive_number_of_bytes() {
        assert_eq!(parse_limit("4096"), Ok(4096));
        for bad in ["0", "-1", "16MiB", ""] {
            let err = parse_limit(bad).unwrap_err();
            assert!(err.contains(MAX_LINE_BYTES_VAR) && err.contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[tokio::test]
    async fn a_line_that_is_not_json_gets_a_parse_error_and_the_next_line_passes() {
        let (client, server_side) = tokio::io::duplex(4096);
        let (server_read, server_write) = tokio::io::split(server_side);
        let (mut service_in, service_out, _pump) = checked(server_read, server_write, DEFAULT_MAX_LINE_BYTES);
        let (mut client_read, mut client_write) = tokio::io::split(client);
        client_write.write_all(b"{not json\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n").await.unwrap();

        let mut reply = BufReader::new(&mut client_read);
        let mut line = String::new();
        reply.read_line(&mut line).await.unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["error"]["code"], -32700);
        assert_eq!(v["id"], serde_json::Value::Null);

        let mut passed = vec![0u8; 32];
        let n = service_in.read(&mut passed).await.unwrap();
        assert_eq!(&passed[..n], b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n");
        drop(service_out);
    }
}
