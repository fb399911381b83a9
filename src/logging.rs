//! `tracing` setup: `--log-format pretty|json`, filtered by `RUST_LOG` (default `info`).

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable, coloured when stderr is a terminal.
    Pretty,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Installs the global subscriber. Logs go to stderr so that stdout stays machine-readable
/// (`ferroplane crds`, `ferroplane ecs call`, `ferroplane ecs-mock` print data there).
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Pretty => builder.init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
}
