//! DescribeInstances and DescribeInstanceAttribute: filters and both pagination styles in, the
//! instances' typed views out, encoded straight to text (the largest answers the mock gives).

use serde::Serialize;

use crate::action::{ActionContext, encode};
use crate::catalog;
use crate::error::ErrorResponse;
use crate::instance::{Status, StoredInstance};
use crate::instance_unserved;
use crate::instance_view::{EipAddressView, InstanceView};
use crate::received_params::ReceivedParams;
use crate::store::Store;
use crate::store::listing::{Filters, Paging};
use crate::tags::MAX_TAGS;

/// `DescribeInstanceAttribute`: the instance, flat, with `RequestId`.
#[derive(Serialize)]
struct AttributeReply<'a> {
    #[serde(rename = "RequestId")]
    request_id: &'a str,
    #[serde(flatten)]
    instance: InstanceView<'a>,
    #[serde(flatten)]
    unserved: serde_json::Value,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DescribeInstancesReply<'a> {
    request_id: &'a str,
    total_count: usize,
    page_number: usize,
    page_size: usize,
    next_token: String,
    instances: InstanceListView<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct InstanceListView<'a> {
    instance: Vec<InstanceElement<'a>>,
}

/// One element of `Instances.Instance`.
#[derive(Serialize)]
struct InstanceElement<'a> {
    #[serde(flatten)]
    view: InstanceView<'a>,
    #[serde(flatten)]
    unserved: serde_json::Value,
}

fn owned(p: &ReceivedParams, name: &str) -> Option<String> {
    p.get(name).map(str::to_owned)
}

fn malformed_ids() -> ErrorResponse {
    ErrorResponse::bad_request(
        "InvalidInstanceIds.Malformed",
        "InstanceIds must be a JSON array of at most 100 instance IDs, e.g. [\"i-1\",\"i-2\"].",
    )
}

/// The instance's view with the EIP associated with it, if one is.
fn view_with_eip<'a>(
    store: &'a Store,
    instance: &'a StoredInstance,
    now: jiff::Timestamp,
) -> InstanceView<'a> {
    let mut view = instance.view(now);
    if let Some(eip) = store.eips.bound_to(&instance.id, now) {
        view.eip_address = EipAddressView {
            allocation_id: &eip.id,
            ip_address: eip.ip.to_string(),
            internet_charge_type: eip.internet_charge_type,
            bandwidth: eip.bandwidth,
            is_support_unassociate: true,
        };
    }
    view
}

fn next_token(seq: Option<u64>) -> String {
    seq.map(|s| format!("{s:016x}")).unwrap_or_default()
}

pub fn describe_instances(
    store: &Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<String, ErrorResponse> {
    let region = catalog::region_by_id(p.required("RegionId")?)?;
    let instance_ids = p
        .json_string_array("InstanceIds")
        .map_err(|_| malformed_ids())?;
    if instance_ids.as_ref().is_some_and(|ids| ids.len() > 100) {
        return Err(malformed_ids());
    }
    let status = p
        .get("Status")
        .map(|s| Status::parse(s).ok_or_else(|| ErrorResponse::invalid("Status")))
        .transpose()?;
    let filters = Filters {
        instance_ids,
        status,
        instance_name: owned(p, "InstanceName"),
        tags: p.key_values("Tag", MAX_TAGS)?,
        zone_id: owned(p, "ZoneId"),
        vpc_id: owned(p, "VpcId"),
        vswitch_id: owned(p, "VSwitchId"),
        instance_type: owned(p, "InstanceType"),
        image_id: owned(p, "ImageId"),
    };
    let token_mode = p.get("NextToken").is_some() || p.get("MaxResults").is_some();
    let (paging, page_number, page_size) = if token_mode {
        let max = p.number_in::<usize>("MaxResults", 1, 100)?.unwrap_or(10);
        let after = p
            .get("NextToken")
            .map(|t| u64::from_str_radix(t, 16).map_err(|_| ErrorResponse::invalid("NextToken")))
            .transpose()?;
        (Paging::Token { after, max }, 1, max)
    } else {
        let number = p
            .number_in::<usize>("PageNumber", 1, usize::MAX / 128)?
            .unwrap_or(1);
        let size = p.number_in::<usize>("PageSize", 1, 100)?.unwrap_or(10);
        (Paging::Pages { number, size }, number, size)
    };
    let page = store.describe(&ctx.caller.account_id, region.id, &filters, paging, ctx.now);
    encode(&DescribeInstancesReply {
        request_id: ctx.request_id,
        total_count: page.total,
        page_number,
        page_size,
        next_token: next_token(page.next),
        instances: InstanceListView {
            instance: page
                .instances
                .iter()
                .map(|i| InstanceElement {
                    view: view_with_eip(store, i, ctx.now),
                    unserved: instance_unserved::describe_instances_fields(),
                })
                .collect(),
        },
    })
}

/// `DescribeInstanceAttribute`: one instance, flat.
pub fn describe_instance_attribute(
    store: &Store,
    ctx: &ActionContext<'_>,
    p: &ReceivedParams,
) -> Result<String, ErrorResponse> {
    let id = p.required("InstanceId")?;
    let instance = view_with_eip(
        store,
        store.find(&ctx.caller.account_id, None, id)?,
        ctx.now,
    );
    encode(&AttributeReply {
        request_id: ctx.request_id,
        instance,
        unserved: instance_unserved::instance_attribute_fields(),
    })
}
