// Command composition-function is a test fixture of ferroplane's testenv, not part of the product:
// a Crossplane composition function (function-sdk-go) that composes a networked instance of
// ferroplane's Alibaba kinds from an XR's spec: a VPC, a VSwitch in it, a SecurityGroup in it
// and an ECSInstance in both, each wired to the others by ferroplane's `…IdRef` references
// (never by cloud IDs, which the function does not know). Every composed resource is reported
// ready exactly when its observed `Ready` condition is True, and the XR when all four are, so
// no function-auto-ready is needed (Crossplane counts a resource whose readiness a function
// leaves unspecified as not ready).
//
// It serves gRPC with mTLS on --address, its certificate and the CA of the clients it accepts
// read from --tls-certs-dir (tls.crt, tls.key, ca.crt), as Crossplane core always dials.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
)

const apiVersion = "alibabacloud.ferroplane.io/v1alpha1"

// The XR's spec fields the function reads; each is required.
var specFields = []string{"region", "zone", "cidr", "vSwitchCidr", "instanceType", "imageId"}

// Function composes one networked instance per XR.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	log logging.Logger
}

// RunFunction returns the four desired resources and their readiness.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)

	xr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot read the observed XR"))
		return rsp, nil
	}
	spec := map[string]string{}
	for _, field := range specFields {
		v, err := xr.Resource.GetString("spec." + field)
		if err != nil || v == "" {
			response.Fatal(rsp, errors.Errorf("the XR's spec.%s is required", field))
			return rsp, nil
		}
		spec[field] = v
	}
	name := xr.Resource.GetName()
	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot read the observed composed resources"))
		return rsp, nil
	}

	desired := map[resource.Name]*resource.DesiredComposed{}
	allReady := true
	for key, object := range composeAll(name, spec) {
		cd, err := composed.From(object)
		if err != nil {
			response.Fatal(rsp, errors.Wrapf(err, "cannot compose %s", key))
			return rsp, nil
		}
		ready := resource.ReadyFalse
		if o, ok := observed[key]; ok && o.Resource.GetCondition("Ready").Status == "True" {
			ready = resource.ReadyTrue
		} else {
			allReady = false
		}
		desired[key] = &resource.DesiredComposed{Resource: cd, Ready: ready}
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set the desired composed resources"))
		return rsp, nil
	}
	// The desired XR is whatever earlier steps made of it (empty for the first), with readiness.
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot read the desired XR"))
		return rsp, nil
	}
	dxr.Ready = resource.ReadyFalse
	if allReady {
		dxr.Ready = resource.ReadyTrue
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot set the desired XR"))
		return rsp, nil
	}
	f.log.Debug("composed", "xr", name, "ready", allReady)
	return rsp, nil
}

// composeAll returns the four resources of the XR named xr, keyed by their names in the
// pipeline. Each gets a name of its own (`<xr>-vpc`, ...) so the others can reference it.
func composeAll(xr string, spec map[string]string) map[resource.Name]*composed.Unstructured {
	vpc, vswitch, group := xr+"-vpc", xr+"-vswitch", xr+"-sg"
	objects := map[resource.Name]map[string]any{
		"vpc": object("VPC", vpc, map[string]any{
			"regionId":  spec["region"],
			"cidrBlock": spec["cidr"],
			"vpcName":   vpc,
		}),
		"vswitch": object("VSwitch", vswitch, map[string]any{
			"regionId":    spec["region"],
			"zoneId":      spec["zone"],
			"cidrBlock":   spec["vSwitchCidr"],
			"vSwitchName": vswitch,
			"vpcIdRef":    map[string]any{"name": vpc},
		}),
		"securitygroup": object("SecurityGroup", group, map[string]any{
			"regionId":          spec["region"],
			"securityGroupName": group,
			"vpcIdRef":          map[string]any{"name": vpc},
		}),
		"instance": object("ECSInstance", xr+"-instance", map[string]any{
			"regionId":            spec["region"],
			"imageId":             spec["imageId"],
			"instanceType":        spec["instanceType"],
			"instanceName":        xr,
			"vSwitchIdRef":        map[string]any{"name": vswitch},
			"securityGroupIdRefs": []any{map[string]any{"name": group}},
		}),
	}
	out := map[resource.Name]*composed.Unstructured{}
	for key, o := range objects {
		cd := composed.New()
		cd.SetUnstructuredContent(o)
		out[key] = cd
	}
	return out
}

func object(kind, name string, forProvider map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"forProvider": forProvider},
	}
}

func main() {
	address := flag.String("address", "127.0.0.1:9443", "where to serve gRPC")
	certs := flag.String("tls-certs-dir", "", "directory with tls.crt, tls.key and the clients' ca.crt")
	debug := flag.Bool("debug", false, "log every request")
	flag.Parse()
	if *certs == "" {
		fmt.Fprintln(os.Stderr, "--tls-certs-dir is required: Crossplane dials functions over mTLS")
		os.Exit(2)
	}
	log, err := function.NewLogger(*debug)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	log.Info("serving", "address", *address)
	err = function.Serve(&Function{log: log},
		function.Listen("tcp", *address),
		function.MTLSCertificates(*certs))
	if err != nil {
		log.Info("stopped", "error", err.Error())
		os.Exit(1)
	}
}
