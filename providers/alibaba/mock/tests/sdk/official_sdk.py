"""Drives the ECS mock with Alibaba Cloud's official Python SDKs.

Run by providers/alibaba/mock/tests/integration/mock_official_sdk.rs with MOCK_HOST (127.0.0.1), MOCK_PORT,
MOCK_AK and MOCK_SECRET in the environment. Exit codes: 0 all checks passed, 1 a check failed,
77 the SDK packages are not importable (the Rust test then skips with a notice).

Classic SDK (V1): aliyun-python-sdk-core + aliyun-python-sdk-ecs.
Generated SDK (V3): alibabacloud_ecs20140526 (with alibabacloud_tea_openapi).
"""

import json
import os
import sys
import time

SKIP = 77

HOST = os.environ["MOCK_HOST"]
PORT = int(os.environ["MOCK_PORT"])
AK = os.environ["MOCK_AK"]
SECRET = os.environ["MOCK_SECRET"]
REGION = "cn-hangzhou"
IMAGE = "centos_7_8_x64_20G_alibase_20200519.vhd"


def check(condition, message):
    if not condition:
        print("FAIL: " + message, flush=True)
        sys.exit(1)
    print("ok: " + message, flush=True)


def classic_sdk():
    from aliyunsdkcore.client import AcsClient
    from aliyunsdkcore.acs_exception.exceptions import ServerException
    from aliyunsdkecs.request.v20140526.DeleteInstanceRequest import DeleteInstanceRequest
    from aliyunsdkecs.request.v20140526.DescribeInstancesRequest import DescribeInstancesRequest
    from aliyunsdkecs.request.v20140526.DescribeRegionsRequest import DescribeRegionsRequest
    from aliyunsdkecs.request.v20140526.RunInstancesRequest import RunInstancesRequest
    from aliyunsdkecs.request.v20140526.StopInstanceRequest import StopInstanceRequest

    client = AcsClient(AK, SECRET, REGION, port=PORT, auto_retry=False)

    def call(request):
        request.set_endpoint(HOST)
        request.set_protocol_type("http")
        request.set_accept_format("json")
        return json.loads(client.do_action_with_exception(request))

    regions = call(DescribeRegionsRequest())
    check(len(regions["Regions"]["Region"]) >= 25, "classic SDK: DescribeRegions")

    run = RunInstancesRequest()
    run.set_ImageId(IMAGE)
    run.set_InstanceType("ecs.g6.large")
    run.set_Amount(2)
    run.set_InstanceName("sdk-v1")
    run.set_ClientToken("sdk-v1-token")
    run.set_Tags([{"Key": "origin", "Value": "python sdk v1"}])
    created = call(run)
    ids = created["InstanceIdSets"]["InstanceIdSet"]
    check(len(ids) == 2, "classic SDK: RunInstances created 2 instances")
    again = call(run)
    check(again["InstanceIdSets"]["InstanceIdSet"] == ids, "classic SDK: ClientToken is idempotent")

    describe = DescribeInstancesRequest()
    describe.set_InstanceIds(json.dumps(ids))
    describe.set_PageSize(100)
    described = call(describe)
    found = described["Instances"]["Instance"]
    check(sorted(i["InstanceId"] for i in found) == sorted(ids), "classic SDK: DescribeInstances by IDs")
    check(found[0]["Tags"]["Tag"][0] == {"TagKey": "origin", "TagValue": "python sdk v1"},
          "classic SDK: tags with spaces round-trip")

    # A running instance (not one still Pending, which ECS answers with
    # IncorrectInstanceStatus.Initializing) cannot be deleted without Force.
    wait_running(lambda: status_v1(call, DescribeInstancesRequest, ids[0]))
    delete = DeleteInstanceRequest()
    delete.set_InstanceId(ids[0])
    try:
        call(delete)
        check(False, "classic SDK: DeleteInstance of a non-stopped instance must fail")
    except ServerException as e:
        check(e.get_error_code() == "IncorrectInstanceStatus",
              "classic SDK: IncorrectInstanceStatus surfaces as ServerException")

    delete.set_Force(True)
    call(delete)
    stop = StopInstanceRequest()
    stop.set_InstanceId(ids[1])
    call(stop)
    check(status_v1(call, DescribeInstancesRequest, ids[1]) == "Stopping", "classic SDK: StopInstance")

    bad = AcsClient(AK, "wrong-secret", REGION, port=PORT, auto_retry=False)
    request = DescribeRegionsRequest()
    request.set_endpoint(HOST)
    request.set_protocol_type("http")
    request.set_accept_format("json")
    try:
        bad.do_action_with_exception(request)
        check(False, "classic SDK: a wrong secret must fail")
    except ServerException as e:
        # The SDK compares its string to sign with the server's and, when equal, reports a wrong
        # secret: proof that the server's message carries the same string to sign.
        check(e.get_error_code() == "InvalidAccessKeySecret",
              "classic SDK: wrong secret recognised from the server string to sign (got %s)" % e.get_error_code())

    unknown = AcsClient("no-such-key", SECRET, REGION, port=PORT, auto_retry=False)
    try:
        unknown.do_action_with_exception(request)
        check(False, "classic SDK: an unknown key must fail")
    except ServerException as e:
        check(e.get_error_code() == "InvalidAccessKeyId.NotFound", "classic SDK: unknown key")


