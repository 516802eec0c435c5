//! The API key in a real Secret Service: this binary starts itself again inside
//! `dbus-run-session` with a `gnome-keyring-daemon` (secrets component, a fresh login keyring
//! unlocked with a throw-away password) in a private HOME, and runs its checks there. The key
//! a client sends is read from what the fake provider received (the `Authorization` header).
//! Without `dbus-run-session` or `gnome-keyring-daemon` it fails and says to run
//! scripts/setup.sh.

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use libtest_mimic::{Arguments, Failed, Trial};
use resolve_agent::fake::{FakeLlm, FakeReply};
use resolve_agent::llm::secret::{self, KeySource};
use resolve_agent::{AgentLoop, LlmClient, ModelSource, ProviderConfig};
use resolve_engine::{CancellationToken, PendingActionStore, ResolvePolicy, Session};

const INSIDE: &str = "RD_KEYRING_TEST_SESSION";
const KEY_ENV: &str = "RD_KEYRING_TEST_API_KEY";
const STORED: &str = "sk-stored-in-the-keyring-5e2a";

fn main() -> ExitCode {
    if std::env::var_os(INSIDE).is_none() {
        return run_inside_a_session();
    }
    let mut args = Arguments::from_args();
    // The trials set and restore environment variables: one at a time.
    args.test_threads = Some(1);
    let trials = vec![
        Trial::test("a_stored_key_is_sent_and_the_environment_wins", stored_key_is_sent_and_the_environment_wins),
        Trial::test("a_key_is_per_provider_and_can_be_forgotten", key_is_per_provider_and_can_be_forgotten),
        Trial::test("no_secret_service_is_a_clear_message_and_the_variable_works", no_secret_service),
    ];
    libtest_mimic::run(&args, trials).exit_code()
}

/// Starts this binary again under `dbus-run-session` with an unlocked gnome-keyring.
fn run_inside_a_session() -> ExitCode {
    for tool in ["dbus-run-session", "gnome-keyring-daemon"] {
        let found = std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()));
        if !found {
            eprintln!("keyring test: `{tool}` is missing; run scripts/setup.sh (packages dbus-daemon, gnome-keyring).");
            return ExitCode::from(1);
        }
    }
    let home = tempfile::tempdir().expect("a temporary HOME");
    let runtime = home.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let exe = std::env::current_exe().unwrap();
    // `--unlock` reads the new login keyring's password from stdin and returns once the
    // daemon is up; the checks run after it.
    let script = "printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec \"$0\" \"$@\"";
    let status = Command::new("dbus-run-session")
        .args(["--", "sh", "-c", script])
        .arg(&exe)
        .args(std::env::args_os().skip(1))
        .env(INSIDE, "1")
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove(KEY_ENV)
        .stdin(Stdio::null())
        .status()
        .expect("dbus-run-session starts");
    ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8)
}

fn check(condition: bool, message: impl Into<String>) -> Result<(), Failed> {
    if condition {
        Ok(())
    } else {
        Err(message.into().into())
    }
}

fn config_for(base_url: &str) -> ProviderConfig {
    let mut c = ProviderConfig::new(base_url, "fake-model");
    c.api_key_env = KEY_ENV.into();
    c.idle_timeout_secs = 30;
    c
}

fn stored_key_is_sent_and_the_environment_wins() -> Result<(), Failed> {
    let probe = config_for("http://127.0.0.1:1/v1");
    check(secret::stored_key(&probe)?.is_none(), "a fresh keyring holds no key")?;
    secret::store_key(&probe, STORED)?;
    let (key, source, problem) = secret::api_key(&probe);
    check(
        source == KeySource::Keyring && problem.is_none() && key.is_some(),
        format!("read back from the keyring: {source:?} {problem:?}"),
    )?;
    check(!format!("{key:?}").contains(STORED), "the key's Debug never shows it")?;

    // The stored key reaches the provider's header (stored for the fake provider's URL: the
    // account is the base URL).
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (sent, source) = rt.block_on(async {
        let fake = FakeLlm::start(vec![FakeReply::text("hello")]).await?;
        let config = config_for(&fake.base_url());
        secret::store_key(&config, STORED)?;
        let (key, source, _) = secret::api_key(&config);
        let client = LlmClient::with_key(config, key)?;
        let dir = tempfile::tempdir()?;
        let session = Session::with_store(dir.path(), ResolvePolicy::Agent, PendingActionStore::new())?;
        let mut agent = AgentLoop::new(ModelSource::Live(client));
        agent.run_turn(&session, "hi", CancellationToken::new(), |_| {}).await?;
        Ok::<_, Failed>((fake.requests().first().and_then(|r| r.authorization.clone()), source))
    })?;
    check(source == KeySource::Keyring, format!("{source:?}"))?;
    check(sent.as_deref() == Some(&format!("Bearer {STORED}")[..]), "the stored key is what the provider receives")?;

    // The variable wins when set.
    // SAFETY: this binary's trials run one at a time (`--test-threads` is 1 inside, see
    // `main`), and nothing else reads the environment meanwhile.
    unsafe { std::env::set_var(KEY_ENV, "sk-from-the-environment") };
    let (key, source, _) = secret::api_key(&probe);
    unsafe { std::env::remove_var(KEY_ENV) };
    check(source == KeySource::Environment && key.is_some(), format!("the environment wins: {source:?}"))?;
    Ok(())
}

