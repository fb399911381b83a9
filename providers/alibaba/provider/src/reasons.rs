//! Every reason provider-alibaba gives a user, one constant each: the reason of a failed step
//! (the first word of the `Synced=False` message and of the Warning event, and the `reason`
//! label of the error metric) and the `Ready` reason of a ProviderConfig or
//! ClusterProviderConfig. README's "Alibaba Cloud kinds and ProviderConfig" table lists each
//! one with what to do (a test keeps the two in step). Reasons the framework owns
//! (`ReferenceNotResolved`, `Available`, `ReconcileError`, ...) are constants of
//! ferroplane-runtime and ferroplane-apis.

// Cloud API failures (`crate::cloud_error`), for every managed kind.

/// The cloud throttles the account's calls in the region: ferroplane backs off; if it persists,
/// raise the poll interval or spread objects over accounts.
pub const THROTTLED: &str = "Throttled";
/// The cloud rejects the configuration's AccessKey or signature: put a valid, active AccessKey in
/// its credentials Secret or fix its credentials source.
pub const INVALID_CREDENTIALS: &str = "InvalidCredentials";
/// RAM denies the call: grant the configuration's user or role the permission the message names.
pub const FORBIDDEN: &str = "Forbidden";
/// The operation is not allowed for the instance's billing method: change the spec or the
/// instance's charge type.
pub const CHARGE_TYPE_VIOLATION: &str = "ChargeTypeViolation";
/// The instance, EIP or NAT gateway has deletion protection on: set `deletionProtection: false`
/// or `deletionPolicy: Orphan`.
pub const DELETION_PROTECTION: &str = "DeletionProtection";
/// The zone has no stock of the instance type: choose another `instanceType` or `zoneId`.
pub const NO_STOCK: &str = "NoStock";
/// ECS does not sell the instance type (or its disk category) in the zone, or the zone is no
/// longer on sale: choose another `instanceType` or `zoneId`.
pub const PLACEMENT_NOT_OFFERED: &str = "PlacementNotOffered";
/// An account quota is exhausted: release resources or raise the quota in the Quota Center.
pub const QUOTA_EXCEEDED: &str = "QuotaExceeded";
/// The instance is busy with another operation: nothing to do, ferroplane retries.
pub const INSTANCE_BUSY: &str = "InstanceBusy";
/// The cloud rejects a value of `spec.forProvider` (region, zone, image, type, ...): correct the
/// spec.
pub const INVALID_PARAMETER: &str = "InvalidParameter";
/// The cloud remembers the create token with other parameters: nothing to do, ferroplane retries
/// with the current spec.
pub const IDEMPOTENT_PARAMETER_MISMATCH: &str = "IdempotentParameterMismatch";
/// The endpoint cannot be reached: check `spec.endpoint`, DNS, proxy and network policies.
pub const ENDPOINT_UNREACHABLE: &str = "EndpointUnreachable";
/// The endpoint or region is not valid: fix the configuration's `endpoint` or `region`, or the
/// object's `regionId`.
pub const INVALID_ENDPOINT: &str = "InvalidEndpoint";
/// The cloud failed on its side: nothing to do, ferroplane retries.
pub const SERVER_ERROR: &str = "ServerError";
/// Any other cloud error: read the cloud's code in the message; correct the spec if it names a
/// parameter.
pub const API_ERROR: &str = "ApiError";
/// A read of instances by ID (`DescribeInstances`, shared by many objects) failed as a whole with
/// a code that names a missing instance: it is not taken as gone; nothing to do, ferroplane
/// retries.
pub const READ_FAILED: &str = "ReadFailed";

// ECSInstance.

