//! The differential check: a corpus of request sequences (`corpus`) replayed with kubectl
//! against the sandbox and a real control plane (`ferroplane-testenv`), each sequence in a
//! namespace of its own, and the answers compared after removing what differs by nature
//! (`normalize`: uids, resourceVersions, times, ages, addresses, generated suffixes). A
//! difference fails the test unless `sandbox/differential-allowlist.yaml` lists it with its
//! reason; an allow-list entry that no longer differs fails it too, so the list stays true.
//! Beside kubectl's sequences, `client` sends the requests of ferroplane's own controllers the
//! way kube-rs sends them.

mod client;
mod corpus;
mod normalize;

use std::collections::BTreeSet;
use std::path::PathBuf;

use corpus::{Compare, Sequence, Step};
use ferroplane_sandbox::SandboxConfig;
use ferroplane_testenv::{ControlPlane, Options};
use ferroplane_testkit::{Kubectl, TestCluster};
use futures::StreamExt;
use serde::Deserialize;

/// kubectl sequences replayed at once on each server: a kubectl run mostly waits (its own
/// start, the server's answer), so a few at once keep 2 cores busy.
const SEQUENCES_AT_ONCE: usize = 4;

/// One known difference, what it is, and why it is accepted.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Allowed {
    sequence: String,
    step: usize,
    /// Text only the real control plane's answer has.
    #[serde(default)]
    real_has: Option<String>,
    /// Text only the sandbox's answer has.
    #[serde(default)]
    sandbox_has: Option<String>,
    reason: String,
}

impl Allowed {
    fn is_at(&self, sequence: &str, step: usize) -> bool {
        self.sequence == sequence && self.step == step
    }

    /// Whether the two answers differ the way this entry says: a difference of another kind at
    /// the same step is not explained by it.
    fn explains(&self, real: &Answer, sandbox: &Answer) -> bool {
        let only = |text: &Option<String>, has: &Answer, lacks: &Answer| {
            text.as_ref().is_none_or(|t| {
                has.output.contains(t.as_str()) && !lacks.output.contains(t.as_str())
            })
        };
        only(&self.real_has, real, sandbox) && only(&self.sandbox_has, sandbox, real)
    }
}

fn allow_list() -> Vec<Allowed> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../differential-allowlist.yaml");
    let text = std::fs::read_to_string(&path).expect("the allow-list exists");
    let entries: Vec<Allowed> = serde_saphyr::from_str(&text).expect("the allow-list parses");
    for entry in &entries {
        assert!(
            !entry.reason.trim().is_empty(),
            "{}#{}: an allowed difference needs its reason",
            entry.sequence,
            entry.step
        );
        assert!(
            entry.real_has.is_some() || entry.sandbox_has.is_some(),
            "{}#{}: an allowed difference names what differs (real_has, sandbox_has)",
            entry.sequence,
            entry.step
        );
    }
    entries
}

/// What one step answered, as compared.
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    success: bool,
    output: String,
}

async fn run(kubectl: &Kubectl, namespace: &str, step: &Step) -> Answer {
    let mut args: Vec<&str> = vec!["--namespace", namespace];
    args.extend(step.args.iter().map(String::as_str));
    let out = match &step.stdin {
        Some(input) => kubectl.run_with_input(&args, input).await,
        None => kubectl.run(&args).await,
    };
    let output = match step.compare {
        Compare::Outcome if out.success() => String::new(),
        Compare::Outcome => normalize::error(&out.stderr, namespace),
        Compare::Output => format!(
            "{}{}",
            normalize::output(&out.stdout, namespace),
            normalize::error(&out.stderr, namespace)
        ),
    };
    Answer {
        success: out.success(),
        output,
    }
}

