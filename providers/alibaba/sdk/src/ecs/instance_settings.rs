//! Instance settings changed in place: public network billing and bandwidth
//! (`ModifyInstanceNetworkSpec`), the metadata service (`ModifyInstanceMetadataOptions`), the
//! instance RAM role (`AttachInstanceRamRole`, `DetachInstanceRamRole`,
//! `DescribeInstanceRamRole`), the resource group (`JoinResourceGroup`), the billing method
//! (`ModifyInstanceChargeType`) and the auto-renewal of
//! subscription instances (`ModifyInstanceAutoRenewAttribute`,
//! `DescribeInstanceAutoRenewAttribute`).

use serde::Deserialize;

use super::client::EcsClient;
use super::request::resolve_client_token;
use super::response::AckResponse;
use crate::error::{ApiError, Error};
use crate::rpc::Params;
use crate::wire::wrapped_list;

/// `ModifyInstanceNetworkSpec`: what to change (unset: unchanged).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkSpecChange {
    /// Outbound public bandwidth in Mbit/s.
    pub internet_max_bandwidth_out: Option<u32>,
    /// `PayByTraffic` or `PayByBandwidth` (ECS's `NetworkChargeType`).
    pub network_charge_type: Option<String>,
    /// Assign a public IP to a pay-as-you-go instance whose bandwidth rises from 0.
    pub allocate_public_ip: bool,
}

/// `ModifyInstanceMetadataOptions`: the three settings (ECS requires `HttpEndpoint`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataOptionsChange {
    /// `enabled` or `disabled`.
    pub http_endpoint: String,
    /// `optional` or `required`; unchanged when unset.
    pub http_tokens: Option<String>,
    /// 1–64; unchanged when unset.
    pub http_put_response_hop_limit: Option<u32>,
}

/// One (instance, role) pair of `DescribeInstanceRamRole`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct InstanceRamRole {
    /// The instance.
    pub instance_id: String,
    /// Its role.
    pub ram_role_name: String,
}

wrapped_list!(InstanceRamRoleList, "InstanceRamRoleSet", InstanceRamRole);

/// The `DescribeInstanceRamRole` response.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DescribeInstanceRamRoleResponse {
    /// The request ID.
    pub request_id: String,
    /// The pairs found.
    pub instance_ram_role_sets: InstanceRamRoleList,
}

/// One instance's outcome of an attach or detach.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct RamRoleResult {
    /// `200` on success, else an error code.
    pub code: String,
    /// What happened.
    pub message: String,
    /// The instance.
    pub instance_id: String,
    /// Whether it worked.
    pub success: bool,
}

wrapped_list!(
    AttachResultList,
    "AttachInstanceRamRoleResult",
    RamRoleResult
);
wrapped_list!(
    DetachResultList,
    "DetachInstanceRamRoleResult",
    RamRoleResult
);

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct AttachResponse {
    request_id: String,
    fail_count: u32,
    attach_instance_ram_role_results: AttachResultList,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct DetachResponse {
    request_id: String,
    fail_count: u32,
    detach_instance_ram_role_results: DetachResultList,
}

/// The first failed instance of a partly failed batch, as the API error it stands for.
fn first_failure(action: &str, request_id: String, results: &[RamRoleResult]) -> Error {
    let failed = results.iter().find(|r| !r.success);
    Error::Api(Box::new(ApiError {
        action: action.to_owned(),
        code: failed.map_or_else(|| "UnknownError".to_owned(), |r| r.code.clone()),
        message: failed.map_or_else(
            || "FailCount is not 0 but no instance result failed".to_owned(),
            |r| format!("instance {}: {}", r.instance_id, r.message),
        ),
        request_id: Some(request_id),
        http_status: 200,
        recommend: None,
        retry_after: None,
    }))
}

/// The auto-renewal of one subscription instance (`DescribeInstanceAutoRenewAttribute`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct InstanceRenewAttribute {
    /// The instance.
    pub instance_id: String,
    /// Renewed automatically before it expires.
    pub auto_renew_enabled: bool,
    /// Length of each renewal, in `period_unit`s.
    pub duration: u32,
    /// `Month`, `Week` or `Year`.
    pub period_unit: String,
    /// `AutoRenewal`, `Normal` or `NotRenewal`.
    pub renewal_status: String,
}

wrapped_list!(
    InstanceRenewAttributeList,
    "InstanceRenewAttribute",
    InstanceRenewAttribute
);

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
struct DescribeAutoRenewResponse {
    instance_renew_attributes: InstanceRenewAttributeList,
}

/// `ModifyInstanceAutoRenewAttribute`: renew automatically or not, and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoRenewChange {
    /// Renew automatically.
    pub auto_renew: bool,
    /// Length of each renewal (with `period_unit`); unchanged when unset.
    pub duration: Option<u32>,
    /// `Month` (default), `Week` or `Year`.
    pub period_unit: Option<String>,
}

