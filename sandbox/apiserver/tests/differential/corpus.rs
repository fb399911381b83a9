//! The request sequences: kubectl's everyday commands (`everyday`), what the Service strategy
//! does with types and node ports (`services`), and for each of the served kinds the same
//! scenarios (`per_kind`: create and read, duplicate, labels and annotations,
//! each patch type, server-side apply twice, replace, delete and read again).

/// How a step's answers are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// Success or failure, and the error.
    Outcome,
    /// Also stdout.
    Output,
}

#[derive(Debug, Clone)]
pub struct Step {
    pub args: Vec<String>,
    pub stdin: Option<String>,
    pub compare: Compare,
}

#[derive(Debug, Clone)]
pub struct Sequence {
    pub name: String,
    pub steps: Vec<Step>,
}

fn step(compare: Compare, args: &str) -> Step {
    Step {
        args: split(args),
        stdin: None,
        compare,
    }
}

/// Splits on spaces; `'...'` keeps spaces (as a shell would).
fn split(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in args.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn out(args: &str) -> Step {
    step(Compare::Output, args)
}

fn outcome(args: &str) -> Step {
    step(Compare::Outcome, args)
}

fn with_input(mut step: Step, input: &str) -> Step {
    step.stdin = Some(input.to_owned());
    step
}

fn seq(name: &str, steps: Vec<Step>) -> Sequence {
    Sequence {
        name: name.to_owned(),
        steps,
    }
}

const DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1", ports: [{containerPort: 80}]}
"#;

const NODE_PORT_SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata: {name: np}\nspec: {type: NodePort, selector: {app: x}, ports: [{port: 80, nodePort: 30080}]}\n";

/// What kube-apiserver's Service validation and strategy do with types and node ports.
fn services() -> Vec<Sequence> {
    vec![
        seq(
            "service-node-port-on-cluster-ip",
            vec![with_input(
                outcome("create -f -"),
                "apiVersion: v1\nkind: Service\nmetadata: {name: bad}\nspec: {ports: [{port: 80, nodePort: 30081}]}\n",
            )],
        ),
        seq(
            "service-without-ports",
            vec![with_input(
                outcome("create -f -"),
                "apiVersion: v1\nkind: Service\nmetadata: {name: bad}\nspec: {selector: {app: x}}\n",
            )],
        ),
        seq(
            "service-node-port-dropped-with-the-type",
            vec![
                with_input(out("create -f -"), NODE_PORT_SERVICE),
                out(
                    "get service np -o jsonpath={.spec.ports[0].nodePort}/{.spec.externalTrafficPolicy}",
                ),
                out(r#"patch service np --type=merge -p {"spec":{"type":"ClusterIP"}}"#),
                out(
                    "get service np -o jsonpath={.spec.type}/{.spec.ports[0].nodePort}/{.spec.externalTrafficPolicy}",
                ),
            ],
        ),
        seq(
            "service-load-balancer-defaults",
            vec![
                with_input(
                    out("create -f -"),
                    "apiVersion: v1\nkind: Service\nmetadata: {name: lb}\nspec: {type: LoadBalancer, selector: {app: x}, ports: [{port: 80, nodePort: 30082}]}\n",
                ),
                out(
                    "get service lb -o jsonpath={.spec.allocateLoadBalancerNodePorts}/{.spec.externalTrafficPolicy}/{.status.loadBalancer}",
                ),
            ],
        ),
    ]
}

/// kubectl's everyday commands, as a new user types them.
fn everyday() -> Vec<Sequence> {
    vec![
        seq("api-versions", vec![outcome("api-versions")]),
        seq("api-resources", vec![outcome("api-resources")]),
        seq("cluster-info", vec![outcome("cluster-info")]),
        seq("get-nodes", vec![outcome("get nodes")]),
        seq("get-namespaces", vec![outcome("get namespaces")]),
        seq("get-all-empty", vec![out("get all")]),
        seq("get-pods-empty", vec![out("get pods")]),
        seq(
            "create-configmap",
            vec![
                out("create configmap settings --from-literal=a=1 --from-literal=b=2"),
                out("get configmap settings -o jsonpath={.data}"),
                out("get configmaps"),
                outcome("describe configmap settings"),
            ],
        ),
        seq(
            "create-secret",
            vec![
                out("create secret generic creds --from-literal=user=admin"),
                out("get secret creds -o jsonpath={.data.user}"),
                out("get secrets"),
            ],
        ),
        seq(
            "create-secret-tls-missing-file",
            vec![outcome(
                "create secret tls t --cert=/nonexistent --key=/nonexistent",
            )],
        ),
        seq(
            "create-serviceaccount",
            vec![
                out("create serviceaccount robot"),
                out("get serviceaccounts robot"),
            ],
        ),
        seq(
            "create-deployment",
            vec![
                out("create deployment web --image=nginx:1 --replicas=2"),
                out("get deployment web -o jsonpath={.spec.replicas}"),
            ],
        ),
        seq(
            "scale-deployment",
            vec![
                outcome("create deployment web --image=nginx:1"),
                out("scale deployment web --replicas=3"),
                out("get deployment web -o jsonpath={.spec.replicas}"),
            ],
        ),
        seq(
            "rollout-status",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                out("rollout status deployment/web --timeout=60s"),
            ],
        ),
        seq(
            "set-image-and-history",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                out("rollout status deployment/web --timeout=60s"),
                out("set image deployment/web nginx=nginx:2"),
                out("rollout status deployment/web --timeout=60s"),
                out("rollout history deployment/web"),
            ],
        ),
        seq(
            "rollout-undo",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                out("rollout status deployment/web --timeout=60s"),
                out("set image deployment/web nginx=nginx:2"),
                out("rollout status deployment/web --timeout=60s"),
                out("rollout undo deployment/web"),
                out("rollout status deployment/web --timeout=60s"),
                out("get deployment web -o jsonpath={.spec.template.spec.containers[0].image}"),
            ],
        ),
        seq(
            "rollout-restart",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                out("rollout restart deployment/web"),
            ],
        ),
        seq(
            "expose-deployment",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                out("expose deployment web --port=80 --target-port=8080"),
                out("get service web -o jsonpath={.spec.ports}"),
            ],
        ),
        seq(
            "label-and-select",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                out("label deployment web tier=frontend"),
                out("get deployments -l tier=frontend -o name"),
                out("label deployment web tier-"),
                out("get deployments -l tier=frontend -o name"),
            ],
        ),
        seq(
            "annotate",
            vec![
                outcome("create configmap c"),
                out("annotate configmap c note=hello"),
                out("annotate configmap c note=again"),
                out("annotate configmap c note=again --overwrite"),
                out("get configmap c -o jsonpath={.metadata.annotations.note}"),
            ],
        ),
        seq(
            "describe-deployment",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                outcome("describe deployment web"),
            ],
        ),
        seq(
            "create-role",
            vec![
                out("create role pod-reader --verb=get --verb=list --resource=pods"),
                out("get role pod-reader -o jsonpath={.rules}"),
            ],
        ),
        seq(
            "create-rolebinding",
            vec![
                outcome("create role pod-reader --verb=get --resource=pods"),
                out("create rolebinding read-pods --role=pod-reader --user=alice"),
                out("get rolebinding read-pods -o jsonpath={.subjects}"),
            ],
        ),
        seq(
            "auth-can-i",
            vec![
                out("auth can-i get pods"),
                out("auth can-i create deployments.apps"),
            ],
        ),
        seq(
            "auth-can-i-as",
            vec![
                outcome("create role pod-reader --verb=get --resource=pods"),
                outcome("create rolebinding read-pods --role=pod-reader --user=alice"),
                out("auth can-i get pods --as=alice"),
                out("auth can-i delete pods --as=alice"),
            ],
        ),
        seq(
            "create-job",
            vec![
                out("create job once --image=busybox -- echo hi"),
                out("get job once -o jsonpath={.spec.template.spec.containers[0].image}"),
            ],
        ),
        seq(
            "create-cronjob",
            vec![
                out("create cronjob tick --image=busybox --schedule='*/5 * * * *'"),
                out("get cronjob tick -o jsonpath={.spec.schedule}"),
            ],
        ),
        seq(
            "create-ingress",
            vec![
                out("create ingress simple --rule=foo.com/bar=svc1:8080"),
                out("get ingress simple -o jsonpath={.spec.rules[0].host}"),
            ],
        ),
        seq(
            "apply-client-side",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                with_input(out("apply -f -"), DEPLOYMENT),
                with_input(out("apply -f -"), &DEPLOYMENT.replace("nginx:1", "nginx:2")),
            ],
        ),
        seq(
            "apply-server-side",
            vec![
                with_input(out("apply --server-side -f -"), DEPLOYMENT),
                with_input(out("apply --server-side -f -"), DEPLOYMENT),
                out("rollout status deployment/web --timeout=60s"),
                out("get deployment web -o jsonpath={.metadata.managedFields[*].manager}"),
            ],
        ),
        seq(
            "diff",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                with_input(outcome("diff -f -"), DEPLOYMENT),
            ],
        ),
        seq(
            "patch-merge",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                out("patch deployment web --type=merge -p {\"spec\":{\"replicas\":4}}"),
                out("get deployment web -o jsonpath={.spec.replicas}"),
            ],
        ),
        seq("explain", vec![out("explain deployment.spec.strategy")]),
        seq("explain-pod", vec![outcome("explain pods.spec.containers")]),
        seq(
            "delete-deployment",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                out("delete deployment web"),
                out("get deployment web"),
            ],
        ),
        seq(
            "wait-available",
            vec![
                with_input(out("apply -f -"), DEPLOYMENT),
                out("wait --for=condition=Available deployment/web --timeout=60s"),
            ],
        ),
        seq("get-events", vec![outcome("get events")]),
        seq(
            "get-missing",
            vec![out("get deployment nope"), out("get configmap nope")],
        ),
        seq("unknown-kind", vec![out("get widgets")]),
        seq(
            "create-statefulset-claims",
            vec![
                with_input(
                    out("apply -f -"),
                    r#"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 0
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: etcd}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"#,
                ),
                out("get pvc"),
            ],
        ),
    ]
}

