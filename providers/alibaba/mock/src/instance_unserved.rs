//! The fields DescribeInstances and DescribeInstanceAttribute report for ECS features the mock
//! does not serve (dedicated hosts, HPC and capacity reservations, hibernation, jumbo frames,
//! private DNS names, ...), for an instance that uses none of them: what the API reference
//! documents or its response example shows for such an instance, else the neutral value of the
//! type (marked "neutral"). The two actions type `IoOptimized` differently (a boolean in
//! DescribeInstances, `optimized` / `none` in DescribeInstanceAttribute), hence two builders.

use serde_json::{Value, json};

/// Fields both actions report.
fn common() -> Value {
    json!({
        // Neutral: no cluster, dedicated host or VLAN in the mock.
        "ClusterId": "",
        "VlanId": "",
        "DedicatedHostAttribute": {
            "DedicatedHostId": "",
            "DedicatedHostName": "",
            "DedicatedHostClusterId": "",
        },
    })
}

/// The extra fields of one element of DescribeInstances' `Instances.Instance`.
pub fn describe_instances_fields() -> Value {
    let own = json!({
        // Every type the mock sells is I/O optimized (its images all say
        // `IsSupportIoOptimized`), and any instance takes data disks (the response example's
        // `DeviceAvailable: true`).
        "IoOptimized": true,
        "DeviceAvailable": true,
        // Neutral: no GPU or local-disk type can launch in the mock's catalogue, which records
        // neither.
        "GPUAmount": 0,
        "GPUSpec": "",
        "LocalStorageAmount": 0,
        "LocalStorageCapacity": 0,
        // Neutral: deprecated or unserved placement and billing details.
        "HpcClusterId": "",
        "ISP": "",
        "SaleCycle": "",
        "Recyclable": false,
        "EnableNVS": false,
        "DeploymentSetGroupNo": 0,
        "RdmaIpAddress": {"IpAddress": []},
        "AdditionalInfo": {"EnableHighDensityMode": false},
        "ClockOptions": {"PtpStatus": ""},
        "HibernationOptions": {"Configured": false},
        "ImageOptions": {"LoginAsNonRoot": false, "CurrentOSNVMeSupported": false},
        "DedicatedInstanceAttribute": {"Affinity": "", "Tenancy": ""},
        "EcsCapacityReservationAttr": {
            "CapacityReservationId": "",
            "CapacityReservationPreference": "",
        },
        "PrivateDnsNameOptions": {
            "HostnameType": "",
            "EnableInstanceIdDnsARecord": false,
            "EnableInstanceIdDnsAAAARecord": false,
            "EnableIpDnsARecord": false,
            "EnableIpDnsPtrRecord": false,
        },
        // Neutral: the catalogue records no core count or threads per core.
        "CpuOptions": {
            "CoreCount": 0,
            "ThreadsPerCore": 0,
            "Numa": "",
            "TopologyType": "",
            "TurboMode": "",
            "EnableVISST": false,
            "EnableVRDT": false,
        },
    });
    crate::action::merged(common(), own)
}

/// The extra fields of DescribeInstanceAttribute's answer.
pub fn instance_attribute_fields() -> Value {
    let own = json!({
        "IoOptimized": "optimized",
        // Neutral: jumbo frames and in-transit encryption are not served.
        "EnableJumboFrame": false,
        "EnableNetworkEncryption": false,
        "NetworkOptions": {
            "BandwidthWeighting": "",
            "EnableJumboFrame": false,
            "EnableNetworkEncryption": false,
        },
    });
    crate::action::merged(common(), own)
}