/// The `ReplaceSystemDisk` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ReplaceSystemDiskResponse {
    /// The request ID.
    pub request_id: String,
    /// The new system disk.
    pub disk_id: String,
}

fn json_ids(ids: &[String]) -> String {
    serde_json::to_string(ids).unwrap_or_else(|_| "[]".to_owned())
}

impl EcsClient {
    /// `ModifyInstanceNetworkSpec` (idempotent through a fresh ClientToken).
    pub async fn modify_instance_network_spec(
        &self,
        instance_id: &str,
        change: &NetworkSpecChange,
    ) -> Result<AckResponse, Error> {
        let token = resolve_client_token("ModifyInstanceNetworkSpec", None)?;
        let mut p = Params::new();
        p.set("InstanceId", instance_id)
            .opt("InternetMaxBandwidthOut", change.internet_max_bandwidth_out)
            .opt("NetworkChargeType", change.network_charge_type.as_ref())
            .set("ClientToken", token);
        if change.allocate_public_ip {
            p.set("AllocatePublicIp", true);
        }
        self.call_typed("ModifyInstanceNetworkSpec", &p).await
    }

    /// `ModifyInstanceMetadataOptions`.
    pub async fn modify_instance_metadata_options(
        &self,
        instance_id: &str,
        change: &MetadataOptionsChange,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("InstanceId", instance_id)
            .set("HttpEndpoint", &change.http_endpoint)
            .opt("HttpTokens", change.http_tokens.as_ref())
            .opt(
                "HttpPutResponseHopLimit",
                change.http_put_response_hop_limit,
            );
        self.call_typed("ModifyInstanceMetadataOptions", &p).await
    }

    /// `AttachInstanceRamRole` to these instances; a failure on any of them is an error.
    pub async fn attach_instance_ram_role(
        &self,
        instance_ids: &[String],
        role: &str,
    ) -> Result<(), Error> {
        let mut p = Params::new();
        p.set("InstanceIds", json_ids(instance_ids))
            .set("RamRoleName", role);
        let r: AttachResponse = self.call_typed("AttachInstanceRamRole", &p).await?;
        if r.fail_count > 0 {
            return Err(first_failure(
                "AttachInstanceRamRole",
                r.request_id,
                &r.attach_instance_ram_role_results.items,
            ));
        }
        Ok(())
    }

    /// `DetachInstanceRamRole` (`role`: only when it is that role); a failure on any instance
    /// is an error.
    pub async fn detach_instance_ram_role(
        &self,
        instance_ids: &[String],
        role: Option<&str>,
    ) -> Result<(), Error> {
        let mut p = Params::new();
        p.set("InstanceIds", json_ids(instance_ids))
            .opt("RamRoleName", role);
        let r: DetachResponse = self.call_typed("DetachInstanceRamRole", &p).await?;
        if r.fail_count > 0 {
            return Err(first_failure(
                "DetachInstanceRamRole",
                r.request_id,
                &r.detach_instance_ram_role_results.items,
            ));
        }
        Ok(())
    }

    /// `DescribeInstanceRamRole` for at most 100 instances: their (instance, role) pairs;
    /// instances without a role are absent.
    pub async fn describe_instance_ram_roles(
        &self,
        instance_ids: &[String],
    ) -> Result<Vec<InstanceRamRole>, Error> {
        if instance_ids.is_empty() || instance_ids.len() > 100 {
            return Err(Error::InvalidRequest {
                action: "DescribeInstanceRamRole".into(),
                reason: format!(
                    "{} instance IDs given; between 1 and 100 are allowed",
                    instance_ids.len()
                ),
            });
        }
        let mut p = Params::new();
        p.set("InstanceIds", json_ids(instance_ids))
            .set("PageSize", 50);
        let r: DescribeInstanceRamRoleResponse =
            self.call_typed("DescribeInstanceRamRole", &p).await?;
        Ok(r.instance_ram_role_sets.items)
    }

    /// `ModifyInstanceAutoRenewAttribute` of one subscription instance (ECS refuses
    /// pay-as-you-go ones).
    pub async fn modify_instance_auto_renew_attribute(
        &self,
        instance_id: &str,
        change: &AutoRenewChange,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("InstanceId", instance_id)
            .set("AutoRenew", change.auto_renew)
            .set(
                "RenewalStatus",
                if change.auto_renew {
                    "AutoRenewal"
                } else {
                    "Normal"
                },
            )
            .opt("Duration", change.duration)
            .opt("PeriodUnit", change.period_unit.as_ref());
        self.call_typed("ModifyInstanceAutoRenewAttribute", &p)
            .await
    }

