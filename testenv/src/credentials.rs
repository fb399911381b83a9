//! The credential files of one control plane, under its directory D: certificates and keys in
//! `pki/`, a kubeconfig per user in `kubeconfigs/`. Every file holding a key or a token is
//! written with mode 0600.

use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use crate::components::{self as comp};
use crate::error::{Error, Result};
use crate::kubeconfig::{self, Credential};
use crate::layout::Layout;
use crate::pki::{self, Ca};

/// Every certificate and key a start needs, under D/pki; returns the CA.
pub fn write_pki(layout: &Layout) -> Result<Ca> {
    let ca = Ca::new("ferroplane-testenv-ca")?;
    let front_proxy_ca = Ca::new("ferroplane-testenv-front-proxy-ca")?;
    let front_proxy_client = front_proxy_ca.client(comp::FRONT_PROXY_CLIENT, None)?;
    std::fs::write(layout.pki("front-proxy-ca.crt"), &front_proxy_ca.cert_pem)
        .map_err(Error::io("writing front-proxy-ca.crt"))?;
    std::fs::write(
        layout.pki("front-proxy-client.crt"),
        &front_proxy_client.cert_pem,
    )
    .map_err(Error::io("writing front-proxy-client.crt"))?;
    write_private(
        &layout.pki("front-proxy-client.key"),
        &front_proxy_client.key_pem,
    )?;
    let apiserver = ca.serving(
        "kube-apiserver",
        &[
            comp::LOOPBACK,
            "localhost",
            comp::KUBERNETES_SERVICE_IP,
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ],
    )?;
    let kcm = ca.serving("kube-controller-manager", &[comp::LOOPBACK, "localhost"])?;
    let scheduler = ca.serving("kube-scheduler", &[comp::LOOPBACK, "localhost"])?;
    std::fs::write(layout.pki("ca.crt"), &ca.cert_pem).map_err(Error::io("writing ca.crt"))?;
    write_private(&layout.pki("ca.key"), &ca.key_pem)?;
    for (name, pair) in [
        ("apiserver", &apiserver),
        ("controller-manager", &kcm),
        ("scheduler", &scheduler),
    ] {
        std::fs::write(layout.pki(&format!("{name}.crt")), &pair.cert_pem)
            .map_err(Error::io(format!("writing {name}.crt")))?;
        write_private(&layout.pki(&format!("{name}.key")), &pair.key_pem)?;
    }
    let (sa_private, sa_public) = pki::service_account_keys()?;
    write_private(&layout.pki("sa.key"), &sa_private)?;
    std::fs::write(layout.pki("sa.pub"), sa_public).map_err(Error::io("writing sa.pub"))?;
    Ok(ca)
}

/// The admin's kubeconfig (copied to D/kubeconfig once all is healthy) and one per component,
/// each with its own client certificate: the controller-manager and the scheduler as the users
/// Kubernetes' default RBAC grants to them, kwok (which writes any node's and pod's status) in
/// `system:masters`.
pub fn write_kubeconfigs(layout: &Layout, server: &str, ca: &Ca) -> Result<()> {
    let users: [(&str, PathBuf, &str, Option<&str>); 4] = [
        (
            "admin",
            layout.component_kubeconfig("admin"),
            "ferroplane-testenv-admin",
            Some("system:masters"),
        ),
        (
            "kube-controller-manager",
            layout.component_kubeconfig("kube-controller-manager"),
            "system:kube-controller-manager",
            None,
        ),
        (
            "kube-scheduler",
            layout.component_kubeconfig("kube-scheduler"),
            "system:kube-scheduler",
            None,
        ),
        (
            "kwok",
            layout.component_kubeconfig("kwok"),
            "kwok-controller",
            Some("system:masters"),
        ),
    ];
    for (context, path, user, group) in users {
        let pair = ca.client(user, group)?;
        let text = kubeconfig::render(
            &format!("testenv-{context}"),
            server,
            &ca.cert_pem,
            Credential::ClientCertificate {
                cert_pem: &pair.cert_pem,
                key_pem: &pair.key_pem,
            },
            None,
        );
        write_private(&path, &text)?;
    }
    Ok(())
}

/// Writes a file only its owner can read: it holds a key or a token.
pub fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(Error::io(format!("creating {}", path.display())))?;
    f.write_all(text.as_bytes())
        .map_err(Error::io(format!("writing {}", path.display())))
}
