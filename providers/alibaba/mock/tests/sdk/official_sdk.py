"""Drives the ECS mock with Alibaba Cloud's official Python SDKs.

Run by providers/alibaba/mock/tests/integration/mock_official_sdk.rs with MOCK_HOST (127.0.0.1), MOCK_PORT,
MOCK_AK, MOCK_SECRET, MOCK_VSWITCH and MOCK_SECURITY_GROUP (the mock's default vSwitch and security group
in cn-hangzhou, where instances are launched) in the environment. Exit codes: 0 all checks passed, 1 a check failed
or an SDK package is not importable (every SDK is checked, none is skipped).

Classic SDK (V1): aliyun-python-sdk-core + aliyun-python-sdk-ecs.
Generated SDK (V3): alibabacloud_ecs20140526 (with alibabacloud_tea_openapi).
Classic VPC SDK: aliyun-python-sdk-vpc (CreateVpc, DescribeVpcs, CreateVSwitch, DeleteVSwitch, DeleteVpc).
EIPs with the classic VPC SDK: AllocateEipAddress, AssociateEipAddress with an instance,
ReleaseEipAddress refused while associated, UnassociateEipAddress, ModifyEipAddressAttribute,
ReleaseEipAddress.
The NAT gateway lifecycle with the classic VPC SDK: nat_sdk.py.
Disks and key pairs with the classic SDK: CreateDisk, AttachDisk, ResizeDisk, DetachDisk, DeleteDisk;
ImportKeyPair, DescribeKeyPairs, DeleteKeyPairs.
The reads and in-place changes Terraform's alicloud provider makes on a stack: stack_reads.py.
"""

import json
import os
import sys
import time

HOST = os.environ["MOCK_HOST"]
PORT = int(os.environ["MOCK_PORT"])
AK = os.environ["MOCK_AK"]
SECRET = os.environ["MOCK_SECRET"]
VSWITCH = os.environ["MOCK_VSWITCH"]
SECURITY_GROUP = os.environ["MOCK_SECURITY_GROUP"]
REGION = "cn-hangzhou"
IMAGE = "centos_7_8_x64_20G_alibase_20200519.vhd"
# An OpenSSH RSA public key made with ssh-keygen (its private half was discarded) and the MD5
# fingerprint `ssh-keygen -l -E md5` prints for it.
PUBLIC_KEY = (
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCssLvIevGFoGOuVcTzca6vQAfctErHt+jxk4nFH4uJdjJInbAuR9q27Vq62pZN9pBEy"
    "jT/x8zDZSTTmSm9QdFPOUjzAANRPN0p0x0cw2wVgtujX9fAWFxqh5jyv+EIORKGvPfftnUlv55Flzl5C0M2nawKpscHg30pmYgaSR5i73Z8"
    "CMllaLJBCySAqxmVnHpxlKYuQIDIZ9j8+myd3y37HEMcKvG4v59MOh8XtvLQ4At4MtKfTh6vA02iH5UpM0OuD1T4gesLhfT3/e4QCZ8agSUAh"
    "FMAEmPuAbC1bZjZNRzL0yDEg2wM8Kl0cB+ab6I8sG6wN9MdQ48b0tNOMB8n ferroplane-test"
)
PUBLIC_KEY_MD5 = "92:19:96:01:1e:1c:fd:e7:db:39:da:20:85:57:ca:31"


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
    run.set_VSwitchId(VSWITCH)
    run.set_SecurityGroupId(SECURITY_GROUP)
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


