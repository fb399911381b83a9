//! Raw HTTP: bad requests get the Status errors a real apiserver gives, discovery and OpenAPI
//! documents have the shapes kubectl relies on, watches stream, and the server keeps serving
//! after abuse.

use crate::common;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

async fn send(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let response = request.send().await.expect("answered");
    let status = response.status();
    let body = response.json::<Value>().await.unwrap_or(Value::Null);
    (status, body)
}

fn assert_status(answer: &(StatusCode, Value), code: u16, reason: &str) {
    assert_eq!(answer.0.as_u16(), code, "{}", answer.1);
    assert_eq!(answer.1["kind"], "Status", "{}", answer.1);
    assert_eq!(answer.1["status"], "Failure");
    assert_eq!(answer.1["reason"], reason, "{}", answer.1);
    assert_eq!(answer.1["code"], code);
}

// Real apiserver answers: malformed JSON or YAML → 400 BadRequest; an unknown resource → 404
// "the server could not find the requested resource"; an unsupported content type → 415;
// a body over 3 MiB → 413 "Request entity too large: limit is 3145728"; an invalid name → 422
// with a FieldValueInvalid cause on metadata.name; a missing namespace → 404
// `namespaces "x" not found`; a body namespace that disagrees with the URL → 400.
#[tokio::test]
async fn bad_requests_get_apiserver_statuses() {
    let harness = common::start().await;
    let http = reqwest::Client::new();
    let url = format!(
        "{}/api/v1/namespaces/default/configmaps",
        harness.sandbox().url()
    );
    let post = |body: &'static str, content_type: &'static str| {
        http.post(&url)
            .header("Content-Type", content_type)
            .body(body)
    };

    let malformed = send(post("{\"metadata\": ", "application/json")).await;
    assert_status(&malformed, 400, "BadRequest");
    assert!(
        malformed.1["message"]
            .as_str()
            .is_some_and(|m| m.contains("json parse error"))
    );
    assert_status(
        &send(post("metadata: [unclosed", "application/yaml")).await,
        400,
        "BadRequest",
    );
    assert_status(
        &send(post("[1, 2]", "application/json")).await,
        400,
        "BadRequest",
    );
    assert_status(
        &send(post("{}", "text/plain")).await,
        415,
        "UnsupportedMediaType",
    );

    let unknown = send(http.get(format!(
        "{}/apis/example.io/v1/widgets",
        harness.sandbox().url()
    )))
    .await;
    assert_status(&unknown, 404, "NotFound");
    assert_eq!(
        unknown.1["message"],
        "the server could not find the requested resource"
    );

    let big = format!(
        "{{\"metadata\":{{\"name\":\"big\"}},\"data\":{{\"a\":\"{}\"}}}}",
        "x".repeat(3 * 1024 * 1024)
    );
    let too_large = send(
        http.post(&url)
            .header("Content-Type", "application/json")
            .body(big),
    )
    .await;
    assert_status(&too_large, 413, "RequestEntityTooLarge");
    assert_eq!(
        too_large.1["message"],
        "Request entity too large: limit is 3145728"
    );

    let invalid = send(post(
        r#"{"metadata":{"name":"Not_Valid"}}"#,
        "application/json",
    ))
    .await;
    assert_status(&invalid, 422, "Invalid");
    assert_eq!(invalid.1["details"]["causes"][0]["field"], "metadata.name");
    assert_eq!(
        invalid.1["details"]["causes"][0]["reason"],
        "FieldValueInvalid"
    );

    let missing_ns = send(
        http.post(format!(
            "{}/api/v1/namespaces/nope/configmaps",
            harness.sandbox().url()
        ))
        .header("Content-Type", "application/json")
        .body(r#"{"metadata":{"name":"a"}}"#),
    )
    .await;
    assert_status(&missing_ns, 404, "NotFound");
    assert_eq!(missing_ns.1["message"], "namespaces \"nope\" not found");

    let mismatch = send(post(
        r#"{"metadata":{"name":"a","namespace":"kube-system"}}"#,
        "application/json",
    ))
    .await;
    assert_status(&mismatch, 400, "BadRequest");

    let wrong_kind = send(post(
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a"}}"#,
        "application/json",
    ))
    .await;
    assert_status(&wrong_kind, 400, "BadRequest");

    let patch = send(
        http.patch(format!("{url}/absent"))
            .header("Content-Type", "application/xml")
            .body("<x/>"),
    )
    .await;
    assert_status(&patch, 415, "UnsupportedMediaType");
    let not_found = send(
        http.patch(format!("{url}/absent"))
            .header("Content-Type", "application/merge-patch+json")
            .body("{}"),
    )
    .await;
    assert_status(&not_found, 404, "NotFound");
    assert_eq!(not_found.1["message"], "configmaps \"absent\" not found");

    let method = send(
        http.put(&url)
            .header("Content-Type", "application/json")
            .body("{}"),
    )
    .await;
    assert_status(&method, 405, "MethodNotAllowed");

    // Still healthy after all that.
    let healthy = http
        .get(format!("{}/readyz", harness.sandbox().url()))
        .send()
        .await
        .expect("answered");
    assert_eq!(healthy.status(), StatusCode::OK);
    let created = send(post(r#"{"metadata":{"name":"fine"}}"#, "application/json")).await;
    assert_eq!(created.0, StatusCode::CREATED);
    harness.shutdown().await;
}

// kubectl's dispatcher picks its version from /version; discovery and OpenAPI v3 shapes that
// kubectl parses: APIVersions, APIGroupList, APIResourceList with status subresources, an
// OpenAPI index naming each group-version with a hash.
#[tokio::test]
async fn version_discovery_and_openapi() {
    let harness = common::start().await;
    let http = reqwest::Client::new();
    let base = harness.sandbox().url();
    let get = |path: &str| http.get(format!("{base}{path}"));
    let (_, version) = send(get("/version")).await;
    assert_eq!(
        (
            version["major"].clone(),
            version["minor"].clone(),
            version["gitVersion"].clone()
        ),
        (json!("1"), json!("33"), json!("v1.33.0"))
    );
    let (_, core) = send(get("/api").header(
        "Accept",
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
    ))
    .await;
    assert_eq!(core["kind"], "APIVersions");
    let (_, groups) = send(get("/apis")).await;
    assert_eq!(groups["kind"], "APIGroupList");
    let (_, apps) = send(get("/apis/apps/v1")).await;
    assert!(
        apps["resources"]
            .as_array()
            .expect("list")
            .iter()
            .any(|r| r["name"] == "deployments/status")
    );
    let (_, index) = send(get("/openapi/v3")).await;
    let document_url = index["paths"]["api/v1"]["serverRelativeURL"]
        .as_str()
        .expect("core listed")
        .to_owned();
    let (status, document) = send(get(&document_url)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(document["components"]["schemas"]["io.k8s.api.core.v1.Secret"].is_object());
    let (status, v2) = send(get("/openapi/v2")).await;
    assert_eq!(
        (status, v2["swagger"].as_str()),
        (StatusCode::OK, Some("2.0"))
    );
    harness.shutdown().await;
}

// A real apiserver streams watch events as newline-delimited JSON, replays from a
// resourceVersion, and ends the stream at timeoutSeconds.
#[tokio::test]
async fn watch_streams_history_and_honours_timeout() {
    let harness = common::start().await;
    let http = reqwest::Client::new();
    let url = format!(
        "{}/api/v1/namespaces/default/configmaps",
        harness.sandbox().url()
    );
    let start_rv = harness.sandbox().resource_version();
    for name in ["a", "b"] {
        let body = format!("{{\"metadata\":{{\"name\":\"{name}\"}}}}");
        let answer = http
            .post(&url)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .expect("sent");
        assert_eq!(answer.status(), StatusCode::CREATED);
    }
    let watch = http
        .get(format!(
            "{url}?watch=true&resourceVersion={start_rv}&timeoutSeconds=1"
        ))
        .send()
        .await
        .expect("watch answered");
    assert_eq!(watch.status(), StatusCode::OK);
    let body = tokio::time::timeout(Duration::from_secs(5), watch.text())
        .await
        .expect("ended by timeoutSeconds")
        .expect("text");
    let events: Vec<Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let names: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default(),
                e["object"]["metadata"]["name"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(names, vec![("ADDED", "a"), ("ADDED", "b")]);
    harness.shutdown().await;
}

// Built-ins are not validated deeply, so odd shapes must never crash the server: a Deployment
// whose spec is a number can still be scaled, a namespace status that is a number is
// replaced, a JSON patch that turns metadata into a number is answered, and the server stays up.
#[tokio::test]
async fn odd_shapes_never_crash_the_server() {
    let harness = common::start().await;
    let http = reqwest::Client::new();
    let base = harness.sandbox().url();
    let deployments = format!("{base}/apis/apps/v1/namespaces/default/deployments");
    let created = http
        .post(&deployments)
        .header("Content-Type", "application/json")
        .body(r#"{"metadata":{"name":"odd"},"spec":5}"#)
        .send()
        .await
        .expect("answered");
    assert_eq!(created.status(), StatusCode::CREATED);
    let scaled = send(
        http.patch(format!("{deployments}/odd/scale"))
            .header("Content-Type", "application/merge-patch+json")
            .body(r#"{"spec":{"replicas":2}}"#),
    )
    .await;
    assert_eq!(scaled.0, StatusCode::OK, "{}", scaled.1);
    assert_eq!(scaled.1["spec"]["replicas"], 2);

    let status = send(
        http.put(format!("{base}/api/v1/namespaces/default/status"))
            .header("Content-Type", "application/json")
            .body(r#"{"metadata":{"name":"default"},"status":5}"#),
    )
    .await;
    assert_eq!(status.0, StatusCode::OK, "{}", status.1);
    assert_eq!(status.1["status"]["phase"], "Active");

    let patched = send(
        http.patch(format!("{base}/api/v1/namespaces/default/configmaps/none"))
            .header("Content-Type", "application/json-patch+json")
            .body(r#"[{"op":"replace","path":"/metadata","value":5}]"#),
    )
    .await;
    assert_eq!(patched.0, StatusCode::NOT_FOUND);
    let cm = format!("{base}/api/v1/namespaces/default/configmaps");
    http.post(&cm)
        .header("Content-Type", "application/json")
        .body(r#"{"metadata":{"name":"c"}}"#)
        .send()
        .await
        .expect("created");
    let answered = http
        .patch(format!("{cm}/c"))
        .header("Content-Type", "application/json-patch+json")
        .body(r#"[{"op":"replace","path":"/metadata","value":5}]"#)
        .send()
        .await
        .expect("answered");
    assert!(
        answered.status().is_client_error() || answered.status().is_success(),
        "{}",
        answered.status()
    );
    let healthy = http
        .get(format!("{base}/healthz"))
        .send()
        .await
        .expect("answered");
    assert_eq!(healthy.status(), StatusCode::OK);
    harness.shutdown().await;
}
