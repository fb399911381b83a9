//! The mock's shared state and the protocol pipeline of one API request:
//! parse → identify action and version → count → inject faults → authenticate → dispatch.
//! Everything here is synchronous; the HTTP layer adds latency and writes the response.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use axum::http::HeaderMap;
use jiff::Timestamp;
use rand::Rng as _;
use serde_json::Value;

use crate::action::{ActionContext, action_not_found};
use crate::auth::{self, KeyStore, NonceCache, SignedRequest};
use crate::config::{ApiRateLimits, Faults, MockConfig};
use crate::error::ErrorResponse;
use crate::injection::{self, ErrorInjection, Scripted, ScriptedFault};
use crate::instance_view::InstanceSummary;
use crate::ledger::{self, Ledger};
use crate::locks::{lock, read, write};
use crate::products::{self, Product, Route};
use crate::received_params::{ReceivedParams, decode_form};
use crate::stats::{Counters, MockStats};
use crate::store::Store;
use crate::sts_actions::StsHandler;

/// Settings that may change at run time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub transition_delay: Duration,
    pub faults: Faults,
    pub instance_quota: Option<usize>,
    pub visibility_lag: Duration,
}

/// Everything the server and the library handle share.
pub struct Shared {
    pub settings: RwLock<Settings>,
    pub keys: RwLock<KeyStore>,
    pub nonces: Mutex<NonceCache>,
    pub store: Mutex<Store>,
    pub counters: Mutex<Counters>,
    pub limiter: Mutex<RateLimiter>,
    /// Per-action quotas, over the all-actions one of the faults.
    pub api_rate_limits: RwLock<ApiRateLimits>,
    /// ClientTokens whose call is still being answered (see [`InFlight`]).
    pub in_flight: Mutex<HashSet<TokenInFlight>>,
    /// Scripted answers still to give, oldest first.
    pub injections: Mutex<Vec<ErrorInjection>>,
    /// What every successful call did to resources.
    pub ledger: Mutex<Ledger>,
}

