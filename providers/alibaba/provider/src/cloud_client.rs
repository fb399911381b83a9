//! The signed cloud clients of every Alibaba kind, cached per configuration version: one
//! credentials provider and one account identity (`crate::account`) per (config UID, config
//! generation, Secret resourceVersion) and, under it, per region one ECS client, one VPC client
//! and the ECSInstance's observation batcher, owner search and shared releases (from `crate::ecs_instance`). A new version replaces the old entry, so
//! rotated keys are used at once and stale clients are dropped.

use std::collections::HashMap;
use std::collections::hash_map::Entry as MapEntry;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use alibaba_sdk::credentials::SharedCredentialsProvider;
use alibaba_sdk::ecs::EcsClient;
use alibaba_sdk::endpoint::{Network, parse_endpoint};
use alibaba_sdk::sts::StsClient;
use alibaba_sdk::vpc::{VpcClient, vpc_endpoint};
use ferroplane_runtime::ExternalCalls;

use crate::account::AccountIdentity;
use crate::config_resolution::{ConfigError, ResolvedConfig};
use crate::ecs_instance::Batcher;
use crate::ecs_instance::OwnerSearch;
use crate::ecs_instance::{RELEASE_WINDOW, Releases};
use crate::options::ClientOverrides;

/// The client of one region under one configuration version.
#[derive(Clone, Debug)]
pub struct RegionClient {
    pub ecs: EcsClient,
    /// The VPC API of the same region, with the same credentials and settings.
    pub vpc: VpcClient,
    /// `None` when batching is off.
    pub batcher: Option<Arc<Batcher>>,
    /// The owner-tag search shared by the objects of this client; `None` when batching is off
    /// (then every object searches on its own).
    pub owners: Option<Arc<OwnerSearch>>,
    /// The releases shared by the objects of this client; `None` when batching is off (then
    /// every object releases its instance with its own `DeleteInstance`).
    pub releases: Option<Arc<Releases>>,
    /// The account the credentials act in, shared by every region of the version.
    pub account: Arc<AccountIdentity>,
}

struct Entry {
    version: String,
    credentials: SharedCredentialsProvider,
    account: Arc<AccountIdentity>,
    regions: HashMap<String, RegionClient>,
}

/// The cache. Cheap to share behind an `Arc`.
pub struct ClientCache {
    overrides: ClientOverrides,
    batch_window: Option<Duration>,
    freshness: Duration,
    calls: ExternalCalls,
    entries: Mutex<HashMap<String, Entry>>,
}

impl ClientCache {
    /// `batch_window: None` disables batching; batched answers are reused for `freshness`.
    pub fn new(
        overrides: ClientOverrides,
        batch_window: Option<Duration>,
        freshness: Duration,
        calls: ExternalCalls,
    ) -> Self {
        Self {
            overrides,
            batch_window,
            freshness,
            calls,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The client for `region` under `config`, built on first use.
    pub fn client(
        &self,
        config: &ResolvedConfig,
        region: &str,
    ) -> Result<RegionClient, ConfigError> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let entry = self.entry(&mut entries, config)?;
        if let Some(client) = entry.regions.get(region) {
            return Ok(client.clone());
        }
        let mut builder = EcsClient::builder(region)
            .shared_credentials(entry.credentials.clone())
            .config(config.client_config(&self.overrides))
            .vpc(config.use_vpc_endpoint);
        if let Some(endpoint) = &config.endpoint {
            builder = builder.endpoint(endpoint);
        }
        let ecs = builder.build().map_err(|source| ConfigError::Client {
            config: config.display.clone(),
            source,
        })?;
        // An endpoint override stands for every product (the mock and proxies serve them all on
        // one address); otherwise the VPC API has its own regional endpoint.
        let vpc_url = match &config.endpoint {
            Some(endpoint) => parse_endpoint(endpoint).map_err(alibaba_sdk::Error::from),
            None => {
                let network = if config.use_vpc_endpoint {
                    Network::Vpc
                } else {
                    Network::Public
                };
                vpc_endpoint(region, network).map_err(alibaba_sdk::Error::from)
            }
        };
        let vpc = vpc_url
            .and_then(|url| VpcClient::with_settings_of(&ecs, url))
            .map_err(|source| ConfigError::Client {
                config: config.display.clone(),
                source,
            })?;
        let client = RegionClient {
            vpc,
            batcher: self.batch_window.map(|window| {
                Arc::new(Batcher::new(
                    ecs.clone(),
                    window,
                    self.freshness,
                    self.calls.clone(),
                ))
            }),
            owners: self
                .batch_window
                .map(|window| Arc::new(OwnerSearch::new(ecs.clone(), window, self.calls.clone()))),
            releases: self.batch_window.map(|window| {
                Arc::new(Releases::new(
                    ecs.clone(),
                    window.max(RELEASE_WINDOW),
                    self.calls.clone(),
                ))
            }),
            account: entry.account.clone(),
            ecs,
        };
        entry.regions.insert(region.to_owned(), client.clone());
        Ok(client)
    }

    /// The credentials provider of a configuration version (for the ProviderConfig's Ready
    /// check), shared with the clients.
    pub fn credentials(
        &self,
        config: &ResolvedConfig,
    ) -> Result<SharedCredentialsProvider, ConfigError> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        Ok(self.entry(&mut entries, config)?.credentials.clone())
    }

    /// The entry of the config's current version, replacing an older one.
    fn entry<'a>(
        &self,
        entries: &'a mut HashMap<String, Entry>,
        config: &ResolvedConfig,
    ) -> Result<&'a mut Entry, ConfigError> {
        let fresh = |overrides: &ClientOverrides| -> Result<Entry, ConfigError> {
            let credentials = config.credentials_provider(overrides)?;
            Ok(Entry {
                version: config.version.clone(),
                account: Arc::new(account_identity(config, overrides, &credentials)),
                credentials,
                regions: HashMap::new(),
            })
        };
        Ok(match entries.entry(config.uid.clone()) {
            MapEntry::Occupied(mut slot) => {
                if slot.get().version != config.version {
                    slot.insert(fresh(&self.overrides)?);
                }
                slot.into_mut()
            }
            MapEntry::Vacant(slot) => slot.insert(fresh(&self.overrides)?),
        })
    }

    /// Forgets a configuration (it was deleted).
    pub fn forget(&self, uid: &str) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uid);
    }
}

/// The account identity of a configuration version: STS at the configured STS endpoint, else at
/// the endpoint override (which stands for every product), else STS's own endpoint.
fn account_identity(
    config: &ResolvedConfig,
    overrides: &ClientOverrides,
    credentials: &SharedCredentialsProvider,
) -> AccountIdentity {
    let url = match (&config.sts_endpoint, &config.endpoint) {
        (None, Some(endpoint)) => parse_endpoint(endpoint).map_err(alibaba_sdk::Error::from),
        _ => config.sts_url(overrides),
    };
    let sts = url
        .and_then(|url| {
            StsClient::new(
                url,
                Some(credentials.clone()),
                config.client_config(overrides),
            )
        })
        .map_err(|source| ConfigError::Client {
            config: config.display.clone(),
            source,
        });
    AccountIdentity::new(sts)
}
