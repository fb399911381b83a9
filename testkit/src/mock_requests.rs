//! Raw V1- and V3-signed requests to the ECS mock, built with alibaba-sdk's signature module,
//! so that the mock's tests and benchmark exercise its protocol handling directly rather than
//! through the production client; and the key pair, region, image and type they use.

use std::collections::BTreeMap;
use std::time::Duration;

use alibaba_mock::{MockConfig, MockServer};
use alibaba_sdk::signature::{percent_encode, v1, v3};
use serde_json::Value;

pub const AK: &str = "test-ak";
pub const SECRET: &str = "test-secret";
pub const REGION: &str = "cn-hangzhou";
pub const IMAGE: &str = "centos_7_8_x64_20G_alibase_20200519.vhd";
pub const TYPE: &str = "ecs.g6.large";
/// The mock's default vSwitch of `cn-hangzhou-b` (the first zone of [`REGION`]).
pub const VSWITCH: &str = "vsw-gxeeybn7eajlv0lc1j5e80";
/// The mock's default security group of [`REGION`].
pub const SECURITY_GROUP: &str = "sg-erfnbthki6j1jhzgoeu5df";
pub const ECS: &str = "2014-05-26";
pub const STS: &str = "2015-04-01";

/// Starts a mock with the test key and the given transition delay.
pub async fn start(delay: Duration) -> MockServer {
    MockServer::start(MockConfig::new(AK, SECRET).with_transition_delay(delay))
        .await
        .expect("mock starts on 127.0.0.1:0")
}

/// A response: status, JSON body and headers.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl Resp {
    /// The error code, or "" for a success.
    pub fn code(&self) -> &str {
        self.body["Code"].as_str().unwrap_or_default()
    }

    /// Panics with the body unless the call succeeded.
    #[track_caller]
    pub fn ok(self) -> Value {
        assert_eq!(self.status, 200, "expected success, got {}", self.body);
        self.body
    }

    /// Asserts status and code.
    #[track_caller]
    pub fn expect_error(&self, status: u16, code: &str) {
        assert_eq!(
            (self.status, self.code()),
            (status, code),
            "body: {}",
            self.body
        );
    }
}

pub fn now_stamp() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

pub fn nonce() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub fn encode_query(params: &BTreeMap<String, String>) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Signs raw requests for one set of credentials.
#[derive(Clone)]
pub struct Signer {
    pub endpoint: String,
    pub access_key_id: String,
    pub secret: String,
    pub token: Option<String>,
    pub client: reqwest::Client,
}

impl Signer {
    pub fn new(mock: &MockServer) -> Self {
        Self::with_key(mock, AK, SECRET)
    }

    pub fn with_key(mock: &MockServer, ak: &str, secret: &str) -> Self {
        Self::for_endpoint(&mock.endpoint(), ak, secret)
    }

    pub fn for_endpoint(endpoint: &str, ak: &str, secret: &str) -> Self {
        Self {
            endpoint: endpoint.to_owned(),
            access_key_id: ak.to_owned(),
            secret: secret.to_owned(),
            token: None,
            client: reqwest::Client::new(),
        }
    }

    pub fn with_token(mut self, token: &str) -> Self {
        self.token = Some(token.to_owned());
        self
    }

    /// The V1 common parameters for `action`.
    pub fn common(&self, action: &str, version: &str) -> BTreeMap<String, String> {
        let mut p = BTreeMap::new();
        for (k, v) in [
            ("Action", action),
            ("Version", version),
            ("Format", "JSON"),
            ("AccessKeyId", &self.access_key_id),
            ("SignatureMethod", "HMAC-SHA1"),
            ("SignatureVersion", "1.0"),
        ] {
            p.insert(k.to_owned(), v.to_owned());
        }
        p.insert("SignatureNonce".into(), nonce());
        p.insert("Timestamp".into(), now_stamp());
        if let Some(t) = &self.token {
            p.insert("SecurityToken".into(), t.clone());
        }
        p
    }