/// A read from the Kubernetes API failed: nothing to do if it passes, else check the API server
/// and the provider's permissions.
pub const KUBERNETES_API_ERROR: &str = "KubernetesApiError";
/// The Secret named by `passwordSecretRef` does not exist: create it.
pub const PASSWORD_SECRET_NOT_FOUND: &str = "PasswordSecretNotFound";
/// The password Secret lacks the key `passwordSecretRef.key`: add the key or fix the reference.
pub const PASSWORD_KEY_MISSING: &str = "PasswordKeyMissing";
/// The password in the Secret is not UTF-8 text: store it as text.
pub const INVALID_PASSWORD: &str = "InvalidPassword";
/// ECS did not attach or detach the key pair: read the cloud's code in the message; ferroplane
/// retries.
pub const KEY_PAIR_NOT_BOUND: &str = "KeyPairNotBound";
/// The spec asks for something ECS cannot do (e.g. PrePaid without `period`): correct the spec.
pub const INVALID_SPEC: &str = "InvalidSpec";
/// The instance vanished before an update: nothing to do, it is looked up again.
pub const INSTANCE_NOT_FOUND: &str = "InstanceNotFound";
/// `RunInstances` answered without an instance ID, or an authorized rule is not listed yet:
/// nothing to do, the instance is found by its owner tag, the rule by its description marker.
pub const INVALID_RESPONSE: &str = "InvalidResponse";
/// A field that is fixed at creation changed: restore it, or create a new object.
pub const IMMUTABLE_FIELD_CHANGED: &str = "ImmutableFieldChanged";
/// ECS releases a subscription instance only after it expires: wait, or set `deletionPolicy:
/// Orphan`.
pub const SUBSCRIPTION_NOT_EXPIRED: &str = "SubscriptionNotExpired";

// EIPAssociation (`crate::network::eip_association`).

/// The EIP is associated with another resource: unassociate it there first, or name another
/// EIP. ferroplane never takes an EIP from a resource the object does not name.
pub const EIP_IN_USE: &str = "EIPInUse";
/// The network interface an EIPAssociation names (`instanceType: NetworkInterface`) is not
/// listed in its region: create it, or name another; ferroplane retries.
pub const NETWORK_INTERFACE_NOT_FOUND: &str = "NetworkInterfaceNotFound";

// SNATEntry and DNATEntry (`crate::network::snat_entry`, `crate::network::dnat_entry`).

/// The gateway's table already has an entry for this source (SNAT) or this address, port and
/// protocol (DNAT), made by someone else: ferroplane never adopts it. Delete that entry, or
/// change the spec.
pub const DUPLICATE_NAT_ENTRY: &str = "DuplicateNATEntry";
/// The EIP the entry uses is not bound to its NAT gateway: bind it with an EIPAssociation
/// (`instanceType: Nat`); ferroplane retries.
pub const EIP_NOT_ON_GATEWAY: &str = "EIPNotOnGateway";
/// Another entry of the table is `Pending` or `Modifying`, and the VPC API changes one entry of
/// a table at a time: nothing to do, ferroplane retries.
pub const NAT_TABLE_BUSY: &str = "NATTableBusy";

// SecurityGroupRule (`crate::network::security_group_rule`).

/// The group already has an identical rule (protocol, ports, peer, policy, priority) that this
/// object did not authorize: it is never adopted, since deleting the object would revoke another
/// owner's rule. Change this rule, revoke the other, or import it by setting
/// `ferroplane.io/external-name` to its ID.
pub const RULE_EXISTS: &str = "RuleExists";
/// The group's SecurityGroup object keeps its rules `Exclusive` (tag `ferroplane.io/rules-policy`)
/// and would revoke this rule: set `rulesPolicy: Additive` on that SecurityGroup.
pub const RULES_POLICY_EXCLUSIVE: &str = "RulesPolicyExclusive";

// Disk (`crate::disk`).

/// The disk's zone is not the zone of the instance it is to be attached to (ECS attaches only
/// within a zone): name an instance of the disk's zone, or create the Disk in the instance's zone.
pub const ZONE_MISMATCH: &str = "ZoneMismatch";
/// The instance a Disk is to be attached to does not exist: fix `instanceId` (or its reference),
/// or remove it to keep the disk unattached.
pub const INSTANCE_TO_ATTACH_NOT_FOUND: &str = "InstanceToAttachNotFound";

// Resolving `providerConfigRef` (`crate::config_resolution`): managed kinds, and a configuration's
// own `Ready`.

