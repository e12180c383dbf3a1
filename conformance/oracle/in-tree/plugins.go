// The in-tree oracle: kube-scheduler's own registry, nothing added.
package main

import frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

// addPlugins adds out-of-tree plugins to the registry: none here.
func addPlugins(frameworkruntime.Registry) {}
