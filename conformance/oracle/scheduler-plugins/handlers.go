package main

import (
	"reflect"
	"time"
	"unsafe"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// waitForPluginObjects waits, before the pod informer starts, until CapacityScheduling holds
// the case's quotas: its ElasticQuota handler is handed them asynchronously, and racing its
// pod handler it can replace a quota the pod handler just filled (it checks for one without
// the plugin's lock), which at kube-scheduler's start-up would lose pods' use too.
func waitForPluginObjects() {
	for !quotasSeen() {
		time.Sleep(20 * time.Microsecond)
	}
}

// waitForPluginHandlers waits until every handler of the pod informer has been handed the
// informer's initial list: CapacityScheduling counts each namespace's quota use in a handler
// of its own, which the factory's sync does not wait for (kube-scheduler's
// WaitForHandlersSync waits for its own handlers only). client-go v0.34 keeps a listener's
// state unexported (its syncTracker), so it is read by reflection.
func waitForPluginHandlers(factory informers.SharedInformerFactory) {
	informer := factory.Core().V1().Pods().Informer()
	for !handlersSynced(informer) {
		time.Sleep(20 * time.Microsecond)
	}
}

// quotasSeen says whether CapacityScheduling (when the profile has it) holds a quota for
// each namespace the case gives one: its ElasticQuota handler, added once its informer has
// synced, is handed the list asynchronously too.
func quotasSeen() bool {
	if capacity == nil {
		return true
	}
	capacity.RLock()
	defer capacity.RUnlock()
	held := reflect.ValueOf(capacity).Elem().FieldByName("elasticQuotaInfos").Len()
	return held >= api.quotaNamespaces
}

func handlersSynced(informer cache.SharedIndexInformer) bool {
	processor := reflect.ValueOf(informer).Elem().FieldByName("processor").Elem()
	lock := processor.FieldByName("listenersLock")
	rw := reflect.NewAt(lock.Type(), unsafe.Pointer(lock.UnsafeAddr())).Interface().(interface {
		RLock()
		RUnlock()
	})
	rw.RLock()
	defer rw.RUnlock()
	for _, key := range processor.FieldByName("listeners").MapKeys() {
		tracker := key.Elem().FieldByName("syncTracker")
		synced := reflect.NewAt(tracker.Type(), unsafe.Pointer(tracker.UnsafeAddr())).Elem().
			Interface().(interface{ HasSynced() bool })
		if !synced.HasSynced() {
			return false
		}
	}
	return true
}
