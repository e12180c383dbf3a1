// The API the kubeconfig-built plugins (Coscheduling, CapacityScheduling,
// NodeResourceTopologyMatch, NetworkOverhead) read their custom objects from: an in-process
// HTTP server that serves a case's PodGroups, ElasticQuotas, NodeResourceTopologies, AppGroups
// and NetworkTopologies (discovery, list, get and a watch that stays quiet), so their own New
// runs as in kube-scheduler, informers and all; and, at `/watcher`, the case's node metrics as
// a load-watcher serves them, for the Trimaran plugins.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// customResource is a kind served: its group/version, resource name and scope.
type customResource struct {
	groupVersion, resource, kind string
	namespaced                   bool
}

var customResources = []customResource{
	{"scheduling.x-k8s.io/v1alpha1", "podgroups", "PodGroup", true},
	{"scheduling.x-k8s.io/v1alpha1", "elasticquotas", "ElasticQuota", true},
	{"topology.node.k8s.io/v1alpha2", "noderesourcetopologies", "NodeResourceTopology", false},
	{"appgroup.diktyo.x-k8s.io/v1alpha1", "appgroups", "AppGroup", true},
	{"networktopology.diktyo.x-k8s.io/v1alpha1", "networktopologies", "NetworkTopology", true},
}

// namespacedKind says whether a served kind lives in namespaces (one not listed is taken to).
func namespacedKind(groupVersion, kind string) bool {
	for _, r := range customResources {
		if r.groupVersion == groupVersion && r.kind == kind {
			return r.namespaced
		}
	}
	return true
}

func servedGroupVersion(groupVersion string) bool {
	for _, r := range customResources {
		if r.groupVersion == groupVersion {
			return true
		}
	}
	return false
}

type customObject struct {
	groupVersion, kind, namespace, name string
	raw                                 json.RawMessage
}

type customAPI struct {
	mu      sync.Mutex
	objects []customObject
	config  *rest.Config
	// quotaNamespaces counts the namespaces the case's ElasticQuotas are in.
	quotaNamespaces int
	// metrics is the case's load-watcher answer (a WatcherMetrics object's `metrics`).
	metrics json.RawMessage
	// pairs are the case's queued pods for its QueueSort (a QueueSortPairs object's `pairs`).
	pairs []queuePair
	url   string
}

// watcherKind is the pseudo-object a case's node metrics come in (not an API object: it
// is taken out of the objects, and served at /watcher).
const watcherKind = "conformance.oracle/v1 WatcherMetrics"

// pairsKind is the pseudo-object a case's queued pods come in, for its QueueSort.
const pairsKind = "conformance.oracle/v1 QueueSortPairs"

// watcherPlaceholder is the `watcherAddress` a case's Trimaran arguments give: the oracle's
// own server, whose address only the oracle knows.
const watcherPlaceholder = "http://conformance-oracle-watcher"

var api = startCustomAPI()

func startCustomAPI() *customAPI {
	a := &customAPI{}
	server := httptest.NewServer(a)
	a.url = server.URL
	a.config = &rest.Config{Host: server.URL, QPS: 1e6, Burst: 1e6}
	return a
}