def status_v1(call, describe_class, instance_id):
    describe = describe_class()
    describe.set_InstanceIds(json.dumps([instance_id]))
    return call(describe)["Instances"]["Instance"][0]["Status"]


def wait_running(get_status):
    deadline = time.time() + 10
    while get_status() != "Running":
        if time.time() > deadline:
            check(False, "instance reached Running")
        time.sleep(0.05)


def generated_sdk():
    from alibabacloud_ecs20140526 import models as ecs
    from alibabacloud_ecs20140526.client import Client
    from alibabacloud_tea_openapi import models as openapi

    config = openapi.Config(
        access_key_id=AK,
        access_key_secret=SECRET,
        endpoint="%s:%d" % (HOST, PORT),
        protocol="http",
        region_id=REGION,
    )
    client = Client(config)

    regions = client.describe_regions(ecs.DescribeRegionsRequest())
    check(len(regions.body.regions.region) >= 25, "generated SDK (V3): DescribeRegions")

    run = ecs.RunInstancesRequest(
        region_id=REGION,
        image_id=IMAGE,
        instance_type="ecs.c6.large",
        amount=3,
        instance_name="sdk-v3",
        internet_max_bandwidth_out=5,
        client_token="sdk-v3-token",
        tag=[ecs.RunInstancesRequestTag(key="origin", value="python sdk v3 *~")],
    )
    created = client.run_instances(run)
    ids = created.body.instance_id_sets.instance_id_set
    check(len(ids) == 3, "generated SDK (V3): RunInstances created 3 instances")

    described = client.describe_instances(ecs.DescribeInstancesRequest(
        region_id=REGION, instance_ids=json.dumps(ids), max_results=100))
    found = described.body.instances.instance
    check(sorted(i.instance_id for i in found) == sorted(ids), "generated SDK (V3): DescribeInstances by IDs")
    check(all(len(i.public_ip_address.ip_address) == 1 for i in found),
          "generated SDK (V3): public IPs with bandwidth")
    check(found[0].tags.tag[0].tag_value == "python sdk v3 *~", "generated SDK (V3): tag value round-trips")

    wait_running(lambda: client.describe_instance_attribute(
        ecs.DescribeInstanceAttributeRequest(instance_id=ids[0])).body.status)
    client.delete_instance(ecs.DeleteInstanceRequest(instance_id=ids[0], force=True))

    try:
        client.describe_instance_attribute(ecs.DescribeInstanceAttributeRequest(instance_id=ids[0]))
        check(False, "generated SDK (V3): a deleted instance must be gone")
    except Exception as e:  # Tea raises its own exception type with a `code` attribute
        check(getattr(e, "code", None) == "InvalidInstanceId.NotFound",
              "generated SDK (V3): InvalidInstanceId.NotFound (got %r)" % getattr(e, "code", e))

    bad = Client(openapi.Config(access_key_id=AK, access_key_secret="wrong", endpoint="%s:%d" % (HOST, PORT),
                                protocol="http", region_id=REGION))
    try:
        bad.describe_regions(ecs.DescribeRegionsRequest())
        check(False, "generated SDK (V3): a wrong secret must fail")
    except Exception as e:
        check(getattr(e, "code", None) == "SignatureDoesNotMatch",
              "generated SDK (V3): SignatureDoesNotMatch (got %r)" % getattr(e, "code", e))


def importable(*modules):
    missing = []
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    return missing


def main():
    classic_missing = importable("aliyunsdkcore", "aliyunsdkecs")
    generated_missing = importable("alibabacloud_ecs20140526", "alibabacloud_tea_openapi")
    if classic_missing and generated_missing:
        print("SKIP: not importable: %s" % ", ".join(classic_missing + generated_missing), flush=True)
        sys.exit(SKIP)
    if classic_missing:
        print("SKIP classic SDK: not importable: %s" % ", ".join(classic_missing), flush=True)
    else:
        classic_sdk()
    if generated_missing:
        print("SKIP generated SDK: not importable: %s" % ", ".join(generated_missing), flush=True)
    else:
        generated_sdk()
    print("all official SDK checks passed", flush=True)


if __name__ == "__main__":
    main()
