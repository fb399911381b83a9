//! What each case does (the crash storm apart: `storm`): a user's steps on the objects and the
//! faults scripted between them; each returns as soon as something is not as it must be.

use alibaba_mock::Change;
use ferroplane_apis::common::names::{
    CROSSPLANE_EXTERNAL_NAME, CROSSPLANE_PAUSED, CROSSPLANE_RECONCILE_REQUESTED_AT, EXTERNAL_NAME,
    REASON_RECONCILE_PAUSED,
};
use ferroplane_runtime::reasons::{CONNECTION_SECRET_NOT_CONTROLLED, EXTERNAL_RESOURCE_NOT_FOUND};
use serde_json::json;

use super::accounts::Account;
use super::case_run::{CaseRun, OBJECT};
use super::cases::{Case, FaultClass};
use super::objects::{self, ObjectSpec, Objects, is_ready, sync_failed_with};
use super::registration::{Build, Naming};
use crate::secrets;

type Outcome = Result<(), String>;

/// Runs the case's steps.
pub async fn run(run: &mut CaseRun<'_>) -> Outcome {
    match run.case {
        Case::Fault(class) => faults_at_every_step(run, class).await,
        Case::ImportMissing => import_missing(run).await,
        Case::SameNameUnowned => same_name_unowned(run).await,
        Case::SecretNameTaken => secret_name_taken(run).await,
        Case::DeleteWhileCreating => delete_while_creating(run).await,
        Case::DeleteWhileUpdating => delete_while_updating(run).await,
        Case::TwoNamespacesClaim => two_namespaces_claim(run).await,
        Case::ProviderConfigMoved => provider_config_moved(run).await,
        Case::CrossplaneAnnotations => crossplane_annotations(run).await,
        Case::CrashStorm => Err("the crash storm runs on its own cluster".into()),
    }
}

async fn wait_ready(run: &CaseRun<'_>, objects: &Objects) -> Outcome {
    objects
        .wait(OBJECT, "Ready=True", run.timeout, |o| {
            o.is_some_and(is_ready)
        })
        .await
        .map(drop)
}

/// Waits until the cloud shows the update and the object is Ready and Synced again.
async fn wait_updated(run: &CaseRun<'_>, build: &Build) -> Outcome {
    let Some(update) = run.registration.update else {
        return Ok(());
    };
    let want = (update.cloud_name)(build);
    let account = run.account.id.clone();
    let kind = run.registration.resource;
    crate::wait::eventually(format!("{}: the cloud shows the update", run.namespace))
        .within(run.timeout)
        .try_until_async(|| {
            std::future::ready(
                run.mock
                    .resources()
                    .iter()
                    .any(|r| r.account_id == account && r.kind == kind && r.name == want),
            )
        })
        .await
        .map_err(|e| e.to_string())?;
    run.objects
        .wait(
            OBJECT,
            "Ready and Synced after the update",
            run.timeout,
            |o| {
                o.is_some_and(|o| {
                    is_ready(o) && objects::condition(o, "Synced").is_some_and(|(s, _)| s == "True")
                })
            },
        )
        .await
        .map(drop)
}

async fn update(run: &CaseRun<'_>, build: &Build) -> Outcome {
    match run.registration.update {
        Some(update) => {
            let body = json!({"forProvider": (update.patch)(build)});
            run.objects.patch_spec(OBJECT, body).await
        }
        None => Ok(()),
    }
}

async fn faults_at_every_step(run: &mut CaseRun<'_>, class: FaultClass) -> Outcome {
    let steps = run.registration.steps;
    let build = run.build().await;
    run.inject(class, steps.first_look);
    run.inject(class, steps.create);
    let objects = run.objects.clone();
    let spec = run.spec();
    run.create(&objects, &build, &spec).await?;
    wait_ready(run, &objects).await?;
    run.consumed("first look and create", steps.create).await?;
    let account = run.account.id.clone();
    run.check_status(&objects, &account).await;

    run.inject(class, steps.poll);
    run.consumed("poll", steps.poll).await?;
    wait_ready(run, &objects).await?;
    run.check_status(&objects, &account).await;

    if run.registration.update.is_some() {
        run.inject(class, steps.update);
        update(run, &build).await?;
        wait_updated(run, &build).await?;
        run.consumed("update", steps.update).await?;
        run.check_status(&objects, &account).await;
    }

    run.inject(class, steps.delete);
    objects.delete_and_wait(OBJECT, run.timeout).await?;
    run.consumed("delete", steps.delete).await
}

