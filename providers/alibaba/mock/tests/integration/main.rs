//! Integration tests of alibaba-mock, one binary: the mock over HTTP (signatures, instances,
//! describe, inspection, scale, Alibaba Cloud's official SDKs) and alibaba-sdk's client against
//! it.

mod client_against_mock;
mod mock_auth;
mod mock_capacity;
mod mock_catalog;
mod mock_create_defaults;
mod mock_describe;
mod mock_disks;
mod mock_eips;
mod mock_eni_eips;
mod mock_error_codes;
mod mock_go_sdk;
mod mock_injected_errors;
mod mock_inspection;
mod mock_instance_reads;
mod mock_instance_settings;
mod mock_instance_vpc;
mod mock_instances;
mod mock_key_pairs;
mod mock_launch_rules;
mod mock_nat_gateways;
mod mock_network;
mod mock_network_reads;
mod mock_official_sdk;
mod mock_oss;
mod mock_prefix_lists;
mod mock_records;
mod mock_scale;
mod mock_security_group_changes;
mod mock_security_group_rules;
mod mock_visibility;
mod sdk_python;
