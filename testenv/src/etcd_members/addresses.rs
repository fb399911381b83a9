//! Where each member pod "is": a loopback address of its own (127.B.x.y, every member on the
//! real ports 2379 and 2380, as each pod has its own IP), and the names the cluster DNS would
//! give it.
//!
//! Two readers: the etcd processes, through a hosts file bind-mounted on their `/etc/hosts` (Go
//! reads it again when it changes), and the test's controller, through [`MemberAddresses`] as
//! its HTTP client's resolver. A pod `<pod>` with `hostname`/`subdomain` in namespace `<ns>` is
//! `<pod>.<subdomain>.<ns>.svc`; a Service `<svc>.<ns>.svc` resolves to the running members
//! whose pod labels its selector matches, as its endpoints would.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};

/// The next member address of this process (its runners must not hand out one twice).
static NEXT_ADDRESS: AtomicU32 = AtomicU32::new(1);

/// The name 127.0.0.1 has under each headless Service of the members (see
/// `write_hosts_file`).
const LOOPBACK_NAME: &str = "member-peer-source";

/// A pod, by namespace and name.
pub type PodKey = (String, String);

#[derive(Debug, Default)]
struct Table {
    /// Every pod ever seen keeps its address, like a stable network identity.
    addresses: BTreeMap<PodKey, Ipv4Addr>,
    /// `<pod>.<subdomain>.<ns>.svc` → pod.
    hostnames: BTreeMap<String, PodKey>,
    /// Pods whose etcd runs now.
    running: BTreeMap<PodKey, bool>,
    /// Every pod's labels.
    labels: BTreeMap<PodKey, Labels>,
    /// Every Service's selector, by (namespace, name).
    services: BTreeMap<(String, String), Labels>,
}

type Labels = BTreeMap<String, String>;

/// The member address table, shared by the runner and the controller's resolver.
#[derive(Debug, Clone)]
pub struct MemberAddresses {
    second_octet: u8,
    hosts_file: PathBuf,
    table: Arc<Mutex<Table>>,
}

impl MemberAddresses {
    /// A table whose addresses are 127.`second_octet`.x.y and whose hosts file is `hosts_file`.
    pub(crate) fn new(second_octet: u8, hosts_file: PathBuf) -> Result<Self> {
        let addresses = Self {
            second_octet,
            hosts_file,
            table: Arc::default(),
        };
        addresses.write_hosts_file()?;
        Ok(addresses)
    }

