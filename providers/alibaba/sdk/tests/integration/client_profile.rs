//! The `Environment` source's CLI profile (`~/.aliyun/config.json` or
//! `ALIBABA_CLOUD_CONFIG_FILE`, profile `ALIBABA_CLOUD_PROFILE` or `current`), read through an
//! injected environment; `RamRoleArn` profiles against a local STS stand-in.

use std::time::Duration;

use crate::client_support::{Reply, ScriptServer};
use alibaba_sdk::credentials::{
    CredentialsProvider, ENV_ACCESS_KEY_ID, ENV_ACCESS_KEY_SECRET, ENV_CONFIG_FILE, ENV_PROFILE,
    EnvLookup, EnvironmentProvider, ProfileProvider,
};
use alibaba_sdk::endpoint::parse_endpoint;
use alibaba_sdk::rpc::{ClientConfig, RetryPolicy};

const ROLE: &str = "acs:ram::1234567890123:role/profile-role";

fn config() -> ClientConfig {
    ClientConfig {
        retry: RetryPolicy {
            max_attempts: 1,
            min_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(10),
            max_elapsed: Duration::from_secs(2),
        },
        ..ClientConfig::default()
    }
}

fn config_file(dir: &tempfile::TempDir, current: &str) -> std::path::PathBuf {
    let path = dir.path().join("config.json");
    let body = serde_json::json!({
        "current": current,
        "profiles": [
            {"name": "ak", "mode": "AK", "access_key_id": "AK-PROFILE", "access_key_secret": "ak-profile-secret", "region_id": "cn-beijing"},
            {"name": "sts", "mode": "StsToken", "access_key_id": "STS.PROFILE", "access_key_secret": "sts-profile-secret", "sts_token": "sts-profile-token"},
            {"name": "role", "mode": "RamRoleArn", "access_key_id": "AK-BASE", "access_key_secret": "base-secret", "ram_role_arn": ROLE, "ram_session_name": "from-profile", "expired_seconds": 1800},
            {"name": "sso", "mode": "CloudSSO"},
            {"name": "broken", "mode": "StsToken", "access_key_id": "X", "access_key_secret": "y-secret"}
        ]
    });
    std::fs::write(&path, body.to_string()).unwrap();
    path
}

fn env_with(path: &std::path::Path, extra: &[(&str, &str)]) -> EnvLookup {
    let mut pairs: Vec<(String, String)> = vec![(
        ENV_CONFIG_FILE.to_owned(),
        path.to_string_lossy().into_owned(),
    )];
    pairs.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    EnvLookup::from_pairs(pairs)
}

#[tokio::test]
async fn ak_and_sts_token_profiles_current_or_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_file(&dir, "ak");
    let current = ProfileProvider::new(env_with(&path, &[]), None, config());
    let c = current.credentials().await.unwrap();
    assert_eq!(c.access_key_id, "AK-PROFILE");
    assert_eq!(c.access_key_secret.expose(), "ak-profile-secret");
    assert!(c.security_token.is_none());

    let named = ProfileProvider::new(env_with(&path, &[(ENV_PROFILE, "sts")]), None, config());
    let c = named.credentials().await.unwrap();
    assert_eq!(c.access_key_id, "STS.PROFILE");
    assert_eq!(c.security_token.unwrap().expose(), "sts-profile-token");
}

#[tokio::test]
async fn ram_role_arn_profiles_assume_the_role_with_the_profile_key() {
    let sts = ScriptServer::start(|_, _| {
        let expiration = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(1800))
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        Reply::ok(
            serde_json::json!({
                "RequestId": "STS-P",
                "Credentials": {
                    "AccessKeyId": "STS.from-role",
                    "AccessKeySecret": "role-secret",
                    "SecurityToken": "role-token",
                    "Expiration": expiration
                }
            })
            .to_string(),
        )
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let path = config_file(&dir, "role");
    let provider = ProfileProvider::new(
        env_with(&path, &[]),
        Some(parse_endpoint(&sts.url()).unwrap()),
        config(),
    );
    let c = provider.credentials().await.unwrap();
    assert_eq!(c.access_key_id, "STS.from-role");
    let request = &sts.requests()[0];
    assert_eq!(request.query["Action"], "AssumeRole");
    assert_eq!(request.query["AccessKeyId"], "AK-BASE");
    assert_eq!(request.form["RoleArn"], ROLE);
    assert_eq!(request.form["RoleSessionName"], "from-profile");
    assert_eq!(request.form["DurationSeconds"], "1800");
}

#[tokio::test]
async fn unusable_profiles_are_named_and_never_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_file(&dir, "sso");
    let error = ProfileProvider::new(env_with(&path, &[]), None, config())
        .credentials()
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("mode CloudSSO"), "{error}");
    assert!(error.contains("AK, StsToken and RamRoleArn"), "{error}");
    let error = ProfileProvider::new(env_with(&path, &[(ENV_PROFILE, "nope")]), None, config())
        .credentials()
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("no profile nope"), "{error}");
    let error = ProfileProvider::new(env_with(&path, &[(ENV_PROFILE, "broken")]), None, config())
        .credentials()
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("needs sts_token"), "{error}");
    assert!(!error.contains("y-secret"), "{error}");

    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"profiles":[{"name":"a","access_key_secret":"leaky-value-9"#,
    )
    .unwrap();
    let error = ProfileProvider::new(env_with(&bad, &[]), None, config())
        .credentials()
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("line 1 column"), "{error}");
    assert!(!error.contains("leaky-value-9"), "{error}");
}

#[tokio::test]
async fn the_environment_source_prefers_variables_then_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let path = config_file(&dir, "ak");
    let variables = EnvironmentProvider::new(
        env_with(
            &path,
            &[
                (ENV_ACCESS_KEY_ID, "AK-ENV"),
                (ENV_ACCESS_KEY_SECRET, "env-secret"),
            ],
        ),
        None,
        config(),
    );
    assert_eq!(
        variables.credentials().await.unwrap().access_key_id,
        "AK-ENV"
    );
    let profile = EnvironmentProvider::new(env_with(&path, &[]), None, config());
    assert_eq!(
        profile.credentials().await.unwrap().access_key_id,
        "AK-PROFILE"
    );
    // Neither: the missing variable is named.
    let home = tempfile::tempdir().unwrap();
    let nothing = EnvironmentProvider::new(
        EnvLookup::from_pairs([("HOME", home.path().to_string_lossy().into_owned())]),
        None,
        config(),
    );
    let error = nothing.credentials().await.unwrap_err().to_string();
    assert!(error.contains(ENV_ACCESS_KEY_ID), "{error}");
    // HOME's ~/.aliyun/config.json is the default file.
    std::fs::create_dir_all(home.path().join(".aliyun")).unwrap();
    std::fs::copy(&path, home.path().join(".aliyun/config.json")).unwrap();
    assert_eq!(
        nothing.credentials().await.unwrap().access_key_id,
        "AK-PROFILE"
    );
}
