//! The private key of a KeyPair without `publicKey`, made here rather than by ECS's
//! `CreateKeyPair`: CreateKeyPair returns the private key once, in its answer, so a lost answer or
//! a crash before the connection Secret is written would lose it for good. A key made here is in
//! the connection Secret before any cloud call (the framework writes it first), and the pair is
//! then made with `ImportKeyPair` of its public half: the same RSA 2048 key, PKCS#8 PEM, that
//! CreateKeyPair gives.

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::{KeyPair, KeySize};
use aws_lc_rs::signature::KeyPair as _;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

const PEM_BEGIN: &str = "-----BEGIN PRIVATE KEY-----";
const PEM_END: &str = "-----END PRIVATE KEY-----";

/// Why a stored private key cannot be used (never quoting it).
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("the key could not be generated")]
    Generate,
    #[error("it is not a PEM PKCS#8 RSA private key")]
    Unreadable,
}

/// A new RSA 2048 private key, as PEM PKCS#8.
pub fn generate() -> Result<String, KeyError> {
    let pair = KeyPair::generate(KeySize::Rsa2048).map_err(|_| KeyError::Generate)?;
    let der = pair.as_der().map_err(|_| KeyError::Generate)?;
    let encoded = STANDARD.encode(der.as_ref());
    let mut pem = format!("{PEM_BEGIN}\n");
    for line in encoded.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(line));
        pem.push('\n');
    }
    pem.push_str(PEM_END);
    pem.push('\n');
    Ok(pem)
}

/// The OpenSSH public key line (`ssh-rsa AAAA…`) of a PEM PKCS#8 RSA private key.
pub fn public_key_of(private_pem: &[u8]) -> Result<String, KeyError> {
    let text = std::str::from_utf8(private_pem).map_err(|_| KeyError::Unreadable)?;
    let body: String = text
        .lines()
        .map(str::trim)
        .skip_while(|l| *l != PEM_BEGIN)
        .skip(1)
        .take_while(|l| *l != PEM_END)
        .collect();
    let der = STANDARD.decode(body).map_err(|_| KeyError::Unreadable)?;
    let pair = KeyPair::from_pkcs8(&der).map_err(|_| KeyError::Unreadable)?;
    let public = pair.public_key();
    // RFC 4253 §6.6: string "ssh-rsa", mpint e, mpint n.
    let mut blob = Vec::new();
    put_string(&mut blob, b"ssh-rsa");
    put_mpint(
        &mut blob,
        public.exponent().big_endian_without_leading_zero(),
    );
    put_mpint(
        &mut blob,
        public.modulus().big_endian_without_leading_zero(),
    );
    Ok(format!("ssh-rsa {}", STANDARD.encode(blob)))
}

fn put_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// A positive mpint: a leading zero byte when the high bit is set.
fn put_mpint(out: &mut Vec<u8>, magnitude: &[u8]) {
    if magnitude.first().is_some_and(|b| b & 0x80 != 0) {
        let mut padded = Vec::with_capacity(magnitude.len() + 1);
        padded.push(0);
        padded.extend_from_slice(magnitude);
        put_string(out, &padded);
    } else {
        put_string(out, magnitude);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_gives_one_stable_public_key() {
        let pem = generate().expect("generated");
        assert!(pem.starts_with(PEM_BEGIN), "{}", &pem[..30]);
        let public = public_key_of(pem.as_bytes()).expect("readable");
        assert!(public.starts_with("ssh-rsa AAAAB3NzaC1yc2E"), "{public}");
        assert_eq!(public_key_of(pem.as_bytes()).expect("again"), public);
        assert_ne!(
            public_key_of(generate().expect("another").as_bytes()).expect("readable"),
            public
        );
    }

    #[test]
    fn an_unreadable_key_is_refused_without_quoting_it() {
        let err =
            public_key_of(b"-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n")
                .expect_err("not a key");
        assert!(!err.to_string().contains("c2VjcmV0"));
    }
}
