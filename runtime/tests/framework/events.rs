//! The event recorder against the sandbox: like events fold into one event's series, other
//! reasons or objects get their own, a series shows its latest note, and a series whose event is
//! gone starts over.

use ferroplane_runtime::events::EventRecorder;
use ferroplane_testkit::TestCluster;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as KubeEvent;
use kube::api::{Api, DeleteParams, ListParams};
use kube::runtime::events::{Event, EventType, Reporter};

fn reference(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("test.ferroplane.io/v1".into()),
        kind: Some("Widget".into()),
        name: Some(name.into()),
        namespace: Some("default".into()),
        uid: Some(format!("uid-{name}")),
        ..ObjectReference::default()
    }
}

fn event(reason: &str, note: &str) -> Event {
    Event {
        type_: EventType::Warning,
        reason: reason.into(),
        note: Some(note.into()),
        action: "Observe".into(),
        secondary: None,
    }
}

async fn events_of(api: &Api<KubeEvent>, object: &str) -> Vec<KubeEvent> {
    let mut events: Vec<KubeEvent> = api
        .list(&ListParams::default())
        .await
        .expect("list events")
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(object))
        .collect();
    events.sort_by_key(|e| e.reason.clone());
    events
}

#[tokio::test]
async fn like_events_fold_into_a_series_until_their_event_is_gone() {
    let cluster = TestCluster::start().await;
    let client = cluster.client();
    let recorder = EventRecorder::new(
        client.clone(),
        Reporter {
            controller: "ferroplane".into(),
            instance: Some("replica-0".into()),
        },
    );
    let api: Api<KubeEvent> = Api::namespaced(client, "default");

    recorder
        .publish(&event("CannotObserve", "first"), &reference("a"))
        .await
        .expect("publish");
    let first = events_of(&api, "a").await;
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].note.as_deref(), Some("first"));
    assert_eq!(first[0].type_.as_deref(), Some("Warning"));
    assert_eq!(first[0].reporting_controller.as_deref(), Some("ferroplane"));
    assert_eq!(first[0].reporting_instance.as_deref(), Some("replica-0"));
    assert!(first[0].series.is_none());
    assert!(first[0].event_time.is_some());

    for _ in 0..2 {
        recorder
            .publish(&event("CannotObserve", "first"), &reference("a"))
            .await
            .expect("publish");
    }
    let folded = events_of(&api, "a").await;
    assert_eq!(folded.len(), 1, "repeats patch the first event");
    let series = folded[0].series.as_ref().expect("series");
    assert_eq!(series.count, 3);
    assert_eq!(folded[0].note.as_deref(), Some("first"));

    // kube-apiserver keeps an event's note as it was created: a new message is a new event, so
    // the latest reason stays readable.
    recorder
        .publish(&event("CannotObserve", "second"), &reference("a"))
        .await
        .expect("a changed message publishes");
    let notes: Vec<Option<String>> = events_of(&api, "a")
        .await
        .into_iter()
        .map(|e| e.note)
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes.contains(&Some("second".to_owned())), "{notes:?}");

    // Another reason, or the same reason about another object: events of their own.
    recorder
        .publish(&event("CannotUpdate", "x"), &reference("a"))
        .await
        .expect("publish");
    recorder
        .publish(&event("CannotObserve", "y"), &reference("b"))
        .await
        .expect("publish");
    assert_eq!(events_of(&api, "a").await.len(), 3);
    assert_eq!(events_of(&api, "b").await.len(), 1);

    // The event expired (deleted here): the next like event starts a new one.
    let name = folded[0].metadata.name.clone().expect("name");
    api.delete(&name, &DeleteParams::default())
        .await
        .expect("delete event");
    recorder
        .publish(&event("CannotObserve", "first"), &reference("a"))
        .await
        .expect("publish after expiry");
    let renewed: Vec<KubeEvent> = events_of(&api, "a")
        .await
        .into_iter()
        .filter(|e| e.note.as_deref() == Some("first"))
        .collect();
    assert_eq!(renewed.len(), 1);
    assert_ne!(renewed[0].metadata.name, folded[0].metadata.name);
    assert!(renewed[0].series.is_none());
    cluster.shutdown().await;
}