    pub(crate) fn hosts_file(&self) -> &Path {
        &self.hosts_file
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The pod's address (allocated on first sight), with its DNS name recorded when it has one.
    pub(crate) fn register(&self, pod: &PodKey, dns_name: Option<String>) -> Result<Ipv4Addr> {
        let (ip, changed) = {
            let mut table = self.lock();
            let mut changed = false;
            let ip = *table.addresses.entry(pod.clone()).or_insert_with(|| {
                changed = true;
                // One sequence for the whole process: all its runners share 127.B.0.0/16.
                let next = NEXT_ADDRESS.fetch_add(1, Ordering::Relaxed);
                Ipv4Addr::new(
                    127,
                    self.second_octet,
                    (next / 250) as u8,
                    (next % 250) as u8 + 1,
                )
            });
            if let Some(name) = dns_name
                && table.hostnames.get(&name) != Some(pod)
            {
                table.hostnames.insert(name, pod.clone());
                changed = true;
            }
            (ip, changed)
        };
        if changed {
            self.write_hosts_file()?;
        }
        Ok(ip)
    }

    pub(crate) fn set_labels(&self, pod: &PodKey, labels: Labels) {
        self.lock().labels.insert(pod.clone(), labels);
    }

    /// The Services of `namespace` now, with their selectors.
    pub(crate) fn set_services(&self, namespace: &str, services: BTreeMap<String, Labels>) {
        let mut table = self.lock();
        table.services.retain(|(ns, _), _| ns != namespace);
        for (name, selector) in services {
            table
                .services
                .insert((namespace.to_owned(), name), selector);
        }
    }

    pub(crate) fn set_running(&self, pod: &PodKey, running: bool) {
        self.lock().running.insert(pod.clone(), running);
    }

    /// The addresses of `host`: a member pod's own, or those of the running members a
    /// Service selects; none for anything else.
    pub fn lookup(&self, host: &str) -> Vec<IpAddr> {
        let table = self.lock();
        if let Some(pod) = table.hostnames.get(host) {
            return table
                .addresses
                .get(pod)
                .map(|ip| IpAddr::V4(*ip))
                .into_iter()
                .collect();
        }
        let Some(service) = service_of(host) else {
            return Vec::new();
        };
        let Some(selector) = table.services.get(&service) else {
            return Vec::new();
        };
        let selects = |pod: &PodKey| {
            let labels = table.labels.get(pod);
            !selector.is_empty()
                && selector
                    .iter()
                    .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        };
        table
            .running
            .iter()
            .filter(|(pod, running)| pod.0 == service.0 && **running && selects(pod))
            .filter_map(|(pod, _)| table.addresses.get(pod).map(|ip| IpAddr::V4(*ip)))
            .collect()
    }

    /// Rewrites the hosts file in place (the bind mounts see the same file).
    fn write_hosts_file(&self) -> Result<()> {
        let text = {
            let table = self.lock();
            let mut text = String::from("127.0.0.1 localhost\n");
            for (name, pod) in &table.hostnames {
                if let Some(ip) = table.addresses.get(pod) {
                    text.push_str(&format!("{ip} {name}\n"));
                }
            }
            // Members listen on their own address but connect to each other from 127.0.0.1.
            // With peer TLS, etcd accepts a peer whose certificate names only DNS names when
            // the connection's source address resolves back to one of them; in a cluster the
            // source is the pod's IP, which the cluster DNS resolves back to
            // `<pod>.<service>.<ns>.svc.cluster.local`. Here 127.0.0.1 gets a name under each
            // headless Service, used by no member for anything else.
            let domains: std::collections::BTreeSet<&str> = table
                .hostnames
                .keys()
                .filter_map(|name| name.split_once('.').map(|(_, domain)| domain))
                .collect();
            for domain in domains {
                text.push_str(&format!("127.0.0.1 {LOOPBACK_NAME}.{domain}\n"));
            }
            text
        };
        std::fs::write(&self.hosts_file, text).map_err(Error::io(format!(
            "writing the members' hosts file {}",
            self.hosts_file.display()
        )))
    }
}

/// `<svc>.<ns>.svc` → (`<ns>`, `<svc>`).
fn service_of(host: &str) -> Option<(String, String)> {
    let rest = host.strip_suffix(".svc")?;
    let (service, namespace) = rest.split_once('.')?;
    (!service.is_empty() && !namespace.is_empty() && !namespace.contains('.'))
        .then(|| (namespace.to_owned(), service.to_owned()))
}

impl reqwest::dns::Resolve for MemberAddresses {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        let found = self.lookup(&host);
        Box::pin(async move {
            if found.is_empty() {
                return Err(
                    format!("{host}: no such member or Service in the test's cluster").into(),
                );
            }
            let addrs: reqwest::dns::Addrs =
                Box::new(found.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(ns: &str, pod: &str) -> PodKey {
        (ns.to_owned(), pod.to_owned())
    }

    #[test]
    fn pods_keep_their_address_and_services_resolve_to_running_members() {
        let dir = tempfile::tempdir().unwrap();
        let a = MemberAddresses::new(150, dir.path().join("hosts")).unwrap();
        let p0 = a
            .register(&key("ns", "e-0"), Some("e-0.e.ns.svc".into()))
            .unwrap();
        let p1 = a
            .register(&key("ns", "e-1"), Some("e-1.e.ns.svc".into()))
            .unwrap();
        assert_ne!(p0, p1);
        assert_eq!(a.register(&key("ns", "e-0"), None).unwrap(), p0);
        assert_eq!(a.lookup("e-1.e.ns.svc"), vec![IpAddr::V4(p1)]);
        let labels = |name: &str| BTreeMap::from([("app".to_owned(), name.to_owned())]);
        a.set_labels(&key("ns", "e-0"), labels("e"));
        a.set_labels(&key("ns", "e-1"), labels("e"));
        a.set_services("ns", BTreeMap::from([("e-client".to_owned(), labels("e"))]));
        assert!(a.lookup("e-client.ns.svc").is_empty(), "nothing runs yet");
        a.set_running(&key("ns", "e-1"), true);
        assert_eq!(a.lookup("e-client.ns.svc"), vec![IpAddr::V4(p1)]);
        a.set_labels(&key("ns", "e-1"), labels("other"));
        assert!(a.lookup("e-client.ns.svc").is_empty(), "not selected");
        assert!(a.lookup("f-client.ns.svc").is_empty(), "no such Service");
        assert!(a.lookup("e-client.other.svc").is_empty());
        assert!(a.lookup("example.com").is_empty());
        let hosts = std::fs::read_to_string(dir.path().join("hosts")).unwrap();
        assert!(hosts.contains(&format!("{p0} e-0.e.ns.svc\n")), "{hosts}");
        assert!(
            hosts.contains("127.0.0.1 member-peer-source.e.ns.svc\n"),
            "the members' source address resolves back under their Service: {hosts}"
        );
        assert!(
            a.lookup("member-peer-source.e.ns.svc").is_empty(),
            "no member has it"
        );
        assert!(p0.octets()[..2] == [127, 150]);
    }
}