/// A kind the scenarios run on: its kubectl name, a manifest of an object `x`, and a merge
/// patch that changes it.
struct Kind {
    name: &'static str,
    resource: &'static str,
    manifest: &'static str,
    merge_patch: &'static str,
    /// A `kubectl wait` for the status a controller writes after the create, if one does: a
    /// replace sends the resourceVersion it read, so a status write between its read and its
    /// write conflicts. The sandbox writes it at once, kube-controller-manager at its first sync
    /// (the HPA controller: about 15 s after the create); the replace waits for it on both.
    settled: Option<&'static str>,
}

const KINDS: &[Kind] = &[
    Kind {
        name: "configmap",
        resource: "configmap",
        manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: '1'}\n",
        merge_patch: r#"{"data":{"a":"2"}}"#,
        settled: None,
    },
    Kind {
        name: "secret",
        resource: "secret",
        manifest: "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\nstringData: {a: '1'}\n",
        merge_patch: r#"{"stringData":{"a":"2"}}"#,
        settled: None,
    },
    Kind {
        name: "serviceaccount",
        resource: "serviceaccount",
        manifest: "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: x}\n",
        merge_patch: r#"{"automountServiceAccountToken":false}"#,
        settled: None,
    },
    Kind {
        name: "service",
        resource: "service",
        manifest: "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {selector: {app: x}, ports: [{port: 80}]}\n",
        merge_patch: r#"{"spec":{"selector":{"app":"y"}}}"#,
        settled: None,
    },
    Kind {
        name: "deployment",
        resource: "deployment",
        manifest: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: 1, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c, image: 'nginx:1'}]}}}\n",
        merge_patch: r#"{"spec":{"replicas":2}}"#,
        settled: None,
    },
    Kind {
        name: "statefulset",
        resource: "statefulset",
        manifest: "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec: {replicas: 1, serviceName: x, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c, image: 'etcd'}]}}}\n",
        merge_patch: r#"{"spec":{"replicas":2}}"#,
        settled: None,
    },
    Kind {
        name: "role",
        resource: "role",
        manifest: "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: x}\nrules: [{apiGroups: [''], resources: [pods], verbs: [get]}]\n",
        merge_patch: r#"{"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["list"]}]}"#,
        settled: None,
    },
    Kind {
        name: "rolebinding",
        resource: "rolebinding",
        manifest: "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: x}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}\nsubjects: [{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}]\n",
        merge_patch: r#"{"subjects":[{"kind":"User","name":"bob","apiGroup":"rbac.authorization.k8s.io"}]}"#,
        settled: None,
    },
    Kind {
        name: "lease",
        resource: "lease",
        manifest: "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: x}\nspec: {holderIdentity: a}\n",
        merge_patch: r#"{"spec":{"holderIdentity":"b"}}"#,
        settled: None,
    },
    Kind {
        name: "pdb",
        resource: "poddisruptionbudget",
        manifest: "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: x}\nspec: {minAvailable: 1, selector: {matchLabels: {app: x}}}\n",
        merge_patch: r#"{"spec":{"minAvailable":2}}"#,
        settled: None,
    },
    Kind {
        name: "ingress",
        resource: "ingress",
        manifest: "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: x}\nspec: {rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: s, port: {number: 80}}}}]}}]}\n",
        merge_patch: r#"{"spec":{"rules":[{"host":"b.example.com"}]}}"#,
        settled: None,
    },
    Kind {
        name: "hpa",
        resource: "horizontalpodautoscaler",
        manifest: "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: x}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: x}, minReplicas: 1, maxReplicas: 3}\n",
        merge_patch: r#"{"spec":{"maxReplicas":4}}"#,
        settled: Some(
            r#"wait --for=jsonpath={.status.conditions[?(@.type=="AbleToScale")].status}=False horizontalpodautoscaler/x --timeout=90s"#,
        ),
    },
    Kind {
        name: "pvc",
        resource: "persistentvolumeclaim",
        manifest: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: x}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
        merge_patch: r#"{"metadata":{"labels":{"size":"small"}}}"#,
        settled: None,
    },
    Kind {
        name: "job",
        resource: "job",
        manifest: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}\n",
        merge_patch: r#"{"spec":{"activeDeadlineSeconds":60}}"#,
        settled: None,
    },
    Kind {
        name: "cronjob",
        resource: "cronjob",
        manifest: "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: x}\nspec: {schedule: '*/5 * * * *', jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}\n",
        merge_patch: r#"{"spec":{"schedule":"*/10 * * * *"}}"#,
        settled: None,
    },
];

