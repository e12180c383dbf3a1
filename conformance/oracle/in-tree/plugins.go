// The in-tree oracle: kube-scheduler's own registry, nothing added.
package main

import (
	"encoding/json"

	"k8s.io/client-go/informers"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// addPlugins adds out-of-tree plugins to the registry: none here.
func addPlugins(frameworkruntime.Registry) {}

// customObjects takes the objects only a custom API serves out of a case's: none here.
func customObjects(raw []json.RawMessage) ([]json.RawMessage, []frameworkruntime.Option, error) {
	return raw, nil, nil
}

// waitForPluginHandlers waits for the event handlers out-of-tree plugins add: none here.
func waitForPluginHandlers(informers.SharedInformerFactory) {}

// waitForPluginObjects waits for what out-of-tree plugins read before pods: nothing here.
func waitForPluginObjects() {}

// pluginArguments rewrites a case's pluginConfig for the flavour's own services: nothing here.
func pluginArguments(raw json.RawMessage) json.RawMessage { return raw }

// queueSortAnswers orders a case's queued pods with the profile's QueueSort: the in-tree
// cases ask for none.
func queueSortAnswers(any) ([]bool, error) { return nil, nil }
