//! The observed instance → `status.atProvider`, the `Ready` condition and the connection
//! details. Pure.

use alibaba_sdk::ecs::{Disk, Instance, NetworkInterface};
use ferroplane_apis::alibabacloud::{
    DesiredStatus, ECSInstanceObservation, ECSInstanceStatus, InstanceDiskObservation,
    MetadataOptionsObservation, NetworkInterfaceObservation,
};
use ferroplane_runtime::{ConnectionDetails, Readiness};

use super::diff::status;
use crate::cloud_fields::non_empty;

/// Connection Secret keys.
pub const CONN_INSTANCE_ID: &str = "instanceId";
pub const CONN_PUBLIC_IP: &str = "publicIpAddress";
pub const CONN_PRIVATE_IP: &str = "privateIpAddress";

fn minutes(t: Option<jiff::Timestamp>) -> Option<String> {
    // ECS reports minutes only; print the same precision.
    t.map(|t| t.strftime("%Y-%m-%dT%H:%MZ").to_string())
}

fn int(v: impl TryInto<i32>) -> i32 {
    v.try_into().unwrap_or(i32::MAX)
}

fn network_interface(n: &NetworkInterface) -> NetworkInterfaceObservation {
    NetworkInterfaceObservation {
        network_interface_id: non_empty(&n.network_interface_id),
        interface_type: non_empty(&n.interface_type),
        mac_address: non_empty(&n.mac_address),
        primary_ip_address: non_empty(&n.primary_ip_address),
        ipv6_addresses: n
            .ipv6_sets
            .items
            .iter()
            .map(|a| a.ipv6_address.clone())
            .filter(|a| !a.is_empty())
            .collect(),
    }
}

fn metadata_options(i: &Instance) -> Option<MetadataOptionsObservation> {
    let m = &i.metadata_options;
    (!m.http_endpoint.is_empty() || !m.http_tokens.is_empty()).then(|| MetadataOptionsObservation {
        http_endpoint: non_empty(&m.http_endpoint),
        http_tokens: non_empty(&m.http_tokens),
        http_put_response_hop_limit: (m.http_put_response_hop_limit > 0)
            .then(|| int(m.http_put_response_hop_limit)),
    })
}

fn disk(d: &Disk) -> InstanceDiskObservation {
    InstanceDiskObservation {
        disk_id: non_empty(&d.disk_id),
        category: non_empty(&d.category),
        size: (d.size > 0).then(|| int(d.size)),
        performance_level: non_empty(&d.performance_level),
    }
}

/// `status.atProvider`; `ram_role` is the instance RAM role and `disks` its disks, when they
/// were looked up (`""`: no role).
pub fn at_provider(
    i: &Instance,
    ram_role: Option<&str>,
    disks: Option<&[Disk]>,
) -> ECSInstanceObservation {
    let spot = !i.spot_strategy.is_empty() && i.spot_strategy != "NoSpot";
    let network_interfaces: Vec<NetworkInterfaceObservation> = i
        .network_interfaces
        .items
        .iter()
        .map(network_interface)
        .collect();
    ECSInstanceObservation {
        instance_id: non_empty(&i.instance_id),
        status: non_empty(&i.status),
        public_ip_address: i.public_ip().map(str::to_owned),
        private_ip_address: i.private_ip().map(str::to_owned),
        zone_id: non_empty(&i.zone_id),
        instance_type: non_empty(&i.instance_type),
        creation_time: minutes(i.creation_time),
        cpu: (i.cpu > 0).then(|| int(i.cpu)),
        memory: (i.memory > 0).then(|| i64::try_from(i.memory).unwrap_or(i64::MAX)),
        os_name: non_empty(&i.os_name),
        instance_charge_type: non_empty(&i.instance_charge_type),
        // Pay-as-you-go instances report a placeholder date decades away: only a subscription's
        // expiry means something.
        expired_time: minutes(
            i.expired_time
                .filter(|_| i.instance_charge_type == "PrePaid"),
        ),
        stopped_mode: non_empty(&i.stopped_mode).filter(|m| m != "Not-applicable"),
        region_id: non_empty(&i.region_id),
        instance_name: non_empty(&i.instance_name),
        description: non_empty(&i.description),
        host_name: non_empty(&i.host_name),
        image_id: non_empty(&i.image_id),
        instance_type_family: non_empty(&i.instance_type_family),
        os_type: non_empty(&i.os_type),
        serial_number: non_empty(&i.serial_number),
        start_time: minutes(i.start_time),
        vpc_id: non_empty(&i.vpc_attributes.vpc_id),
        v_switch_id: non_empty(&i.vpc_attributes.vswitch_id),
        private_ip_addresses: i.vpc_attributes.private_ip_address.items.clone(),
        ipv6_addresses: network_interfaces
            .iter()
            .flat_map(|n| n.ipv6_addresses.iter().cloned())
            .collect(),
        eip_address: non_empty(&i.eip_address.ip_address),
        security_group_ids: i.security_group_ids.items.clone(),
        network_interfaces,
        internet_charge_type: non_empty(&i.internet_charge_type),
        internet_max_bandwidth_out: Some(int(i.internet_max_bandwidth_out)),
        internet_max_bandwidth_in: (i.internet_max_bandwidth_in > 0)
            .then(|| int(i.internet_max_bandwidth_in)),
        spot_strategy: non_empty(&i.spot_strategy),
        spot_price_limit: (spot && i.spot_price_limit > 0.0).then_some(i.spot_price_limit),
        spot_duration: spot.then(|| int(i.spot_duration)),
        spot_interruption_behavior: non_empty(&i.spot_interruption_behavior).filter(|_| spot),
        deletion_protection: Some(i.deletion_protection),
        key_pair_name: non_empty(&i.key_pair_name),
        ram_role_name: ram_role.and_then(non_empty),
        resource_group_id: non_empty(&i.resource_group_id),
        metadata_options: metadata_options(i),
        deployment_set_id: non_empty(&i.deployment_set_id),
        credit_specification: non_empty(&i.credit_specification),
        operation_locks: i
            .operation_locks
            .items
            .iter()
            .map(|l| l.lock_reason.clone())
            .collect(),
        system_disk: disks
            .into_iter()
            .flatten()
            .find(|d| d.disk_type == "system")
            .map(disk),
        data_disk_ids: disks
            .into_iter()
            .flatten()
            .filter(|d| d.disk_type == "data")
            .map(|d| d.disk_id.clone())
            .collect(),
        tags: i
            .tags
            .items
            .iter()
            .map(|t| (t.key.clone(), t.value.clone()))
            .collect(),
    }
}