    /// Builds a signed V1 request (the signature is added here).
    pub fn build_v1(
        &self,
        method: &str,
        mut query: BTreeMap<String, String>,
        form: BTreeMap<String, String>,
    ) -> reqwest::RequestBuilder {
        let mut all = query.clone();
        all.extend(form.clone());
        let sts = v1::string_to_sign(method, &all);
        query.insert("Signature".into(), v1::sign(&self.secret, &sts));
        let url = format!("{}/?{}", self.endpoint, encode_query(&query));
        if method == "GET" {
            self.client.get(url)
        } else {
            self.client
                .post(url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(encode_query(&form))
        }
    }

    /// Sends a V1 request whose parameters are already complete (signature added here).
    pub async fn send_v1(
        &self,
        method: &str,
        query: BTreeMap<String, String>,
        form: BTreeMap<String, String>,
    ) -> Resp {
        send(self.build_v1(method, query, form)).await
    }

    /// An ECS call (V1 POST) answered as status and raw body, without parsing JSON.
    pub async fn ecs_text(&self, action: &str, params: &[(&str, &str)]) -> (u16, String) {
        let form = params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let resp = self
            .build_v1("POST", self.common(action, ECS), form)
            .send()
            .await
            .expect("mock answers");
        let status = resp.status().as_u16();
        (status, resp.text().await.expect("body"))
    }

    /// V1 GET with everything in the query.
    pub async fn get(&self, action: &str, version: &str, params: &[(&str, &str)]) -> Resp {
        let mut q = self.common(action, version);
        q.extend(
            params
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        self.send_v1("GET", q, BTreeMap::new()).await
    }

    /// V1 POST: common parameters in the query, business ones in the form body.
    pub async fn post(&self, action: &str, version: &str, params: &[(&str, &str)]) -> Resp {
        let form = params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self.send_v1("POST", self.common(action, version), form)
            .await
    }

    /// An ECS call (V1 POST).
    pub async fn ecs(&self, action: &str, params: &[(&str, &str)]) -> Resp {
        self.post(action, ECS, params).await
    }

    /// A V3 call: POST, parameters in the query, `body` as form when not empty.
    pub async fn v3(
        &self,
        action: &str,
        version: &str,
        params: &[(&str, &str)],
        body: &[(&str, &str)],
    ) -> Resp {
        let query: BTreeMap<String, String> = params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let body_text = encode_query(
            &body
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        let host = self.endpoint.trim_start_matches("http://").to_owned();
        let payload = v3::hashed_payload(body_text.as_bytes());
        let mut headers = BTreeMap::new();
        headers.insert("host".to_owned(), host);
        headers.insert("x-acs-action".to_owned(), action.to_owned());
        headers.insert("x-acs-version".to_owned(), version.to_owned());
        headers.insert("x-acs-date".to_owned(), now_stamp());
        headers.insert("x-acs-signature-nonce".to_owned(), nonce());
        headers.insert("x-acs-content-sha256".to_owned(), payload.clone());
        if let Some(t) = &self.token {
            headers.insert("x-acs-security-token".to_owned(), t.clone());
        }
        if !body.is_empty() {
            headers.insert(
                "content-type".to_owned(),
                "application/x-www-form-urlencoded".to_owned(),
            );
        }
        let canonical = v3::canonical_request("POST", "/", &query, &headers, &payload);
        let signature = v3::sign(&self.secret, &v3::string_to_sign(&canonical));
        let auth = v3::authorization_header(
            &self.access_key_id,
            &v3::signed_header_names(&headers),
            &signature,
        );
        let mut req = self
            .client
            .post(format!("{}/?{}", self.endpoint, encode_query(&query)))
            .header("authorization", auth)
            .body(body_text);
        for (k, v) in &headers {
            if k != "host" {
                req = req.header(k.as_str(), v.as_str());
            }
        }
        send(req).await
    }

    /// Creates `amount` instances and returns their IDs; placed in the mock's default network
    /// (default vSwitch of the first zone, default security group) unless `extra` names a
    /// vSwitch or security group.
    pub async fn run(&self, extra: &[(&str, &str)]) -> Vec<String> {
        let mut params = vec![
            ("RegionId", REGION),
            ("ImageId", IMAGE),
            ("InstanceType", TYPE),
        ];
        if !extra.iter().any(|(k, _)| *k == "VSwitchId") {
            params.push(("VSwitchId", VSWITCH));
        }
        if !extra.iter().any(|(k, _)| k.starts_with("SecurityGroupId")) {
            params.push(("SecurityGroupId", SECURITY_GROUP));
        }
        params.extend_from_slice(extra);
        let body = self.ecs("RunInstances", &params).await.ok();
        ids(&body)
    }

    /// DescribeInstances and the instances it returned.
    pub async fn describe(&self, params: &[(&str, &str)]) -> Value {
        let mut all = vec![("RegionId", REGION)];
        all.extend_from_slice(params);
        self.ecs("DescribeInstances", &all).await.ok()
    }

    /// The HTTP status of a DescribeInstances call in the test region.
    pub async fn describe_status(&self) -> u16 {
        self.ecs("DescribeInstances", &[("RegionId", REGION)])
            .await
            .status
    }

    /// The status of one instance, via DescribeInstanceAttribute.
    pub async fn status(&self, id: &str) -> String {
        let body = self
            .ecs("DescribeInstanceAttribute", &[("InstanceId", id)])
            .await
            .ok();
        body["Status"].as_str().unwrap_or_default().to_owned()
    }

    /// Polls until `id` reaches `status` (bounded; panics after 10 s).
    pub async fn wait_for(&self, id: &str, status: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            if self.status(id).await == status {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{id} never reached {status}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The instance IDs of a RunInstances answer.
pub fn ids(body: &Value) -> Vec<String> {
    body["InstanceIdSets"]["InstanceIdSet"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The instances of a DescribeInstances answer.
pub fn instances(body: &Value) -> Vec<Value> {
    body["Instances"]["Instance"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

pub async fn send(req: reqwest::RequestBuilder) -> Resp {
    let resp = req.send().await.expect("mock answers");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Resp {
        status,
        body,
        headers,
    }
}
