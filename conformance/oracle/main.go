// The conformance oracle: kube-scheduler's own framework runtime and in-tree plugins, asked
// what they say of a pending pod on a cluster, so the Python engine can be compared with them.
//
// Input: JSON lines on stdin, each {"objects": [...], "pod": {...}, "pluginConfig": [...]?};
// objects are Nodes, Pods and whatever else the plugins list (Namespaces, Services,
// ReplicaSets, PDBs, ...); pluginConfig, when given, is a KubeSchedulerConfiguration v1
// profile's, defaulted as kube-scheduler defaults its configuration file.
// Output: one JSON line per input, in the shape of extender.engine.evaluate's Evaluation:
// {"prefilter": status|null, "filter": {node: status|null}, "scores": {plugin: {node: n}},
// "total": {node: n}, "preemption": {...}|null} (or {"error": "..."}), statuses as
// {"plugin", "code", "reasons"}. When no node passes, "preemption" holds DefaultPreemption's
// answer: the PostFilter's status and nominated node, and DryRunPreemption over every potential
// node (victims and PDB violations per candidate, the status of each other node) with the
// candidate SelectCandidate picks among them.
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
	"reflect"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	schedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

type request struct {
	Objects []json.RawMessage `json:"objects"`
	Pod     json.RawMessage   `json:"pod"`
	// PluginConfig and Plugins, when given, are the profile's pluginConfig and plugins
	// (KubeSchedulerConfiguration v1), defaulted as kube-scheduler defaults its configuration
	// file.
	PluginConfig json.RawMessage `json:"pluginConfig,omitempty"`
	Plugins      json.RawMessage `json:"plugins,omitempty"`
}

type status struct {
	Plugin  string   `json:"plugin"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons"`
}

type victims struct {
	Pods          []string `json:"pods"` // namespace/name, in the order upstream lists them
	PDBViolations int64    `json:"pdbViolations"`
}

type preemption struct {
	Status *status `json:"status"` // the PostFilter's; null on success
	Node   string  `json:"node"`   // the nominated node on success
	// The dry run, for DefaultPreemption (null for another PostFilter).
	Candidates   map[string]victims `json:"candidates"`
	NodeStatuses map[string]*status `json:"nodeStatuses"`
	Pick         string             `json:"pick"`
}

