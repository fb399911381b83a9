"""The NAT gateway lifecycle with Alibaba Cloud's classic VPC SDK (aliyun-python-sdk-vpc), for
official_sdk.py: a VPC with a public and a private vSwitch; CreateNatGateway (enhanced, with a
ClientToken) until Available; an EIP bound with InstanceType=Nat; CreateSnatEntry for the private
vSwitch and CreateForwardEntry to a private address, each until Available; DeleteNatGateway refused
while entries remain; ModifySnatEntry, DeleteForwardEntry, DeleteSnatEntry; UnassociateEipAddress;
DeleteNatGateway; and the VPC deleted once nothing holds it.
"""

import json


def nat_sdk(check, wait_for, host, port, ak, secret, region):
    from aliyunsdkcore.client import AcsClient
    from aliyunsdkcore.acs_exception.exceptions import ServerException
    from aliyunsdkvpc.request.v20160428 import (
        AllocateEipAddressRequest, AssociateEipAddressRequest, CreateForwardEntryRequest,
        CreateNatGatewayRequest, CreateSnatEntryRequest, CreateVpcRequest, CreateVSwitchRequest,
        DeleteForwardEntryRequest, DeleteNatGatewayRequest, DeleteSnatEntryRequest,
        DeleteVpcRequest, DeleteVSwitchRequest, DescribeEipAddressesRequest, DescribeForwardTableEntriesRequest,
        DescribeNatGatewaysRequest, DescribeSnatTableEntriesRequest, DescribeVpcsRequest,
        ModifySnatEntryRequest, ReleaseEipAddressRequest, UnassociateEipAddressRequest,
    )

    client = AcsClient(ak, secret, region, port=port, auto_retry=False)

    def call(request):
        request.set_endpoint(host)
        request.set_protocol_type("http")
        request.set_accept_format("json")
        return json.loads(client.do_action_with_exception(request))

    def refused(request, code, what):
        try:
            call(request)
            check(False, what)
        except ServerException as e:
            check(e.get_error_code() == code, what + " (" + e.get_error_code() + ")")

    create_vpc = CreateVpcRequest.CreateVpcRequest()
    create_vpc.set_CidrBlock("10.20.0.0/16")
    vpc_id = call(create_vpc)["VpcId"]

    def vpc_available():
        describe = DescribeVpcsRequest.DescribeVpcsRequest()
        describe.set_VpcId(vpc_id)
        return call(describe)["Vpcs"]["Vpc"][0]["Status"] == "Available"

    wait_for("NAT SDK: the VPC is Available", vpc_available)
    switches = []
    for block in ["10.20.1.0/24", "10.20.2.0/24"]:
        create = CreateVSwitchRequest.CreateVSwitchRequest()
        create.set_VpcId(vpc_id)
        create.set_ZoneId("cn-hangzhou-b")
        create.set_CidrBlock(block)
        switches.append(call(create)["VSwitchId"])
    public, private = switches

    create = CreateNatGatewayRequest.CreateNatGatewayRequest()
    create.set_VpcId(vpc_id)
    create.set_VSwitchId(public)
    create.set_NatType("Enhanced")
    create.set_NetworkType("internet")
    create.set_Name("sdk-nat")
    create.set_ClientToken("sdk-nat-token")

    def create_when_switch_ready():
        try:
            return call(create)
        except ServerException as e:
            if e.get_error_code() == "IncorrectVSwitchStatus":
                return None
            raise

    created = {}
    wait_for("NAT SDK: CreateNatGateway once the vSwitch is Available",
             lambda: created.update(reply=create_when_switch_ready()) or created["reply"] is not None)
    created = created["reply"]
    gateway_id = created["NatGatewayId"]
    snat_table = created["SnatTableIds"]["SnatTableId"][0]
    forward_table = created["ForwardTableIds"]["ForwardTableId"][0]
    check(gateway_id.startswith("ngw-") and snat_table.startswith("stb-")
          and forward_table.startswith("ftb-"), "NAT SDK: CreateNatGateway answers its tables")
    check(call(create)["NatGatewayId"] == gateway_id, "NAT SDK: the ClientToken answers the same gateway")

    def gateway():
        describe = DescribeNatGatewaysRequest.DescribeNatGatewaysRequest()
        describe.set_NatGatewayId(gateway_id)
        listed = call(describe)["NatGateways"]["NatGateway"]
        return listed[0] if listed else None

    wait_for("NAT SDK: the gateway is Available", lambda: (gateway() or {}).get("Status") == "Available")

    allocate = AllocateEipAddressRequest.AllocateEipAddressRequest()
    allocated = call(allocate)
    eip_id, eip_ip = allocated["AllocationId"], allocated["EipAddress"]
    associate = AssociateEipAddressRequest.AssociateEipAddressRequest()
    associate.set_AllocationId(eip_id)
    associate.set_InstanceId(gateway_id)
    associate.set_InstanceType("Nat")
    call(associate)
    wait_for("NAT SDK: the gateway lists its EIP",
             lambda: [ip["IpAddress"] for ip in gateway()["IpLists"]["IpList"]] == [eip_ip])

    def eip_status():
        describe = DescribeEipAddressesRequest.DescribeEipAddressesRequest()
        describe.set_AllocationId(eip_id)
        return call(describe)["EipAddresses"]["EipAddress"][0]["Status"]

    # An EIP serves entries once associated (InUse), not while Associating.
    wait_for("NAT SDK: the EIP is InUse", lambda: eip_status() == "InUse")

    def snat_create():
        request = CreateSnatEntryRequest.CreateSnatEntryRequest()
        request.set_SnatTableId(snat_table)
        request.set_SourceVSwitchId(private)
        request.set_SnatIp(eip_ip)
        request.set_SnatEntryName("sdk-snat")
        return request

    snat_id = call(snat_create())["SnatEntryId"]

    def snat_entries():
        describe = DescribeSnatTableEntriesRequest.DescribeSnatTableEntriesRequest()
        describe.set_SnatTableId(snat_table)
        return call(describe)["SnatTableEntries"]["SnatTableEntry"]

    wait_for("NAT SDK: the SNAT entry is Available",
             lambda: [e["Status"] for e in snat_entries()] == ["Available"])
    check(snat_entries()[0]["SourceCIDR"] == "10.20.2.0/24", "NAT SDK: the SNAT entry covers the vSwitch")
    refused(snat_create(), "Forbidden.SourceVSwitchId.Duplicated", "NAT SDK: one SNAT entry per vSwitch")

    forward = CreateForwardEntryRequest.CreateForwardEntryRequest()
    forward.set_ForwardTableId(forward_table)
    forward.set_ExternalIp(eip_ip)
    forward.set_ExternalPort("2222")
    forward.set_IpProtocol("TCP")
    forward.set_InternalIp("10.20.2.10")
    forward.set_InternalPort("22")
    forward_id = call(forward)["ForwardEntryId"]

    def forward_entries():
        describe = DescribeForwardTableEntriesRequest.DescribeForwardTableEntriesRequest()
        describe.set_ForwardTableId(forward_table)
        return call(describe)["ForwardTableEntries"]["ForwardTableEntry"]

    wait_for("NAT SDK: the DNAT entry is Available",
             lambda: [e["Status"] for e in forward_entries()] == ["Available"])
    check(forward_entries()[0]["InternalIp"] == "10.20.2.10", "NAT SDK: the DNAT entry points inside")

    delete_gateway = DeleteNatGatewayRequest.DeleteNatGatewayRequest()
    delete_gateway.set_NatGatewayId(gateway_id)
    refused(delete_gateway, "DependencyViolation.SnatEntry", "NAT SDK: no deletion while SNAT entries remain")
    delete_vpc = DeleteVpcRequest.DeleteVpcRequest()
    delete_vpc.set_VpcId(vpc_id)
    refused(delete_vpc, "DependencyViolation.NatGateway", "NAT SDK: the VPC stays while its gateway does")

    modify = ModifySnatEntryRequest.ModifySnatEntryRequest()
    modify.set_SnatTableId(snat_table)
    modify.set_SnatEntryId(snat_id)
    modify.set_SnatEntryName("sdk-snat-renamed")
    call(modify)
    wait_for("NAT SDK: ModifySnatEntry settles",
             lambda: [(e["SnatEntryName"], e["Status"]) for e in snat_entries()]
             == [("sdk-snat-renamed", "Available")])

    delete_forward = DeleteForwardEntryRequest.DeleteForwardEntryRequest()
    delete_forward.set_ForwardTableId(forward_table)
    delete_forward.set_ForwardEntryId(forward_id)
    call(delete_forward)
    delete_snat = DeleteSnatEntryRequest.DeleteSnatEntryRequest()
    delete_snat.set_SnatTableId(snat_table)
    delete_snat.set_SnatEntryId(snat_id)
    call(delete_snat)
    refused(delete_gateway, "DependencyViolation.EIPS", "NAT SDK: no deletion while an EIP is bound")
    unassociate = UnassociateEipAddressRequest.UnassociateEipAddressRequest()
    unassociate.set_AllocationId(eip_id)
    unassociate.set_InstanceId(gateway_id)
    unassociate.set_InstanceType("Nat")
    call(unassociate)
    wait_for("NAT SDK: the EIP is unbound", lambda: gateway()["IpLists"]["IpList"] == [])
    call(delete_gateway)
    wait_for("NAT SDK: DeleteNatGateway", lambda: gateway() is None)
    release = ReleaseEipAddressRequest.ReleaseEipAddressRequest()
    release.set_AllocationId(eip_id)
    call(release)
    for vswitch in switches:
        delete = DeleteVSwitchRequest.DeleteVSwitchRequest()
        delete.set_VSwitchId(vswitch)
        call(delete)
    call(delete_vpc)
    check(True, "NAT SDK: the whole NAT stack is gone")
