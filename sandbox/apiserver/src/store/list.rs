//! Lists: the objects of one resource that the selectors match, in pages of `limit` with
//! `continue` tokens.
//!
//! Pages are read from the live store, not a snapshot: every page reports the resourceVersion
//! of the first, so a client that watches from the list's version replays every change made
//! while it paged (Kubernetes serves all pages from one snapshot; pages here are at least as new
//! as it, and the replay brings them up to date).

use base64::Engine as _;
use serde_json::Value;

use crate::catalog::registry::ResourceDef;
use crate::error::{ApiError, ApiResult};
use crate::meta;
use crate::store::selector::Selectors;
use crate::store::state::State;
use crate::store::views;

/// What a list asks for.
#[derive(Debug, Clone)]
pub struct ListRequest<'a> {
    pub def: &'a ResourceDef,
    /// `None` lists every namespace.
    pub namespace: Option<&'a str>,
    pub selectors: Selectors,
    /// 0: everything.
    pub limit: usize,
    /// The `continue` token of the previous page.
    pub after: Option<&'a str>,
}

/// One page of a list, in the resource's view.
#[derive(Debug, Clone)]
pub struct ListPage {
    pub items: Vec<Value>,
    pub resource_version: u64,
    /// Set when more items follow.
    pub continue_token: Option<String>,
    pub remaining: usize,
}

/// Reads the page `request` asks for from `state`.
pub fn list(state: &State, request: &ListRequest) -> ApiResult<ListPage> {
    let def = request.def;
    let after = request
        .after
        .filter(|c| !c.is_empty())
        .map(ContinueToken::decode)
        .transpose()?;
    let rv = match &after {
        Some(token) => {
            // The changes since the first page must still be replayable.
            state.check_replayable(token.rv).map_err(|expired| {
                let mut error = ApiError::expired(token.rv, expired.oldest);
                error.message = format!(
                    "the continue token is too old (resource version {} is no longer in the history); start the list again without it",
                    token.rv
                );
                error
            })?;
            token.rv
        }
        None => state.resource_version(),
    };
    let after = after.map(|t| (t.namespace, t.name));
    let limit = request.limit;
    let mut items = Vec::new();
    let mut continue_token = None;
    let mut remaining = 0usize;
    for stored in state.list(&def.store_key(), request.namespace) {
        let key = (
            meta::str_at(stored, "/metadata/namespace").to_owned(),
            meta::name_of(stored).to_owned(),
        );
        if after.as_ref().is_some_and(|a| key <= *a) {
            continue;
        }
        let view = views::view_of(def, stored);
        if !request.selectors.matches(&view) {
            continue;
        }
        if limit > 0 && items.len() == limit {
            remaining += 1;
            continue;
        }
        if limit > 0 && items.len() + 1 == limit {
            continue_token = Some(
                ContinueToken {
                    rv,
                    namespace: key.0.clone(),
                    name: key.1.clone(),
                }
                .encode(),
            );
        }
        items.push(view.into_owned());
    }
    if remaining == 0 {
        continue_token = None;
    }
    Ok(ListPage {
        items,
        resource_version: rv,
        continue_token,
        remaining,
    })
}

/// A continue token: where the previous page ended, and the resourceVersion of the first page.
struct ContinueToken {
    rv: u64,
    namespace: String,
    name: String,
}

impl ContinueToken {
    fn encode(&self) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(format!("{}/{}/{}", self.rv, self.namespace, self.name))
    }

    fn decode(token: &str) -> ApiResult<Self> {
        let invalid = || ApiError::bad_request(format!("continue key is not valid: {token:?}"));
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| invalid())?;
        let text = String::from_utf8(raw).map_err(|_| invalid())?;
        let mut parts = text.splitn(3, '/');
        let (Some(rv), Some(namespace), Some(name)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(invalid());
        };
        Ok(Self {
            rv: rv.parse().map_err(|_| invalid())?,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        })
    }
}
