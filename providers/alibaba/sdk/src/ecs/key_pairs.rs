//! SSH key pairs: their requests, responses and typed actions on [`EcsClient`] (ImportKeyPair,
//! CreateKeyPair, DescribeKeyPairs, DeleteKeyPairs, AttachKeyPair, DetachKeyPair). The private
//! key CreateKeyPair answers is a [`Secret`]: it never shows in `Debug` output.

use serde::{Deserialize, Deserializer};

use super::client::EcsClient;
use super::request::set_tags;
use super::response::{Tag, TagList};
use crate::error::Error;
use crate::rpc::Params;
use crate::secret::Secret;
use crate::wire::wrapped_list;

/// Most instances one `AttachKeyPair` / `DetachKeyPair` takes.
pub const MAX_INSTANCES_PER_KEY_PAIR_CALL: usize = 50;

/// `ImportKeyPair` / `CreateKeyPair` response.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct KeyPairCreated {
    /// The request ID.
    pub request_id: String,
    /// The name.
    pub key_pair_name: String,
    /// `skp-...` (when ECS reports one).
    pub key_pair_id: String,
    /// The MD5 fingerprint of the public key, `aa:bb:...`.
    pub key_pair_finger_print: String,
    /// CreateKeyPair only: the private key, PEM PKCS#8, answered once.
    pub private_key_body: Option<Secret>,
}

/// One key pair as `DescribeKeyPairs` lists it.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct KeyPair {
    pub key_pair_name: String,
    pub key_pair_finger_print: String,
    pub creation_time: String,
    pub resource_group_id: String,
    /// With `IncludePublicKey` only.
    pub public_key: String,
    pub tags: TagList,
}

wrapped_list!(KeyPairList, "KeyPair", KeyPair);

/// `DescribeKeyPairs` response (one page).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct DescribeKeyPairsResponse {
    /// The request ID.
    pub request_id: String,
    /// Matches across all pages.
    pub total_count: u64,
    /// This page.
    pub key_pairs: KeyPairList,
}

fn bool_or_string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Wire {
        Bool(bool),
        Text(String),
        Null,
    }
    Ok(match Wire::deserialize(deserializer)? {
        Wire::Bool(b) => b,
        Wire::Text(t) => t.eq_ignore_ascii_case("true"),
        Wire::Null => false,
    })
}

/// One instance's outcome of `AttachKeyPair` / `DetachKeyPair`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct KeyPairResult {
    pub instance_id: String,
    /// `200` on success, else an ECS error code.
    pub code: String,
    pub message: String,
    #[serde(deserialize_with = "bool_or_string")]
    pub success: bool,
}

wrapped_list!(KeyPairResultList, "Result", KeyPairResult);

/// `AttachKeyPair` / `DetachKeyPair` response: results per instance.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct KeyPairBindResponse {
    /// The request ID.
    pub request_id: String,
    pub key_pair_name: String,
    pub results: KeyPairResultList,
}

impl KeyPairBindResponse {
    /// The instances the call failed for, with ECS's code and message.
    pub fn failures(&self) -> Vec<&KeyPairResult> {
        self.results.items.iter().filter(|r| !r.success).collect()
    }
}

impl EcsClient {
    /// `ImportKeyPair`: registers an OpenSSH public key (`ssh-rsa AAAA...`) under `name`.
    pub async fn import_key_pair(
        &self,
        name: &str,
        public_key: &str,
        tags: &[Tag],
    ) -> Result<KeyPairCreated, Error> {
        let mut p = Params::new();
        p.set("KeyPairName", name).set("PublicKeyBody", public_key);
        set_tags(&mut p, tags);
        self.call_typed("ImportKeyPair", &p).await
    }

    /// `CreateKeyPair`: ECS generates the key; the private key is in the response only.
    pub async fn create_key_pair(&self, name: &str, tags: &[Tag]) -> Result<KeyPairCreated, Error> {
        let mut p = Params::new();
        p.set("KeyPairName", name);
        set_tags(&mut p, tags);
        self.call_typed("CreateKeyPair", &p).await
    }

    /// The key pair called `name`, if it exists (with its public key).
    pub async fn describe_key_pair(&self, name: &str) -> Result<Option<KeyPair>, Error> {
        let mut p = Params::new();
        p.set("KeyPairName", name)
            .set("IncludePublicKey", true)
            .set("PageSize", 50u32);
        let r: DescribeKeyPairsResponse = self.call_typed("DescribeKeyPairs", &p).await?;
        Ok(r.key_pairs
            .items
            .into_iter()
            .find(|k| k.key_pair_name == name))
    }

