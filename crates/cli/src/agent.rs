//! `rdesk agent`: the LLM agent loop without a window — live against an OpenAI-compatible
//! provider, or replaying a recorded conversation.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use resolve_agent::{
    AgentError, AgentEvent, AgentLoop, LlmClient, ModelSource, ProviderConfig, Replay, TurnOutcome, DEFAULT_MAX_STEPS,
};
use resolve_engine::{CancellationToken, ResolvePolicy};

pub const AGENT_HELP: &str = "\
Run one agent turn against a fresh session on --workspace: live (--prompt with a provider)
or replayed (--replay FILE, no model needed).

Live: POST {base-url}/chat/completions (OpenAI-compatible: OpenAI, OpenRouter, Ollama,
llama.cpp, vLLM, LM Studio...), streamed. --base-url and --model default to the saved agent
settings ($XDG_CONFIG_HOME or ~/.config, resolve-desk/agent.json). The API key is read from
the variable --api-key-env names (default OPENAI_API_KEY); when it is unset no key is sent,
which local servers accept. The key is never printed.

Replay: FILE is JSON Lines, one assistant turn per model request:
  {\"content\": \"text\", \"tool_calls\": [{\"name\": \"ast_edit\", \"arguments\": {...}}]}
A turn without tool_calls ends the run. Blank lines and lines starting with # are skipped.

Policy: `agent` (default here: there is no person at a terminal) lets the model's own resolve
apply or discard. `human`: when the model calls resolve, the run stops without deciding,
prints the pending stack in its last line and exits 3; nothing is applied.

Output: one JSON line per event: assistant_message, tool_call_started, waiting_for_person,
tool_result (each with \"pending\": the stack after it, top first), then turn_done
{\"outcome\", \"steps\", \"pending\"}. Text is printed whole in assistant_message lines (not
as it streams); retries and errors go to stderr.

Exit status: 0 the model answered; 3 it waits for a person (--policy human); 130 cancelled
(Ctrl+C); 2 bad input (workspace, replay file, settings, a refused API key, an unknown
model); 1 any other failure (provider unreachable, malformed answer, step limit).";

#[derive(Clone, Copy, ValueEnum)]
pub enum PolicyArg {
    Agent,
    Human,
}

#[derive(Args)]
pub struct AgentArgs {
    /// What to ask the model (required unless --replay).
    #[arg(long, required_unless_present = "replay")]
    prompt: Option<String>,
    /// Replay this recorded conversation instead of asking a model.
    #[arg(long, conflicts_with_all = ["base_url", "model", "api_key_env"])]
    replay: Option<PathBuf>,
    /// The workspace folder the session works in.
    #[arg(long, short = 'w')]
    workspace: PathBuf,
    /// Provider API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`.
    #[arg(long)]
    base_url: Option<String>,
    /// Model name, e.g. gpt-4o-mini or llama3.1.
    #[arg(long)]
    model: Option<String>,
    /// Who decides pending actions.
    #[arg(long, value_enum, default_value = "agent")]
    policy: PolicyArg,
    /// The environment variable holding the API key (not the key itself).
    #[arg(long)]
    api_key_env: Option<String>,
    /// Model requests before the turn is stopped.
    #[arg(long, default_value_t = DEFAULT_MAX_STEPS)]
    max_steps: usize,
    /// With --policy human: how long a `resolve` waits for a decision before the run stops
    /// with exit 3 (0, the default: at once). Nobody else can decide in this command's own
    /// session, so a wait only delays the stop.
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    resolve_wait: u64,
}

pub async fn run(args: AgentArgs) -> ExitCode {
    let policy = match args.policy {
        PolicyArg::Agent => ResolvePolicy::Agent,
        PolicyArg::Human => ResolvePolicy::Human,
    };
    let desk = match crate::open_desk(&args.workspace, policy, args.api_key_env.iter().cloned().collect()).await {
        Ok(d) => d,
        Err(e) => return fail(2, &e),
    };
    let session = desk.session();
    let model = match model_source(&args) {
        Ok(m) => m,
        Err(e) => return fail(2, &e),
    };
    let prompt = args.prompt.clone().unwrap_or_else(|| "(replayed conversation)".into());
    let mut agent = AgentLoop::new(model)
        .with_max_steps(args.max_steps)
        .stop_when_waiting(policy == ResolvePolicy::Human)
        .with_resolve_wait(std::time::Duration::from_secs(args.resolve_wait));

    let cancel = CancellationToken::new();
    if let Err(e) = watch_ctrl_c(cancel.clone()) {
        return fail(1, &format!("cannot watch for Ctrl+C: {e}"));
    }
    let mut write_error = None;
    let result = agent
        .run_turn(session, &prompt, cancel, |event| {
            if let Err(e) = print_event(&event) {
                write_error.get_or_insert(e);
            }
        })
        .await;
    if let Some(e) = write_error {
        return fail(1, &format!("cannot write the output: {e}"));
    }
    match result {
        Ok(TurnOutcome::WaitingForPerson) => ExitCode::from(3),
        Ok(_) => ExitCode::SUCCESS,
        Err(AgentError::Cancelled) => {
            eprintln!("rdesk: cancelled; nothing pending was applied.");
            ExitCode::from(130)
        }
        Err(e) => {
            let code = match e.code() {
                "unauthorized" | "model_not_found" | "replay_malformed" | "replay_exhausted" | "config" => 2,
                _ => 1,
            };
            ExitCode::from(code)
        }
    }
}

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("rdesk: {}", crate::terminal::safe(message));
    ExitCode::from(code)
}

fn model_source(args: &AgentArgs) -> Result<ModelSource, String> {
    if let Some(path) = &args.replay {
        return Replay::load(path).map(ModelSource::Replay).map_err(|e| e.to_string());
    }
    let mut config = match ProviderConfig::user_config_dir() {
        Some(dir) => ProviderConfig::load(&dir).map_err(|e| e.to_string())?,
        None => ProviderConfig::default(),
    };
    if let Some(url) = &args.base_url {
        config.base_url = url.clone();
    }
    if let Some(model) = &args.model {
        config.model = model.clone();
    }
    if let Some(env) = &args.api_key_env {
        config.api_key_env = env.clone();
    }
    let client = LlmClient::new(config).map_err(|e| e.to_string())?;
    if !client.has_key() {
        eprintln!(
            "rdesk: {} is not set, so no API key is sent (fine for a local server; set it for a hosted provider).",
            client.config().api_key_env
        );
    }
    Ok(ModelSource::Live(client))
}

/// Prints the loggable events as JSON lines on stdout; text, retries and errors on stderr.
fn print_event(event: &AgentEvent) -> std::io::Result<()> {
    match event {
        AgentEvent::TextDelta { .. } => Ok(()),
        AgentEvent::Retrying { attempt, max_attempts, delay_ms, status, .. } => {
            eprintln!(
                "rdesk: the provider answered {status}; attempt {attempt} of {max_attempts}, retrying in {delay_ms} ms"
            );
            Ok(())
        }
        AgentEvent::Error { message, .. } => {
            eprintln!("rdesk: {}", crate::terminal::safe(message));
            Ok(())
        }
        _ => {
            let line = serde_json::to_string(event).map_err(std::io::Error::other)?;
            let mut out = std::io::stdout();
            writeln!(out, "{line}")?;
            out.flush()
        }
    }
}

/// Cancels `cancel` on Ctrl+C (SIGINT). The handler is in place when this returns.
fn watch_ctrl_c(cancel: CancellationToken) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        tokio::spawn(async move {
            if sigint.recv().await.is_some() {
                cancel.cancel();
            }
        });
    }
    #[cfg(not(unix))]
    {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        });
    }
    Ok(())
}