def classic_disks_and_key_pairs():
    from aliyunsdkcore.client import AcsClient
    from aliyunsdkcore.acs_exception.exceptions import ServerException
    from aliyunsdkecs.request.v20140526.AttachDiskRequest import AttachDiskRequest
    from aliyunsdkecs.request.v20140526.CreateDiskRequest import CreateDiskRequest
    from aliyunsdkecs.request.v20140526.DeleteDiskRequest import DeleteDiskRequest
    from aliyunsdkecs.request.v20140526.DeleteKeyPairsRequest import DeleteKeyPairsRequest
    from aliyunsdkecs.request.v20140526.DescribeDisksRequest import DescribeDisksRequest
    from aliyunsdkecs.request.v20140526.DescribeInstancesRequest import DescribeInstancesRequest
    from aliyunsdkecs.request.v20140526.DescribeKeyPairsRequest import DescribeKeyPairsRequest
    from aliyunsdkecs.request.v20140526.DetachDiskRequest import DetachDiskRequest
    from aliyunsdkecs.request.v20140526.ImportKeyPairRequest import ImportKeyPairRequest
    from aliyunsdkecs.request.v20140526.ResizeDiskRequest import ResizeDiskRequest
    from aliyunsdkecs.request.v20140526.RunInstancesRequest import RunInstancesRequest

    client = AcsClient(AK, SECRET, REGION, port=PORT, auto_retry=False)

    def call(request):
        request.set_endpoint(HOST)
        request.set_protocol_type("http")
        request.set_accept_format("json")
        return json.loads(client.do_action_with_exception(request))

    run = RunInstancesRequest()
    run.set_ImageId(IMAGE)
    run.set_InstanceType("ecs.g6.large")
    run.set_VSwitchId(VSWITCH)
    run.set_SecurityGroupId(SECURITY_GROUP)
    instance = call(run)["InstanceIdSets"]["InstanceIdSet"][0]
    wait_running(lambda: status_v1(call, DescribeInstancesRequest, instance))

    create = CreateDiskRequest()
    create.set_ZoneId("cn-hangzhou-b")
    create.set_DiskCategory("cloud_essd")
    create.set_Size(40)
    create.set_DiskName("sdk-disk")
    disk = call(create)["DiskId"]
    check(disk.startswith("d-"), "classic SDK: CreateDisk")

    def described():
        request = DescribeDisksRequest()
        request.set_DiskIds(json.dumps([disk]))
        return call(request)["Disks"]["Disk"][0]

    attach = AttachDiskRequest()
    attach.set_InstanceId(instance)
    attach.set_DiskId(disk)
    call(attach)
    # ECS attaches asynchronously: Attaching, then In_use.
    wait_for("classic SDK: AttachDisk",
             lambda: described()["Status"] == "In_use" and described()["InstanceId"] == instance)

    resize = ResizeDiskRequest()
    resize.set_DiskId(disk)
    resize.set_NewSize(20)
    try:
        call(resize)
        check(False, "classic SDK: shrinking a disk must fail")
    except ServerException as e:
        check(e.get_error_code() == "InvalidDiskSize.TooSmall", "classic SDK: ResizeDisk never shrinks")
    resize.set_NewSize(100)
    resize.set_Type("online")
    call(resize)
    check(described()["Size"] == 100, "classic SDK: ResizeDisk online")

    delete = DeleteDiskRequest()
    delete.set_DiskId(disk)
    try:
        call(delete)
        check(False, "classic SDK: deleting an attached disk must fail")
    except ServerException as e:
        check(e.get_error_code() == "DiskStillAttached", "classic SDK: an attached disk is not deleted")

    detach = DetachDiskRequest()
    detach.set_InstanceId(instance)
    detach.set_DiskId(disk)
    call(detach)
    wait_for("classic SDK: DetachDisk", lambda: described()["Status"] == "Available")
    call(delete)
    remaining = DescribeDisksRequest()
    remaining.set_DiskIds(json.dumps([disk]))
    check(call(remaining)["TotalCount"] == 0, "classic SDK: DeleteDisk")

    imported = ImportKeyPairRequest()
    imported.set_KeyPairName("sdk-key")
    imported.set_PublicKeyBody(PUBLIC_KEY)
    answer = call(imported)
    check(answer["KeyPairFingerPrint"] == PUBLIC_KEY_MD5,
          "classic SDK: ImportKeyPair fingerprint is the MD5 ssh-keygen prints")
    listed = DescribeKeyPairsRequest()
    listed.set_KeyPairName("sdk-key")
    pairs = call(listed)["KeyPairs"]["KeyPair"]
    check([p["KeyPairName"] for p in pairs] == ["sdk-key"], "classic SDK: DescribeKeyPairs")
    remove = DeleteKeyPairsRequest()
    remove.set_KeyPairNames(json.dumps(["sdk-key"]))
    call(remove)
    check(call(listed)["TotalCount"] == 0, "classic SDK: DeleteKeyPairs")


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
        v_switch_id=VSWITCH,
        security_group_id=SECURITY_GROUP,
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


