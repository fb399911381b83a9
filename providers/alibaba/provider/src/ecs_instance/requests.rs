//! The requests the field table fills: each in-place or restart-bound row of `field_classes`
//! names a [`Request`], either a fill that writes its parameter into a request shared with the
//! other rows of the same ECS action (one call for all of them), or calls of its own made from
//! the row's [`Change`]. [`batch`] builds a shared request from the rows that differ. Pure.

use alibaba_sdk::ecs::{
    AutoRenewChange, MetadataOptionsChange, ModifyInstanceAttributeRequest,
    ModifyInstanceSpecRequest, NetworkSpecChange,
};

use super::comparison::{Change, Wanted};

/// Writes one row's parameter into a shared request.
pub type Fill<R> = fn(&mut R, &Wanted<'_>);

/// The request a row fills when its property differs.
#[derive(Clone, Copy, Debug)]
pub enum Request {
    /// One `ModifyInstanceAttribute` per phase (in place, or while stopped).
    Attribute(Fill<ModifyInstanceAttributeRequest>),
    /// One `ModifyInstanceSpec`.
    InstanceSpec(Fill<ModifyInstanceSpecRequest>),
    /// One `ModifyInstanceNetworkSpec`.
    NetworkSpec(Fill<NetworkSpecChange>),
    /// One `ModifyInstanceMetadataOptions`.
    MetadataOptions(Fill<MetadataOptionsChange>),
    /// One `ModifyInstanceAutoRenewAttribute`.
    AutoRenew(Fill<AutoRenewChange>),
    /// Calls of their own, made from the row's [`Change`]; the text names them (README table).
    Own(&'static str),
}

impl Request {
    /// The ECS action(s) the request is sent with.
    pub fn action(&self) -> &'static str {
        match self {
            Self::Attribute(_) => "ModifyInstanceAttribute",
            Self::InstanceSpec(_) => "ModifyInstanceSpec",
            Self::NetworkSpec(_) => "ModifyInstanceNetworkSpec",
            Self::MetadataOptions(_) => "ModifyInstanceMetadataOptions",
            Self::AutoRenew(_) => "ModifyInstanceAutoRenewAttribute",
            Self::Own(action) => action,
        }
    }
}

/// A row whose property differs: what it fills and the change its comparison found.
#[derive(Clone, Debug)]
pub struct Planned {
    pub path: &'static str,
    pub request: Request,
    pub change: Change,
    /// What differs, for people (no secret values).
    pub line: String,
}

impl PartialEq for Planned {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.change == other.change
    }
}

impl Eq for Planned {}

/// A request several rows fill together.
pub trait Shared: Sized {
    /// The fill of `request` when it writes into this kind of request.
    fn fill_of(request: &Request) -> Option<Fill<Self>>;
}

macro_rules! shared {
    ($ty:ty, $variant:ident) => {
        impl Shared for $ty {
            fn fill_of(request: &Request) -> Option<Fill<Self>> {
                match request {
                    Request::$variant(fill) => Some(*fill),
                    _ => None,
                }
            }
        }
    };
}

shared!(ModifyInstanceAttributeRequest, Attribute);
shared!(ModifyInstanceSpecRequest, InstanceSpec);
shared!(NetworkSpecChange, NetworkSpec);
shared!(MetadataOptionsChange, MetadataOptions);
shared!(AutoRenewChange, AutoRenew);

/// `base` filled by every row of `pending` that writes into an `R`, in table order; `None` when
/// none does (no call).
pub fn batch<R: Shared>(pending: &[Planned], mut base: R, wanted: &Wanted<'_>) -> Option<R> {
    let mut filled = false;
    for fill in pending.iter().filter_map(|p| R::fill_of(&p.request)) {
        fill(&mut base, wanted);
        filled = true;
    }
    filled.then_some(base)
}

/// The last change of the kind `pick` takes (a later row's change wins, as both rows of a
/// shared action describe the same call).
pub fn own<'a, T>(pending: &'a [Planned], pick: impl Fn(&'a Change) -> Option<T>) -> Option<T> {
    pending.iter().filter_map(|p| pick(&p.change)).last()
}
