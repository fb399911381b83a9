//! `tracing` setup: `--log-format pretty|json`, filtered by `RUST_LOG` (default `info`).

use std::ffi::OsStr;
use std::io::IsTerminal as _;

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
/// (`ferroplane crds`, `ferroplane cloud call` (`ecs call`), `ferroplane ecs-mock` print data there).
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let colour = use_colour(
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
        std::env::var_os("TERM").as_deref(),
    );
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour);
    match format {
        LogFormat::Pretty => builder.init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
}

/// Whether pretty logs carry ANSI colour codes: only on a terminal, and not when `NO_COLOR` is
/// set to anything non-empty (<https://no-color.org>) or `TERM` is `dumb`. A file, a pipe or a
/// log collector gets plain text.
pub fn use_colour(
    stderr_is_terminal: bool,
    no_color: Option<&OsStr>,
    term: Option<&OsStr>,
) -> bool {
    stderr_is_terminal && no_color.is_none_or(OsStr::is_empty) && term.is_none_or(|t| t != "dumb")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_that_wants_it() {
        let os = |s: &'static str| Some(OsStr::new(s));
        assert!(use_colour(true, None, os("xterm-256color")));
        assert!(use_colour(true, os(""), None), "an empty NO_COLOR is unset");
        assert!(
            !use_colour(false, None, os("xterm-256color")),
            "a pipe or a file"
        );
        assert!(!use_colour(true, os("1"), os("xterm")));
        assert!(!use_colour(true, None, os("dumb")));
    }
}
