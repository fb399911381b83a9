"""The reads and in-place changes Terraform's alicloud provider makes on a stack, through the
classic official SDKs' request models (aliyun-python-sdk-ecs, -vpc, and core's CommonRequest for
STS, whose SDK package the venv does not carry): VPC and vSwitch attributes, the system route
table, an instance's user data, primary interface, maintenance and attachment attributes, its
groups joined and left, a rule's description changed, the catalogue (zones, types, images) and
the caller's identity. Called by official_sdk.py's main with its `check`."""

import json


def stack_reads(check, host, port, ak, secret, region, image):
    from aliyunsdkcore.client import AcsClient
    from aliyunsdkcore.request import CommonRequest
    from aliyunsdkcore.acs_exception.exceptions import ServerException
    from aliyunsdkecs.request.v20140526.AuthorizeSecurityGroupRequest import AuthorizeSecurityGroupRequest
    from aliyunsdkecs.request.v20140526.CreateSecurityGroupRequest import CreateSecurityGroupRequest
    from aliyunsdkecs.request.v20140526.DescribeAvailableResourceRequest import DescribeAvailableResourceRequest
    from aliyunsdkecs.request.v20140526.DescribeImagesRequest import DescribeImagesRequest
    from aliyunsdkecs.request.v20140526.DescribeInstanceAttachmentAttributesRequest import (
        DescribeInstanceAttachmentAttributesRequest)
    from aliyunsdkecs.request.v20140526.DescribeInstanceMaintenanceAttributesRequest import (
        DescribeInstanceMaintenanceAttributesRequest)
    from aliyunsdkecs.request.v20140526.DescribeNetworkInterfacesRequest import DescribeNetworkInterfacesRequest
    from aliyunsdkecs.request.v20140526.DescribeSecurityGroupAttributeRequest import (
        DescribeSecurityGroupAttributeRequest)
    from aliyunsdkecs.request.v20140526.DescribeUserDataRequest import DescribeUserDataRequest
    from aliyunsdkecs.request.v20140526.JoinSecurityGroupRequest import JoinSecurityGroupRequest
    from aliyunsdkecs.request.v20140526.LeaveSecurityGroupRequest import LeaveSecurityGroupRequest
    from aliyunsdkecs.request.v20140526.ModifySecurityGroupRuleRequest import ModifySecurityGroupRuleRequest
    from aliyunsdkecs.request.v20140526.RunInstancesRequest import RunInstancesRequest
    from aliyunsdkvpc.request.v20160428.CreateVSwitchRequest import CreateVSwitchRequest
    from aliyunsdkvpc.request.v20160428.CreateVpcRequest import CreateVpcRequest
    from aliyunsdkvpc.request.v20160428.DescribeRouteTableListRequest import DescribeRouteTableListRequest
    from aliyunsdkvpc.request.v20160428.DescribeVSwitchAttributesRequest import DescribeVSwitchAttributesRequest
    from aliyunsdkvpc.request.v20160428.DescribeVpcAttributeRequest import DescribeVpcAttributeRequest

    client = AcsClient(ak, secret, region, port=port, auto_retry=False)

    def call(request):
        request.set_endpoint(host)
        request.set_protocol_type("http")
        request.set_accept_format("json")
        return json.loads(client.do_action_with_exception(request))

    def refused(request, code, what):
        try:
            call(request)
            check(False, what + " must be refused")
        except ServerException as e:
            check(e.get_error_code() == code, "%s: %s (got %s)" % (what, code, e.get_error_code()))

    # The network: attributes with every list, the VPC's system route table.
    create = CreateVpcRequest()
    create.set_CidrBlock("10.0.0.0/16")
    created = call(create)
    vpc_id = created["VpcId"]
    attribute = DescribeVpcAttributeRequest()
    attribute.set_VpcId(vpc_id)
    wait_until(check, "VPC is Available", lambda: call(attribute)["Status"] == "Available")
    switch = CreateVSwitchRequest()
    switch.set_VpcId(vpc_id)
    switch.set_ZoneId("cn-hangzhou-h")
    switch.set_CidrBlock("10.0.1.0/24")
    vswitch_id = call(switch)["VSwitchId"]
    vpc = call(attribute)
    check(vpc["VSwitchIds"]["VSwitchId"] == [vswitch_id]
          and vpc["SecondaryCidrBlocks"]["SecondaryCidrBlock"] == []
          and vpc["UserCidrs"]["UserCidr"] == [], "stack: DescribeVpcAttribute with every list")
    attribute.set_VpcId("vpc-nope")
    refused(attribute, "InvalidVpcID.NotFound", "stack: DescribeVpcAttribute of no VPC")
    tables = DescribeRouteTableListRequest()
    tables.set_VpcId(vpc_id)
    table = call(tables)["RouterTableList"]["RouterTableListType"][0]
    check(table["RouteTableId"] == created["RouteTableId"] and table["RouteTableType"] == "System"
          and table["VSwitchIds"]["VSwitchId"] == [vswitch_id], "stack: DescribeRouteTableList")
    switch_attr = DescribeVSwitchAttributesRequest()
    switch_attr.set_VSwitchId(vswitch_id)
    wait_until(check, "vSwitch is Available", lambda: call(switch_attr)["Status"] == "Available")
    described = call(switch_attr)
    check(described["VpcId"] == vpc_id and described["AvailableIpAddressCount"] == 252
          and described["RouteTable"]["RouteTableId"] == created["RouteTableId"],
          "stack: DescribeVSwitchAttributes")

    # Two groups of that VPC, one rule.
    groups = []
    for _ in range(2):
        group = CreateSecurityGroupRequest()
        group.set_VpcId(vpc_id)
        groups.append(call(group)["SecurityGroupId"])
    rule = AuthorizeSecurityGroupRequest()
    rule.set_SecurityGroupId(groups[0])
    rule.set_IpProtocol("tcp")
    rule.set_PortRange("22/22")
    rule.set_SourceCidrIp("10.0.0.0/8")
    call(rule)
    modify = ModifySecurityGroupRuleRequest()
    modify.set_SecurityGroupId(groups[0])
    modify.set_IpProtocol("tcp")
    modify.set_PortRange("22/22")
    modify.set_SourceCidrIp("10.0.0.0/8")
    modify.set_Description("ssh")
    call(modify)
    group_attr = DescribeSecurityGroupAttributeRequest()
    group_attr.set_SecurityGroupId(groups[0])
    permissions = call(group_attr)["Permissions"]["Permission"]
    check(permissions[0]["Description"] == "ssh", "stack: ModifySecurityGroupRule by the rule")
    modify.set_PortRange("23/23")
    refused(modify, "InvalidSecurityGroupRule.RuleNotExist", "stack: ModifySecurityGroupRule of no rule")

    # The catalogue: a zone's types and an image, then an instance of them.
    resources = DescribeAvailableResourceRequest()
    resources.set_DestinationResource("InstanceType")
    resources.set_ZoneId("cn-hangzhou-h")
    zone = call(resources)["AvailableZones"]["AvailableZone"][0]
    offered = [r["Value"] for r in
               zone["AvailableResources"]["AvailableResource"][0]["SupportedResources"]["SupportedResource"]
               if r["Status"] == "Available"]
    check("ecs.g6.large" in offered, "stack: DescribeAvailableResource offers ecs.g6.large")
    images = DescribeImagesRequest()
    images.set_ImageId(image)
    check(call(images)["Images"]["Image"][0]["ImageId"] == image, "stack: DescribeImages")
    run = RunInstancesRequest()
    run.set_ImageId(image)
    run.set_InstanceType(offered[0])
    run.set_VSwitchId(vswitch_id)
    run.set_SecurityGroupId(groups[0])
    run.set_UserData("IyEvYmluL3No")
    instance_id = call(run)["InstanceIdSets"]["InstanceIdSet"][0]

    user_data = DescribeUserDataRequest()
    user_data.set_InstanceId(instance_id)
    check(call(user_data)["UserData"] == "IyEvYmluL3No", "stack: DescribeUserData")
    maintenance = DescribeInstanceMaintenanceAttributesRequest()
    maintenance.set_InstanceIds([instance_id])
    attrs = call(maintenance)["MaintenanceAttributes"]["MaintenanceAttribute"][0]
    check(attrs["ActionOnMaintenance"]["Value"] == "AutoRecover"
          and attrs["MaintenanceWindows"]["MaintenanceWindow"] == [],
          "stack: DescribeInstanceMaintenanceAttributes")
    attachment = DescribeInstanceAttachmentAttributesRequest()
    attachment.set_InstanceIds(json.dumps([instance_id]))
    check(call(attachment)["Instances"]["Instance"][0]["InstanceId"] == instance_id,
          "stack: DescribeInstanceAttachmentAttributes")

    def interface():
        request = DescribeNetworkInterfacesRequest()
        request.set_InstanceId(instance_id)
        return call(request)["NetworkInterfaceSets"]["NetworkInterfaceSet"][0]

    check(interface()["Type"] == "Primary", "stack: DescribeNetworkInterfaces has the primary interface")
    status = CommonRequest(domain=host, version="2014-05-26", action_name="DescribeInstanceAttribute")
    status.add_query_param("InstanceId", instance_id)
    wait_until(check, "instance is Running", lambda: call(status)["Status"] == "Running")
    join = JoinSecurityGroupRequest()
    join.set_InstanceId(instance_id)
    join.set_SecurityGroupId(groups[1])
    call(join)
    check(interface()["SecurityGroupIds"]["SecurityGroupId"] == groups, "stack: JoinSecurityGroup")
    refused(join, "InvalidInstanceId.AlreadyExists", "stack: JoinSecurityGroup twice")
    leave = LeaveSecurityGroupRequest()
    leave.set_InstanceId(instance_id)
    leave.set_SecurityGroupId(groups[0])
    call(leave)
    check(interface()["SecurityGroupIds"]["SecurityGroupId"] == [groups[1]], "stack: LeaveSecurityGroup")
    leave.set_SecurityGroupId(groups[1])
    refused(leave, "InstanceLastSecurityGroup", "stack: LeaveSecurityGroup of the last group")

    # The account behind the keys.
    identity = CommonRequest(domain=host, version="2015-04-01", action_name="GetCallerIdentity")
    identity.set_protocol_type("http")
    identity.set_accept_format("json")
    answer = json.loads(client.do_action_with_exception(identity))
    check(answer["AccountId"] and answer["IdentityType"] == "RAMUser" and answer["Arn"].startswith("acs:ram::"),
          "stack: STS GetCallerIdentity")


def wait_until(check, what, condition):
    import time
    deadline = time.time() + 10
    while not condition():
        if time.time() > deadline:
            check(False, what)
        time.sleep(0.05)
