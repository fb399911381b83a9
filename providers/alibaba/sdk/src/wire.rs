//! Shapes shared by the JSON responses of Alibaba Cloud's RPC APIs.

use serde::{Deserialize, Deserializer};

/// A `null` field decodes as its type's default.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Declares a `{"<Inner>": [T]}` wrapper that decodes into a `Vec<T>`; a null or missing
/// wrapper or list is empty.
macro_rules! wrapped_list {
    ($name:ident, $inner:literal, $item:ty) => {
        #[derive(Debug, Clone, PartialEq, Default)]
        #[doc = concat!("The `{\"", $inner, "\": [...]}` wrapper the API puts around a list.")]
        pub struct $name {
            #[doc = "The items."]
            pub items: Vec<$item>,
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                #[derive(::serde::Deserialize)]
                struct Wire {
                    #[serde(rename = $inner, default, deserialize_with = "crate::wire::null_as_default")]
                    items: Vec<$item>,
                }
                let wire = <Option<Wire> as ::serde::Deserialize>::deserialize(deserializer)?;
                Ok(Self {
                    items: wire.map(|w| w.items).unwrap_or_default(),
                })
            }
        }
    };
}

pub(crate) use wrapped_list;
