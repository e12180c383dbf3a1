// The conformance oracle: kube-scheduler's own framework runtime and in-tree plugins, asked
// what they say of a pending pod on a cluster, so the Python engine can be compared with them.
//
// Input: JSON lines on stdin, each {"objects": [...], "pod": {...}, "pluginConfig": [...]?};
// objects are Nodes, Pods and whatever else the plugins list (Namespaces, Services,
// ReplicaSets, PDBs, ...); pluginConfig, when given, is a KubeSchedulerConfiguration v1
// profile's, defaulted as kube-scheduler defaults its configuration file.
// Output: one JSON line per input, in the shape of extender.engine.evaluate's Evaluation:
// {"prefilter": status|null, "filter": {node: status|null}, "scores": {plugin: {node: n}},
// "total": {node: n}} (or {"error": "..."}), statuses as {"plugin", "code", "reasons"}.
//
// The profile is kube-scheduler's default one (apis/config/latest.Default), restricted to the
// plugins named on the command line; the registry is the in-tree one; the snapshot is built
// from the objects as the scheduler's cache would hold them.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	schedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

type request struct {
	Objects []json.RawMessage `json:"objects"`
	Pod     json.RawMessage   `json:"pod"`
	// PluginConfig, when given, is the profile's pluginConfig (KubeSchedulerConfiguration v1),
	// defaulted as kube-scheduler defaults its configuration file.
	PluginConfig json.RawMessage `json:"pluginConfig,omitempty"`
}

type status struct {
	Plugin  string   `json:"plugin"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons"`
}

type answer struct {
	PreFilter *status                     `json:"prefilter"`
	Filter    map[string]*status          `json:"filter"`
	Scores    map[string]map[string]int64 `json:"scores"`
	Total     map[string]int64            `json:"total"`
	Error     string                      `json:"error,omitempty"`
}

var keepPlugins sets.Set[string]

func statusOf(s *fwk.Status) *status {
	if s.IsSuccess() {
		return nil
	}
	reasons := s.Reasons()
	if reasons == nil {
		reasons = []string{}
	}
	return &status{Plugin: s.Plugin(), Code: s.Code().String(), Reasons: reasons}
}

func decode(raw []json.RawMessage) (nodes []*v1.Node, pods []*v1.Pod, others []runtime.Object, err error) {
	deserializer := scheme.Codecs.UniversalDeserializer()
	for _, item := range raw {
		obj, _, derr := deserializer.Decode(item, nil, nil)
		if derr != nil {
			return nil, nil, nil, fmt.Errorf("object %s: %w", item, derr)
		}
		switch o := obj.(type) {
		case *v1.Node:
			nodes = append(nodes, o)
		case *v1.Pod:
			pods = append(pods, o)
		default:
			others = append(others, obj)
		}
	}
	return nodes, pods, others, nil
}

// profileFor is kube-scheduler's default profile with `pluginConfig` (none: the defaults),
// restricted to the plugins in `keep` (none: all).
func profileFor(pluginConfig json.RawMessage, keep sets.Set[string]) (*config.KubeSchedulerProfile, error) {
	var cfg *config.KubeSchedulerConfiguration
	if len(pluginConfig) == 0 || string(pluginConfig) == "null" {
		var err error
		if cfg, err = latest.Default(); err != nil {
			return nil, err
		}
	} else {
		doc := fmt.Sprintf(`{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"schedulerName":"default-scheduler","pluginConfig":%s}]}`, pluginConfig)
		obj, _, err := schedulerscheme.Codecs.UniversalDecoder().Decode([]byte(doc), nil, nil)
		if err != nil {
			return nil, err
		}
		var ok bool
		if cfg, ok = obj.(*config.KubeSchedulerConfiguration); !ok {
			return nil, fmt.Errorf("decoded a %T", obj)
		}
	}
	profile := &cfg.Profiles[0]
	var enabled []config.Plugin
	for _, p := range profile.Plugins.MultiPoint.Enabled {
		if keep.Len() == 0 || keep.Has(p.Name) {
			enabled = append(enabled, p)
		}
	}
	profile.Plugins.MultiPoint.Enabled = enabled
	return profile, nil
}

