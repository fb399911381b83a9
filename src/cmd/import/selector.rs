//! Which resources `ferroplane import` takes: the `--tag`, `--vpc-id`, `--instance-ids` or
//! `--all` selector. Ground floor of the import: imports nothing of it (`selection` applies it).

/// A `--tag KEY=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagFilter {
    pub key: String,
    pub value: String,
}

impl std::str::FromStr for TagFilter {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        match raw.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => Ok(Self {
                key: key.trim().to_owned(),
                value: value.to_owned(),
            }),
            _ => Err(format!("`{raw}` is not KEY=VALUE")),
        }
    }
}

/// What to import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// Resources carrying every one of these tags.
    Tags(Vec<TagFilter>),
    /// One VPC and everything in it.
    Vpc(String),
    /// These instances.
    Instances(Vec<String>),
    /// Everything in the region.
    All,
}
