// What changed in the framework's API between releases (build.py picks the newest since-1.N
// at or below the release built).
package main

import (
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// releaseOptions are the framework options this release has: the snapshot as its shared
// lister.
func releaseOptions(snapshot *cache.Snapshot) []frameworkruntime.Option {
	return []frameworkruntime.Option{frameworkruntime.WithSnapshotSharedLister(snapshot)}
}

// AddNominatedPod is the queue's; the oracle's nominations come from the objects alone.
func (n *nominator) AddNominatedPod(klog.Logger, fwk.PodInfo, *framework.NominatingInfo) {}
