//! The line layer in front of the MCP service: each incoming line that is not JSON at all
//! is answered with a JSON-RPC parse error (`-32700`, id null), as JSON-RPC 2.0 asks; rmcp
//! alone drops such lines silently, which leaves a client waiting forever. Every other line
//! passes through unchanged (rmcp answers JSON that is not a JSON-RPC message with `-32600`).

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

const PIPE: usize = 256 * 1024;

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

/// Wraps a byte stream pair: returns the streams the service reads and writes, and the task
/// that pumps both directions (it ends once the client's input ends and the service closed
/// its output).
pub(crate) fn checked<R, W>(reader: R, writer: W) -> (DuplexStream, DuplexStream, JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (service_in, mut to_service) = tokio::io::duplex(PIPE);
    let (from_service, service_out) = tokio::io::duplex(PIPE);
    let writer = Arc::new(Mutex::new(writer));

    let input_writer = writer.clone();
    let input = async move {
        let mut reader = BufReader::new(reader);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
            if !body.iter().all(u8::is_ascii_whitespace) {
                if let Err(e) = serde_json::from_slice::<serde_json::Value>(body) {
                    let mut w = input_writer.lock().await;
                    let reply = format!("{}\n", parse_error(&e));
                    if w.write_all(reply.as_bytes()).await.is_err() || w.flush().await.is_err() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_line_that_is_not_json_gets_a_parse_error_and_the_next_line_passes() {
        let (client, server_side) = tokio::io::duplex(4096);
        let (server_read, server_write) = tokio::io::split(server_side);
        let (mut service_in, service_out, _pump) = checked(server_read, server_write);
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