    /// `DescribeInstanceAutoRenewAttribute` of at most 100 subscription instances.
    pub async fn describe_instance_auto_renew_attribute(
        &self,
        instance_ids: &[String],
    ) -> Result<Vec<InstanceRenewAttribute>, Error> {
        if instance_ids.is_empty() || instance_ids.len() > 100 {
            return Err(Error::InvalidRequest {
                action: "DescribeInstanceAutoRenewAttribute".into(),
                reason: format!(
                    "{} instance IDs given; between 1 and 100 are allowed",
                    instance_ids.len()
                ),
            });
        }
        let mut p = Params::new();
        p.set("InstanceId", instance_ids.join(","))
            .set("PageSize", 100);
        let r: DescribeAutoRenewResponse = self
            .call_typed("DescribeInstanceAutoRenewAttribute", &p)
            .await?;
        Ok(r.instance_renew_attributes.items)
    }

    /// `ModifyInstanceChargeType` of one instance to `charge_type` (`PrePaid` needs `period`,
    /// in `period_unit`s, Month by default); paid automatically, idempotent through a fresh
    /// ClientToken.
    pub async fn modify_instance_charge_type(
        &self,
        instance_id: &str,
        charge_type: &str,
        period: Option<u32>,
        period_unit: Option<&str>,
    ) -> Result<AckResponse, Error> {
        let token = resolve_client_token("ModifyInstanceChargeType", None)?;
        let mut p = Params::new();
        p.set("InstanceIds", json_ids(&[instance_id.to_owned()]))
            .set("InstanceChargeType", charge_type)
            .opt("Period", period)
            .opt("PeriodUnit", period_unit)
            .set("AutoPay", true)
            .set("ClientToken", token);
        self.call_typed("ModifyInstanceChargeType", &p).await
    }

    /// `ReplaceSystemDisk` of a Stopped instance with a new one from `image_id` (the old
    /// disk's data is lost); the login is the key pair or password given. Returns the new disk.
    pub async fn replace_system_disk(
        &self,
        instance_id: &str,
        image_id: &str,
        system_disk_size: Option<u32>,
        key_pair_name: Option<&str>,
        password: Option<&crate::Secret>,
    ) -> Result<ReplaceSystemDiskResponse, Error> {
        let token = resolve_client_token("ReplaceSystemDisk", None)?;
        let mut p = Params::new();
        p.set("InstanceId", instance_id)
            .set("ImageId", image_id)
            .opt("SystemDisk.Size", system_disk_size)
            .opt("KeyPairName", key_pair_name)
            .opt("Password", password.map(crate::Secret::expose))
            .set("ClientToken", token);
        self.call_typed("ReplaceSystemDisk", &p).await
    }

    /// `JoinResourceGroup` of one instance.
    pub async fn join_resource_group(
        &self,
        instance_id: &str,
        resource_group_id: &str,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("ResourceType", "instance")
            .set("ResourceId", instance_id)
            .set("ResourceGroupId", resource_group_id);
        self.call_typed("JoinResourceGroup", &p).await
    }

    /// `AssignIpv6Addresses`: `count` more IPv6 addresses, picked by ECS from the vSwitch's
    /// block, on the network interface `eni` (its vSwitch must have IPv6 turned on).
    pub async fn assign_ipv6_addresses(&self, eni: &str, count: u32) -> Result<AckResponse, Error> {
        let token = resolve_client_token("AssignIpv6Addresses", None)?;
        let mut p = Params::new();
        p.set("NetworkInterfaceId", eni)
            .set("Ipv6AddressCount", count)
            .set("ClientToken", token);
        self.call_typed("AssignIpv6Addresses", &p).await
    }

    /// `UnassignIpv6Addresses`: releases `addresses` from the network interface `eni`.
    pub async fn unassign_ipv6_addresses(
        &self,
        eni: &str,
        addresses: &[String],
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("NetworkInterfaceId", eni);
        p.list("Ipv6Address", addresses);
        self.call_typed("UnassignIpv6Addresses", &p).await
    }

    /// `ModifyInstanceDeployment` into deployment set `deployment_set_id`, on the instance's
    /// current host (`Force=false`: ECS never restarts the instance for it).
    pub async fn modify_instance_deployment(
        &self,
        instance_id: &str,
        deployment_set_id: &str,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("InstanceId", instance_id)
            .set("DeploymentSetId", deployment_set_id)
            .set("Force", false);
        self.call_typed("ModifyInstanceDeployment", &p).await
    }

    /// `ModifyInstanceVpcAttribute` of a Stopped instance: moves it to `vswitch_id` (same VPC,
    /// same zone) and gives it `private_ip_address`, or an address ECS picks when `None`.
    pub async fn modify_instance_vpc_attribute(
        &self,
        instance_id: &str,
        vswitch_id: &str,
        private_ip_address: Option<&str>,
    ) -> Result<AckResponse, Error> {
        let mut p = Params::new();
        p.set("InstanceId", instance_id)
            .set("VSwitchId", vswitch_id)
            .opt("PrivateIpAddress", private_ip_address);
        self.call_typed("ModifyInstanceVpcAttribute", &p).await
    }
}
