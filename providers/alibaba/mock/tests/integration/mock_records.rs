//! The mock's scripted transport faults (a dropped answer, a truncated body, a page that is not
//! JSON) for one action and one account, and its own records: every live resource of every
//! account, and the ledger of what each call created, changed or deleted, with the account
//! and the tags at the time.

use alibaba_mock::{
    AccessKey, Change, DEFAULT_ACCOUNT_ID, ErrorInjection, MockConfig, MockServer, ResourceKind,
    ScriptedFault, secret_digest,
};
use std::time::Duration;

use ferroplane_testkit::mock_requests::{AK, REGION, SECRET, Signer};
use serde_json::Value;

const VPC_API: &str = "2016-04-28";
const OTHER_AK: &str = "other-ak";
const OTHER_SECRET: &str = "other-secret";
const OTHER_ACCOUNT: &str = "2222222222222222";

async fn mock() -> MockServer {
    let config = MockConfig::new(AK, SECRET)
        .with_access_key(AccessKey::new(OTHER_AK, OTHER_SECRET, OTHER_ACCOUNT))
        .with_transition_delay(Duration::ZERO);
    MockServer::start(config).await.expect("mock starts")
}

fn create_vpc_params(tag: &str) -> Vec<(&'static str, String)> {
    vec![
        ("RegionId", REGION.to_owned()),
        ("CidrBlock", "10.0.0.0/16".to_owned()),
        ("Tag.1.Key", "owner".to_owned()),
        ("Tag.1.Value", tag.to_owned()),
    ]
}

fn borrowed<'a>(params: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    params.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

fn vpcs_tagged(mock: &MockServer, tag: &str) -> Vec<String> {
    mock.resources()
        .into_iter()
        .filter(|r| {
            r.kind == ResourceKind::Vpc && r.tags.get("owner").map(String::as_str) == Some(tag)
        })
        .map(|r| r.id)
        .collect()
}

#[tokio::test]
async fn a_dropped_answer_cuts_the_connection_after_the_call_took_effect() {
    let mock = mock().await;
    mock.inject_error(
        ErrorInjection::fault(ScriptedFault::DroppedResponse, Some("CreateVpc"), 1)
            .for_account(DEFAULT_ACCOUNT_ID),
    )
    .unwrap();
    let signer = Signer::new(&mock);
    let form = create_vpc_params("dropped")
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    let sent = signer
        .build_v1("POST", signer.common("CreateVpc", VPC_API), form)
        .send()
        .await;
    let cut = match sent {
        Err(e) => e.is_request() || e.is_connect() || e.is_body(),
        Ok(resp) => resp.text().await.is_err(),
    };
    assert!(cut, "the answer is cut");
    assert_eq!(
        vpcs_tagged(&mock, "dropped").len(),
        1,
        "the VPC was created"
    );
    let created: Vec<_> = mock
        .ledger()
        .into_iter()
        .filter(|e| e.kind == ResourceKind::Vpc)
        .collect();
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(created[0].change, Change::Created);
    assert_eq!(created[0].account_id, DEFAULT_ACCOUNT_ID);
    assert_eq!(
        created[0].tags.get("owner").map(String::as_str),
        Some("dropped")
    );
    // Used up: the next call is answered.
    let next = signer
        .post("CreateVpc", VPC_API, &borrowed(&create_vpc_params("next")))
        .await;
    assert_eq!(next.status, 200, "{}", next.body);
    assert!(mock.stats().dropped_responses >= 1);
}

#[tokio::test]
async fn a_truncated_body_is_a_200_that_does_not_parse_and_the_call_took_effect() {
    let mock = mock().await;
    mock.inject_error(ErrorInjection::fault(
        ScriptedFault::TruncatedBody,
        Some("CreateKeyPair"),
        1,
    ))
    .unwrap();
    let signer = Signer::new(&mock);
    let (status, body) = signer
        .ecs_text(
            "CreateKeyPair",
            &[("RegionId", REGION), ("KeyPairName", "cut")],
        )
        .await;
    assert_eq!(status, 200);
    assert!(serde_json::from_str::<Value>(&body).is_err(), "{body}");
    assert_eq!(mock.key_pair_names(DEFAULT_ACCOUNT_ID, REGION), ["cut"]);
    // An answer read in full carries the key whose digest the ledger kept.
    let whole = signer
        .ecs(
            "CreateKeyPair",
            &[("RegionId", REGION), ("KeyPairName", "whole")],
        )
        .await
        .ok();
    let private_key = whole["PrivateKeyBody"].as_str().expect("a generated key");
    let entry = mock
        .ledger()
        .into_iter()
        .find(|e| e.kind == ResourceKind::KeyPair && e.name == "whole")
        .expect("the key pair is in the ledger");
    assert_eq!(entry.change, Change::Created);
    assert_eq!(entry.secret_digest, Some(secret_digest(private_key)));
    assert!(!format!("{entry:?}").contains(private_key));
}

