//! The column definitions of each built-in printer.

use super::BuiltInKind;
use crate::catalog::table::column::{CREATION_TIMESTAMP_DESCRIPTION, ColumnDefinition};

impl BuiltInKind {
    pub(crate) fn columns(self) -> Vec<ColumnDefinition> {
        let name = ColumnDefinition::name_column();
        let age = col("Age", "string", CREATION_TIMESTAMP_DESCRIPTION);
        match self {
            Self::Namespace => vec![
                name,
                col("Status", "string", "The status of the namespace"),
                age,
            ],
            Self::Secret => vec![
                name,
                col(
                    "Type",
                    "string",
                    "Used to facilitate programmatic handling of secret data.",
                ),
                col("Data", "string", "Data contains the secret data."),
                age,
            ],
            Self::ConfigMap => vec![
                name,
                col("Data", "string", "Data contains the configuration data."),
                age,
            ],
            Self::Event => vec![
                col(
                    "Last Seen",
                    "string",
                    "The time at which the most recent occurrence of this event was recorded.",
                ),
                col(
                    "Type",
                    "string",
                    "Type of this event (Normal, Warning), new types could be added in the future",
                ),
                col(
                    "Reason",
                    "string",
                    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
                ),
                col("Object", "string", "The object that this event is about."),
                wide(
                    "Subobject",
                    "string",
                    "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.",
                ),
                wide("Source", "string", "The component reporting this event."),
                col(
                    "Message",
                    "string",
                    "A human-readable description of the status of this operation.",
                ),
                wide(
                    "First Seen",
                    "string",
                    "The time at which the event was first recorded.",
                ),
                wide(
                    "Count",
                    "string",
                    "The number of times this event has occurred.",
                ),
                ColumnDefinition {
                    priority: 1,
                    ..ColumnDefinition::name_column()
                },
            ],
            Self::Service => vec![
                name,
                col(
                    "Type",
                    "string",
                    "type determines how the Service is exposed.",
                ),
                col(
                    "Cluster-IP",
                    "string",
                    "clusterIP is the IP address of the service.",
                ),
                col(
                    "External-IP",
                    "string",
                    "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
                ),
                col(
                    "Port(s)",
                    "string",
                    "The list of ports that are exposed by this service.",
                ),
                age,
                wide(
                    "Selector",
                    "string",
                    "Route service traffic to pods with label keys and values matching this selector.",
                ),
            ],
            Self::Pod => vec![
                name,
                col(
                    "Ready",
                    "string",
                    "The aggregate readiness state of this pod for accepting traffic.",
                ),
                col(
                    "Status",
                    "string",
                    "The aggregate status of the containers in this pod.",
                ),
                col(
                    "Restarts",
                    "string",
                    "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
                ),
                age,
                wide("IP", "string", "podIP address allocated to the pod."),
                wide(
                    "Node",
                    "string",
                    "NodeName indicates in which node this pod is scheduled.",
                ),
                wide(
                    "Nominated Node",
                    "string",
                    "nominatedNodeName is set only when this pod preempts other pods on the node.",
                ),
                wide(
                    "Readiness Gates",
                    "string",
                    "If specified, all readiness gates will be evaluated for pod readiness.",
                ),
            ],
            // kube-apiserver 1.37 prints no SECRETS column (token Secrets are gone).
            Self::ServiceAccount => vec![name, age],
            Self::Deployment => vec![
                name,
                col("Ready", "string", "Number of the pod with ready state"),
                col(
                    "Up-to-date",
                    "string",
                    "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
                ),
                col(
                    "Available",
                    "string",
                    "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
                ),
                age,
                wide(
                    "Containers",
                    "string",
                    "Names of each container in the template.",
                ),
                wide(
                    "Images",
                    "string",
                    "Images referenced by each container in the template.",
                ),
                wide(
                    "Selector",
                    "string",
                    "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
                ),
            ],
            Self::ReplicaSet => vec![
                name,
                col(
                    "Desired",
                    "integer",
                    "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
                ),
                col(
                    "Current",
                    "integer",
                    "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
                ),
                col(
                    "Ready",
                    "integer",
                    "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
                ),
                age,
                wide(
                    "Containers",
                    "string",
                    "Names of each container in the template.",
                ),
                wide(
                    "Images",
                    "string",
                    "Images referenced by each container in the template.",
                ),
                wide(
                    "Selector",
                    "string",
                    "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
                ),
            ],
            Self::Job => vec![
                name,
                col("Status", "string", "Status of the job."),
                col(
                    "Completions",
                    "string",
                    "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.",
                ),
                col("Duration", "string", "Time required to complete the job."),
                age,
                wide(
                    "Containers",
                    "string",
                    "Names of each container in the template.",
                ),
                wide(
                    "Images",
                    "string",
                    "Images referenced by each container in the template.",
                ),
                wide(
                    "Selector",
                    "string",
                    "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
                ),
            ],
            Self::CronJob => vec![
                name,
                col(
                    "Schedule",
                    "string",
                    "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
                ),
                col(
                    "Timezone",
                    "string",
                    "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.",
                ),
                col(
                    "Suspend",
                    "boolean",
                    "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.",
                ),
                col(
                    "Active",
                    "integer",
                    "A list of pointers to currently running jobs.",
                ),
                col(
                    "Last Schedule",
                    "string",
                    "Information when was the last time the job was successfully scheduled.",
                ),
                age,
                wide(
                    "Containers",
                    "string",
                    "Names of each container in the template.",
                ),
                wide(
                    "Images",
                    "string",
                    "Images referenced by each container in the template.",
                ),
                wide(
                    "Selector",
                    "string",
                    "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
                ),
            ],
            Self::Node => vec![
                name,
                col("Status", "string", "The status of the node"),
                col("Roles", "string", "The roles of the node"),
                age,
                col("Version", "string", "Kubelet Version reported by the node."),
                wide(
                    "Internal-IP",
                    "string",
                    "List of addresses reachable to the node.",
                ),
                wide(
                    "External-IP",
                    "string",
                    "List of addresses reachable to the node.",
                ),
                wide(
                    "OS-Image",
                    "string",
                    "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
                ),
                wide(
                    "Kernel-Version",
                    "string",
                    "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
                ),
                wide(
                    "Container-Runtime",
                    "string",
                    "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
                ),
            ],
            Self::PersistentVolumeClaim => vec![
                name,
                col(
                    "Status",
                    "string",
                    "phase represents the current phase of PersistentVolumeClaim.",
                ),
                col(
                    "Volume",
                    "string",
                    "volumeName is the binding reference to the PersistentVolume backing this claim.",
                ),
                col(
                    "Capacity",
                    "string",
                    "capacity represents the actual resources of the underlying volume.",
                ),
                col(
                    "Access Modes",
                    "string",
                    "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1",
                ),
                col("StorageClass", "string", "StorageClass of the pvc"),
                col(
                    "VolumeAttributesClass",
                    "string",
                    "VolumeAttributesClass of the pvc",
                ),
                age,
                wide(
                    "VolumeMode",
                    "string",
                    "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.",
                ),
            ],
            Self::StatefulSet => vec![
                name,
                col("Ready", "string", "Number of the pod with ready state"),
                age,
                wide(
                    "Containers",
                    "string",
                    "Names of each container in the template.",
                ),
                wide(
                    "Images",
                    "string",
                    "Images referenced by each container in the template.",
                ),
            ],
            Self::Ingress => vec![
                name,
                col(
                    "Class",
                    "string",
                    "The name of the IngressClass resource that should be used for this Ingress.",
                ),
                col(
                    "Hosts",
                    "string",
                    "Hosts that incoming requests are matched against before the ingress rule",
                ),
                col(
                    "Address",
                    "string",
                    "Address is a list containing ingress points for the load-balancer",
                ),
                col("Ports", "string", "Ports of TLS configurations that open"),
                age,
            ],
            Self::HorizontalPodAutoscaler => vec![
                name,
                col(
                    "Reference",
                    "string",
                    "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.",
                ),
                col(
                    "Targets",
                    "string",
                    "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization.",
                ),
                col(
                    "MinPods",
                    "string",
                    "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.",
                ),
                col(
                    "MaxPods",
                    "integer",
                    "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.",
                ),
                col(
                    "Replicas",
                    "integer",
                    "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.",
                ),
                age,
            ],
            Self::PodDisruptionBudget => vec![
                name,
                col(
                    "Min Available",
                    "string",
                    "The minimum number of pods that must be available.",
                ),
                col(
                    "Max Unavailable",
                    "string",
                    "The maximum number of pods that may be unavailable.",
                ),
                col(
                    "Allowed Disruptions",
                    "integer",
                    "Calculated number of pods that may be disrupted at this time.",
                ),
                age,
            ],
            Self::Lease => vec![
                name,
                col(
                    "Holder",
                    "string",
                    "holderIdentity contains the identity of the holder of a current lease.",
                ),
                age,
            ],
            Self::RoleBinding => vec![
                name,
                col(
                    "Role",
                    "string",
                    "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.",
                ),
                age,
                wide("Users", "string", "Users in the roleBinding"),
                wide("Groups", "string", "Groups in the roleBinding"),
                wide(
                    "ServiceAccounts",
                    "string",
                    "ServiceAccounts in the roleBinding",
                ),
            ],
            Self::Generic => vec![
                name,
                ColumnDefinition {
                    name: "Created At".to_owned(),
                    type_: "date".to_owned(),
                    format: String::new(),
                    description: CREATION_TIMESTAMP_DESCRIPTION.to_owned(),
                    priority: 0,
                },
            ],
        }
    }
}

fn col(name: &str, type_: &str, description: &str) -> ColumnDefinition {
    ColumnDefinition {
        name: name.to_owned(),
        type_: type_.to_owned(),
        format: String::new(),
        description: description.to_owned(),
        priority: 0,
    }
}

fn wide(name: &str, type_: &str, description: &str) -> ColumnDefinition {
    ColumnDefinition {
        priority: 1,
        ..col(name, type_, description)
    }
}