async fn import_missing(run: &mut CaseRun<'_>) -> Outcome {
    let build = run.build().await;
    let spec = ObjectSpec {
        external_name: Some(run.registration.missing_external_name.into()),
        ..run.spec()
    };
    let objects = run.objects.clone();
    run.create(&objects, &build, &spec).await?;
    let cloud_named = run.registration.naming != Naming::UserChosen;
    objects
        .wait(
            OBJECT,
            "ExternalResourceNotFound (or Ready, for a user-chosen name)",
            run.timeout,
            |o| {
                o.is_some_and(|o| {
                    sync_failed_with(o, EXTERNAL_RESOURCE_NOT_FOUND)
                        || (!cloud_named && is_ready(o))
                })
            },
        )
        .await?;
    let account = run.account.id.clone();
    run.check_status(&objects, &account).await;
    objects.delete_and_wait(OBJECT, run.timeout).await
}

/// Leaves an orphan: a resource named like the case's object, made by an object of namespace
/// `{case}-seed` with policy Orphan that is then deleted. Returns the orphan's external name.
async fn orphan(run: &mut CaseRun<'_>, build: &Build) -> Result<String, String> {
    let namespace = format!("{}-seed", run.namespace);
    run.account
        .provide(&run.client, &namespace, "default", run.mock)
        .await;
    let seeds = Objects::new(&run.client, run.registration.kind, &namespace);
    let spec = ObjectSpec {
        orphan: true,
        ..run.spec()
    };
    seeds.create(run.registration, build, &spec).await?;
    let seed = seeds
        .wait(OBJECT, "the seed is Ready", run.timeout, |o| {
            o.is_some_and(is_ready)
        })
        .await?
        .and_then(|o| objects::external_name(&o))
        .ok_or("the seed has no external name")?;
    seeds.delete_and_wait(OBJECT, run.timeout).await?;
    run.tracked.since = run.ledger_mark();
    Ok(seed)
}

async fn same_name_unowned(run: &mut CaseRun<'_>) -> Outcome {
    let build = run.build().await;
    orphan(run, &build).await?;
    let objects = run.objects.clone();
    let spec = run.spec();
    run.create(&objects, &build, &spec).await?;
    let settled = objects
        .wait(OBJECT, "Ready or Synced=False", run.timeout, |o| {
            o.is_some_and(|o| {
                is_ready(o) || objects::condition(o, "Synced").is_some_and(|(s, _)| s == "False")
            })
        })
        .await?;
    let adopted = settled.as_ref().is_some_and(is_ready);
    objects.delete_and_wait(OBJECT, run.timeout).await?;
    if adopted {
        return Err("Ready with a resource it never created (not imported)".into());
    }
    Ok(())
}