func evaluate(ctx context.Context, profile *config.KubeSchedulerProfile, req request) answer {
	if len(req.PluginConfig) > 0 && string(req.PluginConfig) != "null" {
		custom, err := profileFor(req.PluginConfig, keepPlugins)
		if err != nil {
			return answer{Error: fmt.Sprintf("configuration: %v", err)}
		}
		profile = custom
	}
	ans := answer{Filter: map[string]*status{}, Scores: map[string]map[string]int64{},
		Total: map[string]int64{}}
	nodes, pods, others, err := decode(req.Objects)
	if err != nil {
		return answer{Error: err.Error()}
	}
	pod := &v1.Pod{}
	if err := json.Unmarshal(req.Pod, pod); err != nil {
		return answer{Error: fmt.Sprintf("pod: %v", err)}
	}
	var all []runtime.Object
	for _, n := range nodes {
		all = append(all, n)
	}
	for _, p := range pods {
		all = append(all, p)
	}
	all = append(all, others...)
	client := fake.NewClientset(all...)
	factory := informers.NewSharedInformerFactory(client, 0)
	var bound []*v1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			bound = append(bound, p)
		}
	}
	snapshot := cache.NewSnapshot(bound, nodes)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f, err := frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSnapshotSharedLister(snapshot))
	if err != nil {
		return answer{Error: fmt.Sprintf("framework: %v", err)}
	}
	factory.Start(ctx.Done())
	waitForSync(factory)

	state := framework.NewCycleState()
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		return answer{Error: err.Error()}
	}
	pre, s, unscheduled := f.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		if s.Code() == fwk.Error {
			return answer{Error: s.AsError().Error()}
		}
		ans.PreFilter = statusOf(s)
		for _, ni := range infos {
			ans.Filter[ni.Node().Name] = statusOf(s)
		}
		return ans
	}
	var candidates []fwk.NodeInfo
	for _, ni := range infos {
		if !pre.AllNodes() && !pre.NodeNames.Has(ni.Node().Name) {
			ans.Filter[ni.Node().Name] = statusOf(fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
				fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unscheduled))))
			continue
		}
		candidates = append(candidates, ni)
	}
	var feasible []fwk.NodeInfo
	for _, ni := range candidates {
		st := f.RunFilterPlugins(ctx, state, pod, ni)
		if st.Code() == fwk.Error {
			return answer{Error: st.AsError().Error()}
		}
		ans.Filter[ni.Node().Name] = statusOf(st)
		if st.IsSuccess() {
			feasible = append(feasible, ni)
		}
	}
	if len(feasible) == 0 {
		return ans
	}
	if st := f.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
		return answer{Error: fmt.Sprintf("prescore: %v", st.AsError())}
	}
	scores, st := f.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		return answer{Error: fmt.Sprintf("score: %v", st.AsError())}
	}
	for _, node := range scores {
		for _, ps := range node.Scores {
			if ans.Scores[ps.Name] == nil {
				ans.Scores[ps.Name] = map[string]int64{}
			}
			ans.Scores[ps.Name][node.Name] = ps.Score
		}
		ans.Total[node.Name] = node.TotalScore
	}
	return ans
}

// waitForSync waits for the informers' caches as factory.WaitForCacheSync does, without its
// poll period (100 ms in client-go up to v0.35: ten cases a second).
func waitForSync(factory informers.SharedInformerFactory) {
	for {
		stop := make(chan struct{})
		timer := time.AfterFunc(time.Millisecond, func() { close(stop) })
		synced := factory.WaitForCacheSync(stop)
		timer.Stop()
		done := true
		for _, ok := range synced {
			done = done && ok
		}
		if done {
			return
		}
	}
}

func main() {
	klog.SetOutput(os.Stderr)
	metrics.Register() // the framework counts plugin calls
	// Only the plugins the engine implements (the command line names them): the volume and
	// DRA plugins need objects and managers the engine does not model.
	keepPlugins = sets.New(os.Args[1:]...)
	profile, err := profileFor(nil, keepPlugins)
	if err != nil {
		fmt.Fprintln(os.Stderr, "default configuration:", err)
		os.Exit(1)
	}
	names := []string{}
	for _, p := range profile.Plugins.MultiPoint.Enabled {
		names = append(names, fmt.Sprintf("%s(%d)", p.Name, p.Weight))
	}
	sort.Strings(names)
	fmt.Fprintln(os.Stderr, "oracle: kube-scheduler's default profile, with", names)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<30)
	out := json.NewEncoder(os.Stdout)
	ctx := context.Background()
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			_ = out.Encode(answer{Error: fmt.Sprintf("request: %v", err)})
			continue
		}
		_ = out.Encode(evaluate(ctx, profile, req))
	}
}
