//! The plan as people read it (one line per object, its changes indented under it, a summary)
//! and as CI reads it (`-o json`, schema in README "Plan").

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use super::outcome::{Action, ObjectPlan, SCHEMA_VERSION};

/// The whole `-o json` document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Document<'a> {
    schema_version: u32,
    objects: &'a [ObjectPlan],
    /// Objects per action.
    summary: BTreeMap<Action, usize>,
    /// `Kind name` of the manifests' other objects, not planned.
    skipped: &'a [String],
}

fn summary(plans: &[ObjectPlan]) -> BTreeMap<Action, usize> {
    let mut counts = BTreeMap::new();
    for plan in plans {
        *counts.entry(plan.action).or_default() += 1;
    }
    counts
}

pub fn json(plans: &[ObjectPlan], skipped: &[String], out: &mut impl Write) -> anyhow::Result<()> {
    let document = Document {
        schema_version: SCHEMA_VERSION,
        objects: plans,
        summary: summary(plans),
        skipped,
    };
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)?;
    Ok(())
}

pub fn table(plans: &[ObjectPlan], skipped: &[String], out: &mut impl Write) -> anyhow::Result<()> {
    let width = |f: fn(&ObjectPlan) -> usize, title: &str| {
        plans.iter().map(f).max().unwrap_or(0).max(title.len())
    };
    let ns = width(|p| p.namespace.len(), "NAMESPACE");
    let name = width(|p| p.name.len(), "NAME");
    let kind = width(|p| p.kind.len(), "KIND");
    let id = width(
        |p| p.external_name.as_deref().map_or(1, str::len),
        "EXTERNAL NAME",
    );
    writeln!(
        out,
        "{:ns$}  {:kind$}  {:name$}  {:id$}  ACTION",
        "NAMESPACE", "KIND", "NAME", "EXTERNAL NAME"
    )?;
    for plan in plans {
        let instance = plan.external_name.as_deref().unwrap_or("-");
        let mut action = plan.action.words().to_owned();
        if let Some(permitted) = plan.restart_permitted {
            action.push_str(if permitted {
                " (allowed)"
            } else {
                " (waits: allowRestart is not set)"
            });
        }
        writeln!(
            out,
            "{:ns$}  {:kind$}  {:name$}  {instance:id$}  {action}",
            plan.namespace, plan.kind, plan.name
        )?;
        if let Some(launch) = &plan.launch {
            let zone = if launch.zone_id.is_empty() {
                "the vSwitch's zone"
            } else {
                &launch.zone_id
            };
            writeln!(
                out,
                "    RunInstances in {} ({zone}): {} from {}",
                launch.region_id, launch.instance_type, launch.image_id
            )?;
        }
        for change in &plan.changes {
            // No action: an immutable field's, or a fleet member's change the member's own
            // reconcile carries to the cloud.
            let action = if change.action.is_empty() {
                change.class
            } else {
                change.action
            };
            writeln!(out, "    {}  [{action}]", change.description)?;
        }
        if let Some(blocked) = &plan.blocked {
            writeln!(out, "    {}: {}", blocked.reason, blocked.message)?;
        }
        if let Some(message) = &plan.admission {
            writeln!(out, "    admission: {message}")?;
        }
        if let Some(note) = &plan.note {
            writeln!(out, "    note: {note}")?;
        }
    }
    let counts: Vec<String> = summary(plans)
        .iter()
        .map(|(action, n)| format!("{n} {}", action.words()))
        .collect();
    writeln!(
        out,
        "Plan: {} object(s): {}.",
        plans.len(),
        counts.join(", ")
    )?;
    if !skipped.is_empty() {
        writeln!(
            out,
            "Not planned (kinds this version does not plan): {}.",
            skipped.join(", ")
        )?;
    }
    Ok(())
}