async fn secret_name_taken(run: &mut CaseRun<'_>) -> Outcome {
    let build = run.build().await;
    let taken = "taken-secret";
    secrets::put(
        &run.client,
        &run.namespace,
        taken,
        &[("owner", "someone else")],
    )
    .await;
    let spec = ObjectSpec {
        connection_secret: Some(taken.into()),
        ..run.spec()
    };
    let objects = run.objects.clone();
    let mark = run.ledger_mark();
    let uid = run.create(&objects, &build, &spec).await?;
    objects
        .wait(
            OBJECT,
            "Synced=False: the Secret is not ours",
            run.timeout,
            |o| o.is_some_and(|o| sync_failed_with(o, CONNECTION_SECRET_NOT_CONTROLLED)),
        )
        .await?;
    // Creating nothing while the name is taken is right; a resource made meanwhile must be
    // described by the status.
    let created = run.entries_since(mark).iter().any(|e| {
        e.change == Change::Created
            && e.tags.get(ferroplane_runtime::UID_TAG).map(String::as_str) == Some(uid.as_str())
    });
    let status_id = run.registration.status_id;
    let described = objects
        .wait(
            OBJECT,
            "the status names the resource",
            run.timeout / 4,
            |o| {
                o.is_some_and(|o| {
                    let shown = o.data["status"]["atProvider"][status_id].as_str();
                    shown.is_some() && shown == objects::external_name(o).as_deref()
                })
            },
        )
        .await;
    if let (true, Err(why)) = (created, described) {
        run.tracked.audit.status_mismatches += 1;
        run.tracked
            .findings
            .push(format!("status: while the Secret is refused: {why}"));
    }
    secrets::delete(&run.client, &run.namespace, taken).await;
    wait_ready(run, &objects).await?;
    let account = run.account.id.clone();
    run.check_status(&objects, &account).await;
    objects.delete_and_wait(OBJECT, run.timeout).await
}

async fn delete_while_creating(run: &mut CaseRun<'_>) -> Outcome {
    let build = run.build().await;
    let objects = run.objects.clone();
    let mark = run.ledger_mark();
    let spec = run.spec();
    let uid = run.create(&objects, &build, &spec).await?;
    run.ledger_shows(mark, &uid, Change::Created).await?;
    objects.delete_and_wait(OBJECT, run.timeout).await
}

async fn delete_while_updating(run: &mut CaseRun<'_>) -> Outcome {
    let build = run.build().await;
    let objects = run.objects.clone();
    let spec = run.spec();
    let uid = run.create(&objects, &build, &spec).await?;
    wait_ready(run, &objects).await?;
    let mark = run.ledger_mark();
    update(run, &build).await?;
    run.ledger_shows(mark, &uid, Change::Modified).await?;
    objects.delete_and_wait(OBJECT, run.timeout).await
}

async fn two_namespaces_claim(run: &mut CaseRun<'_>) -> Outcome {
    let build = run.build().await;
    let target = orphan(run, &build).await?;
    let resource_id = run
        .mock
        .resources()
        .into_iter()
        .find(|r| {
            r.account_id == run.account.id
                && r.kind == run.registration.resource
                && (r.id == target || r.name == target)
        })
        .map(|r| r.id)
        .ok_or("the orphan is not in the cloud")?;
    run.tracked.claimable.insert(resource_id);
    let second = format!("{}-b", run.namespace);
    run.account
        .provide(&run.client, &second, "default", run.mock)
        .await;
    let others = Objects::new(&run.client, run.registration.kind, &second);
    let spec = ObjectSpec {
        external_name: Some(target),
        ..run.spec()
    };
    let objects = run.objects.clone();
    let (a, b) = futures::join!(
        objects.create(run.registration, &build, &spec),
        others.create(run.registration, &build, &spec)
    );
    for created in [a?, b?] {
        run.tracked.uids.insert(objects::uid(&created));
    }
    let settled = |o: Option<&kube::api::DynamicObject>| {
        o.is_some_and(|o| {
            is_ready(o) || objects::condition(o, "Synced").is_some_and(|(s, _)| s == "False")
        })
    };
    let (a, b) = futures::join!(
        objects.wait(OBJECT, "Ready or refused", run.timeout, settled),
        others.wait(OBJECT, "Ready or refused", run.timeout, settled)
    );
    let both_ready = a?.as_ref().is_some_and(is_ready) && b?.as_ref().is_some_and(is_ready);
    let (a, b) = futures::join!(
        objects.delete_and_wait(OBJECT, run.timeout),
        others.delete_and_wait(OBJECT, run.timeout)
    );
    a?;
    b?;
    if both_ready {
        return Err("both namespaces took the resource over".into());
    }
    Ok(())
}

