//! Certificates and keys of one control plane, made fresh at every start: a CA, serving
//! certificates for the API server, controller-manager and scheduler (127.0.0.1 and the names
//! the in-cluster `kubernetes` Service answers to), client certificates whose subject Kubernetes
//! reads as user (CN) and group (O), and the key that signs ServiceAccount tokens. All keys are
//! ECDSA P-256, written as PKCS#8 PEM, which every component reads.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

use crate::error::Result;

/// A certificate and its private key, both PEM.
pub struct CertAndKey {
    pub cert_pem: String,
    pub key_pem: String,
}

/// The control plane's certificate authority.
pub struct Ca {
    pub cert_pem: String,
    pub key_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    pub fn new() -> Result<Self> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::default();
        params
            .distinguished_name
            .push(DnType::CommonName, "ferroplane-testenv-ca");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key)?;
        Ok(Self {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            issuer: Issuer::new(params, key),
        })
    }

    /// A server certificate valid for each of `names` (IP addresses or DNS names).
    pub fn serving(&self, common_name: &str, names: &[&str]) -> Result<CertAndKey> {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let mut params = CertificateParams::new(names)?;
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.sign(params)
    }

    /// A client certificate for `user`, in `group` when given (Kubernetes reads the CN as the
    /// user name and the O as a group).
    pub fn client(&self, user: &str, group: Option<&str>) -> Result<CertAndKey> {
        let mut params = CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, user);
        if let Some(group) = group {
            params
                .distinguished_name
                .push(DnType::OrganizationName, group);
        }
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.sign(params)
    }

    fn sign(&self, params: CertificateParams) -> Result<CertAndKey> {
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(CertAndKey {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// A private key for signing ServiceAccount tokens (the API server verifies with its public half,
/// which it reads from the same file).
pub fn service_account_key() -> Result<String> {
    Ok(KeyPair::generate()?.serialize_pem())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_and_keys_are_pem() {
        let ca = Ca::new().unwrap();
        assert!(ca.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(ca.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        let serving = ca
            .serving("kube-apiserver", &["127.0.0.1", "localhost"])
            .unwrap();
        assert!(serving.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        let client = ca.client("admin", Some("system:masters")).unwrap();
        assert_ne!(client.cert_pem, serving.cert_pem);
        assert!(service_account_key().unwrap().contains("PRIVATE KEY"));
    }
}
