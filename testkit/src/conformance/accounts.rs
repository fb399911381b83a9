//! A case's cloud accounts: each case runs in accounts of its own in the shared mock (so its
//! scripted faults and its records are its own), reached from its namespaces through a
//! credentials Secret and a ProviderConfig; and the resources made by hand in them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use alibaba_mock::{AccessKey, MockServer, ResourceKind};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};

use crate::mock_requests::Signer;
use crate::wait::eventually;
use crate::{ecs_mock, secrets};

const VPC_API: &str = "2016-04-28";

static NEXT_ACCOUNT: AtomicU64 = AtomicU64::new(7_000_000_000_000_001);

/// One cloud account of the mock.
#[derive(Debug, Clone)]
pub struct Account {
    pub id: String,
    access_key_id: String,
    secret: String,
}

impl Account {
    /// A new account with one access key, added to `mock`.
    pub fn open(mock: &MockServer) -> Self {
        let n = NEXT_ACCOUNT.fetch_add(1, Ordering::Relaxed);
        let account = Self {
            id: n.to_string(),
            access_key_id: format!("LTAIconformance{n}"),
            secret: format!("conformance-secret-{n}"),
        };
        mock.add_access_key(AccessKey::new(
            &account.access_key_id,
            &account.secret,
            &account.id,
        ));
        account
    }