fn key_is_per_provider_and_can_be_forgotten() -> Result<(), Failed> {
    let openai = config_for("https://api.example.test/v1");
    let local = config_for("http://127.0.0.1:11434/v1");
    secret::store_key(&openai, "sk-for-the-remote-provider")?;
    check(secret::stored_key(&local)?.is_none(), "a key saved for one provider is never sent to another")?;
    check(
        secret::stored_key(&config_for("https://api.example.test/v1/"))?.is_some(),
        "a trailing slash is the same provider",
    )?;
    check(secret::store_key(&openai, "  ").is_err(), "an empty key is refused")?;
    check(secret::forget_key(&openai)?, "the stored key is removed")?;
    check(secret::stored_key(&openai)?.is_none(), "and is gone")?;
    check(!secret::forget_key(&openai)?, "forgetting twice is no error")?;
    // Nothing was written as a file in the settings' folder: the only files are the
    // keyring daemon's own (under XDG_DATA_HOME/keyrings, encrypted).
    let home = std::env::var_os("HOME").unwrap();
    let files = walk(Path::new(&home));
    check(
        files.iter().all(|f| f.contains("/keyrings/") || f.contains("/run/")),
        format!("no file of ours holds a key: {files:?}"),
    )?;
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_default();
        check(
            !bytes.windows(b"sk-for-the-remote-provider".len()).any(|w| w == b"sk-for-the-remote-provider"),
            format!("{f} never holds the key in clear"),
        )?;
    }
    Ok(())
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else if p.is_file() {
                out.push(p.display().to_string());
            }
        }
    }
    out
}

fn no_secret_service() -> Result<(), Failed> {
    let saved_bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS");
    let saved_runtime = std::env::var_os("XDG_RUNTIME_DIR");
    // No session bus (a headless box, a session without one): the keyring is not asked
    // (libdbus would start a bus of its own) and says why.
    // SAFETY: one trial at a time (see `main`).
    unsafe {
        std::env::remove_var("DBUS_SESSION_BUS_ADDRESS");
        std::env::remove_var("XDG_RUNTIME_DIR");
    }
    let config = config_for("https://api.example.test/v1");
    let (key, source, problem) = secret::api_key(&config);
    let stored = secret::store_key(&config, "sk-nowhere");
    unsafe { std::env::set_var(KEY_ENV, "sk-env-still-works") };
    let (env_key, env_source, env_problem) = secret::api_key(&config);
    unsafe {
        std::env::remove_var(KEY_ENV);
        if let Some(v) = saved_bus {
            std::env::set_var("DBUS_SESSION_BUS_ADDRESS", v);
        }
        if let Some(v) = saved_runtime {
            std::env::set_var("XDG_RUNTIME_DIR", v);
        }
    }
    check(key.is_none() && source == KeySource::None, "no key without a keyring")?;
    let message = problem.map(|p| p.to_string()).unwrap_or_default();
    check(
        message.contains("no D-Bus session bus") && message.contains(&format!("{KEY_ENV} still works")),
        format!("a clear message: {message}"),
    )?;
    let refused = stored.err().map(|e| e.to_string()).unwrap_or_default();
    check(
        refused.contains("keyring") && !refused.contains("sk-nowhere"),
        format!("storing fails clearly, never echoing the key: {refused}"),
    )?;
    check(
        env_key.is_some() && env_source == KeySource::Environment && env_problem.is_none(),
        "the variable works without a keyring",
    )?;
    Ok(())
}
