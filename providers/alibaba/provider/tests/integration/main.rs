//! Integration tests of provider-alibaba, one binary: the controllers in-process against the
//! sandbox API server and the ECS mock.

mod controller_support;

mod controller_batching;
mod controller_config;
mod controller_disks;
mod controller_ecs_errors;
mod controller_eips;
mod controller_eni_eips;
mod controller_failures;
mod controller_fields;
mod controller_key_pairs;
mod controller_lifecycle;
mod controller_nat_entries;
mod controller_nat_gateways;
mod controller_network;
mod controller_prefix_list_rules;
mod controller_rules_policy;
mod controller_security_group_rules;
mod controller_shared_reads;
mod controller_subscription;
mod controller_tenancy;
mod controller_tenancy_credentials;
mod controller_visibility;

mod conformance;