/// Runs every step of a sequence on one server; the answers.
async fn replay(kubectl: &Kubectl, namespace: &str, sequence: &Sequence) -> Vec<Answer> {
    let setup = kubectl.run(&["create", "namespace", namespace]).await;
    assert!(setup.success(), "namespace {namespace}: {}", setup.stderr);
    let mut answers = Vec::new();
    for step in &sequence.steps {
        answers.push(run(kubectl, namespace, step).await);
    }
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_answers_as_a_real_control_plane_does() {
    let real = ControlPlane::start(Options::default())
        .await
        .expect("the control plane starts");
    // The real control plane has no provisioner: claims stay Pending on both (a claim bound
    // between `kubectl replace`'s read and its write would make the write conflict).
    let sandbox = TestCluster::start_with(SandboxConfig {
        provision_claims: false,
        ..SandboxConfig::default()
    })
    .await;
    let cache = tempfile::tempdir().expect("a cache dir");
    let real_kubectl = Kubectl::new(real.kubeconfig_path(), cache.path().join("real"));
    let allowed = allow_list();

    let corpus = corpus::sequences();
    let mut names = BTreeSet::new();
    for sequence in &corpus {
        assert!(
            names.insert(sequence.name.clone()),
            "{} twice",
            sequence.name
        );
    }
    let mut unexplained = Vec::new();
    let mut explained = BTreeSet::new();
    // The two servers share nothing, and sequences share nothing but their server (a namespace
    // each): both servers replay a few sequences at once. Answers keep the corpus's order.
    let answers: Vec<_> =
        futures::stream::iter(corpus.iter().enumerate().map(|(index, sequence)| {
            let real_kubectl = &real_kubectl;
            let sandbox_kubectl = sandbox.kubectl();
            async move {
                let namespace = format!("d{index}");
                tokio::join!(
                    replay(real_kubectl, &namespace, sequence),
                    replay(sandbox_kubectl, &namespace, sequence)
                )
            }
        }))
        .buffered(SEQUENCES_AT_ONCE)
        .collect()
        .await;
    for (sequence, (want, got)) in corpus.iter().zip(&answers) {
        for (step, (w, g)) in want.iter().zip(got).enumerate() {
            if w == g {
                continue;
            }
            match allowed
                .iter()
                .position(|a| a.is_at(&sequence.name, step) && a.explains(w, g))
            {
                Some(i) => {
                    explained.insert(i);
                }
                None => unexplained.push(format!(
                    "{}#{step}: kubectl {}\n  real:    {} {:?}\n  sandbox: {} {:?}",
                    sequence.name,
                    sequence.steps[step].args.join(" "),
                    w.success,
                    w.output,
                    g.success,
                    g.output
                )),
            }
        }
    }
    let real_client = real.client();
    let sandbox_client = sandbox.client();
    for (index, name) in client::SEQUENCES.iter().enumerate() {
        let namespace = format!("c{index}");
        for kubectl in [&real_kubectl, sandbox.kubectl()] {
            let setup = kubectl.run(&["create", "namespace", &namespace]).await;
            assert!(setup.success(), "namespace {namespace}: {}", setup.stderr);
        }
        let (want, got) = tokio::join!(
            client::replay(&real_client, &namespace, name),
            client::replay(&sandbox_client, &namespace, name)
        );
        assert_eq!(
            want.len(),
            got.len(),
            "{name}: the same steps on both servers"
        );
        for (step, (w, g)) in want.iter().zip(&got).enumerate() {
            if w == g {
                continue;
            }
            match allowed
                .iter()
                .position(|a| a.is_at(name, step) && a.explains(w, g))
            {
                Some(i) => {
                    explained.insert(i);
                }
                None => unexplained.push(format!(
                    "{name}#{step} (kube-rs)\n  real:    {} {}\n  sandbox: {} {}",
                    w.success, w.output, g.success, g.output
                )),
            }
        }
    }
    real.stop();
    sandbox.shutdown().await;
    let stale: Vec<String> = allowed
        .iter()
        .enumerate()
        .filter(|(i, _)| !explained.contains(i))
        .map(|(_, a)| format!("{}#{}", a.sequence, a.step))
        .collect();
    eprintln!(
        "{} kubectl sequences, {} steps; {} kube-rs sequences; {} allowed differences, \
         {} unexplained",
        corpus.len(),
        corpus.iter().map(|s| s.steps.len()).sum::<usize>(),
        client::SEQUENCES.len(),
        explained.len(),
        unexplained.len()
    );
    assert!(
        unexplained.is_empty(),
        "{} unexplained differences (fix the sandbox or list them with a reason in \
         sandbox/differential-allowlist.yaml):\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    assert!(
        stale.is_empty(),
        "allow-list entries that no longer differ: {stale:?}"
    );
}