type answer struct {
	PreFilter  *status                     `json:"prefilter"`
	Filter     map[string]*status          `json:"filter"`
	Scores     map[string]map[string]int64 `json:"scores"`
	Total      map[string]int64            `json:"total"`
	Preemption *preemption                 `json:"preemption"`
	// Less is the profile's QueueSort on the case's pairs of queued pods, when it gives any.
	Less  []bool `json:"less,omitempty"`
	Error string `json:"error,omitempty"`
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

func given(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// profileFor is kube-scheduler's default profile with `plugins` and `pluginConfig` (none: the
// defaults), restricted to the plugins in `keep` (none: all).
func profileFor(plugins, pluginConfig json.RawMessage, keep sets.Set[string]) (*config.KubeSchedulerProfile, error) {
	var cfg *config.KubeSchedulerConfiguration
	if !given(plugins) && !given(pluginConfig) {
		var err error
		if cfg, err = latest.Default(); err != nil {
			return nil, err
		}
	} else {
		if !given(plugins) {
			plugins = json.RawMessage("null")
		}
		if !given(pluginConfig) {
			pluginConfig = json.RawMessage("null")
		}
		doc := fmt.Sprintf(`{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"schedulerName":"default-scheduler","plugins":%s,"pluginConfig":%s}]}`, plugins, pluginConfig)
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

// registryCapturing is the registry (in-tree, and the flavour's `addPlugins`) whose DefaultPreemption factory hands the instance it
// makes to `capture` (the framework keeps its plugins private). The factory's type differs
// between releases, so it is wrapped by reflection.
func registryCapturing(capture func(*defaultpreemption.DefaultPreemption)) frameworkruntime.Registry {
	registry := plugins.NewInTreeRegistry()
	addPlugins(registry)
	original := reflect.ValueOf(registry[defaultpreemption.Name])
	wrapped := reflect.MakeFunc(original.Type(), func(args []reflect.Value) []reflect.Value {
		out := original.Call(args)
		if p, ok := out[0].Interface().(*defaultpreemption.DefaultPreemption); ok {
			capture(p)
		}
		return out
	})
	registry[defaultpreemption.Name] = wrapped.Interface().(frameworkruntime.PluginFactory)
	return registry
}

// nominator holds the pending pods nominated to a node, as kube-scheduler's queue would.
type nominator struct{ byNode map[string][]fwk.PodInfo }

func (n *nominator) DeleteNominatedPodIfExists(*v1.Pod)                   {}
func (n *nominator) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo) {}
func (n *nominator) NominatedPodsForNode(node string) []fwk.PodInfo {
	return n.byNode[node]
}

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// preempt asks DefaultPreemption about a pod no node passed, given each node's filter status.
func preempt(ctx context.Context, f framework.Framework, pl *defaultpreemption.DefaultPreemption,
	state fwk.CycleState, pod *v1.Pod, infos []fwk.NodeInfo, statuses map[string]*fwk.Status,
	factory informers.SharedInformerFactory) (*preemption, error) {
	out := &preemption{}
	m := framework.NewDefaultNodeToStatus()
	var potential []fwk.NodeInfo
	for _, ni := range infos {
		st := statuses[ni.Node().Name]
		m.Set(ni.Node().Name, st)
		if st.Code() == fwk.Unschedulable {
			potential = append(potential, ni)
		}
	}
	// The dry run is compared for DefaultPreemption; another PostFilter (scheduler-plugins'
	// PreemptionToleration) by its outcome.
	if pl != nil && f.ListPlugins().PostFilter.Enabled[0].Name == defaultpreemption.Name {
		out.Candidates, out.NodeStatuses = map[string]victims{}, map[string]*status{}
	}
	if len(potential) > 0 && out.Candidates != nil {
		pdbs, err := factory.Policy().V1().PodDisruptionBudgets().Lister().List(labels.Everything())
		if err != nil {
			return nil, err
		}
		// Every potential node, from the first: the candidates do not depend on the random
		// offset, and SelectCandidate sees them all.
		candidates, nodeStatuses, err := pl.Evaluator.DryRunPreemption(ctx, state, pod, potential,
			pdbs, 0, int32(len(potential)))
		if err != nil {
			return nil, err
		}
		for _, c := range candidates {
			v := victims{Pods: []string{}, PDBViolations: c.Victims().NumPDBViolations}
			for _, p := range c.Victims().Pods {
				v.Pods = append(v.Pods, podKey(p))
			}
			out.Candidates[c.Name()] = v
		}
		nodeStatuses.ForEachExplicitNode(func(name string, st *fwk.Status) {
			out.NodeStatuses[name] = statusOf(st)
		})
		if best := pl.Evaluator.SelectCandidate(ctx, candidates); best != nil {
			out.Pick = best.Name()
		}
	}
	result, st := f.RunPostFilterPlugins(ctx, state, pod, m)
	if st.IsSuccess() {
		out.Node = result.NominatedNodeName
	} else {
		out.Status = statusOf(st)
	}
	return out, nil
}

func evaluate(ctx context.Context, profile *config.KubeSchedulerProfile, req request) answer {
	if given(req.PluginConfig) || given(req.Plugins) {
		custom, err := profileFor(req.Plugins, pluginArguments(req.PluginConfig), keepPlugins)
		if err != nil {
			return answer{Error: fmt.Sprintf("configuration: %v", err)}
		}
		profile = custom
	}
	ans := answer{Filter: map[string]*status{}, Scores: map[string]map[string]int64{},
		Total: map[string]int64{}}
	objects, custom, err := customObjects(req.Objects)
	if err != nil {
		return answer{Error: err.Error()}
	}
	nodes, pods, others, err := decode(objects)
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
	// The pending pod too: preemption reads it back through the pod lister.
	client := fake.NewClientset(append(all, pod)...)
	factory := informers.NewSharedInformerFactory(client, 0)
	var bound []*v1.Pod
	nominated := &nominator{byNode: map[string][]fwk.PodInfo{}}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			bound = append(bound, p)
		} else if node := p.Status.NominatedNodeName; node != "" {
			info, err := framework.NewPodInfo(p)
			if err != nil {
				return answer{Error: err.Error()}
			}
			nominated.byNode[node] = append(nominated.byNode[node], info)
		}
	}
	snapshot := cache.NewSnapshot(bound, nodes)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var postFilter *defaultpreemption.DefaultPreemption
	registry := registryCapturing(func(p *defaultpreemption.DefaultPreemption) { postFilter = p })
	options := append([]frameworkruntime.Option{frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithPodNominator(nominated),
		// Preemption's actuation (asynchronous since 1.36) looks victims up among the
		// waiting pods and records an event for each.
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithEventRecorder(&events.FakeRecorder{})},
		append(releaseOptions(snapshot), custom...)...)
	f, err := frameworkruntime.NewFramework(ctx, registry, profile, options...)
	if err != nil {
		return answer{Error: fmt.Sprintf("framework: %v", err)}
	}
	waitForPluginObjects()
	factory.Start(ctx.Done())
	waitForSync(factory)
	waitForPluginHandlers(factory)
	if ans.Less, err = queueSortAnswers(f); err != nil {
		return answer{Error: fmt.Sprintf("queue sort: %v", err)}
	}

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
		statuses := map[string]*fwk.Status{}
		for _, ni := range infos {
			ans.Filter[ni.Node().Name] = statusOf(s)
			statuses[ni.Node().Name] = s
		}
		return withPreemption(ctx, ans, f, postFilter, state, pod, infos, statuses, factory)
	}
	statuses := map[string]*fwk.Status{}
	var candidates []fwk.NodeInfo
	for _, ni := range infos {
		if !pre.AllNodes() && !pre.NodeNames.Has(ni.Node().Name) {
			st := fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
				fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unscheduled)))
			ans.Filter[ni.Node().Name] = statusOf(st)
			statuses[ni.Node().Name] = st
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
		statuses[ni.Node().Name] = st
		if st.IsSuccess() {
			feasible = append(feasible, ni)
		}
	}
	if len(feasible) == 0 {
		return withPreemption(ctx, ans, f, postFilter, state, pod, infos, statuses, factory)
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

func withPreemption(ctx context.Context, ans answer, f framework.Framework,
	pl *defaultpreemption.DefaultPreemption, state fwk.CycleState, pod *v1.Pod,
	infos []fwk.NodeInfo, statuses map[string]*fwk.Status,
	factory informers.SharedInformerFactory) answer {
	// kube-scheduler runs PostFilter only when the profile has one (DefaultPreemption is
	// made for its PreEnqueue even when its PostFilter is disabled).
	if !f.HasPostFilterPlugins() {
		return ans
	}
	p, err := preempt(ctx, f, pl, state, pod, infos, statuses, factory)
	if err != nil {
		return answer{Error: fmt.Sprintf("preemption: %v", err)}
	}
	ans.Preemption = p
	return ans
}

// waitForSync waits for the informers' caches as factory.WaitForCacheSync does, without its
// poll period (100 ms in client-go up to v0.35: ten cases a second).
func waitForSync(factory informers.SharedInformerFactory) {
	for {
		stop := make(chan struct{})
		timer := time.AfterFunc(100*time.Microsecond, func() { close(stop) })
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
	profile, err := profileFor(nil, nil, keepPlugins)
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