async fn provider_config_moved(run: &mut CaseRun<'_>) -> Outcome {
    let build = run.build().await;
    let other = Account::open(run.mock);
    other
        .provide(&run.client, &run.namespace, "other", run.mock)
        .await;
    run.tracked.accounts.insert(other.id.clone());
    let objects = run.objects.clone();
    let spec = run.spec();
    let uid = run.create(&objects, &build, &spec).await?;
    wait_ready(run, &objects).await?;
    let mark = run.ledger_mark();
    objects
        .patch_spec(OBJECT, json!({"providerConfigRef": {"name": "other"}}))
        .await?;
    let other_account = other.id.clone();
    let moved = crate::wait::eventually(format!("{}: moved or refused", run.namespace))
        .within(run.timeout)
        .try_until_async(|| {
            let objects = objects.clone();
            let created_elsewhere = run.mock.ledger().into_iter().any(|e| {
                e.seq >= mark
                    && e.account_id == other_account
                    && e.change == Change::Created
                    && e.tags.get(ferroplane_runtime::UID_TAG) == Some(&uid)
            });
            async move {
                let refused = objects.get(OBJECT).await.is_some_and(|o| {
                    objects::condition(&o, "Synced").is_some_and(|(s, _)| s == "False")
                });
                created_elsewhere || refused
            }
        })
        .await;
    moved.map_err(|e| e.to_string())?;
    let created_elsewhere = run
        .mock
        .ledger()
        .into_iter()
        .any(|e| e.seq >= mark && e.account_id == other.id && e.change == Change::Created);
    if !created_elsewhere {
        // Refused: the user moves it back before deleting it (or orphans and imports it).
        objects
            .patch_spec(OBJECT, json!({"providerConfigRef": {"name": "default"}}))
            .await?;
        wait_ready(run, &objects).await?;
    }
    objects.delete_and_wait(OBJECT, run.timeout).await
}

/// Crossplane's spellings act as ferroplane's: paused by `crossplane.io/paused` nothing is
/// created; resumed, the resource is named under both keys and the reconcile request token is
/// echoed in `status.lastHandledReconcileAt`.
async fn crossplane_annotations(run: &mut CaseRun<'_>) -> Outcome {
    let build = run.build().await;
    let spec = ObjectSpec {
        annotations: vec![(CROSSPLANE_PAUSED.into(), "true".into())],
        ..run.spec()
    };
    let objects = run.objects.clone();
    let mark = run.ledger_mark();
    run.create(&objects, &build, &spec).await?;
    objects
        .wait(OBJECT, "Synced=False/ReconcilePaused", run.timeout, |o| {
            o.is_some_and(|o| sync_failed_with(o, REASON_RECONCILE_PAUSED))
        })
        .await?;
    // The case's account is its own: any change in it since the mark is this object's.
    if !run.entries_since(mark).is_empty() {
        return Err("the cloud was changed while crossplane.io/paused was \"true\"".into());
    }
    let token = "2026-11-29T10:00:00Z";
    objects
        .annotate(
            OBJECT,
            json!({CROSSPLANE_PAUSED: "false", CROSSPLANE_RECONCILE_REQUESTED_AT: token}),
        )
        .await?;
    let ready = objects
        .wait(OBJECT, "Ready with the token handled", run.timeout, |o| {
            o.is_some_and(|o| {
                is_ready(o) && o.data["status"]["lastHandledReconcileAt"] == json!(token)
            })
        })
        .await?
        .ok_or("gone while waiting")?;
    let annotations = ready.metadata.annotations.clone().unwrap_or_default();
    let ours = annotations.get(EXTERNAL_NAME);
    if ours.is_none() || ours != annotations.get(CROSSPLANE_EXTERNAL_NAME) {
        return Err(format!(
            "external name not written under both keys: {annotations:?}"
        ));
    }
    let account = run.account.id.clone();
    run.check_status(&objects, &account).await;
    objects.delete_and_wait(OBJECT, run.timeout).await
}