func writeJSON(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

func notFound(w http.ResponseWriter, what string) {
	writeJSON(w, http.StatusNotFound, map[string]any{"kind": "Status", "apiVersion": "v1",
		"status": "Failure", "reason": "NotFound", "code": 404,
		"message": fmt.Sprintf("%s not found", what)})
}

func (a *customAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/watcher":
		a.mu.Lock()
		metrics := a.metrics
		a.mu.Unlock()
		if metrics == nil {
			notFound(w, "metrics")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(metrics)
	case path == "/api":
		writeJSON(w, http.StatusOK, map[string]any{"kind": "APIVersions", "versions": []string{"v1"},
			"serverAddressByClientCIDRs": []any{}})
	case path == "/apis":
		groups := []any{}
		seen := map[string]bool{}
		for _, res := range customResources {
			if seen[res.groupVersion] {
				continue
			}
			seen[res.groupVersion] = true
			group, version, _ := strings.Cut(res.groupVersion, "/")
			gv := map[string]string{"groupVersion": res.groupVersion, "version": version}
			groups = append(groups, map[string]any{"name": group, "versions": []any{gv},
				"preferredVersion": gv})
		}
		writeJSON(w, http.StatusOK, map[string]any{"kind": "APIGroupList", "apiVersion": "v1",
			"groups": groups})
	case strings.HasPrefix(path, "/apis/"):
		parts := strings.Split(strings.TrimPrefix(path, "/apis/"), "/")
		if len(parts) < 2 || !servedGroupVersion(parts[0]+"/"+parts[1]) {
			notFound(w, r.URL.Path)
			return
		}
		groupVersion := parts[0] + "/" + parts[1]
		if len(parts) == 2 {
			resources := []any{}
			for _, res := range customResources {
				if res.groupVersion == groupVersion {
					resources = append(resources, map[string]any{"name": res.resource,
						"singularName": strings.ToLower(res.kind), "namespaced": res.namespaced,
						"kind": res.kind, "verbs": []string{"get", "list", "watch"}})
				}
			}
			writeJSON(w, http.StatusOK, map[string]any{"kind": "APIResourceList",
				"apiVersion": "v1", "groupVersion": groupVersion, "resources": resources})
			return
		}
		a.serveObjects(w, r, groupVersion, parts[2:])
	default:
		notFound(w, r.URL.Path)
	}
}

// serveObjects answers `<resource>[/<name>]`, `namespaces/<ns>/<resource>[/<name>]`.
func (a *customAPI) serveObjects(w http.ResponseWriter, r *http.Request, groupVersion string,
	parts []string) {
	namespace, name := "", ""
	if len(parts) >= 3 && parts[0] == "namespaces" {
		namespace, parts = parts[1], parts[2:]
	}
	if len(parts) == 2 {
		name, parts = parts[1], parts[:1]
	}
	var res *customResource
	for i := range customResources {
		if customResources[i].groupVersion == groupVersion && customResources[i].resource == parts[0] {
			res = &customResources[i]
		}
	}
	if len(parts) != 1 || res == nil {
		notFound(w, r.URL.Path)
		return
	}
	if r.URL.Query().Get("watch") == "true" {
		// Nothing changes during a case: the stream stays open, quiet, until the case ends.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		<-r.Context().Done()
		return
	}
	a.mu.Lock()
	items := []json.RawMessage{}
	for _, o := range a.objects {
		if o.groupVersion == groupVersion && o.kind == res.kind &&
			(namespace == "" || o.namespace == namespace) && (name == "" || o.name == name) {
			items = append(items, o.raw)
		}
	}
	a.mu.Unlock()
	if name != "" {
		if len(items) == 0 {
			notFound(w, fmt.Sprintf("%s %q", res.resource, name))
			return
		}
		writeJSON(w, http.StatusOK, items[0])
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"apiVersion": groupVersion,
		"kind": res.kind + "List", "metadata": map[string]string{"resourceVersion": "1"},
		"items": items})
}

// customObjects takes the case's custom objects out of `raw` and serves them;
// the plugins reach them through the kubeconfig option returned.
func customObjects(raw []json.RawMessage) ([]json.RawMessage, []frameworkruntime.Option, error) {
	var others []json.RawMessage
	var custom []customObject
	var metrics json.RawMessage
	var pairs []queuePair
	for _, item := range raw {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(item, &head); err != nil {
			return nil, nil, fmt.Errorf("object %s: %w", item, err)
		}
		if kind := head.APIVersion + " " + head.Kind; kind == watcherKind || kind == pairsKind {
			var pseudo struct {
				Metrics json.RawMessage `json:"metrics"`
				Pairs   []queuePair     `json:"pairs"`
			}
			if err := json.Unmarshal(item, &pseudo); err != nil {
				return nil, nil, fmt.Errorf("%s %s: %w", head.Kind, item, err)
			}
			if kind == watcherKind {
				metrics = pseudo.Metrics
			} else {
				pairs = pseudo.Pairs
			}
			continue
		}
		if !servedGroupVersion(head.APIVersion) {
			others = append(others, item)
			continue
		}
		namespace := head.Metadata.Namespace
		if namespace == "" && namespacedKind(head.APIVersion, head.Kind) {
			namespace = "default"
		}
		custom = append(custom, customObject{head.APIVersion, head.Kind, namespace,
			head.Metadata.Name, item})
	}
	namespaces := map[string]bool{}
	for _, o := range custom {
		if o.kind == "ElasticQuota" {
			namespaces[o.namespace] = true
		}
	}
	api.mu.Lock()
	api.objects = custom
	api.quotaNamespaces = len(namespaces)
	api.metrics = metrics
	api.pairs = pairs
	api.mu.Unlock()
	capacity = nil // the framework built next makes this case's
	return others, []frameworkruntime.Option{frameworkruntime.WithKubeConfig(api.config)}, nil
}

// pluginArguments points the case's Trimaran arguments at this server's /watcher.
func pluginArguments(raw json.RawMessage) json.RawMessage {
	return bytes.ReplaceAll(raw, []byte(watcherPlaceholder), []byte(api.url))
}