/// The status fields observe reports (`atProvider`; conditions are the framework's).
pub fn status(i: &Instance, ram_role: Option<&str>, disks: Option<&[Disk]>) -> ECSInstanceStatus {
    ECSInstanceStatus {
        at_provider: Some(Box::new(at_provider(i, ram_role, disks))),
        ..ECSInstanceStatus::default()
    }
}

/// Ready when the instance is in the power state the spec asks for.
pub fn readiness(i: &Instance, desired: Option<DesiredStatus>) -> Readiness {
    let want = match desired.unwrap_or(DesiredStatus::Running) {
        DesiredStatus::Running => status::RUNNING,
        DesiredStatus::Stopped => status::STOPPED,
    };
    match i.status.as_str() {
        s if s == want => Readiness::Available,
        status::PENDING => Readiness::Creating,
        other => Readiness::Unavailable(format!(
            "instance {} is {other}, waiting for {want}",
            i.instance_id
        )),
    }
}

/// `instanceId`, `publicIpAddress`, `privateIpAddress` (those known).
pub fn connection_details(i: &Instance) -> ConnectionDetails {
    let mut d = ConnectionDetails::new();
    if !i.instance_id.is_empty() {
        d.insert(CONN_INSTANCE_ID, i.instance_id.as_bytes());
    }
    if let Some(ip) = i.public_ip() {
        d.insert(CONN_PUBLIC_IP, ip.as_bytes());
    }
    if let Some(ip) = i.private_ip() {
        d.insert(CONN_PRIVATE_IP, ip.as_bytes());
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use alibaba_sdk::ecs::{IpAddressList, VpcAttributes};

    fn running() -> Instance {
        Instance {
            instance_id: "i-1".into(),
            status: "Running".into(),
            instance_type: "ecs.g6.large".into(),
            cpu: 2,
            memory: 8192,
            creation_time: Some("2026-01-02T03:04:00Z".parse().unwrap()),
            public_ip_address: IpAddressList {
                items: vec!["47.0.0.1".into()],
            },
            vpc_attributes: VpcAttributes {
                private_ip_address: IpAddressList {
                    items: vec!["172.16.0.1".into()],
                },
                ..VpcAttributes::default()
            },
            ..Instance::default()
        }
    }

    #[test]
    fn status_fields() {
        let a = at_provider(&running(), None, None);
        assert_eq!(a.instance_id.as_deref(), Some("i-1"));
        assert_eq!(a.public_ip_address.as_deref(), Some("47.0.0.1"));
        assert_eq!(a.private_ip_address.as_deref(), Some("172.16.0.1"));
        assert_eq!(a.eip_address, None);
        let mut with_eip = running();
        with_eip.eip_address.ip_address = "39.96.0.11".into();
        let a_eip = at_provider(&with_eip, None, None);
        assert_eq!(a_eip.eip_address.as_deref(), Some("39.96.0.11"));
        assert_eq!(a.creation_time.as_deref(), Some("2026-01-02T03:04Z"));
        assert_eq!(a.memory, Some(8192));
        let json = serde_json::to_value(status(&running(), None, None).at_provider).unwrap();
        assert_eq!(json["status"], "Running");
        assert!(json.get("osName").is_none());
    }

    #[test]
    fn ready_follows_the_desired_power_state() {
        let i = running();
        assert_eq!(readiness(&i, None), Readiness::Available);
        assert!(matches!(
            readiness(&i, Some(DesiredStatus::Stopped)),
            Readiness::Unavailable(_)
        ));
        let mut pending = running();
        pending.status = "Pending".into();
        assert_eq!(readiness(&pending, None), Readiness::Creating);
    }

    #[test]
    fn connection_details_keys() {
        let d = connection_details(&running());
        assert_eq!(d.get(CONN_INSTANCE_ID), Some(&b"i-1"[..]));
        assert_eq!(d.get(CONN_PUBLIC_IP), Some(&b"47.0.0.1"[..]));
        assert_eq!(d.get(CONN_PRIVATE_IP), Some(&b"172.16.0.1"[..]));
    }
}