/// The same scenarios for every kind.
fn per_kind() -> Vec<Sequence> {
    let mut out = Vec::new();
    for kind in KINDS {
        let r = kind.resource;
        let create = || with_input(out_step("create -f -"), kind.manifest);
        out.push(seq(
            &format!("{}-create-get", kind.name),
            vec![
                create(),
                out_step(&format!("get {r} x -o name")),
                out_step(&format!("get {r} x -o jsonpath={{.metadata.name}}")),
            ],
        ));
        out.push(seq(
            &format!("{}-create-twice", kind.name),
            vec![create(), create()],
        ));
        out.push(seq(
            &format!("{}-table", kind.name),
            vec![create(), outcome(&format!("get {r}"))],
        ));
        out.push(seq(
            &format!("{}-label-annotate", kind.name),
            vec![
                create(),
                out_step(&format!("label {r} x team=a")),
                out_step(&format!("annotate {r} x note=n")),
                out_step(&format!("get {r} -l team=a -o name")),
            ],
        ));
        out.push(seq(
            &format!("{}-patch-merge", kind.name),
            vec![
                create(),
                out_step(&format!(
                    "patch {r} x --type=merge -p '{}'",
                    kind.merge_patch
                )),
            ],
        ));
        out.push(seq(
            &format!("{}-patch-json", kind.name),
            vec![
                create(),
                out_step(&format!(
                    "patch {r} x --type=json -p [{{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{{\"a\":\"b\"}}}}]"
                )),
                out_step(&format!(
                    "patch {r} x --type=json -p [{{\"op\":\"test\",\"path\":\"/metadata/labels/a\",\"value\":\"c\"}}]"
                )),
            ],
        ));
        out.push(seq(
            &format!("{}-patch-strategic", kind.name),
            vec![
                create(),
                out_step(&format!(
                    "patch {r} x -p {{\"metadata\":{{\"labels\":{{\"s\":\"t\"}}}}}}"
                )),
            ],
        ));
        out.push(seq(
            &format!("{}-server-side-apply", kind.name),
            vec![
                with_input(out_step("apply --server-side -f -"), kind.manifest),
                with_input(out_step("apply --server-side -f -"), kind.manifest),
                with_input(
                    out_step("apply --server-side --field-manager=other -f -"),
                    kind.manifest,
                ),
            ],
        ));
        out.push(seq(
            &format!("{}-apply-client-side", kind.name),
            vec![
                with_input(out_step("apply -f -"), kind.manifest),
                with_input(out_step("apply -f -"), kind.manifest),
            ],
        ));
        let mut replace = vec![create()];
        replace.extend(kind.settled.map(out_step));
        replace.push(with_input(out_step("replace -f -"), kind.manifest));
        out.push(seq(&format!("{}-replace", kind.name), replace));
        out.push(seq(
            &format!("{}-delete", kind.name),
            vec![
                create(),
                out_step(&format!("delete {r} x --wait=false")),
                out_step(&format!("delete {r} nope")),
            ],
        ));
        out.push(seq(
            &format!("{}-get-missing", kind.name),
            vec![out_step(&format!("get {r} nope"))],
        ));
        out.push(seq(
            &format!("{}-dry-run", kind.name),
            vec![
                with_input(out_step("create --dry-run=server -f -"), kind.manifest),
                out_step(&format!("get {r} x -o name")),
            ],
        ));
        out.push(seq(
            &format!("{}-list-json", kind.name),
            vec![
                create(),
                out_step(&format!("get {r} -o jsonpath={{.items[*].metadata.name}}")),
            ],
        ));
    }
    out
}

fn out_step(args: &str) -> Step {
    out(args)
}

/// Every sequence.
pub fn sequences() -> Vec<Sequence> {
    let mut all = everyday();
    all.extend(services());
    all.extend(per_kind());
    all
}