    /// `DescribeKeyPairs` of the region carrying every tag in `tags`, all pages, with their
    /// public keys (`IncludePublicKey`, which ECS leaves out by default).
    pub async fn describe_key_pairs(&self, tags: &[Tag]) -> Result<Vec<KeyPair>, Error> {
        let mut found = Vec::new();
        for page in 1u32.. {
            let mut p = Params::new();
            set_tags(&mut p, tags);
            p.set("IncludePublicKey", true);
            p.set("PageNumber", page).set("PageSize", 50u32);
            let r: DescribeKeyPairsResponse = self.call_typed("DescribeKeyPairs", &p).await?;
            let empty = r.key_pairs.items.is_empty();
            found.extend(r.key_pairs.items);
            if empty || found.len() as u64 >= r.total_count {
                break;
            }
        }
        Ok(found)
    }

    /// `TagResources` on one key pair (named by its name): adds or overwrites these tags.
    pub async fn tag_key_pair(&self, name: &str, tags: &[Tag]) -> Result<(), Error> {
        let mut p = Params::new();
        p.set("ResourceType", "keypair").set("ResourceId.1", name);
        set_tags(&mut p, tags);
        self.call_typed::<super::response::AckResponse>("TagResources", &p)
            .await?;
        Ok(())
    }

    /// `DeleteKeyPairs` (ECS refuses while an instance uses one of them; unknown names are
    /// ignored).
    pub async fn delete_key_pairs(&self, names: &[String]) -> Result<(), Error> {
        let mut p = Params::new();
        p.set(
            "KeyPairNames",
            serde_json::to_string(names).expect("strings serialize"),
        );
        self.call_typed::<super::response::AckResponse>("DeleteKeyPairs", &p)
            .await?;
        Ok(())
    }

    async fn bind_key_pair(
        &self,
        action: &str,
        name: &str,
        instance_ids: &[String],
    ) -> Result<KeyPairBindResponse, Error> {
        let mut all = KeyPairBindResponse::default();
        for chunk in instance_ids.chunks(MAX_INSTANCES_PER_KEY_PAIR_CALL) {
            let mut p = Params::new();
            p.set("KeyPairName", name).set(
                "InstanceIds",
                serde_json::to_string(chunk).expect("strings serialize"),
            );
            let r: KeyPairBindResponse = self.call_typed(action, &p).await?;
            all.request_id = r.request_id;
            all.key_pair_name = r.key_pair_name;
            all.results.items.extend(r.results.items);
        }
        Ok(all)
    }

    /// `AttachKeyPair` to Linux instances (Running or Stopped); it takes effect at their next
    /// start or reboot. Check [`KeyPairBindResponse::failures`]: ECS answers per instance.
    pub async fn attach_key_pair(
        &self,
        name: &str,
        instance_ids: &[String],
    ) -> Result<KeyPairBindResponse, Error> {
        self.bind_key_pair("AttachKeyPair", name, instance_ids)
            .await
    }

    /// `DetachKeyPair` from instances; it takes effect at their next start or reboot.
    pub async fn detach_key_pair(
        &self,
        name: &str,
        instance_ids: &[String],
    ) -> Result<KeyPairBindResponse, Error> {
        self.bind_key_pair("DetachKeyPair", name, instance_ids)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_private_key_is_secret_and_results_decode_either_shape() {
        let created: KeyPairCreated = serde_json::from_str(
            r#"{"RequestId":"R","KeyPairName":"k","KeyPairFingerPrint":"aa","PrivateKeyBody":"-----BEGIN PRIVATE KEY-----"}"#,
        )
        .unwrap();
        let shown = format!("{created:?}");
        assert!(!shown.contains("BEGIN PRIVATE KEY"), "{shown}");
        assert_eq!(
            created.private_key_body.as_ref().map(Secret::expose),
            Some("-----BEGIN PRIVATE KEY-----")
        );
        let r: KeyPairBindResponse = serde_json::from_str(
            r#"{"KeyPairName":"k","Results":{"Result":[
                {"InstanceId":"i-1","Code":"200","Message":"successful","Success":"true"},
                {"InstanceId":"i-2","Code":"DependencyViolation.WindowsInstance","Message":"m","Success":false}]}}"#,
        )
        .unwrap();
        assert_eq!(r.failures().len(), 1);
        assert_eq!(r.failures()[0].instance_id, "i-2");
    }
}