/// A ClientToken call that is processed but not yet answered.
pub type TokenInFlight = (Arc<str>, &'static str, String);

/// Actions whose ClientToken is tracked while in flight.
const TOKEN_ACTIONS: &[&str] = &["RunInstances", "DeleteInstances"];

/// Marks a ClientToken call as in flight until dropped, so that a repeat arriving before the
/// answer gets `LastTokenProcessing`, as in ECS. Dropped when the answer is sent, or when the
/// client goes away while it waits.
pub struct InFlight {
    shared: Arc<Shared>,
    key: TokenInFlight,
}

impl InFlight {
    /// Tracks `key` in `shared`.
    pub fn new(shared: Arc<Shared>, key: TokenInFlight) -> Self {
        Self { shared, key }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        lock(&self.shared.in_flight).remove(&self.key);
    }
}

/// What [`Shared::handle`] produced: the answer, the in-flight token to release once the
/// answer is sent, and the scripted fault the answer is to be sent with.
pub struct Outcome {
    pub result: Result<String, ErrorResponse>,
    pub in_flight: Option<TokenInFlight>,
    pub fault: Option<ScriptedFault>,
    /// The API the request's `Version` selected (ECS until it is known), named in an error's
    /// `Recommend`.
    pub product: Product,
}

/// Calls per (account, region, action) in the current wall-clock minute.
#[derive(Debug, Default)]
pub struct RateLimiter {
    minute: i64,
    counts: HashMap<(Arc<str>, String, &'static str), u32>,
}

impl RateLimiter {
    /// Counts one call; false when it exceeds `limit` for this minute.
    pub fn admit(
        &mut self,
        key: (Arc<str>, String, &'static str),
        limit: u32,
        now: Timestamp,
    ) -> bool {
        let minute = now.as_second().div_euclid(60);
        if minute != self.minute {
            self.minute = minute;
            self.counts.clear();
        }
        let count = self.counts.entry(key).or_default();
        *count = count.saturating_add(1);
        *count <= limit
    }
}

/// One HTTP request as the pipeline sees it.
pub struct ApiRequest<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
    pub request_id: &'a str,
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
}

impl Shared {
    /// State for a fresh mock.
    pub fn new(config: &MockConfig) -> Self {
        let mut keys = KeyStore::default();
        for key in &config.access_keys {
            keys.add(key.clone());
        }
        Self {
            settings: RwLock::new(Settings {
                transition_delay: config.transition_delay,
                faults: config.faults,
                instance_quota: config.instance_quota,
                visibility_lag: config.visibility_lag,
            }),
            keys: RwLock::new(keys),
            nonces: Mutex::new(NonceCache::new(config.nonce_window, config.nonce_capacity)),
            store: Mutex::new(Store::with_visibility_lag(config.visibility_lag)),
            counters: Mutex::new(Counters::default()),
            limiter: Mutex::new(RateLimiter::default()),
            api_rate_limits: RwLock::new(config.api_rate_limits.clone()),
            in_flight: Mutex::new(HashSet::new()),
            injections: Mutex::new(config.injections.clone()),
            ledger: Mutex::new(Ledger::default()),
        }
    }

    /// Current settings.
    pub fn settings(&self) -> Settings {
        *read(&self.settings)
    }

    /// Counters plus instance figures.
    pub fn stats(&self) -> MockStats {
        let mut stats = lock(&self.counters).snapshot();
        let store = lock(&self.store);
        stats.instances_created = store.created_total();
        stats.instances_live = store.live() as u64;
        stats
    }

    /// Every live instance, oldest first.
    pub fn instances(&self) -> Vec<InstanceSummary> {
        let now = Timestamp::now();
        lock(&self.store)
            .all()
            .into_iter()
            .map(|i| i.summary(now))
            .collect()
    }

    /// Every live resource of every account.
    pub fn resources(&self) -> Vec<crate::resource_records::ResourceRecord> {
        crate::resource_records::all(&mut lock(&self.store), Timestamp::now())
    }

    /// Answers one API request; errors are counted by code.
    /// With `track_tokens`, a successful ClientToken call stays in flight (the caller releases it
    /// with an [`InFlight`] guard after its answer delay).
    pub fn handle(&self, request: &ApiRequest<'_>, track_tokens: bool) -> Outcome {
        let mut in_flight = None;
        let mut fault = None;
        let mut product = Product::Ecs;
        let result = self.handle_inner(
            request,
            track_tokens.then_some(&mut in_flight),
            &mut fault,
            &mut product,
        );
        if let Err(error) = &result {
            lock(&self.counters).error(&error.code);
        }
        Outcome {
            result,
            in_flight,
            fault,
            product,
        }
    }

    fn handle_inner(
        &self,
        request: &ApiRequest<'_>,
        in_flight: Option<&mut Option<TokenInFlight>>,
        fault: &mut Option<ScriptedFault>,
        product_out: &mut Product,
    ) -> Result<String, ErrorResponse> {
        let now = Timestamp::now();
        if request.method != "GET" && request.method != "POST" {
            return Err(ErrorResponse::new(
                405,
                "UnsupportedHTTPMethod",
                "Only GET and POST are supported.",
            ));
        }
        let query = decode_form(request.query.as_bytes());
        let is_form = header(request.headers, "content-type").is_some_and(|ct| {
            ct.to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        });
        let body = if is_form {
            decode_form(request.body)
        } else {
            BTreeMap::new()
        };
        let params = ReceivedParams::merge(&query, &body);
        let signed = SignedRequest {
            method: request.method,
            path: request.path,
            query: &query,
            params: &params,
            headers: request.headers,
            body: request.body,
        };
        let v3 = signed.is_v3();
        let from = |header_name: &str, param: &str| -> Result<String, ErrorResponse> {
            let value = if v3 {
                header(request.headers, header_name)
            } else {
                params.get(param)
            };
            let value = value
                .or_else(|| params.get(param))
                .or_else(|| header(request.headers, header_name));
            value
                .map(str::to_owned)
                .ok_or_else(|| ErrorResponse::missing(param))
        };
        let action = from("x-acs-action", "Action")?;
        let label = products::label(&action);
        {
            let named = (label == "DescribeInstances")
                .then(|| params.get("InstanceIds"))
                .flatten()
                .map(|ids| serde_json::from_str::<Vec<String>>(ids).unwrap_or_default());
            let unlisted = named
                .as_ref()
                .map_or(0, |ids| lock(&self.store).unlisted(ids, Timestamp::now()));
            let mut counters = lock(&self.counters);
            counters.call(label);
            if let Some(ids) = &named {
                counters.described(ids.len() as u64, unlisted as u64);
            }
        }
        let version = from("x-acs-version", "Version")?;
        let product = Product::of_version(&version)?;
        *product_out = product;
        let route = product.route(label)?;
        self.inject_faults()?;
        let anonymous = matches!(
            route,
            Route::Sts(action) if matches!(action.handler, StsHandler::Anonymous(_))
        );
        let caller = if anonymous {
            None
        } else {
            let keys = read(&self.keys);
            Some(auth::authenticate(&keys, &self.nonces, &signed, now)?)
        };
        if let Some(caller) = &caller {
            let scripted = injection::take(&mut lock(&self.injections), label, &caller.account_id);
            match scripted {
                Some(Scripted::Error(error)) => return Err(error),
                Some(Scripted::Fault(scripted)) => {
                    *fault = Some(scripted);
                    if !scripted.processes() {
                        return Ok(String::new());
                    }
                }
                None => {}
            }
        }
        let limit = read(&self.api_rate_limits)
            .get(label)
            .copied()
            .or(self.settings().faults.api_rate_limit_per_minute);
        if let (Some(caller), Some(limit)) = (&caller, limit) {
            let region = params.get("RegionId").unwrap_or_default().to_owned();
            let key = (caller.account_id.clone(), region, label);
            if !lock(&self.limiter).admit(key, limit, now) {
                return Err(ErrorResponse::throttled());
            }
        }
        let with_request_id = |mut value: Value| {
            if let Some(map) = value.as_object_mut() {
                map.entry("RequestId")
                    .or_insert_with(|| Value::from(request.request_id));
            }
            value.to_string()
        };
        match (route, caller) {
            (Route::Sts(action), caller) => match (action.handler, caller) {
                (StsHandler::Anonymous(handler), _) => {
                    handler(&mut write(&self.keys), &params, now).map(with_request_id)
                }
                (StsHandler::Signed(handler), Some(caller)) => {
                    handler(&mut write(&self.keys), &caller, &params, now).map(with_request_id)
                }
                (StsHandler::Signed(_), None) => Err(action_not_found()),
            },
            (Route::Api(action), Some(caller)) => {
                let token = params
                    .get("ClientToken")
                    .filter(|_| TOKEN_ACTIONS.contains(&label))
                    .map(|t| (caller.account_id.clone(), label, t.to_owned()));
                if let Some(key) = &token
                    && lock(&self.in_flight).contains(key)
                {
                    return Err(ErrorResponse::forbidden(
                        "LastTokenProcessing",
                        "The last request with this ClientToken is still being processed; retry later.",
                    ));
                }
                let settings = self.settings();
                let ctx = ActionContext {
                    caller: &caller,
                    request_id: request.request_id,
                    now,
                    delay: settings.transition_delay,
                    quota: settings.instance_quota,
                };
                let mut store = lock(&self.store);
                let recorded = ledger::records(label);
                let region = params
                    .get("RegionId")
                    .and_then(|r| crate::catalog::region_by_id(r).ok())
                    .map(|r| r.id);
                let handles = if recorded {
                    ledger::handles_of(&params)
                } else {
                    Default::default()
                };
                let before =
                    ledger::snapshot(&mut store, &caller.account_id, region, &handles, now);
                let answer = action.run(&mut store, &ctx, &params)?;
                if recorded {
                    lock(&self.ledger).record_call(
                        &mut store,
                        label,
                        &caller.account_id,
                        region,
                        handles,
                        before,
                        &answer,
                        now,
                    );
                }
                drop(store);
                if let (Some(slot), Some(key)) = (in_flight, token) {
                    lock(&self.in_flight).insert(key.clone());
                    *slot = Some(key);
                }
                Ok(answer)
            }
            (Route::Api(_), None) => Err(action_not_found()),
        }
    }

    fn inject_faults(&self) -> Result<(), ErrorResponse> {
        let faults = self.settings().faults;
        if faults.throttle_rate <= 0.0 && faults.error_rate <= 0.0 {
            return Ok(());
        }
        let mut rng = rand::rng();
        if rng.random_bool(faults.throttle_rate.clamp(0.0, 1.0)) {
            return Err(ErrorResponse::throttled());
        }
        if rng.random_bool(faults.error_rate.clamp(0.0, 1.0)) {
            return Err(ErrorResponse::service_unavailable());
        }
        Ok(())
    }
}
