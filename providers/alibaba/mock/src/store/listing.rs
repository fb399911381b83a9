//! DescribeInstances in the store: its filters, both pagination styles, the cap on tag-filtered
//! listings and the lag before creates and releases show.

use std::sync::Arc;

use jiff::Timestamp;

use super::Store;
use crate::glob::glob_match;
use crate::instance::{Status, StoredInstance};

/// Filters of `DescribeInstances`; `None`/empty means "any".
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub instance_ids: Option<Vec<String>>,
    pub status: Option<Status>,
    pub instance_name: Option<String>,
    pub tags: Vec<(String, Option<String>)>,
    pub zone_id: Option<String>,
    pub vpc_id: Option<String>,
    pub vswitch_id: Option<String>,
    pub instance_type: Option<String>,
    pub image_id: Option<String>,
}

/// How a listing is cut into pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// `PageNumber` (1-based) and `PageSize`.
    Pages { number: usize, size: usize },
    /// `NextToken` (the sequence number to continue after) and `MaxResults`.
    Token { after: Option<u64>, max: usize },
}

/// One page of a listing.
#[derive(Debug, Clone)]
pub struct Page<'a> {
    pub total: usize,
    pub instances: Vec<&'a StoredInstance>,
    /// Continue after this sequence number; `None` at the end.
    pub next: Option<u64>,
}

impl Filters {
    fn matches(&self, i: &StoredInstance, now: Timestamp) -> bool {
        let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        self.status.is_none_or(|s| i.status(now) == s)
            && self
                .instance_name
                .as_deref()
                .is_none_or(|p| glob_match(p, &i.name))
            && eq(&self.zone_id, &i.zone_id)
            && eq(&self.vpc_id, &i.vpc_id)
            && eq(&self.vswitch_id, &i.vswitch_id)
            && eq(&self.instance_type, i.instance_type.id)
            && eq(&self.image_id, i.image.id)
            && self.has_tags(i)
    }

    fn has_tags(&self, i: &StoredInstance) -> bool {
        self.tags.iter().all(|(k, v)| i.has_tag(k, v.as_deref()))
    }
}

/// How many tagged instances a tag-filtered `DescribeInstances` considers, over all pages.
pub const MAX_TAG_FILTERED_INSTANCES: usize = 1000;

impl Store {
    /// A page of the account's instances in a region, oldest first.
    pub fn describe(
        &self,
        account_id: &Arc<str>,
        region_id: &'static str,
        filters: &Filters,
        paging: Paging,
        now: Timestamp,
    ) -> Page<'_> {
        let scope = (account_id.clone(), region_id);
        let in_scope = |ids: &mut dyn Iterator<Item = &String>| {
            let mut found: Vec<&StoredInstance> = ids
                .filter_map(|id| self.instances.get(id))
                .filter(|i| i.account_id == *account_id && i.region_id == region_id)
                .collect();
            found.sort_unstable_by_key(|i| i.seq);
            found.dedup_by_key(|i| i.seq);
            found
        };
        // A filter on a tag with a value: only the instances indexed under it can match.
        let tagged = filters.tags.iter().find_map(|(key, value)| {
            let value = value.as_ref()?;
            Some(self.by_tag.get(&(key.clone(), value.clone())))
        });
        let matching: Box<dyn Iterator<Item = &StoredInstance>> =
            match (&filters.instance_ids, tagged) {
                (Some(ids), _) => Box::new(in_scope(&mut ids.iter()).into_iter()),
                (None, Some(ids)) => Box::new(in_scope(&mut ids.into_iter().flatten()).into_iter()),
                (None, None) => Box::new(
                    self.by_scope
                        .get(&scope)
                        .into_iter()
                        .flat_map(|ids| ids.values())
                        .filter_map(|id| self.instances.get(id)),
                ),
            };
        let matching = matching.filter(|i| i.visible_from <= now);
        let released: Vec<&StoredInstance> = self
            .releasing
            .listed(account_id, region_id, now)
            .into_iter()
            .filter(|i| {
                filters
                    .instance_ids
                    .as_ref()
                    .is_none_or(|ids| ids.contains(&i.id))
            })
            .collect();
        let matching: Box<dyn Iterator<Item = &StoredInstance>> = if released.is_empty() {
            Box::new(matching)
        } else {
            let mut all: Vec<&StoredInstance> = matching.chain(released).collect();
            all.sort_unstable_by_key(|i| i.seq);
            Box::new(all.into_iter())
        };
        let mut total = 0;
        let mut page = Vec::new();
        let mut more = false;
        let (skip, size, after) = match paging {
            Paging::Pages { number, size } => {
                (number.saturating_sub(1).saturating_mul(size), size, None)
            }
            Paging::Token { after, max } => (0, max, after),
        };
        let mut skipped = 0;
        // ECS resolves a tag filter to at most 1,000 tagged instances and lists only those (its
        // reference for `Tag.N.Key`): a larger tagged fleet is listed incompletely, silently.
        let mut tagged = 0;
        let capped = matching.take_while(|i| {
            if filters.tags.is_empty() || !filters.has_tags(i) {
                return true;
            }
            tagged += 1;
            tagged <= MAX_TAG_FILTERED_INSTANCES
        });
        for instance in capped.filter(|i| filters.matches(i, now)) {
            total += 1;
            if after.is_some_and(|a| instance.seq <= a) {
                continue;
            }
            if skipped < skip {
                skipped += 1;
            } else if page.len() < size {
                page.push(instance);
            } else {
                more = true;
            }
        }
        let next = if more {
            page.last().map(|i| i.seq)
        } else {
            None
        };
        Page {
            total,
            instances: page,
            next,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::tests::{now, spec};
    use super::*;
    use crate::launch_spec::LaunchSpec;

    #[test]
    fn a_tag_filter_lists_at_most_1000_tagged_instances() {
        let mut store = Store::default();
        let acct: Arc<str> = Arc::from("1");
        let tagged = LaunchSpec {
            tags: vec![("team".into(), "a".into())],
            ..spec()
        };
        store
            .launch(&acct, &tagged, 100, now(), Duration::ZERO, None)
            .unwrap();
        store
            .launch(&acct, &spec(), 5, now(), Duration::ZERO, None)
            .unwrap();
        for _ in 0..10 {
            store
                .launch(&acct, &tagged, 100, now(), Duration::ZERO, None)
                .unwrap();
        }
        let listed = |store: &Store, tags: Vec<(String, Option<String>)>| {
            let filters = Filters {
                tags,
                ..Filters::default()
            };
            let (mut count, mut after) = (0, None);
            loop {
                let page = store.describe(
                    &acct,
                    "cn-hangzhou",
                    &filters,
                    Paging::Token { after, max: 100 },
                    now(),
                );
                count += page.instances.len();
                match page.next {
                    Some(next) => after = Some(next),
                    None => return count,
                }
            }
        };
        // 1,100 carry the tag; by key alone or by key and value, 1,000 of them are listed.
        assert_eq!(
            listed(&store, vec![("team".into(), None)]),
            MAX_TAG_FILTERED_INSTANCES
        );
        assert_eq!(
            listed(&store, vec![("team".into(), Some("a".into()))]),
            MAX_TAG_FILTERED_INSTANCES
        );
        // Without a tag filter every instance is listed.
        assert_eq!(listed(&store, Vec::new()), 1105);
    }
}
