// The scheduler-plugins oracle: kube-scheduler's registry with the scheduler-plugins plugins
// that read what a snapshot and informers over a fake clientset hold, and Coscheduling and
// CapacityScheduling, NodeResourceTopologyMatch and NetworkOverhead, which build their clients
// from a kubeconfig (apiserver.go serves them), and TopologicalSort and QOSSort (QueueSorts:
// the oracle runs them on a case's pairs of queued pods, queuesort.go). The Trimaran plugins read the case's node metrics from the same
// server, as a load-watcher (`watcherAddress`).
package main

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	_ "sigs.k8s.io/scheduler-plugins/apis/config/scheme" // their arguments in the config scheme
	"sigs.k8s.io/scheduler-plugins/pkg/capacityscheduling"
	"sigs.k8s.io/scheduler-plugins/pkg/coscheduling"
	"sigs.k8s.io/scheduler-plugins/pkg/networkaware/networkoverhead"
	"sigs.k8s.io/scheduler-plugins/pkg/networkaware/topologicalsort"
	"sigs.k8s.io/scheduler-plugins/pkg/noderesources"
	"sigs.k8s.io/scheduler-plugins/pkg/noderesourcetopology"
	"sigs.k8s.io/scheduler-plugins/pkg/podstate"
	"sigs.k8s.io/scheduler-plugins/pkg/preemptiontoleration"
	"sigs.k8s.io/scheduler-plugins/pkg/qos"
	"sigs.k8s.io/scheduler-plugins/pkg/trimaran/loadvariationriskbalancing"
	"sigs.k8s.io/scheduler-plugins/pkg/trimaran/lowriskovercommitment"
	"sigs.k8s.io/scheduler-plugins/pkg/trimaran/targetloadpacking"
)

// addPlugins adds scheduler-plugins' plugins to the registry, as its scheduler's main does.
func addPlugins(registry frameworkruntime.Registry) {
	registry[noderesources.AllocatableName] = noderesources.NewAllocatable
	registry[podstate.Name] = podstate.New
	registry[preemptiontoleration.Name] = preemptiontoleration.New
	registry[coscheduling.Name] = coscheduling.New
	registry[noderesourcetopology.Name] = noderesourcetopology.New
	registry[networkoverhead.Name] = networkoverhead.New
	registry[topologicalsort.Name] = topologicalsort.New
	registry[qos.Name] = qos.New
	registry[targetloadpacking.Name] = targetloadpacking.New
	registry[loadvariationriskbalancing.Name] = loadvariationriskbalancing.New
	registry[lowriskovercommitment.Name] = lowriskovercommitment.New
	registry[capacityscheduling.Name] = func(ctx context.Context, obj runtime.Object,
		handle framework.Handle) (framework.Plugin, error) {
		p, err := capacityscheduling.New(ctx, obj, handle)
		if c, ok := p.(*capacityscheduling.CapacityScheduling); ok {
			capacity = c
		}
		return p, err
	}
}

// capacity is the case's CapacityScheduling, when its profile has one (apiserver.go resets
// it per case; handlers.go waits for its quotas).
var capacity *capacityscheduling.CapacityScheduling