def vpc_sdk():
    from aliyunsdkcore.client import AcsClient
    from aliyunsdkcore.acs_exception.exceptions import ServerException
    from aliyunsdkvpc.request.v20160428.CreateVpcRequest import CreateVpcRequest
    from aliyunsdkvpc.request.v20160428.CreateVSwitchRequest import CreateVSwitchRequest
    from aliyunsdkvpc.request.v20160428.DeleteVSwitchRequest import DeleteVSwitchRequest
    from aliyunsdkvpc.request.v20160428.DeleteVpcRequest import DeleteVpcRequest
    from aliyunsdkvpc.request.v20160428.DescribeVSwitchesRequest import DescribeVSwitchesRequest
    from aliyunsdkvpc.request.v20160428.DescribeVpcsRequest import DescribeVpcsRequest

    client = AcsClient(AK, SECRET, REGION, port=PORT, auto_retry=False)

    def call(request):
        request.set_endpoint(HOST)
        request.set_protocol_type("http")
        request.set_accept_format("json")
        return json.loads(client.do_action_with_exception(request))

    create = CreateVpcRequest()
    create.set_CidrBlock("192.168.0.0/16")
    create.set_VpcName("sdk-vpc")
    vpc_id = call(create)["VpcId"]
    check(vpc_id.startswith("vpc-"), "VPC SDK: CreateVpc")

    def vpc_status():
        describe = DescribeVpcsRequest()
        describe.set_VpcId(vpc_id)
        vpcs = call(describe)["Vpcs"]["Vpc"]
        check(len(vpcs) == 1 and vpcs[0]["VpcName"] == "sdk-vpc", "VPC SDK: DescribeVpcs finds it")
        return vpcs[0]["Status"]

    wait_for("VPC is Available", lambda: vpc_status() == "Available")
    default = DescribeVpcsRequest()
    default.set_IsDefault(True)
    check(call(default)["Vpcs"]["Vpc"][0]["VSwitchIds"]["VSwitchId"][0] == VSWITCH,
          "VPC SDK: the default VPC holds the default vSwitch")

    vswitch = CreateVSwitchRequest()
    vswitch.set_VpcId(vpc_id)
    vswitch.set_ZoneId("cn-hangzhou-h")
    vswitch.set_CidrBlock("10.0.0.0/24")
    try:
        call(vswitch)
        check(False, "VPC SDK: a vSwitch block outside its VPC must fail")
    except ServerException as e:
        check(e.get_error_code() == "InvalidParameter", "VPC SDK: block outside the VPC refused")
    vswitch.set_CidrBlock("192.168.1.0/24")
    vswitch_id = call(vswitch)["VSwitchId"]
    check(vswitch_id.startswith("vsw-"), "VPC SDK: CreateVSwitch")

    def vswitch_status():
        describe = DescribeVSwitchesRequest()
        describe.set_VSwitchId(vswitch_id)
        return call(describe)["VSwitches"]["VSwitch"][0]["Status"]

    wait_for("vSwitch is Available", lambda: vswitch_status() == "Available")
    delete_vpc = DeleteVpcRequest()
    delete_vpc.set_VpcId(vpc_id)
    try:
        call(delete_vpc)
        check(False, "VPC SDK: a VPC with a vSwitch must not be deleted")
    except ServerException as e:
        check(e.get_error_code() == "DependencyViolation.VSwitch", "VPC SDK: DependencyViolation.VSwitch")
    delete_vswitch = DeleteVSwitchRequest()
    delete_vswitch.set_VSwitchId(vswitch_id)
    call(delete_vswitch)
    call(delete_vpc)
    gone = DescribeVpcsRequest()
    gone.set_VpcId(vpc_id)
    check(call(gone)["TotalCount"] == 0, "VPC SDK: DeleteVSwitch then DeleteVpc")


