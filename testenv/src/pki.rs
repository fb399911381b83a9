//! Certificates and keys of one control plane, made fresh at every start: a CA, serving
//! certificates for the API server, controller-manager and scheduler (127.0.0.1 and the names
//! the in-cluster `kubernetes` Service answers to), client certificates whose subject Kubernetes
//! reads as user (CN) and group (O), the key that signs ServiceAccount tokens, and a second CA
//! for the front proxy (the API server's client certificate towards aggregated API servers,
//! which the controller-manager and scheduler also read to authenticate requests to their
//! ports). All keys are ECDSA P-256, written as PKCS#8 PEM, which every component reads.

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
    pub fn new(common_name: &str) -> Result<Self> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::default();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
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

/// The key pair that signs ServiceAccount tokens: (private key, public key), both PEM. The API
/// server and the controller-manager sign with the private half; the API server verifies with
/// the public one, which it wants in a file of its own.
pub fn service_account_keys() -> Result<(String, String)> {
    let key = KeyPair::generate()?;
    Ok((key.serialize_pem(), key.public_key_pem()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_and_keys_are_pem() {
        let ca = Ca::new("test-ca").unwrap();
        assert!(ca.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(ca.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        let serving = ca
            .serving("kube-apiserver", &["127.0.0.1", "localhost"])
            .unwrap();
        assert!(serving.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        let client = ca.client("admin", Some("system:masters")).unwrap();
        assert_ne!(client.cert_pem, serving.cert_pem);
        let (private, public) = service_account_keys().unwrap();
        assert!(private.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"));
    }
}