#[tokio::test]
async fn a_page_that_is_not_json_is_a_200_for_a_call_that_never_ran() {
    let mock = mock().await;
    mock.inject_error(ErrorInjection::fault(
        ScriptedFault::NonJsonBody,
        Some("CreateVpc"),
        1,
    ))
    .unwrap();
    let signer = Signer::new(&mock);
    let answer = signer
        .post(
            "CreateVpc",
            VPC_API,
            &borrowed(&create_vpc_params("gateway")),
        )
        .await;
    assert_eq!(answer.status, 200);
    assert!(answer.body.is_string(), "not JSON: {}", answer.body);
    assert!(vpcs_tagged(&mock, "gateway").is_empty());
    assert!(mock.ledger().is_empty());
}

#[tokio::test]
async fn an_injection_for_one_account_leaves_the_others_alone() {
    let mock = mock().await;
    mock.inject_error(
        ErrorInjection::new("Forbidden.RAM", Some("CreateVpc"), 1).for_account(OTHER_ACCOUNT),
    )
    .unwrap();
    let mine = Signer::new(&mock)
        .post("CreateVpc", VPC_API, &borrowed(&create_vpc_params("mine")))
        .await;
    assert_eq!(mine.status, 200, "{}", mine.body);
    let other = Signer::with_key(&mock, OTHER_AK, OTHER_SECRET)
        .post("CreateVpc", VPC_API, &borrowed(&create_vpc_params("other")))
        .await;
    other.expect_error(403, "Forbidden.RAM");
    let accounts: Vec<_> = mock.ledger().into_iter().map(|e| e.account_id).collect();
    assert_eq!(accounts, [DEFAULT_ACCOUNT_ID]);
}

#[tokio::test]
async fn the_ledger_follows_a_resource_from_create_to_delete_and_skips_reads() {
    let mock = mock().await;
    let signer = Signer::new(&mock);
    let created = signer
        .post("CreateVpc", VPC_API, &borrowed(&create_vpc_params("a")))
        .await
        .ok();
    let id = created["VpcId"].as_str().unwrap().to_owned();
    let region = ("RegionId", REGION);
    signer
        .post("DescribeVpcs", VPC_API, &[region, ("VpcId", &id)])
        .await
        .ok();
    signer
        .post(
            "ModifyVpcAttribute",
            VPC_API,
            &[region, ("VpcId", &id), ("VpcName", "renamed")],
        )
        .await
        .ok();
    signer
        .post(
            "TagResources",
            VPC_API,
            &[
                region,
                ("ResourceType", "VPC"),
                ("ResourceId.1", &id),
                ("Tag.1.Key", "owner"),
                ("Tag.1.Value", "b"),
            ],
        )
        .await
        .ok();
    signer
        .post("DeleteVpc", VPC_API, &[region, ("VpcId", &id)])
        .await
        .ok();
    let of_vpc: Vec<_> = mock
        .ledger()
        .into_iter()
        .filter(|e| e.resource_id == id)
        .map(|e| (e.action, e.change, e.name, e.tags.get("owner").cloned()))
        .collect();
    let owner = |o: &str| Some(o.to_owned());
    assert_eq!(
        of_vpc,
        [
            (
                "CreateVpc".to_owned(),
                Change::Created,
                String::new(),
                owner("a")
            ),
            (
                "ModifyVpcAttribute".to_owned(),
                Change::Modified,
                "renamed".to_owned(),
                owner("a")
            ),
            (
                "TagResources".to_owned(),
                Change::Modified,
                "renamed".to_owned(),
                owner("b")
            ),
            (
                "DeleteVpc".to_owned(),
                Change::Deleted,
                "renamed".to_owned(),
                owner("b")
            ),
        ]
    );
    assert!(!mock.resources().iter().any(|r| r.id == id));
    // Ever created counts the deleted VPC; the default network was made by no call.
    assert_eq!(mock.created(ResourceKind::Vpc), 1);
    assert_eq!(mock.created(ResourceKind::SecurityGroup), 0);
    // The default network of the account is in the records too.
    assert!(
        mock.resources()
            .iter()
            .any(|r| r.kind == ResourceKind::SecurityGroup && r.account_id == DEFAULT_ACCOUNT_ID)
    );
}

#[tokio::test]
async fn faults_are_scripted_and_records_read_over_http() {
    let mock = mock().await;
    let http = reqwest::Client::new();
    let post = |body: &'static str| {
        http.post(format!("{}/_mock/errors", mock.endpoint()))
            .body(body)
            .send()
    };
    let accepted = post(r#"{"fault":"truncatedBody","action":"CreateVpc","accountId":"1"}"#)
        .await
        .unwrap();
    assert_eq!(accepted.status(), 200);
    let pending: Value = accepted.json().await.unwrap();
    assert_eq!(pending[0]["fault"], "truncatedBody");
    assert_eq!(pending[0]["accountId"], "1");
    let both = post(r#"{"code":"Throttling.User","fault":"droppedResponse"}"#)
        .await
        .unwrap();
    assert_eq!(both.status(), 400);
    assert!(both.text().await.unwrap().contains("exactly one"));
    Signer::new(&mock)
        .post("CreateVpc", VPC_API, &borrowed(&create_vpc_params("http")))
        .await
        .ok();
    for (path, check) in [("ledger", "CreateVpc"), ("resources", "http")] {
        let text = http
            .get(format!("{}/_mock/{path}", mock.endpoint()))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(text.contains(check), "{path}: {text}");
    }
}