def eip_sdk():
    from aliyunsdkcore.client import AcsClient
    from aliyunsdkcore.acs_exception.exceptions import ServerException
    from aliyunsdkecs.request.v20140526.DescribeInstancesRequest import DescribeInstancesRequest
    from aliyunsdkecs.request.v20140526.RunInstancesRequest import RunInstancesRequest
    from aliyunsdkvpc.request.v20160428.AllocateEipAddressRequest import AllocateEipAddressRequest
    from aliyunsdkvpc.request.v20160428.AssociateEipAddressRequest import AssociateEipAddressRequest
    from aliyunsdkvpc.request.v20160428.DescribeEipAddressesRequest import DescribeEipAddressesRequest
    from aliyunsdkvpc.request.v20160428.ModifyEipAddressAttributeRequest import (
        ModifyEipAddressAttributeRequest,
    )
    from aliyunsdkvpc.request.v20160428.ReleaseEipAddressRequest import ReleaseEipAddressRequest
    from aliyunsdkvpc.request.v20160428.UnassociateEipAddressRequest import UnassociateEipAddressRequest

    client = AcsClient(AK, SECRET, REGION, port=PORT, auto_retry=False)

    def call(request):
        request.set_endpoint(HOST)
        request.set_protocol_type("http")
        request.set_accept_format("json")
        return json.loads(client.do_action_with_exception(request))

    allocate = AllocateEipAddressRequest()
    allocate.set_Bandwidth("10")
    allocate.set_InternetChargeType("PayByTraffic")
    allocate.set_ClientToken("sdk-eip-token")
    allocated = call(allocate)
    eip_id = allocated["AllocationId"]
    check(eip_id.startswith("eip-") and allocated["EipAddress"], "EIP SDK: AllocateEipAddress")
    check(call(allocate)["AllocationId"] == eip_id, "EIP SDK: the ClientToken answers the same EIP")

    def described():
        describe = DescribeEipAddressesRequest()
        describe.set_AllocationId(eip_id)
        return call(describe)["EipAddresses"]["EipAddress"][0]

    run = RunInstancesRequest()
    run.set_ImageId(IMAGE)
    run.set_InstanceType("ecs.g6.large")
    run.set_VSwitchId(VSWITCH)
    run.set_SecurityGroupId(SECURITY_GROUP)
    instance_id = call(run)["InstanceIdSets"]["InstanceIdSet"][0]

    def instance():
        describe = DescribeInstancesRequest()
        describe.set_InstanceIds(json.dumps([instance_id]))
        return call(describe)["Instances"]["Instance"][0]

    wait_for("EIP SDK: the instance is Running", lambda: instance()["Status"] == "Running")
    associate = AssociateEipAddressRequest()
    associate.set_AllocationId(eip_id)
    associate.set_InstanceId(instance_id)
    call(associate)
    wait_for("EIP SDK: the EIP is InUse", lambda: described()["Status"] == "InUse")
    check(described()["InstanceId"] == instance_id, "EIP SDK: associated with the instance")
    check(instance()["EipAddress"]["IpAddress"] == allocated["EipAddress"],
          "EIP SDK: DescribeInstances shows the EIP")
    release = ReleaseEipAddressRequest()
    release.set_AllocationId(eip_id)
    try:
        call(release)
        check(False, "EIP SDK: an associated EIP must not be released")
    except ServerException as e:
        check(e.get_error_code() == "IncorrectEipStatus", "EIP SDK: IncorrectEipStatus while associated")
    unassociate = UnassociateEipAddressRequest()
    unassociate.set_AllocationId(eip_id)
    unassociate.set_InstanceId(instance_id)
    call(unassociate)
    wait_for("EIP SDK: the EIP is Available", lambda: described()["Status"] == "Available")
    modify = ModifyEipAddressAttributeRequest()
    modify.set_AllocationId(eip_id)
    modify.set_Bandwidth("20")
    modify.set_Name("sdk-eip")
    call(modify)
    check(str(described()["Bandwidth"]) == "20" and described()["Name"] == "sdk-eip",
          "EIP SDK: ModifyEipAddressAttribute")
    call(release)
    gone = DescribeEipAddressesRequest()
    gone.set_AllocationId(eip_id)
    check(call(gone)["TotalCount"] == 0, "EIP SDK: ReleaseEipAddress")


def wait_for(what, condition):
    deadline = time.time() + 10
    while not condition():
        if time.time() > deadline:
            check(False, what)
        time.sleep(0.05)


def importable(*modules):
    missing = []
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    return missing


def main():
    missing = importable("aliyunsdkcore", "aliyunsdkecs", "aliyunsdkvpc",
                         "alibabacloud_ecs20140526", "alibabacloud_tea_openapi")
    check(not missing, "SDK packages importable" + (" (missing: %s)" % ", ".join(missing) if missing else ""))
    classic_sdk()
    classic_disks_and_key_pairs()
    generated_sdk()
    vpc_sdk()
    from stack_reads import stack_reads
    stack_reads(check, HOST, PORT, AK, SECRET, REGION, IMAGE)
    eip_sdk()
    from nat_sdk import nat_sdk
    nat_sdk(check, wait_for, HOST, PORT, AK, SECRET, REGION)
    print("all official SDK checks passed", flush=True)


if __name__ == "__main__":
    main()
