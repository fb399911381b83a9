//! The observed instance → `status.atProvider`, the `Ready` condition and the connection
//! details. Pure.

use alibaba_sdk::ecs::Instance;
use ferroplane_apis::alibabacloud::{DesiredStatus, ECSInstanceObservation, ECSInstanceStatus};
use ferroplane_runtime::{ConnectionDetails, Readiness};

use super::diff::status;

/// Connection Secret keys.
pub const CONN_INSTANCE_ID: &str = "instanceId";
pub const CONN_PUBLIC_IP: &str = "publicIpAddress";
pub const CONN_PRIVATE_IP: &str = "privateIpAddress";

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// `status.atProvider`.
pub fn at_provider(i: &Instance) -> ECSInstanceObservation {
    ECSInstanceObservation {
        instance_id: non_empty(&i.instance_id),
        status: non_empty(&i.status),
        public_ip_address: i.public_ip().map(str::to_owned),
        private_ip_address: i.private_ip().map(str::to_owned),
        zone_id: non_empty(&i.zone_id),
        instance_type: non_empty(&i.instance_type),
        // ECS reports minutes only; print the same precision.
        creation_time: i
            .creation_time
            .map(|t| t.strftime("%Y-%m-%dT%H:%MZ").to_string()),
        cpu: (i.cpu > 0).then(|| i32::try_from(i.cpu).unwrap_or(i32::MAX)),
        memory: (i.memory > 0).then(|| i64::try_from(i.memory).unwrap_or(i64::MAX)),
        os_name: non_empty(&i.os_name),
        instance_charge_type: non_empty(&i.instance_charge_type),
        // Pay-as-you-go instances report a placeholder date decades away: only a subscription's
        // expiry means something.
        expired_time: i
            .expired_time
            .filter(|_| i.instance_charge_type == "PrePaid")
            .map(|t| t.strftime("%Y-%m-%dT%H:%MZ").to_string()),
        stopped_mode: non_empty(&i.stopped_mode).filter(|m| m != "Not-applicable"),
    }
}

/// The status fields observe reports (`atProvider`; conditions are the framework's).
pub fn status(i: &Instance) -> ECSInstanceStatus {
    ECSInstanceStatus {
        at_provider: at_provider(i),
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
        let a = at_provider(&running());
        assert_eq!(a.instance_id.as_deref(), Some("i-1"));
        assert_eq!(a.public_ip_address.as_deref(), Some("47.0.0.1"));
        assert_eq!(a.private_ip_address.as_deref(), Some("172.16.0.1"));
        assert_eq!(a.creation_time.as_deref(), Some("2026-01-02T03:04Z"));
        assert_eq!(a.memory, Some(8192));
        let json = serde_json::to_value(status(&running()).at_provider).unwrap();
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