/// The referenced ProviderConfig or ClusterProviderConfig does not exist: create it or fix
/// `providerConfigRef`.
pub const PROVIDER_CONFIG_NOT_FOUND: &str = "ProviderConfigNotFound";
/// A ProviderConfig names a Secret in another namespace: use its own namespace or a
/// ClusterProviderConfig.
pub const SECRET_NAMESPACE_NOT_ALLOWED: &str = "SecretNamespaceNotAllowed";
/// The configuration lacks a field its credentials source needs, or its client settings are not
/// valid: fix its spec.
pub const INVALID_PROVIDER_CONFIG: &str = "InvalidProviderConfig";
/// The credentials Secret does not exist: create it with `accessKeyId` and `accessKeySecret`.
pub const CREDENTIALS_SECRET_NOT_FOUND: &str = "CredentialsSecretNotFound";
/// The credentials Secret's JSON cannot be read: fix its contents.
pub const MALFORMED_CREDENTIALS: &str = "MalformedCredentials";
/// The credentials Secret lacks a key: add `accessKeyId` and `accessKeySecret` (or the keys the
/// message names).
pub const CREDENTIALS_KEY_MISSING: &str = "CredentialsKeyMissing";
/// A namespaced ProviderConfig uses a credentials source only a ClusterProviderConfig may use:
/// use a Secret, or a ClusterProviderConfig.
pub const CREDENTIALS_SOURCE_NOT_ALLOWED: &str = "CredentialsSourceNotAllowed";
/// A namespaced ProviderConfig sets an endpoint outside the allow-list: remove it, or use a
/// ClusterProviderConfig.
pub const ENDPOINT_NOT_ALLOWED: &str = "EndpointNotAllowed";
/// The ClusterProviderConfig does not admit the object's namespace: ask its administrator, or use
/// a ProviderConfig of the namespace.
pub const NAMESPACE_NOT_ALLOWED: &str = "NamespaceNotAllowed";

// KeyPair.

/// A KeyPair without `publicKey`: no private key could be made and stored yet; tried again.
pub const KEY_NOT_GENERATED: &str = "KeyNotGenerated";
/// A KeyPair without `publicKey`: the `privateKey` its connection Secret holds is not a PEM
/// PKCS#8 RSA key; delete that entry (or the Secret) to have a new one made.
pub const STORED_KEY_UNREADABLE: &str = "StoredKeyUnreadable";

// ProviderConfig and ClusterProviderConfig `Ready`.

/// The configuration is still used by managed resources, so its deletion waits: delete or move
/// them.
pub const IN_USE: &str = "InUse";
/// The credentials source does not yield credentials: read the message and fix the source.
pub const CREDENTIALS_ERROR: &str = "CredentialsError";

// ECSFleet (`crate::fleet`): the Ready and Progressing reasons, and its events.

/// ECSFleet: every replica is Ready and made from the current template.
pub const FLEET_COMPLETE: &str = "InstancesUpToDate";
/// ECSFleet: instances are being created, replaced or removed.
pub const FLEET_PROGRESSING: &str = "InstancesUpdating";
/// ECSFleet: no (zone, instance type) of its placement can take the instances still to place.
pub const NO_CAPACITY: &str = "NoCapacity";
/// ECSFleet: no instance of the current template became Ready within
/// `progressDeadlineSeconds`; the rollout stopped with the old instances serving.
pub const PROGRESS_DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
/// ECSFleet: the spec cannot be acted on (the message says which field).
pub const INVALID_FLEET: &str = "InvalidFleetSpec";
/// ECSFleet event: ECS refused a (zone, instance type); the instance is placed elsewhere.
pub const PLACEMENT_REFUSED: &str = "PlacementRefused";
/// ECSFleet event: a member's instance is gone from the cloud (a reclaimed spot instance, a
/// release outside ferroplane); the member is replaced.
pub const INSTANCE_LOST: &str = "InstanceLost";
/// ECSFleet event: members stand where the placement rules would not put them now (a zone or
/// instance type open again, or no longer listed); they are moved, each new member first.
pub const FLEET_REBALANCING: &str = "Rebalancing";

#[cfg(test)]
mod tests {
    /// The README section that documents these reasons.
    const README_SECTION: &str = "### Alibaba Cloud kinds and ProviderConfig";

    #[test]
    fn every_reason_is_in_the_readme_table() {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../README.md"))
                .expect("README.md at the repository root");
        let start = readme
            .find(README_SECTION)
            .expect("README has the reasons section");
        let section = &readme[start..];
        let section = match section[README_SECTION.len()..].find("\n#") {
            Some(end) => &section[..README_SECTION.len() + end],
            None => section,
        };
        let source = include_str!("reasons.rs");
        let mut count = 0;
        for line in source.lines().filter(|l| l.starts_with("pub const ")) {
            let value = line
                .split('"')
                .nth(1)
                .unwrap_or_else(|| panic!("no string value in {line}"));
            count += 1;
            assert!(
                section.contains(&format!("| `{value}` |")),
                "README's {README_SECTION} table lacks a row for `{value}`"
            );
        }
        assert!(count > 30, "only {count} reasons read from reasons.rs");
    }
}
