//! `dhat-top FILE [N]`: the N (default 30) allocation sites of a dhat heap profile
//! (`ferroplane-bench --heap-profile`) that held the most bytes at the profile's peak (t-gmax),
//! each named by its first frames outside the allocator, collections and serde's machinery,
//! and the same bytes summed by the crate of the first such frame.

use std::collections::BTreeMap;

use anyhow::{Context as _, bail};
use serde::Deserialize;

#[derive(Deserialize)]
struct Profile {
    /// Program points: one per distinct allocation stack.
    pps: Vec<ProgramPoint>,
    /// Frame descriptions, indexed by `ProgramPoint::fs`.
    ftbl: Vec<String>,
}

#[derive(Deserialize)]
struct ProgramPoint {
    /// Bytes live at the peak.
    gb: u64,
    /// Blocks live at the peak.
    gbk: u64,
    fs: Vec<usize>,
}

/// Frames that say how, not who: the allocator, std's collections and formatting, serde's
/// generic machinery.
const PLUMBING: &[&str] = &[
    "[root]",
    "dhat::",
    "alloc::",
    "core::",
    "std::",
    "hashbrown::",
    "serde::",
    "serde_core::",
    "serde_json::",
    "bytes::",
];

/// A frame as `function (file:line)`, without the address.
fn function(frame: &str) -> &str {
    frame.split_once(": ").map_or(frame, |(_, f)| f)
}

/// A function without the ` (file:line:col)` a frame ends with.
fn without_location(function: &str) -> &str {
    function.rsplit_once(" (").map_or(function, |(f, _)| f)
}

fn is_plumbing(frame: &str) -> bool {
    let f = function(frame)
        .trim_start_matches('<')
        .trim_start_matches("&mut ")
        .trim_start_matches('&');
    PLUMBING.iter().any(|p| f.starts_with(p))
}

/// The crate a function belongs to: its path's first segment (`<T as path::Trait>` → `path`).
fn crate_of(frame: &str) -> String {
    let f = function(frame).trim_start_matches('<');
    f.split("::").next().unwrap_or(f).to_owned()
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        bail!("usage: dhat-top FILE [N]");
    };
    let top: usize = match args.next() {
        Some(n) => n.parse().context("N must be a number")?,
        None => 30,
    };
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    let profile: Profile =
        serde_json::from_str(&text).with_context(|| format!("parsing {path}"))?;
    let total: u64 = profile.pps.iter().map(|p| p.gb).sum();
    let blocks: u64 = profile.pps.iter().map(|p| p.gbk).sum();
    println!(
        "at the peak: {:.1} MiB in {blocks} blocks",
        total as f64 / 1_048_576.0
    );
    let named = |pp: &ProgramPoint| -> Vec<&str> {
        pp.fs
            .iter()
            .filter_map(|&i| profile.ftbl.get(i).map(String::as_str))
            .filter(|f| !is_plumbing(f))
            .take(4)
            .collect()
    };
    let mut by_crate: BTreeMap<String, u64> = BTreeMap::new();
    for pp in &profile.pps {
        let first = named(pp)
            .first()
            .map_or_else(|| "?".to_owned(), |f| crate_of(f));
        *by_crate.entry(first).or_default() += pp.gb;
    }
    let mut by_function: BTreeMap<&str, u64> = BTreeMap::new();
    for pp in &profile.pps {
        let first = named(pp)
            .first()
            .map_or("?", |f| without_location(function(f)));
        *by_function.entry(first).or_default() += pp.gb;
    }
    let share = |bytes: u64| {
        format!(
            "{:>8.1} KiB {:>5.1} %",
            bytes as f64 / 1024.0,
            100.0 * bytes as f64 / total.max(1) as f64
        )
    };
    let mut crates: Vec<_> = by_crate.into_iter().collect();
    crates.sort_by_key(|c| std::cmp::Reverse(c.1));
    println!("\nby crate of the first frame that is not plumbing:");
    for (name, bytes) in crates.iter().take(15) {
        println!("  {}  {name}", share(*bytes));
    }
    let mut functions: Vec<_> = by_function.into_iter().collect();
    functions.sort_by_key(|f| std::cmp::Reverse(f.1));
    println!("\nby that frame's function:");
    for (name, bytes) in functions.iter().take(top) {
        println!("  {}  {name}", share(*bytes));
    }
    let mut pps: Vec<&ProgramPoint> = profile.pps.iter().filter(|p| p.gb > 0).collect();
    pps.sort_by_key(|p| std::cmp::Reverse(p.gb));
    println!("\ntop {top} allocation sites:");
    for pp in pps.into_iter().take(top) {
        println!("{} in {} blocks", share(pp.gb), pp.gbk);
        for frame in named(pp) {
            println!("    {}", function(frame));
        }
    }
    Ok(())
}
