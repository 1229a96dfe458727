//! `vitals-mcp`: the MCP server on stdio (default) and a few one-shot commands.
use clap::{Parser, Subcommand};
use rmcp::ServiceExt;
use std::sync::Arc;
use vitals::accounts::vault::VaultError;
use vitals::config::Config;
use vitals::engine::{Engine, Limits};
use vitals::mcp::{check_report, Vitals};

#[derive(Parser)]
#[command(name = "vitals-mcp", version, about = "Read-only MCP server for your own wearable data (sandbox until an account is connected)")]
struct Cli {
    /// Print what the vitals_check tool reports (credentials, reachability) as JSON and exit.
    #[arg(long)]
    check: bool,
    /// Print the tool names this server lists and exit.
    #[arg(long)]
    list_tools: bool,
    /// Keep nothing between answers: no memory cache for this process (a call can also send forget=true).
    #[arg(long)]
    forget: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Connect an account, as the provider connects: opens the browser and waits for the login (up
    /// to 10 minutes), or prompts for a key, or for email, password and one-time code.
    Auth {
        /// The provider, e.g. `oura`.
        provider: String,
        /// Print the login address and read the address the browser lands on from standard input
        /// (for SSH sessions and machines without a browser).
        #[arg(long)]
        manual: bool,
        /// Import the tokens another tool saved, from this folder (default: that tool's own folder).
        #[arg(long, num_args = 0..=1, value_name = "FOLDER")]
        import: Option<Option<std::path::PathBuf>>,
        /// The file a file connection reads (an Apple Health export): its path is remembered, the
        /// file is read in place and never copied.
        #[arg(long, value_name = "PATH")]
        file: Option<std::path::PathBuf>,
    },
    /// Disconnect: revoke the login at the provider (where it has a revoke endpoint) and delete the
    /// local tokens. Without a provider, every connected one.
    Forget { provider: Option<String> },
    /// Open the settings window (`vitals-settings`), where it is installed.
    Settings,
    /// Serve MCP over streamable HTTP (for Claude on the web and on phones), at a secret path or,
    /// with `--tenants`, one path per person.
    Serve(ServeArgs),
    /// The people a hosted server serves (`--tenants DIR` or VITALS_TENANTS_DIR).
    Tenant {
        #[command(subcommand)]
        action: TenantAction,
        /// The tenants folder (default: VITALS_TENANTS_DIR).
        #[arg(long, global = true, value_name = "DIR")]
        tenants: Option<std::path::PathBuf>,
        /// The public address the connector URLs are printed with (default: http://127.0.0.1:8790).
        #[arg(long, global = true, value_name = "URL")]
        public_url: Option<String>,
        /// The key the tenants' secrets are sealed under: a file outside the tenants folder, 0600
        /// (default: VITALS_TENANTS_KEY_FILE, else the key itself in VITALS_TENANTS_KEY).
        #[arg(long, global = true, value_name = "FILE")]
        key_file: Option<std::path::PathBuf>,
    },
    /// Save what a provider needs: its OAuth app credentials (`--client-id`; the client secret is
    /// read from standard input), or its API key (`--api-key -`: read from standard input).
    App {
        provider: String,
        #[arg(long)]
        client_id: Option<String>,
        /// `-`: read the key from standard input (never as an argument: it would stay in the shell's history).
        #[arg(long, value_name = "-")]
        api_key: Option<String>,
        /// How many days the key is valid, as chosen when it was created (shown by vitals_check).
        #[arg(long, requires = "api_key")]
        key_days: Option<u32>,
    },
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Listen here: `[ADDR:]PORT`, loopback unless --allow-remote (default 127.0.0.1:8790).
    #[arg(long, value_name = "[ADDR:]PORT", num_args = 0..=1, default_missing_value = vitals::hosted::DEFAULT_ADDR, required = true)]
    http: Option<String>,
    /// The MCP endpoint, `/<secret>/mcp`; without it a random one is made once and kept in the config folder.
    #[arg(long, value_name = "/SECRET/mcp")]
    path: Option<String>,
    /// Listen on an address other machines reach (TLS must be terminated in front; needs --public-url).
    #[arg(long)]
    allow_remote: bool,
    /// A browser origin allowed to call (e.g. https://app.example.com:443); others are 403. Repeatable.
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Require `Authorization: Bearer <token>`, the token being this file's first line.
    #[arg(long, value_name = "FILE")]
    bearer_file: Option<std::path::PathBuf>,
    /// No sessions: every request stands alone (for several instances behind one proxy).
    #[arg(long)]
    stateless: bool,
    /// The address clients reach this server at (https://host): its Host is admitted, and provider
    /// logins come back to <it>/callback/<provider> (with --tenants; the login's state says whose)
    /// or <it>/<secret>/callback/<provider> (one person at a secret path).
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// Serve one person per subfolder of DIR (default: VITALS_TENANTS_DIR, if set). Their provider
    /// logins are sealed under the key of --key-file (required).
    #[arg(long, value_name = "DIR")]
    tenants: Option<std::path::PathBuf>,
    /// With --tenants: the key each person's provider logins are sealed under, a 0600 file outside
    /// DIR (default: VITALS_TENANTS_KEY_FILE, else the key itself in VITALS_TENANTS_KEY). Make one
    /// with `vitals-mcp tenant new-key FILE`. Without it the server refuses to start.
    #[arg(long, value_name = "FILE")]
    key_file: Option<std::path::PathBuf>,
    /// With --tenants: anyone who reaches <public URL>/join may make their own tenant (off: only
    /// with an invitation from `vitals-mcp tenant invite`).
    #[arg(long)]
    open_signup: bool,
    /// With --tenants, what opens a person's data. `url` (default): their connector URL
    /// (<public URL>/u/<secret>/mcp), whoever holds it. `oauth`: MCP authorization only, at
    /// <public URL>/mcp with a token the person allowed on their page, each revocable there; no URL
    /// opens anything. `oauth-or-url`: both, at a risk: an assistant (or anyone who read its chat)
    /// that kept a connector URL still reads after the person revokes its tokens, until they make a
    /// new URL.
    #[arg(long, value_name = "url|oauth|oauth-or-url")]
    auth: Option<String>,
}

#[derive(Subcommand)]
enum TenantAction {
    /// A new person: prints their connector URL as the last line.
    Add,
    /// A one-time link that lets one person make their own tenant on `serve --http`'s pages;
    /// prints the link as the last line.
    Invite {
        /// How many days the link is valid (1 to 30).
        #[arg(long, default_value_t = 7)]
        days: u32,
    },
    /// A new person from a copy of a vitals config folder (never moved or changed); prints the URL.
    Import { dir: std::path::PathBuf },
    /// Every person's id.
    List,
    /// Remove a person and their saved logins; their URL is 404 at once.
    Delete { id: String },
    /// Write a new random key (64 hex digits) to FILE, 0600: give it to `serve --key-file`. FILE
    /// must not exist yet and must lie outside the tenants folder.
    NewKey { file: std::path::PathBuf },
    /// Re-seal every tenant's secrets under a new key (old or new after a crash, never a mix). The
    /// server must be stopped. The old key comes from --key-file (or the environment); the new one
    /// from --new-key-file, written fresh when that file does not exist yet.
    RotateKey {
        #[arg(long, value_name = "FILE")]
        new_key_file: std::path::PathBuf,
    },
}

/// Why a command did not do what was asked, by kind, from the layer that knew it; printed as it
/// reads, and the command exits 2.
#[derive(Debug, thiserror::Error)]
enum CliError {
    /// An argument cannot be used: the words name it and say what to send.
    #[error("{0}")]
    Usage(String),
    /// This machine could not do its part (no configuration folder, the settings app not found).
    #[error("{0}")]
    Local(String),
    #[error(transparent)]
    Serve(#[from] vitals::hosted::ServeError),
    #[error(transparent)]
    Folder(#[from] vitals::hosted::tenants::FolderError),
    #[error(transparent)]
    Vault(#[from] vitals::accounts::vault::VaultError),
    #[error(transparent)]
    Store(#[from] vitals::accounts::StoreError),
    #[error(transparent)]
    Connect(#[from] vitals::accounts::grant::ConnectError),
    #[error(transparent)]
    Forget(#[from] vitals::accounts::forget::ForgetError),
    #[error(transparent)]
    File(#[from] vitals::accounts::files::FileError),
}

/// The tenants folder with its key, for the commands that read or write a secret.
fn sealed(t: vitals::hosted::tenants::Tenants, key_file: Option<&std::path::Path>) -> Result<vitals::hosted::tenants::Tenants, VaultError> {
    let vault = vitals::accounts::vault::Vault::given(key_file, &t.dir, &t.config)?;
    Ok(t.sealed(Arc::new(vault)))
}

fn tenant_command(
    action: TenantAction,
    dir: Option<std::path::PathBuf>,
    public_url: Option<String>,
    key_file: Option<std::path::PathBuf>,
    config: &Arc<Config>,
) -> Result<String, CliError> {
    use vitals::hosted::tenants::{Tenants, TENANTS_ENV};
    if let TenantAction::NewKey { file } = &action {
        let v = vitals::accounts::vault::write_new_key(file, Tenants::from(dir, config).as_ref().map(|t| t.dir.as_path()))?;
        return Ok(format!(
            "Wrote a new key ({}) to {} (0600). Keep it outside the tenants folder and out of its backups:\n{}",
            v.id(),
            file.display(),
            file.display()
        ));
    }
    let t = Tenants::from(dir, config).ok_or_else(|| CliError::Usage(format!("no tenants folder: send --tenants DIR or set {TENANTS_ENV}")))?;
    let base = match public_url {
        Some(u) => vitals::hosted::parse_public_url(&u)?.as_str().trim_end_matches('/').to_string(),
        None => format!("http://{}", vitals::hosted::DEFAULT_ADDR),
    };
    let url =
        |id: &vitals::hosted::tenants::TenantId| vitals::hosted::hashed::new_url(&t, id).map(|s| format!("{base}{}", vitals::hosted::tenants::mcp_path(&s)));
    match action {
        TenantAction::Add => {
            let id = t.add()?;
            Ok(format!(
                "Added a tenant in {}. Their connector URL, shown only now (give it to them only; it is their key; with `serve --auth oauth` no URL opens anything, and they connect at {base}/mcp):\n{}",
                t.dir.join(id.as_str()).display(),
                url(&id)?
            ))
        }
        TenantAction::Invite { days } => {
            let (token, expires) = vitals::hosted::people::invite::Invitations::of(&t).make(days)?;
            Ok(format!(
                "An invitation for one person, valid until {} (give it to them only; once used or expired it opens nothing):\n{base}/join/{}",
                expires.strftime("%Y-%m-%d %H:%M UTC"),
                token.expose()
            ))
        }
        TenantAction::Import { dir } => {
            let t = sealed(t, key_file.as_deref())?;
            let (id, copied) = t.import(&dir)?;
            let u = vitals::hosted::hashed::new_url(&t, &id).map(|s| format!("{base}{}", vitals::hosted::tenants::mcp_path(&s)))?;
            Ok(format!(
                "Copied {} from {} (left as it was) into {}, sealed under key {}. Their connector URL, shown only now:\n{u}",
                copied.join(" and "),
                dir.display(),
                t.dir.join(id.as_str()).display(),
                t.vault.as_ref().map(|v| v.id()).unwrap_or_default(),
            ))
        }
        TenantAction::RotateKey { new_key_file } => {
            let t = sealed(t, key_file.as_deref())?;
            let new = match new_key_file.exists() {
                true => vitals::accounts::vault::Vault::from_file(&new_key_file, &t.dir)?,
                false => vitals::accounts::vault::write_new_key(&new_key_file, Some(&t.dir))?,
            };
            let old = t.vault.clone().expect("sealed");
            Ok(vitals::hosted::at_rest::rotate(&t, &old, &new).map(|said| format!("{said}\n{}", new_key_file.display()))?)
        }
        TenantAction::NewKey { .. } => unreachable!("answered above"),
        TenantAction::List => {
            let ids = t.list()?;
            Ok(match ids.is_empty() {
                true => format!("No tenants in {}.", t.dir.display()),
                false => ids.iter().map(|i| i.as_str().to_string()).collect::<Vec<_>>().join("\n"),
            })
        }
        TenantAction::Delete { id } => {
            vitals::hosted::people::person::remove_tenant(&t, &id)?;
            Ok(format!("Deleted tenant {id} and its saved logins; its URL answers 404 from now on."))
        }
    }
}

async fn serve_command(a: ServeArgs, config: Arc<Config>, limits: Limits) -> Result<String, CliError> {
    use vitals::hosted::{parse_addr, parse_public_url, serve, tenants::Tenants, ServeOptions};
    let opts = ServeOptions {
        addr: parse_addr(a.http.as_deref().unwrap_or(vitals::hosted::DEFAULT_ADDR))?,
        path: a.path,
        allow_remote: a.allow_remote,
        allow_origins: a.allow_origin,
        bearer: a.bearer_file.as_deref().map(vitals::hosted::guard::read_bearer).transpose().map_err(vitals::hosted::ServeError::from)?,
        stateless: a.stateless,
        public_url: a.public_url.as_deref().map(parse_public_url).transpose()?,
        tenants: Tenants::from(a.tenants, &config).map(|t| sealed(t, a.key_file.as_deref())).transpose()?,
        open_signup: a.open_signup,
        auth: vitals::hosted::AuthMode::parse(a.auth.as_deref())?,
        limits,
        config,
    };
    serve(opts, stop_signal()).await?;
    Ok(String::new())
}

/// SIGTERM (a service manager, a container runtime) or Ctrl-C.
async fn stop_signal() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("a SIGTERM handler");
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

/// A provider that can be connected, by name.
fn connectable(name: &str) -> Result<&'static vitals::catalog::ProviderSpec, CliError> {
    let all: Vec<_> = vitals::providers::specs().filter(|s| s.connection.connects()).collect();
    let names: Vec<&str> = all.iter().map(|s| s.name).collect();
    all.into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| CliError::Usage(format!("`provider`: {name:?} is not a provider that can be connected; send one of: {}", names.join(", "))))
}

/// What a command did, in words, and whether all of it is done: a login saved that cannot read
/// yet, or a login forgotten here but not at the provider, is said and exits 1 (a failure, 2).
struct Done {
    message: String,
    whole: bool,
}

impl From<String> for Done {
    fn from(message: String) -> Done {
        Done { message, whole: true }
    }
}

/// A login saved, said, and whole only when it can read now.
fn connected(c: vitals::accounts::grant::Connected, then: &str) -> Done {
    Done { whole: c.pending.is_none(), message: format!("{}{then}", c.summary()) }
}

async fn run_command(c: Command, config: Arc<Config>, limits: Limits) -> Result<Done, CliError> {
    use vitals::accounts::login::{login, How};
    // This machine's user, with the settings read at start: every command below reads them from here.
    let home = vitals::accounts::Home::local(config.clone());
    match c {
        Command::Serve(a) => serve_command(a, config, limits).await.map(Done::from),
        Command::Tenant { action, tenants, public_url, key_file } => tenant_command(action, tenants, public_url, key_file, &config).map(Done::from),
        Command::Auth { provider, manual, import, file } => {
            let p = connectable(&provider)?;
            if let Some(f) = p.connection.file() {
                let path = file.ok_or_else(|| CliError::Usage(vitals::accounts::grant::file_help(p, f)))?;
                let abs = vitals::accounts::save_file(&home, p.name, &path)?;
                return Ok(format!(
                    "{} reads {} (its path is saved; the file is read in place, never copied). Claude picks this up on its next request.",
                    p.display,
                    abs.display()
                )
                .into());
            }
            if file.is_some() {
                return Err(CliError::Usage(format!("`--file`: {} is not connected with a file; run `vitals-mcp auth {}`.", p.display, p.name)));
            }
            let how = match (import, manual) {
                (Some(dir), _) => How::Import(dir),
                (None, true) => How::Manual,
                (None, false) => How::Interactive,
            };
            let c = login(p, how, &home).await?;
            Ok(connected(c, " Claude picks this up on its next request."))
        }
        Command::Forget { provider } => {
            let targets: Vec<&'static vitals::catalog::ProviderSpec> = match provider {
                Some(name) => vec![connectable(&name)?],
                None => vitals::providers::specs().filter(|s| s.connection.connects()).collect(),
            };
            let (mut lines, mut whole) = (Vec::new(), true);
            for p in targets {
                let f = vitals::accounts::forget::forget_in(p, &home).await?;
                whole &= f.complete;
                lines.push(f.message);
            }
            Ok(Done { message: lines.join("\n"), whole })
        }
        Command::Settings => {
            let app = settings_app().ok_or_else(|| {
                CliError::Local(
                    "the settings app (vitals-settings) is not installed next to vitals-mcp or on PATH. Build it with \
                 `cargo build --release -p vitals-settings`, or give app credentials with `vitals-mcp app <provider>` and connect with \
                 `vitals-mcp auth <provider>`."
                        .to_string(),
                )
            })?;
            std::process::Command::new(&app).spawn().map_err(|e| CliError::Local(format!("{} could not be started: {e}", app.display())))?;
            Ok(format!("Opened the vitals settings window ({}).", app.display()).into())
        }
        Command::App { provider, client_id, api_key, key_days } => {
            let p = connectable(&provider)?;
            match (p.connection, client_id, api_key) {
                (vitals::connection::Connection::ApiKey(_), None, Some(dash)) => {
                    if dash != "-" {
                        return Err(CliError::Usage(
                            "`--api-key` takes `-` and reads the key from standard input: a key given as an argument stays in the \
                             shell's history. Run `vitals-mcp app <provider> --api-key -` and paste the key."
                                .into(),
                        ));
                    }
                    let key = vitals::accounts::login::secret(&format!("Paste the {} key and press Enter (it is not shown again): ", p.display))?;
                    let c = vitals::accounts::grant::save_key_in(p, key, key_days, "vitals-mcp app", &home).await?;
                    Ok(connected(c, ""))
                }
                (vitals::connection::Connection::ApiKey(k), _, _) => Err(CliError::Usage(format!(
                    "{} connects with a key: run `vitals-mcp app {} --api-key -` and paste it. {}",
                    p.display, p.name, k.create_help
                ))),
                (vitals::connection::Connection::OAuth(_), Some(id), None) => save_app(p, &id, &config).map(Done::from),
                (vitals::connection::Connection::OAuth(_), _, _) => {
                    Err(CliError::Usage(format!("{} connects with an OAuth app: send `--client-id <ID>` (the secret is read from standard input).", p.display)))
                }
                _ => Err(CliError::Usage(format!("{} has no app credentials or key to save; connect it with `vitals-mcp auth {}`.", p.display, p.name))),
            }
        }
    }
}

fn save_app(p: &vitals::catalog::ProviderSpec, client_id: &str, config: &Config) -> Result<String, CliError> {
    let id = client_id.trim();
    if id.is_empty() {
        return Err(CliError::Usage("`--client-id` is empty; send the client ID from the developer portal".into()));
    }
    let secret = vitals::accounts::login::secret(&format!("Paste the {} client secret and press Enter (it is not shown again): ", p.display))?;
    if secret.is_empty() {
        return Err(CliError::Usage("the client secret is empty; paste the secret from the developer portal".into()));
    }
    let dir = vitals::accounts::default_dir(config).ok_or(vitals::accounts::StoreError::NoFolder)?;
    let s = vitals::accounts::Settings::at(dir);
    s.save(p.name, id, &secret)?;
    Ok(format!("Saved the {} app credentials in {} (secret of {} characters).", p.display, s.path().display(), secret.len()))
}

/// `vitals-settings` beside this binary (an install puts them together), else on PATH.
fn settings_app() -> Option<std::path::PathBuf> {
    let name = format!("vitals-settings{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe().ok().and_then(|e| e.parent().map(|d| d.join(&name)));
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).map(|d| d.join(&name));
    beside.into_iter().chain(on_path).find(|p| p.is_file())
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // stdout is the MCP channel: logs go to stderr only.
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let level = match std::env::var("VITALS_LOG").as_deref() {
        Ok("debug") => tracing::Level::DEBUG,
        Ok("warn") => tracing::Level::WARN,
        _ => tracing::Level::INFO,
    };
    // rmcp at debug logs every message whole: a tool's answer can name a tenant's URL, so the SDK
    // says no more than info whatever VITALS_LOG asks (our own lines never carry a secret).
    let targets = tracing_subscriber::filter::Targets::new().with_default(level).with_target("rmcp", level.min(tracing::Level::INFO));
    // A tenant's id never reaches the log whole (a path can carry it): see `secret::redact_ids`.
    let writer = || vitals::secret::IdsRedacted(std::io::stderr());
    tracing_subscriber::fmt().with_writer(writer).with_ansi(false).with_max_level(level).finish().with(targets).init();
    let cli = Cli::parse();
    // The environment is read here, once; everything below is handed what it needs of it.
    let config = Arc::new(Config::from_env());
    let mut limits = Limits::from_config(&config);
    if cli.forget {
        limits.cache_bytes = 0;
    }
    if let Some(c) = cli.command {
        let tenant = matches!(c, Command::Tenant { .. });
        return match run_command(c, config, limits).await {
            // A tenant command's last line is what a script takes (the URL): on stdout.
            Ok(done) if tenant => {
                println!("{}", done.message);
                std::process::ExitCode::SUCCESS
            }
            Ok(done) => {
                if !done.message.is_empty() {
                    eprintln!("{}", done.message);
                }
                // Done in part: the words say what is left, and the status says so to a script.
                if done.whole {
                    std::process::ExitCode::SUCCESS
                } else {
                    std::process::ExitCode::FAILURE
                }
            }
            Err(e) => {
                eprintln!("vitals-mcp: {e}");
                std::process::ExitCode::from(2)
            }
        };
    }
    let engine = Arc::new(Engine::new(vitals::providers::all(&config), config.clone(), limits));
    if cli.check {
        let report = check_report(&engine).await;
        println!("{}", serde_json::to_string_pretty(&report).expect("report serialises"));
        if !report.all_answered() {
            let failed: Vec<&str> = report.providers.iter().filter(|p| p.answered_by == "nobody").map(|p| p.provider.as_str()).collect();
            eprintln!("vitals-mcp --check: {} did not answer (api_detail says why)", failed.join(", "));
            return std::process::ExitCode::FAILURE;
        }
        return std::process::ExitCode::SUCCESS;
    }
    if cli.list_tools {
        for t in Vitals::new(engine).tool_names() {
            println!("{t}");
        }
        return std::process::ExitCode::SUCCESS;
    }
    let (stdin, stdout) = rmcp::transport::stdio();
    match Vitals::new(engine).serve(vitals::mcp::stdio::guarded(stdin, stdout)).await {
        Ok(running) => {
            let _ = running.waiting().await;
            // The client is gone. A login still waiting for its browser holds a blocking thread,
            // and the runtime would wait for it on the way out (up to 10 minutes): leave now.
            std::process::exit(0)
        }
        Err(e) => {
            tracing::error!("MCP session failed to start: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
