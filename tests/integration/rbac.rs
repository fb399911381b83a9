//! The controller runs as ferroplane's ServiceAccount with deploy/'s RBAC, which the sandbox
//! enforces. A verb taken away shows on the object the controller cannot handle, as on a real
//! cluster, and giving it back lets the controller finish.

use std::time::Duration;

use crate::support::{ACCESS_KEY_ID, ACCESS_KEY_SECRET, E2e};
use ferroplane::controllers::Kind;

/// A JSON patch replacing the verbs of the ClusterRole's rule at `index`.
fn set_verbs(index: usize, verbs: &str) -> String {
    format!(r#"[{{"op":"replace","path":"/rules/{index}/verbs","value":{verbs}}}]"#)
}

// Without `get` on Secrets the controller cannot read the credentials of a ProviderConfig: it
// creates nothing in the cloud and reports the apiserver's 403 in the Synced condition (never
// the Secret's content). The ClusterRole is edited in the sandbox only: on a real cluster this
// suite's controller does not run as the ServiceAccount.
pub(crate) async fn a_verb_missing_from_deploy_shows_as_a_condition() {
    assert!(
        std::env::var_os("FERROPLANE_E2E_KUBECONFIG").is_none(),
        "this test edits the ferroplane-alibaba ClusterRole and needs the controller to run as \
         ferroplane's ServiceAccount, which it does not against FERROPLANE_E2E_KUBECONFIG's \
         cluster: unset the variable, or leave the test out with `--skip rbac::`"
    );
    let e2e = E2e::start(&[Kind::EcsInstance]).await;
    // The rule on Secrets, found by what it names (deploy/ may order its rules as it likes).
    let rules = e2e
        .jsonpath(
            "clusterrole/ferroplane-alibaba",
            r#"{range .rules[*]}{.resources[0]} {.verbs}{"\n"}{end}"#,
        )
        .await;
    let secrets = rules
        .lines()
        .position(|rule| rule.starts_with("secrets "))
        .expect("deploy/rbac/alibaba.yaml has a rule on secrets");
    assert_eq!(
        rules.lines().nth(secrets),
        Some(r#"secrets ["get","list","watch"]"#)
    );
    e2e.k(&[
        "patch",
        "clusterrole",
        "ferroplane-alibaba",
        "--type=json",
        "-p",
        &set_verbs(secrets, r#"["list","watch"]"#),
    ])
    .await;
    // A configuration of its own, so that no credentials were read before the verb went.
    e2e.apply(&format!(
        r#"
apiVersion: v1
kind: Secret
metadata:
  name: rbac-credentials
stringData:
  accessKeyId: {ACCESS_KEY_ID}
  accessKeySecret: {ACCESS_KEY_SECRET}
---
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: ProviderConfig
metadata:
  name: rbac
spec:
  credentials:
    source: Secret
    secretRef:
      name: rbac-credentials
  endpoint: {endpoint}
---
apiVersion: alibabacloud.ferroplane.io/v1alpha1
kind: ECSInstance
metadata:
  name: rbac-1
spec:
  providerConfigRef:
    name: rbac
  forProvider:
    regionId: cn-beijing
    imageId: centos_7_8_x64_20G_alibase_20200519.vhd
    instanceType: ecs.g6.large
    vSwitchId: vsw-eafxvpknkjnma5xpiqaf0w
    securityGroupIds: [sg-y2fkm5jxbput7ntjcm6tbw]
"#,
        endpoint = e2e.mock().endpoint()
    ))
    .await;

    e2e.wait_jsonpath(
        "ecs/rbac-1",
        "{.status.conditions[?(@.type=='Synced')].status}",
        "False",
    )
    .await;
    let message = e2e
        .eventually(
            "Synced=False naming the refused read",
            Duration::from_secs(30),
            || async {
                let status = e2e
                    .jsonpath(
                        "ecs/rbac-1",
                        "{.status.conditions[?(@.type=='Synced')].status}",
                    )
                    .await;
                let message = e2e
                    .jsonpath(
                        "ecs/rbac-1",
                        "{.status.conditions[?(@.type=='Synced')].message}",
                    )
                    .await;
                (status == "False" && message.contains("forbidden")).then_some(message)
            },
        )
        .await;
    assert!(
        message.contains(&format!(
            "secrets \"rbac-credentials\" is forbidden: User \"system:serviceaccount:ferroplane-system:ferroplane\" cannot get resource \"secrets\" in API group \"\" in the namespace \"{}\"",
            e2e.namespace
        )),
        "{message}"
    );
    assert!(!message.contains(ACCESS_KEY_SECRET), "{message}");
    assert!(
        e2e.instances_of("ecs/rbac-1").await.is_empty(),
        "nothing created"
    );

    // The verb back, the same object becomes Ready.
    e2e.k(&[
        "patch",
        "clusterrole",
        "ferroplane-alibaba",
        "--type=json",
        "-p",
        &set_verbs(secrets, r#"["get","list","watch"]"#),
    ])
    .await;
    e2e.wait_jsonpath(
        "ecs/rbac-1",
        "{.status.conditions[?(@.type=='Ready')].status}",
        "True",
    )
    .await;
    e2e.finish().await;
}