    /// Creates `namespace` if needed, a credentials Secret for this account in it, and
    /// ProviderConfig `config` using it against `mock`.
    pub async fn provide(
        &self,
        client: &kube::Client,
        namespace: &str,
        config: &str,
        mock: &MockServer,
    ) {
        let namespaces: Api<Namespace> = Api::all(client.clone());
        let ns: Namespace = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace},
        }))
        .expect("a namespace");
        // Already there when a second configuration is added to it.
        let _ = namespaces.create(&PostParams::default(), &ns).await;
        let secret = format!("{config}-credentials");
        secrets::put(
            client,
            namespace,
            &secret,
            &[
                ("accessKeyId", self.access_key_id.as_str()),
                ("accessKeySecret", self.secret.as_str()),
            ],
        )
        .await;
        ecs_mock::create_provider_config(
            client,
            namespace,
            config,
            &secret,
            None,
            &mock.endpoint(),
        )
        .await;
    }

    /// Signed raw requests as this account.
    pub fn signer(&self, mock: &MockServer) -> Signer {
        Signer::with_key(mock, &self.access_key_id, &self.secret)
    }

    /// An EIP allocated by hand (owned by no object).
    pub async fn make_eip(&self, mock: &MockServer, region: &str) -> String {
        let allocated = self
            .signer(mock)
            .post("AllocateEipAddress", VPC_API, &[("RegionId", region)])
            .await
            .ok();
        allocated["AllocationId"]
            .as_str()
            .expect("an allocation ID")
            .to_owned()
    }

    /// A security group made by hand (owned by no object, untagged, so no SecurityGroup object
    /// keeps its rules) in the region's default VPC.
    pub async fn make_security_group(&self, mock: &MockServer, region: &str) -> String {
        let vpc = alibaba_mock::defaults::vpc_id(region);
        let created = self
            .signer(mock)
            .ecs(
                "CreateSecurityGroup",
                &[("RegionId", region), ("VpcId", &vpc)],
            )
            .await
            .ok();
        created["SecurityGroupId"]
            .as_str()
            .expect("a security group ID")
            .to_owned()
    }

    /// An ECS instance launched by hand (owned by no object, no public IP) in the region's
    /// default network, once it is Running.
    pub async fn make_instance(&self, mock: &MockServer, region: &str) -> String {
        let vswitch =
            alibaba_mock::defaults::first_vswitch_id(region).expect("the region has a vSwitch");
        let group = alibaba_mock::defaults::security_group_id(region);
        let launched = self
            .signer(mock)
            .ecs(
                "RunInstances",
                &[
                    ("RegionId", region),
                    ("ImageId", "aliyun_3_x64_20G_alibase_20240528.vhd"),
                    ("InstanceType", "ecs.g6.large"),
                    ("VSwitchId", &vswitch),
                    ("SecurityGroupId", &group),
                ],
            )
            .await
            .ok();
        let id = launched["InstanceIdSets"]["InstanceIdSet"][0]
            .as_str()
            .expect("an instance ID")
            .to_owned();
        eventually(format!("hand-made instance {id} is Running"))
            .within(Duration::from_secs(20))
            .until(|| mock.instance_status(&id).as_deref() == Some("Running"))
            .await;
        id
    }

    /// A VPC made by hand (owned by no object), once it is Available.
    pub async fn make_vpc(&self, mock: &MockServer, region: &str) -> String {
        let created = self
            .signer(mock)
            .post(
                "CreateVpc",
                VPC_API,
                &[("RegionId", region), ("CidrBlock", "10.0.0.0/16")],
            )
            .await
            .ok();
        let id = created["VpcId"].as_str().expect("a VPC ID").to_owned();
        eventually(format!("hand-made VPC {id} is Available"))
            .within(Duration::from_secs(20))
            .until(|| {
                mock.resources()
                    .into_iter()
                    .any(|r| r.kind == ResourceKind::Vpc && r.id == id && r.status == "Available")
            })
            .await;
        id
    }

    /// A vSwitch (`10.0.0.0/24`) of `vpc` made by hand (owned by no object), once it is
    /// Available.
    pub async fn make_vswitch(
        &self,
        mock: &MockServer,
        region: &str,
        vpc: &str,
        zone: &str,
    ) -> String {
        let created = self
            .signer(mock)
            .post(
                "CreateVSwitch",
                VPC_API,
                &[
                    ("RegionId", region),
                    ("VpcId", vpc),
                    ("ZoneId", zone),
                    ("CidrBlock", "10.0.0.0/24"),
                ],
            )
            .await
            .ok();
        let id = created["VSwitchId"]
            .as_str()
            .expect("a vSwitch ID")
            .to_owned();
        eventually(format!("hand-made vSwitch {id} is Available"))
            .within(Duration::from_secs(20))
            .until(|| {
                mock.resources().into_iter().any(|r| {
                    r.kind == ResourceKind::VSwitch && r.id == id && r.status == "Available"
                })
            })
            .await;
        id
    }

    /// An internet NAT gateway made by hand (owned by no object) in `vswitch` of `vpc`, once it
    /// is Available.
    pub async fn make_nat_gateway(
        &self,
        mock: &MockServer,
        region: &str,
        vpc: &str,
        vswitch: &str,
    ) -> String {
        let created = self
            .signer(mock)
            .post(
                "CreateNatGateway",
                VPC_API,
                &[
                    ("RegionId", region),
                    ("VpcId", vpc),
                    ("VSwitchId", vswitch),
                    ("NatType", "Enhanced"),
                ],
            )
            .await
            .ok();
        let id = created["NatGatewayId"]
            .as_str()
            .expect("a NAT gateway ID")
            .to_owned();
        self.until_status(mock, ResourceKind::NatGateway, &id, "Available")
            .await;
        id
    }

    /// Binds EIP `eip` to NAT gateway `gateway` by hand, and waits until it is InUse.
    pub async fn bind_eip(&self, mock: &MockServer, region: &str, eip: &str, gateway: &str) {
        self.signer(mock)
            .post(
                "AssociateEipAddress",
                VPC_API,
                &[
                    ("RegionId", region),
                    ("AllocationId", eip),
                    ("InstanceId", gateway),
                    ("InstanceType", "Nat"),
                ],
            )
            .await
            .ok();
        self.until_status(mock, ResourceKind::Eip, eip, "InUse")
            .await;
    }

    async fn until_status(&self, mock: &MockServer, kind: ResourceKind, id: &str, status: &str) {
        eventually(format!("hand-made {kind:?} {id} is {status}"))
            .within(Duration::from_secs(20))
            .until(|| {
                mock.resources()
                    .into_iter()
                    .any(|r| r.kind == kind && r.id == id && r.status == status)
            })
            .await;
    }
}
