// The scheduler-plugins oracle: kube-scheduler's registry with the scheduler-plugins plugins
// that read only what a snapshot and informers over a fake clientset hold. (Coscheduling,
// CapacityScheduling, NodeResourceTopologyMatch and the network-aware plugins build their
// clients from a kubeconfig; the Trimaran plugins read a load-watcher.)
package main

import (
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	_ "sigs.k8s.io/scheduler-plugins/apis/config/scheme" // their arguments in the config scheme
	"sigs.k8s.io/scheduler-plugins/pkg/noderesources"
	"sigs.k8s.io/scheduler-plugins/pkg/podstate"
	"sigs.k8s.io/scheduler-plugins/pkg/preemptiontoleration"
)

// addPlugins adds scheduler-plugins' plugins to the registry, as its scheduler's main does.
func addPlugins(registry frameworkruntime.Registry) {
	registry[noderesources.AllocatableName] = noderesources.NewAllocatable
	registry[podstate.Name] = podstate.New
	registry[preemptiontoleration.Name] = preemptiontoleration.New
}
