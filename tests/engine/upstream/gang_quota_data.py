"""Upstream test-table data for CapacityScheduling (ElasticQuota) and Coscheduling (PodGroup).

Transcribed (data only: inputs and expected values, no Go logic) from the unit tests of
https://github.com/kubernetes-sigs/scheduler-plugins, read through the stored-source index
(not a live checkout). The index holds only some historical versions of each file; the version
read is named per file below, and every row carries a ``source`` citation
("<file> <TestFunction>", the upstream case name is in ``case``).

Files and versions read
-----------------------
CapacityScheduling
* pkg/capacityscheduling/capacity_scheduling_test.go @ 075daae279284106c43eafce90cd8e4ff655231d
  (newest stored version: NodeToStatusReader API, ``sets.Set[string]``; the older stored version
  321447b493baa85b2c4d202eb085ae0231795d1f has the same tables).
* pkg/capacityscheduling/elasticquota_test.go @ 3674af53e9a900a7d5163352cb66294eb992ee04
  (1a6849485e2b... is an old version with only the Reserve/UnReserve tables).
* plugin sources for the messages: pkg/capacityscheduling/capacity_scheduling.go
  @ fc5b4b296f6725c8ead647b9d9cca32f0118c642 (same strings @ 01ec2100279637110eb430a120b62cd594a2e38d),
  pkg/capacityscheduling/elasticquota.go @ ce702ec3cec9cfbf805985968a97bd1d19559c53.
Coscheduling
* pkg/coscheduling/core/core_test.go: newest stored version (index file id 52344905448; the
  index did not report its commit; it has the schedulingGates rows and
  TestMarkAndClearPodGroupScheduleFailure). Older stored versions:
  d7ae0994b81329f46067d8ffe7532ed87160f95c, 004e0d9de203ede67e0ae03b427ed82db5fb618b (7 PreFilter rows).
* pkg/coscheduling/coscheduling_test.go @ 2d20310880323ae307312d4d4fdfa78c2267073c (newest stored;
  TestPodGroupBackoffTime, TestLess, TestPermit, TestPostFilter). The index holds NO version with a
  podGroupRejectPercentage / PostFilter-threshold table (see COSCHEDULING_POSTFILTER_THRESHOLD_UNVERIFIED).
* plugin sources for the messages: pkg/coscheduling/core/core.go @ 004e0d9de203ede67e0ae03b427ed82db5fb618b
  and the newer stored version with ``assignedPodsByPG`` (index file id 5969603028);
  pkg/coscheduling/coscheduling.go @ fae4102fb12defb620cc23cbe82a78203b0319a4;
  pkg/util/podgroup.go @ 23e980c0e53bcbdaf08c9ae142f09fb0f92ee71b; pkg/util/resource.go
  @ 4ef22fd1e1ad869537a770406d90276ae050977a; apis/config/v1/defaults.go
  @ 2bf86fe60dac8c76e9167c6486f3e9fcc2f27672.
* Test helpers: test/util fake shared lister (pods with an empty nodeName land in a NodeInfo keyed
  "" whose Node() is nil; node order is a Go map iteration, i.e. random); kube-scheduler
  ``st.MakeNode().Capacity(res)`` sets capacity = allocatable = res plus ``pods: "32"``;
  ``tu.MakePodGroup()`` leaves minMember 0 and a zero creationTimestamp unless set.

Conventions
-----------
* Pods (``_pod``): ``requests`` is per container, Kubernetes quantity strings exactly as the object
  would carry them (``[]`` containers = the upstream pod has no container at all). Pods built by the
  capacity tests' ``makePod(name, ns, memReq, cpuReq, gpuReq, priority, uid, nodeName)`` helper get
  one container whose requests are built from raw int64s; ``requests_raw`` keeps those ints with the
  unit in the key (``memory_bytes``, ``cpu_milli``, ``nvidia.com/gpu`` count). NOTE makePod always
  sets all three keys, so even ``cpu: "0"`` and ``nvidia.com/gpu: "0"`` are present (this is why
  expected ``Used`` maps carry ``scalar: {"nvidia.com/gpu": 0}``). makePod also sets
  terminationGracePeriodSeconds 0 and image pause (irrelevant here).
  ``priority: None`` = spec.priority unset (PodPriority 0). ``uid`` matters: CapacityScheduling keys
  its per-quota pod set by pod UID (framework.GetPodKey), Coscheduling keys assigned pods by name.
* Resources of the internal ElasticQuotaInfo cache (``framework.Resource``): dict with keys
  ``cpu_milli``, ``memory`` (bytes), ``ephemeral_storage`` (bytes), ``pods`` (AllowedPodNumber),
  ``scalar`` ({name: int}); an absent key is 0. ``None`` for min/max = nil pointer (different from
  a zero Resource, see ELASTICQUOTA_USED_OVER_* rows). ``pods`` of an EQ info = the set of pod
  keys (UIDs) counted in Used; ``None`` = nil set (tests inject Used without any pods).
* ElasticQuota CRD objects built by ``makeEQ(ns, name, max, min)`` (NOTE argument order max, min)
  with ``makeResourceList(cpuMilli, memBytes)``: kept as ``spec_raw`` ints and ``spec`` strings.
* Times are offsets in seconds from the test's ``now``.
* ``expected.message`` is what the plugin source produces; ``message_asserted`` says whether the
  upstream test compares it (most upstream tests only compare the status code).
"""

MAX_INT64 = 9223372036854775807  # capacityscheduling UpperBoundOfMax (math.MaxInt64)
LOWER_BOUND_OF_MIN = 0           # capacityscheduling LowerBoundOfMin
GPU = "nvidia.com/gpu"            # capacity_scheduling_test.go const ResourceGPU
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"  # v1alpha1.PodGroupLabel

# capacity_scheduling_test.go: midPriority, highPriority = int32(100), int32(1000)
CS_MID_PRIORITY = 100
CS_HIGH_PRIORITY = 1000
# coscheduling_test.go TestLess: lowPriority, highPriority := int32(10), int32(100)
CO_LOW_PRIORITY = 10
CO_HIGH_PRIORITY = 100

CS_TEST = "pkg/capacityscheduling/capacity_scheduling_test.go"
EQ_TEST = "pkg/capacityscheduling/elasticquota_test.go"
CORE_TEST = "pkg/coscheduling/core/core_test.go"
CO_TEST = "pkg/coscheduling/coscheduling_test.go"


def _milli_str(v):
    return str(v // 1000) if v % 1000 == 0 else f"{v}m"


def _pod(name, namespace="", *, uid=None, priority=None, requests=None, requests_raw=None,
         node_name="", labels=None, scheduling_gates=None, phase=None, terminating=False,
         nominated_node_name="", preemption_policy=None):
    """A compact pod record (plain dict)."""
    containers = [] if requests is None else [{"requests": dict(requests)}]
    out = {
        "namespace": namespace, "name": name, "uid": uid, "priority": priority,
        "containers": containers, "init_containers": [], "overhead": None,
        "node_name": node_name, "labels": dict(labels or {}),
        "scheduling_gates": list(scheduling_gates or []), "phase": phase,
        "terminating": terminating, "nominated_node_name": nominated_node_name,
        "preemption_policy": preemption_policy,
    }
    if requests_raw is not None:
        out["requests_raw"] = dict(requests_raw)
    return out


def _cs_pod(name, namespace, mem, cpu_milli, gpu, priority, uid, node_name, phase=None):
    """The pod upstream's capacity-test helper makePod(...) builds (argument order kept)."""
    return _pod(
        name, namespace, uid=uid, priority=priority, node_name=node_name, phase=phase,
        requests={"memory": str(mem), "cpu": _milli_str(cpu_milli), GPU: str(gpu)},
        requests_raw={"memory_bytes": mem, "cpu_milli": cpu_milli, GPU: gpu},
    )


def _eq_crd(namespace, name, max_cpu_mem, min_cpu_mem):
    """makeEQ(namespace, name, max, min) with makeResourceList(cpuMilli, memBytes) (or nil)."""
    def rl(p):
        return None if p is None else {"cpu_milli": p[0], "memory": p[1]}

    def rl_str(p):
        return None if p is None else {"cpu": _milli_str(p[0]), "memory": str(p[1])}

    return {"namespace": namespace, "name": name,
            "spec_raw": {"max": rl(max_cpu_mem), "min": rl(min_cpu_mem)},
            "spec": {"max": rl_str(max_cpu_mem), "min": rl_str(min_cpu_mem)}}


def _node(name, **allocatable):
    """st.MakeNode().Name(name).Capacity(res): capacity = allocatable = res + pods "32"."""
    alloc = {"pods": "32"}
    alloc.update({k.replace("_", "-"): v for k, v in allocatable.items()})
    return {"name": name, "allocatable": alloc}


def _pg(name, namespace, min_member=0, *, min_resources=None, creation_offset_s=None):
    """tu.MakePodGroup(): minMember 0 and zero creationTimestamp unless given."""
    return {"namespace": namespace, "name": name, "min_member": min_member,
            "min_resources": min_resources, "creation_offset_s": creation_offset_s,
            "schedule_timeout_seconds": None}


def _pgl(pg):
    return {POD_GROUP_LABEL: pg}


# =================================================================================================
# CapacityScheduling  (pkg/capacityscheduling/capacity_scheduling_test.go)
# =================================================================================================

_PREFILTER_NOTES = (
    "Plugin built directly with elasticQuotaInfos = the table's map (internal cache; Used injected, "
    "EQ pods set nil). Snapshot lister has NO nodes and the pod nominator is empty, so no nominated "
    "pods contribute. Pods are makePod(name, ns, memReq, 0, 0, priority 0, uid=name, node \"\"). "
    "Each pod of a case is checked in turn with the same CycleState; PreFilter never changes Used, "
    "so the steps are independent. Only the status code is asserted upstream. CRD-equivalent: an "
    "ElasticQuota spec.min/max {memory: N} gives exactly these Min/Max (cpu/ephemeral/pods 0); "
    "to reproduce Used from objects, place assigned pods of that namespace requesting only memory "
    "(cpu 0) summing to Used.")

CAPACITY_PREFILTER = [
    {
        "case": "pod subjects to ElasticQuota", "step": 1,
        "source": f"{CS_TEST} TestPreFilter",
        "nodes": [],
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 1000}, "max": {"memory": 2000},
             "used": {"memory": 300}, "pods": None},
        ],
        "nominated_pods": [],
        "pod": _cs_pod("ns1-p1", "ns1", 500, 0, 0, 0, "ns1-p1", ""),
        "expected": {"code": "Success", "message": "", "message_asserted": False},
        "notes": _PREFILTER_NOTES + " 300+500=800 <= max 2000; total used 800 <= total min 1000.",
    },
    {
        "case": "pod subjects to ElasticQuota", "step": 2,
        "source": f"{CS_TEST} TestPreFilter",
        "nodes": [],
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 1000}, "max": {"memory": 2000},
             "used": {"memory": 300}, "pods": None},
        ],
        "nominated_pods": [],
        "pod": _cs_pod("ns1-p2", "ns1", 1800, 0, 0, 0, "ns1-p2", ""),
        "expected": {"code": "Unschedulable",
                     "message": "Pod ns1/ns1-p2 is rejected in PreFilter because ElasticQuota ns1 is more than Max",
                     "message_asserted": False},
        "notes": _PREFILTER_NOTES + " 300+1800=2100 > max 2000 (the Max check runs first).",
    },
    {
        "case": "the sum of used is bigger than the sum of min", "step": 1,
        "source": f"{CS_TEST} TestPreFilter",
        "nodes": [],
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 1000}, "max": {"memory": 2000},
             "used": {"memory": 1800}, "pods": None},
            {"namespace": "ns2", "min": {"memory": 1000}, "max": {"memory": 2000},
             "used": {"memory": 200}, "pods": None},
        ],
        "nominated_pods": [],
        "pod": _cs_pod("ns2-p1", "ns2", 500, 0, 0, 0, "ns2-p1", ""),
        "expected": {"code": "Unschedulable",
                     "message": "Pod ns2/ns2-p1 is rejected in PreFilter because total ElasticQuota used is more than min",
                     "message_asserted": False},
        "notes": _PREFILTER_NOTES + (" ns2: 200+500=700 <= max 2000 passes; aggregated "
                                     "1800+200+500=2500 > 1000+1000=2000 fails."),
    },
    {
        "case": "without elasticQuotaInfo", "step": 1,
        "source": f"{CS_TEST} TestPreFilter",
        "nodes": [],
        "elastic_quotas": [],
        "nominated_pods": [],
        "pod": _cs_pod("ns2-p1", "ns2", 500, 0, 0, 0, "ns2-p1", ""),
        "expected": {"code": "Success", "message": "", "message_asserted": False},
        "notes": _PREFILTER_NOTES + " No EQ in the pod's namespace: no quota check at all.",
    },
]

_PREEMPT_NOTES = (
    "Framework registers only QueueSort, DefaultBinder and NodeResourcesFit (as Filter+PreFilter); "
    "CapacityScheduling itself is NOT registered, so RunPreFilterExtensionAdd/RemovePod never touch "
    "the quota snapshot: the EQ Used values stay exactly as injected during victim selection and "
    "reprieve. The test writes the CycleState by hand: ElasticQuotaSnapshot = the table's EQ map "
    "(CycleState.Clone per node clones it, giving each EQ an empty non-nil pods set) and PreFilterState "
    "podReq = nominatedPodsReqWithPodReq = nominatedPodsReqInEQWithPodReq = request of the preemptor "
    "(no nominated pods). Node capacity memory \"150\" (bytes) + pods \"32\"; all pods request memory "
    "only (cpu 0, gpu 0). Preemptor and victims: makePod(...). Consistency check (derived): modelling "
    "Used as the sum of the existing pods of each namespace (ns1 = its 50-byte pod, ns2 = its two "
    "50-byte pods) and letting Add/RemovePod update it gives the same victims for every row here.")

CAPACITY_DRY_RUN_PREEMPTION = [
    {
        "case": "in-namespace preemption",
        "source": f"{CS_TEST} TestDryRunPreemption",
        "nodes": [_node("node-a", memory="150")],
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 50}, "max": {"memory": 200},
             "used": {"memory": 50}, "pods": None},
            {"namespace": "ns2", "min": {"memory": 200}, "max": {"memory": 200},
             "used": {"memory": 100}, "pods": None},
        ],
        "existing_pods": [
            _cs_pod("t1-p1", "ns1", 50, 0, 0, CS_MID_PRIORITY, "t1-p1", "node-a"),
            _cs_pod("t1-p2", "ns2", 50, 0, 0, CS_MID_PRIORITY, "t1-p2", "node-a"),
            _cs_pod("t1-p3", "ns2", 50, 0, 0, CS_MID_PRIORITY, "t1-p3", "node-a"),
        ],
        "nominated_pods": [],
        "pod": _cs_pod("t1-p", "ns1", 50, 0, 0, CS_HIGH_PRIORITY, "t1-p", ""),
        "dry_run": {"offset": 0, "num_candidates": "len(nodeInfos)", "pdbs": []},
        "expected": {"candidates": [{"node": "node-a", "victims": ["t1-p1"], "num_pdb_violations": 0}]},
        "asserted": "candidate count only (1)",
        "notes": _PREEMPT_NOTES + (
            " ns1 usedOverMinWith(50): 50+50 > 50 -> own-namespace lower-priority pods only -> "
            "t1-p1. UPSTREAM TEST BUG: the comparison loop diffs got[i] against itself "
            "(for i, c := range got { Diff(c.Victims(), got[i].Victims()) }), so only len(got) == "
            "len(want) is really asserted; the victims listed are the table's `want` (and match the "
            "algorithm by hand)."),
    },
    {
        "case": "cross-namespace preemption",
        "source": f"{CS_TEST} TestDryRunPreemption",
        "nodes": [_node("node-a", memory="150")],
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 150}, "max": {"memory": 200},
             "used": {"memory": 50}, "pods": None},
            {"namespace": "ns2", "min": {"memory": 50}, "max": {"memory": 200},
             "used": {"memory": 100}, "pods": None},
        ],
        "existing_pods": [
            _cs_pod("t1-p1", "ns1", 50, 0, 0, CS_MID_PRIORITY, "t1-p1", "node-a"),
            _cs_pod("t1-p2", "ns2", 50, 0, 0, CS_HIGH_PRIORITY, "t1-p2", "node-a"),
            _cs_pod("t1-p3", "ns2", 50, 0, 0, CS_MID_PRIORITY, "t1-p3", "node-a"),
        ],
        "nominated_pods": [],
        "pod": _cs_pod("t1-p", "ns1", 50, 0, 0, CS_HIGH_PRIORITY, "t1-p", ""),
        "dry_run": {"offset": 0, "num_candidates": "len(nodeInfos)", "pdbs": []},
        "expected": {"candidates": [{"node": "node-a", "victims": ["t1-p3"], "num_pdb_violations": 0}]},
        "asserted": "candidate count only (1)",
        "notes": _PREEMPT_NOTES + (
            " ns1 usedOverMinWith(50): 50+50 <= 150 -> victims are pods of OTHER quotas whose Used "
            "> Min, of ANY priority: t1-p2 (high, same as preemptor) and t1-p3 (mid). After removal "
            "the pod fits; checks usedOverMaxWith(podReq) 100 <= 200 and aggregated 50+100+50=200 "
            "<= 200 pass. Reprieve highest priority first: t1-p2 back -> fits (t1-p1+t1-p2+preemptor "
            "=150) and quota checks pass -> reprieved; t1-p3 back -> 200 > 150 -> victim. Same "
            "upstream test bug as above (victims not really compared)."),
    },
]

CAPACITY_POSTFILTER = [
    {
        "case": "in-namespace preemption",
        "source": f"{CS_TEST} TestPostFilter",
        "nodes": [_node("node-a", memory="150")],
        "filtered_node_statuses": {"node-a": "Unschedulable"},
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 50}, "max": {"memory": 200},
             "used": {"memory": 50}, "pods": None},
            {"namespace": "ns2", "min": {"memory": 200}, "max": {"memory": 200},
             "used": {"memory": 100}, "pods": None},
        ],
        "existing_pods": [
            _cs_pod("t1-p2", "ns1", 50, 0, 0, CS_MID_PRIORITY, "t1-p2", "node-a"),
            _cs_pod("t1-p3", "ns2", 50, 0, 0, CS_MID_PRIORITY, "t1-p3", "node-a"),
            _cs_pod("t1-p4", "ns2", 50, 0, 0, CS_MID_PRIORITY, "t1-p4", "node-a"),
        ],
        "nominated_pods": [],
        "pod": _cs_pod("t1-p1", "ns1", 50, 0, 0, CS_HIGH_PRIORITY, "t1-p1", ""),
        "expected": {"code": "Success", "message": "", "nominated_node_name": "node-a"},
        "derived_victims": ["t1-p2"],
        "asserted": "status (Success, no message) and PostFilterResult NominatedNodeName node-a",
        "notes": _PREEMPT_NOTES + (
            " Same shape as TestDryRunPreemption 'in-namespace preemption' with the pods renamed "
            "(preemptor t1-p1). Preemptor and existing pods are in the pod informer (Evaluator "
            "re-reads the preemptor; victims are deleted through the fake clientset). No "
            "'preemption: ' prefix is added (CapacityScheduling returns Evaluator.Preempt's result "
            "as is)."),
    },
    {
        "case": "cross-namespace preemption",
        "source": f"{CS_TEST} TestPostFilter",
        "nodes": [_node("node-a", memory="150")],
        "filtered_node_statuses": {"node-a": "Unschedulable"},
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 150}, "max": {"memory": 200},
             "used": {"memory": 50}, "pods": None},
            {"namespace": "ns2", "min": {"memory": 50}, "max": {"memory": 200},
             "used": {"memory": 100}, "pods": None},
        ],
        "existing_pods": [
            _cs_pod("t1-p2", "ns1", 50, 0, 0, CS_MID_PRIORITY, "t1-p2", "node-a"),
            _cs_pod("t1-p3", "ns2", 50, 0, 0, CS_MID_PRIORITY, "t1-p3", "node-a"),
            _cs_pod("t1-p4", "ns2", 50, 0, 0, CS_MID_PRIORITY, "t1-p4", "node-a"),
        ],
        "nominated_pods": [],
        "pod": _cs_pod("t1-p1", "ns1", 50, 0, 0, CS_HIGH_PRIORITY, "t1-p1", ""),
        "expected": {"code": "Success", "message": "", "nominated_node_name": "node-a"},
        "derived_victims_one_of": [["t1-p3"], ["t1-p4"]],
        "asserted": "status (Success, no message) and PostFilterResult NominatedNodeName node-a",
        "notes": _PREEMPT_NOTES + (
            " Within min -> candidates t1-p3, t1-p4 (ns2 over min). Both mid priority: the reprieve "
            "order falls back to MoreImportantPod's start-time tie-break (no status.startTime -> "
            "time.Now()), so WHICH one stays a victim is not deterministic; exactly one is."),
    },
    {
        "case": "without elasticQuotas",
        "source": f"{CS_TEST} TestPostFilter",
        "nodes": [_node("node-a", memory="150")],
        "filtered_node_statuses": {"node-a": "Unschedulable"},
        "elastic_quotas": [],
        "existing_pods": [
            _cs_pod("t1-p2", "ns1", 50, 0, 0, CS_MID_PRIORITY, "t1-p2", "node-a"),
            _cs_pod("t1-p3", "ns2", 50, 0, 0, CS_MID_PRIORITY, "t1-p3", "node-a"),
            _cs_pod("t1-p4", "ns2", 50, 0, 0, CS_MID_PRIORITY, "t1-p4", "node-a"),
        ],
        "nominated_pods": [],
        "pod": _cs_pod("t1-p1", "ns1", 50, 0, 0, CS_HIGH_PRIORITY, "t1-p1", ""),
        "expected": {"code": "Success", "message": "", "nominated_node_name": "node-a"},
        "derived_victims_one_of": [["t1-p2"], ["t1-p3"], ["t1-p4"]],
        "asserted": "status (Success, no message) and PostFilterResult NominatedNodeName node-a",
        "notes": _PREEMPT_NOTES + (
            " No EQ anywhere: every lower-priority pod of a namespace without EQ is a candidate; "
            "two are reprieved, one (non-deterministic, equal priorities) stays a victim."),
    },
]

_ELIGIBLE_NOTES = (
    "Calls preemptor.PodEligibleToPreemptOthers(ctx, pod, nominatedNodeStatus) directly; the "
    "snapshot holds node-a (memory 150, pods 32) and existPods. PreFilterState written by hand with "
    "the preemptor's request (st.MakePod() preemptors have NO containers -> request 0). "
    "Terminating() sets metadata.deletionTimestamp. Only the bool is asserted.")

CAPACITY_POD_ELIGIBLE_TO_PREEMPT_OTHERS = [
    {
        "case": "Pod with PreemptNever preemption policy",
        "source": f"{CS_TEST} TestPodEligibleToPreemptOthers",
        "nodes": [_node("node-a", memory="150")],
        "pod": _pod("t1-p1", "", uid="t1-p1", priority=CS_HIGH_PRIORITY, preemption_policy="Never"),
        "existing_pods": [_cs_pod("t1-p0", "ns1", 50, 10, 0, CS_MID_PRIORITY, "t1-p1", "node-a")],
        "nominated_node_status": {"code": "UnschedulableAndUnresolvable",
                                  "reasons": ["tainttoleration.ErrReasonNotMatch"]},
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 50}, "max": {"memory": 150},
             "used": {"memory": 0}, "pods": None},
        ],
        "expected": {"eligible": False, "reason": "not eligible due to preemptionPolicy=Never."},
        "notes": _ELIGIBLE_NOTES + (
            " Preemptor has NO namespace (\"\") and no nominated node. The existing pod's UID is "
            "\"t1-p1\" (same as the preemptor's; upstream typo, harmless). The reason string is from "
            "the source, not asserted. Nominated-node status reason is kube-scheduler's "
            "tainttoleration.ErrReasonNotMatch constant (\"node(s) had untolerated taint\" in "
            "current k8s)."),
    },
    {
        "case": "Pod with unschedulableAndUnresolvable nominated node",
        "source": f"{CS_TEST} TestPodEligibleToPreemptOthers",
        "nodes": [_node("node-a", memory="150")],
        "pod": _pod("t1-p1", "", uid="t1-p1", priority=CS_HIGH_PRIORITY, nominated_node_name="node-a"),
        "existing_pods": [_cs_pod("t1-p0", "ns1", 50, 10, 0, CS_MID_PRIORITY, "t1-p1", "node-a")],
        "nominated_node_status": {"code": "UnschedulableAndUnresolvable",
                                  "reasons": ["tainttoleration.ErrReasonNotMatch"]},
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 50}, "max": {"memory": 150},
             "used": {"memory": 0}, "pods": None},
        ],
        "expected": {"eligible": True, "reason": ""},
        "notes": _ELIGIBLE_NOTES + " Nominated node UnschedulableAndUnresolvable -> eligible again.",
    },
    {
        "case": "Pod with terminating pod in the same namespace",
        "source": f"{CS_TEST} TestPodEligibleToPreemptOthers",
        "nodes": [_node("node-a", memory="150")],
        "pod": _pod("t1-p1", "ns1", uid="t1-p1", priority=CS_HIGH_PRIORITY, nominated_node_name="node-a"),
        "existing_pods": [_pod("t1-p0", "ns1", uid="t1-p0", priority=CS_MID_PRIORITY,
                               node_name="node-a", terminating=True)],
        "nominated_node_status": None,
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 50}, "max": {"memory": 150},
             "used": {"memory": 0}, "pods": None},
        ],
        "expected": {"eligible": False,
                     "reason": "not eligible due to a terminating pod on the nominated node."},
        "notes": _ELIGIBLE_NOTES + " Terminating lower-priority pod of the preemptor's own quota.",
    },
    {
        "case": "Pod with terminating pod in another namespace",
        "source": f"{CS_TEST} TestPodEligibleToPreemptOthers",
        "nodes": [_node("node-a", memory="150")],
        "pod": _pod("t1-p1", "ns1", uid="t1-p1", priority=CS_HIGH_PRIORITY, nominated_node_name="node-a"),
        "existing_pods": [_pod("t1-p0", "ns2", uid="t1-p0", priority=CS_MID_PRIORITY,
                               node_name="node-a", terminating=True)],
        "nominated_node_status": None,
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 50}, "max": {"memory": 150},
             "used": {"memory": 0}, "pods": None},
            {"namespace": "ns2", "min": {"memory": 50}, "max": {"memory": 150},
             "used": {"memory": 100}, "pods": None},
        ],
        "expected": {"eligible": False,
                     "reason": "not eligible due to a terminating pod on the nominated node."},
        "notes": _ELIGIBLE_NOTES + (" Preemptor within its min (0+0 <= 50) and the terminating "
                                    "pod's quota ns2 is over min (100 > 50)."),
    },
    {
        "case": "Pod without elasticQuotas and terminating pod exists in the same namespace",
        "source": f"{CS_TEST} TestPodEligibleToPreemptOthers",
        "nodes": [_node("node-a", memory="150")],
        "pod": _pod("t1-p1", "ns1", uid="t1-p1", priority=CS_HIGH_PRIORITY, nominated_node_name="node-a"),
        "existing_pods": [_pod("t1-p0", "ns2", uid="t1-p0", priority=CS_MID_PRIORITY,
                               node_name="node-a", terminating=True)],
        "nominated_node_status": None,
        "elastic_quotas": [],
        "expected": {"eligible": False,
                     "reason": "not eligible due to a terminating pod on the nominated node."},
        "notes": _ELIGIBLE_NOTES + (" The case name says 'same namespace' but the terminating pod "
                                    "is in ns2 (preemptor ns1); with no EQ at all any terminating "
                                    "lower-priority pod blocks."),
    },
    {
        "case": "Pod without ElasticQuotas and terminating pod exists in another namespace",
        "source": f"{CS_TEST} TestPodEligibleToPreemptOthers",
        "nodes": [_node("node-a", memory="150")],
        "pod": _pod("t1-p1", "ns1", uid="t1-p1", priority=CS_HIGH_PRIORITY, nominated_node_name="node-a"),
        "existing_pods": [_pod("t1-p0", "ns2", uid="t1-p0", priority=CS_MID_PRIORITY,
                               node_name="node-a", terminating=True)],
        "nominated_node_status": None,
        "elastic_quotas": [
            {"namespace": "ns2", "min": {"memory": 50}, "max": {"memory": 150},
             "used": {"memory": 100}, "pods": None},
        ],
        "expected": {"eligible": True, "reason": ""},
        "notes": _ELIGIBLE_NOTES + (" Preemptor has no EQ; terminating pods whose namespace HAS an "
                                    "EQ are ignored in that branch."),
    },
]

_RESERVE_NOTES = (
    "Plugin built with the table's map; Reserve/Unreserve called in order with node \"node-a\"; "
    "after each step the whole ns1 ElasticQuotaInfo is compared with reflect.DeepEqual (so a "
    "scalar key with value 0 appears once a makePod pod was added/removed). Pod keys are UIDs "
    "(= names here). Pods of namespaces without an EQ are ignored. Reserve code is asserted (Success).")

CAPACITY_RESERVE = [
    {
        "case": "Reserve pods",
        "source": f"{CS_TEST} TestReserve",
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 1000}, "max": {"memory": 2000},
             "used": {"memory": 300}, "pods": []},
        ],
        "steps": [
            {"op": "Reserve", "pod": _cs_pod("t1-p1", "ns1", 50, 0, 0, CS_MID_PRIORITY, "t1-p1", "node-a"),
             "expected_code": "Success",
             "expected_ns1": {"min": {"memory": 1000}, "max": {"memory": 2000},
                              "used": {"memory": 350, "scalar": {GPU: 0}}, "pods": ["t1-p1"]}},
            {"op": "Reserve", "pod": _cs_pod("t1-p2", "ns2", 50, 0, 0, CS_MID_PRIORITY, "t1-p2", "node-a"),
             "expected_code": "Success",
             "expected_ns1": {"min": {"memory": 1000}, "max": {"memory": 2000},
                              "used": {"memory": 350, "scalar": {GPU: 0}}, "pods": ["t1-p1"]}},
        ],
        "notes": _RESERVE_NOTES,
    },
]

CAPACITY_UNRESERVE = [
    {
        "case": "Unreserve pods",
        "source": f"{CS_TEST} TestUnreserve",
        "elastic_quotas": [
            {"namespace": "ns1", "min": {"memory": 1000}, "max": {"memory": 2000},
             "used": {"memory": 300}, "pods": ["t1-p3", "t1-p4"]},
        ],
        "steps": [
            {"op": "Unreserve", "pod": _cs_pod("t1-p1", "ns1", 50, 0, 0, CS_MID_PRIORITY, "t1-p1", "node-a"),
             "expected_ns1": {"min": {"memory": 1000}, "max": {"memory": 2000},
                              "used": {"memory": 300}, "pods": ["t1-p3", "t1-p4"]}},
            {"op": "Unreserve", "pod": _cs_pod("t1-p2", "ns2", 50, 0, 0, CS_MID_PRIORITY, "t1-p2", "node-a"),
             "expected_ns1": {"min": {"memory": 1000}, "max": {"memory": 2000},
                              "used": {"memory": 300}, "pods": ["t1-p3", "t1-p4"]}},
            {"op": "Unreserve", "pod": _cs_pod("t1-p3", "ns1", 50, 0, 0, CS_MID_PRIORITY, "t1-p3", "node-a"),
             "expected_ns1": {"min": {"memory": 1000}, "max": {"memory": 2000},
                              "used": {"memory": 250, "scalar": {GPU: 0}}, "pods": ["t1-p4"]}},
        ],
        "notes": _RESERVE_NOTES + (" t1-p1 is in ns1 but NOT in the pods set -> no change (only "
                                   "pods counted in Used are subtracted). Used 300 is injected, not "
                                   "the sum of t1-p3/t1-p4 (t1-p4 is never defined)."),
    },
]

_EQ_EVENTS_NOTES = (
    "Plugin starts with an empty EQ map; the informer handlers addElasticQuota / updateElasticQuota "
    "/ deleteElasticQuota / addPod / updatePod / deletePod are called directly and the namespace's "
    "ElasticQuotaInfo compared with reflect.DeepEqual. EQ objects: makeEQ(ns, name, max, min) -> "
    "max/min as given (nil = field absent). A missing max becomes {cpu, memory, ephemeral} = MaxInt64 "
    "(cpu in milli: MilliCPU MaxInt64); a missing min becomes {cpu, memory, ephemeral} = 0. Used "
    "starts as a zero Resource and pods as an empty set.")

CAPACITY_ADD_ELASTIC_QUOTA = [
    {
        "case": "Add ElasticQuota",
        "source": f"{CS_TEST} TestAddElasticQuota",
        "elastic_quota_objects": [_eq_crd("ns1", "t1-eq1", (100, 1000), (10, 100))],
        "expected": {"ns1": {"max": {"cpu_milli": 100, "memory": 1000},
                             "min": {"cpu_milli": 10, "memory": 100},
                             "used": {"cpu_milli": 0, "memory": 0}, "pods": []}},
        "notes": _EQ_EVENTS_NOTES + " Given max without ephemeral-storage -> Max.EphemeralStorage 0.",
    },
    {
        "case": "Add ElasticQuota without Max",
        "source": f"{CS_TEST} TestAddElasticQuota",
        "elastic_quota_objects": [_eq_crd("ns1", "t1-eq1", None, (10, 100))],
        "expected": {"ns1": {"max": {"cpu_milli": MAX_INT64, "memory": MAX_INT64,
                                     "ephemeral_storage": MAX_INT64},
                             "min": {"cpu_milli": 10, "memory": 100},
                             "used": {"cpu_milli": 0, "memory": 0}, "pods": []}},
        "notes": _EQ_EVENTS_NOTES,
    },
    {
        "case": "Add ElasticQuota without Min",
        "source": f"{CS_TEST} TestAddElasticQuota",
        "elastic_quota_objects": [_eq_crd("ns1", "t1-eq1", (100, 1000), None)],
        "expected": {"ns1": {"max": {"cpu_milli": 100, "memory": 1000},
                             "min": {"cpu_milli": 0, "memory": 0, "ephemeral_storage": 0},
                             "used": {"cpu_milli": 0, "memory": 0}, "pods": []}},
        "notes": _EQ_EVENTS_NOTES,
    },
    {
        "case": "Add ElasticQuota without Max and Min",
        "source": f"{CS_TEST} TestAddElasticQuota",
        "elastic_quota_objects": [_eq_crd("ns1", "t1-eq1", None, None)],
        "expected": {"ns1": {"max": {"cpu_milli": MAX_INT64, "memory": MAX_INT64,
                                     "ephemeral_storage": MAX_INT64},
                             "min": {"cpu_milli": 0, "memory": 0, "ephemeral_storage": 0},
                             "used": {"cpu_milli": 0, "memory": 0}, "pods": []}},
        "notes": _EQ_EVENTS_NOTES,
    },
]

CAPACITY_UPDATE_ELASTIC_QUOTA = [
    {
        "case": "Update ElasticQuota without Used",
        "source": f"{CS_TEST} TestUpdateElasticQuota",
        "old_elastic_quota": _eq_crd("ns1", "t1-eq1", (100, 1000), (10, 100)),
        "new_elastic_quota": _eq_crd("ns1", "t1-eq1", (300, 1000), (10, 100)),
        "expected": {"ns1": {"max": {"cpu_milli": 300, "memory": 1000},
                             "min": {"cpu_milli": 10, "memory": 100},
                             "used": {"cpu_milli": 0, "memory": 0}, "pods": []}},
        "notes": _EQ_EVENTS_NOTES + (" addElasticQuota(old) then updateElasticQuota(old, new): "
                                     "Min/Max from the new object, Used and pods carried over."),
    },
]

CAPACITY_DELETE_ELASTIC_QUOTA = [
    {
        "case": "Delete ElasticQuota",
        "source": f"{CS_TEST} TestDeleteElasticQuota",
        "elastic_quota": _eq_crd("ns1", "t1-eq1", (300, 1000), (10, 100)),
        "expected": {"ns1": None},
        "notes": _EQ_EVENTS_NOTES + " add then delete -> no entry for ns1.",
    },
]

CAPACITY_ADD_POD = [
    {
        "case": "AddPod",
        "source": f"{CS_TEST} TestAddPod",
        "elastic_quota": _eq_crd("ns1", "t1-eq1", (100, 1000), (10, 100)),
        "pods": [
            _cs_pod("t1-p1", "ns1", 50, 10, 0, CS_MID_PRIORITY, "t1-p1", "node-a"),
            _cs_pod("t1-p2", "ns1", 50, 10, 0, CS_MID_PRIORITY, "t1-p2", "node-a"),
            _cs_pod("t1-p3", "ns1", 50, 10, 0, CS_MID_PRIORITY, "t1-p3", "node-a"),
        ],
        "expected": {"ns1": {"max": {"cpu_milli": 100, "memory": 1000},
                             "min": {"cpu_milli": 10, "memory": 100},
                             "used": {"cpu_milli": 30, "memory": 150, "scalar": {GPU: 0}},
                             "pods": ["t1-p1", "t1-p2", "t1-p3"]}},
        "notes": _EQ_EVENTS_NOTES + (" addPod counts the pod whatever its phase (the informer "
                                     "filter only requires spec.nodeName)."),
    },
]

CAPACITY_UPDATE_POD = [
    {
        "case": "Update Pod With Pod Status PodSucceeded and PodRunning",
        "source": f"{CS_TEST} TestUpdatePod",
        "elastic_quota": _eq_crd("ns1", "t1-eq1", (100, 1000), (10, 100)),
        "update_pods": [
            {"old": _cs_pod("t1-p1", "ns1", 100, 30, 0, CS_MID_PRIORITY, "t1-p1", "node-a", phase="Succeeded"),
             "new": _cs_pod("t1-p1", "ns1", 100, 30, 0, CS_HIGH_PRIORITY, "t1-p1", "node-a", phase="Running")},
        ],
        "expected": {"ns1": {"max": {"cpu_milli": 100, "memory": 1000},
                             "min": {"cpu_milli": 10, "memory": 100},
                             "used": {"cpu_milli": 30, "memory": 100, "scalar": {GPU: 0}},
                             "pods": ["t1-p1"]}},
        "notes": _EQ_EVENTS_NOTES + (" For each pair: addPod(old) then updatePod(old, new). Old "
                                     "phase Succeeded/Failed -> update ignored, so the Succeeded pod "
                                     "stays counted (quirk)."),
    },
    {
        "case": "Update Pod With Pod Status PodPending and PodFailed",
        "source": f"{CS_TEST} TestUpdatePod",
        "elastic_quota": _eq_crd("ns1", "t1-eq1", (100, 1000), (10, 100)),
        "update_pods": [
            {"old": _cs_pod("t1-p2", "ns1", 100, 30, 0, CS_MID_PRIORITY, "t1-p2", "node-a", phase="Pending"),
             "new": _cs_pod("t1-p2", "ns1", 100, 30, 0, CS_HIGH_PRIORITY, "t1-p2", "node-a", phase="Failed")},
        ],
        "expected": {"ns1": {"max": {"cpu_milli": 100, "memory": 1000},
                             "min": {"cpu_milli": 10, "memory": 100},
                             "used": {"cpu_milli": 0, "memory": 0, "scalar": {GPU: 0}},
                             "pods": []}},
        "notes": _EQ_EVENTS_NOTES + (" New phase neither Running nor Pending -> removed from Used."),
    },
]

CAPACITY_DELETE_POD = [
    {
        "case": "Delete All Pods",
        "source": f"{CS_TEST} TestDeletePod",
        "elastic_quota": _eq_crd("ns1", "t1-eq1", (100, 1000), (10, 100)),
        "existing_pods": [
            _cs_pod("t1-p1", "ns1", 100, 30, 0, CS_MID_PRIORITY, "t1-p1", "node-a"),
            _cs_pod("t1-p2", "ns1", 100, 30, 0, CS_HIGH_PRIORITY, "t1-p2", "node-a"),
        ],
        "delete_pods": [
            _cs_pod("t1-p1", "ns1", 100, 30, 0, CS_MID_PRIORITY, "t1-p1", "node-a"),
            _cs_pod("t1-p2", "ns1", 100, 30, 0, CS_HIGH_PRIORITY, "t1-p2", "node-a"),
        ],
        "expected": {"ns1": {"max": {"cpu_milli": 100, "memory": 1000},
                             "min": {"cpu_milli": 10, "memory": 100},
                             "used": {"cpu_milli": 0, "memory": 0, "scalar": {GPU: 0}},
                             "pods": []}},
        "notes": _EQ_EVENTS_NOTES + " addPod each existing pod, then deletePod each listed pod.",
    },
    {
        "case": "Delete one Pod",
        "source": f"{CS_TEST} TestDeletePod",
        "elastic_quota": _eq_crd("ns1", "t1-eq1", (100, 1000), (10, 100)),
        "existing_pods": [
            _cs_pod("t1-p1", "ns1", 100, 30, 0, CS_MID_PRIORITY, "t1-p1", "node-a"),
            _cs_pod("t1-p2", "ns1", 100, 30, 0, CS_HIGH_PRIORITY, "t1-p2", "node-a"),
        ],
        "delete_pods": [
            _cs_pod("t1-p1", "ns1", 100, 30, 0, CS_MID_PRIORITY, "t1-p1", "node-a"),
        ],
        "expected": {"ns1": {"max": {"cpu_milli": 100, "memory": 1000},
                             "min": {"cpu_milli": 10, "memory": 100},
                             "used": {"cpu_milli": 30, "memory": 100, "scalar": {GPU: 0}},
                             "pods": ["t1-p2"]}},
        "notes": _EQ_EVENTS_NOTES,
    },
]

# =================================================================================================
# CapacityScheduling  (pkg/capacityscheduling/elasticquota_test.go)
# =================================================================================================

_RES_NOTES = ("Pure ElasticQuotaInfo arithmetic: for each pod, computePodResourceRequest(pod) "
              "(sum of containers, max with init containers, + overhead) is added to / subtracted "
              "from Used. The pods' namespaces are ignored here. Only Used is set on the info.")

ELASTICQUOTA_RESERVE_RESOURCE = [
    {
        "case": "ElasticQuotaInfo ReserveResource",
        "source": f"{EQ_TEST} TestReserveResource",
        "before": {"namespace": "ns1", "used": {"cpu_milli": 1000, "memory": 200, "scalar": {GPU: 2}}},
        "pods": [
            _cs_pod("t1-p1", "ns1", 50, 1000, 1, CS_MID_PRIORITY, "t1-p1", "node-a"),
            _cs_pod("t1-p2", "ns2", 100, 2000, 0, CS_MID_PRIORITY, "t1-p2", "node-a"),
            _cs_pod("t1-p3", "ns2", 0, 0, 2, CS_MID_PRIORITY, "t1-p3", "node-a"),
        ],
        "expected": {"namespace": "ns1", "used": {"cpu_milli": 4000, "memory": 350, "scalar": {GPU: 5}}},
        "notes": _RES_NOTES,
    },
]

ELASTICQUOTA_UNRESERVE_RESOURCE = [
    {
        "case": "ElasticQuotaInfo UnReserveResource",
        "source": f"{EQ_TEST} TestUnReserveResource",
        "before": {"namespace": "ns1", "used": {"cpu_milli": 4000, "memory": 200, "scalar": {GPU: 5}}},
        "pods": [
            _cs_pod("t1-p1", "ns1", 50, 1000, 1, CS_MID_PRIORITY, "t1-p1", "node-a"),
            _cs_pod("t1-p2", "ns2", 100, 2000, 0, CS_MID_PRIORITY, "t1-p2", "node-a"),
            _cs_pod("t1-p3", "ns2", 0, 0, 2, CS_MID_PRIORITY, "t1-p3", "node-a"),
        ],
        "expected": {"namespace": "ns1", "used": {"cpu_milli": 1000, "memory": 50, "scalar": {GPU: 2}}},
        "notes": _RES_NOTES + " Memory goes 200 -> 50 (no clamping; it could go negative).",
    },
]

_CMP_NOTES = ("Comparison over cpu, memory, ephemeral-storage, pods and every scalar of the REQUEST "
              "(x1) side; a scalar absent from the bound side counts as the bound (0 for min, MaxInt64 "
              "for max). min/max None = nil pointer: usedOverMinWith/usedOverMin -> true, "
              "usedOverMaxWith -> false.")

ELASTICQUOTA_USED_OVER_MIN_WITH = [
    {
        "case": "ElasticQuotaInfo OverMinWith Sum Of PodRequest And Used Is Bigger Than Min",
        "source": f"{EQ_TEST} TestUsedOverMinWith",
        "used": {"cpu_milli": 4000, "memory": 200, "scalar": {GPU: 5}},
        "min": {"cpu_milli": 3000, "memory": 100, "scalar": {GPU: 5}},
        "max": None,
        "pod_request": {"cpu_milli": 1500, "memory": 100},
        "expected": True,
        "notes": _CMP_NOTES,
    },
    {
        "case": "ElasticQuotaInfo OverMinWith Sum Of PodRequest And Used Is Not Bigger Than Min",
        "source": f"{EQ_TEST} TestUsedOverMinWith",
        "used": {"cpu_milli": 300, "memory": 100, "scalar": {GPU: 5}},
        "min": {"cpu_milli": 4000, "memory": 200, "scalar": {GPU: 5}},
        "max": None,
        "pod_request": {"cpu_milli": 100, "memory": 50},
        "expected": False,
        "notes": _CMP_NOTES + " GPU not compared: the request has no scalar (only x1's scalars are checked).",
    },
    {
        "case": "ElasticQuotaInfo OverMinWith ElasticQuotaInfo Doesn't Have Max",
        "source": f"{EQ_TEST} TestUsedOverMinWith",
        "used": {"cpu_milli": 3900, "memory": 100, "scalar": {GPU: 5}},
        "min": None,
        "max": None,
        "pod_request": {"cpu_milli": 100, "memory": 100},
        "expected": True,
        "notes": _CMP_NOTES + " Name says 'Max' but it is the nil MIN that makes it true.",
    },
    {
        "case": "ElasticQuotaInfo OverMinWith Used And Min Don't Have GPU Value",
        "source": f"{EQ_TEST} TestUsedOverMinWith",
        "used": {"cpu_milli": 10, "memory": 10},
        "min": {"cpu_milli": 3000, "memory": 100},
        "max": None,
        "pod_request": {"cpu_milli": 10, "memory": 10, "scalar": {GPU: 5}},
        "expected": True,
        "notes": _CMP_NOTES + " 5 GPUs vs absent-from-min -> bound 0.",
    },
    {
        "case": "ElasticQuotaInfo OverMinWith EphemeralStorage",
        "source": f"{EQ_TEST} TestUsedOverMinWith",
        "used": {"cpu_milli": 10, "memory": 10, "ephemeral_storage": 10},
        "min": {"cpu_milli": 3000, "memory": 100, "ephemeral_storage": 100},
        "max": None,
        "pod_request": {"cpu_milli": 10, "memory": 10, "ephemeral_storage": 10},
        "expected": False,
        "notes": _CMP_NOTES,
    },
]

ELASTICQUOTA_USED_OVER_MAX_WITH = [
    {
        "case": "ElasticQuotaInfo OverMaxWith Sum Of PodRequest And Used Is Bigger Than Max",
        "source": f"{EQ_TEST} TestUsedOverMaxWith",
        "used": {"cpu_milli": 4000, "memory": 200, "scalar": {GPU: 5}},
        "min": None,
        "max": {"cpu_milli": 4000, "memory": 200, "scalar": {GPU: 5}},
        "pod_request": {"cpu_milli": 100, "memory": 100},
        "expected": True,
        "notes": _CMP_NOTES,
    },
    {
        "case": "ElasticQuotaInfo OverMaxWith Sum Of PodRequest And Used Is Not Bigger Than Max",
        "source": f"{EQ_TEST} TestUsedOverMaxWith",
        "used": {"cpu_milli": 3900, "memory": 100, "scalar": {GPU: 5}},
        "min": None,
        "max": {"cpu_milli": 4000, "memory": 200, "scalar": {GPU: 5}},
        "pod_request": {"cpu_milli": 100, "memory": 100},
        "expected": False,
        "notes": _CMP_NOTES + " Exactly equal to max (4000, 200) is not over.",
    },
    {
        "case": "ElasticQuotaInfo OverMaxWith ElasticQuotaInfo Doesn't Have Max",
        "source": f"{EQ_TEST} TestUsedOverMaxWith",
        "used": {"cpu_milli": 3900, "memory": 100, "scalar": {GPU: 5}},
        "min": None,
        "max": None,
        "pod_request": {"cpu_milli": 100, "memory": 100},
        "expected": False,
        "notes": _CMP_NOTES,
    },
    {
        "case": "ElasticQuotaInfo OverMaxWith Used And Max Don't Have GPU Value",
        "source": f"{EQ_TEST} TestUsedOverMaxWith",
        "used": {"cpu_milli": 10, "memory": 10},
        "min": None,
        "max": {"cpu_milli": 3000, "memory": 100},
        "pod_request": {"cpu_milli": 10, "memory": 10, "scalar": {GPU: 5}},
        "expected": False,
        "notes": _CMP_NOTES + " GPU absent from max -> bound MaxInt64.",
    },
    {
        "case": "ElasticQuotaInfo OverMaxWith EphemeralStorage",
        "source": f"{EQ_TEST} TestUsedOverMaxWith",
        "used": {"cpu_milli": 10, "memory": 10, "ephemeral_storage": 10},
        "min": None,
        "max": {"cpu_milli": 3000, "memory": 100, "ephemeral_storage": 100},
        "pod_request": {"cpu_milli": 10, "memory": 10, "ephemeral_storage": 100},
        "expected": True,
        "notes": _CMP_NOTES + " 10+100 > 100.",
    },
]

ELASTICQUOTA_USED_OVER_MIN = [
    {
        "case": "ElasticQuotaInfo OverMin Used Is Bigger Than Min",
        "source": f"{EQ_TEST} TestUsedOverMin",
        "used": {"cpu_milli": 4000, "memory": 200, "scalar": {GPU: 5}},
        "min": {"cpu_milli": 3000, "memory": 300, "scalar": {GPU: 5}},
        "expected": True,
        "notes": _CMP_NOTES + " cpu 4000 > 3000 suffices (any dimension).",
    },
    {
        "case": "ElasticQuotaInfo OverMin Used Is Not Bigger Than Min",
        "source": f"{EQ_TEST} TestUsedOverMin",
        "used": {"cpu_milli": 300, "memory": 100, "scalar": {GPU: 5}},
        "min": {"cpu_milli": 4000, "memory": 200, "scalar": {GPU: 5}},
        "expected": False,
        "notes": _CMP_NOTES,
    },
    {
        "case": "ElasticQuotaInfo OverMin ElasticQuotaInfo Doesn't Have Min",
        "source": f"{EQ_TEST} TestUsedOverMin",
        "used": {"cpu_milli": 3900, "memory": 100, "scalar": {GPU: 5}},
        "min": None,
        "expected": True,
        "notes": _CMP_NOTES,
    },
    {
        "case": "ElasticQuotaInfo OverMin Used Has GPU But Min Doesn't Have GPU",
        "source": f"{EQ_TEST} TestUsedOverMin",
        "used": {"cpu_milli": 300, "memory": 100, "scalar": {GPU: 5}},
        "min": {"cpu_milli": 4000, "memory": 200},
        "expected": True,
        "notes": _CMP_NOTES,
    },
    {
        "case": "ElasticQuotaInfo OverMin EphemeralStorage",
        "source": f"{EQ_TEST} TestUsedOverMin",
        "used": {"cpu_milli": 300, "memory": 100, "ephemeral_storage": 100},
        "min": {"cpu_milli": 4000, "memory": 200, "ephemeral_storage": 10},
        "expected": True,
        "notes": _CMP_NOTES,
    },
]

ELASTICQUOTA_NEW_ELASTIC_QUOTA_INFO = [
    {
        "case": "ElasticQuota",
        "source": f"{EQ_TEST} TestNewElasticQuotaInfo",
        "args": {"namespace": "ns1", "max": {"cpu_milli": 100, "memory": 1000},
                 "min": {"cpu_milli": 10, "memory": 100}, "used": {"cpu_milli": 0, "memory": 0}},
        "expected": {"namespace": "ns1", "pods": [],
                     "max": {"cpu_milli": 100, "memory": 1000},
                     "min": {"cpu_milli": 10, "memory": 100},
                     "used": {"cpu_milli": 0, "memory": 0}},
        "notes": "newElasticQuotaInfo(ns, min, max, used); lists from makeResourceList(cpuMilli, memBytes).",
    },
    {
        "case": "ElasticQuota Without Max",
        "source": f"{EQ_TEST} TestNewElasticQuotaInfo",
        "args": {"namespace": "ns1", "max": None,
                 "min": {"cpu_milli": 10, "memory": 100}, "used": {"cpu_milli": 0, "memory": 0}},
        "expected": {"namespace": "ns1", "pods": [],
                     "max": {"cpu_milli": MAX_INT64, "memory": MAX_INT64, "ephemeral_storage": MAX_INT64},
                     "min": {"cpu_milli": 10, "memory": 100},
                     "used": {"cpu_milli": 0, "memory": 0}},
        "notes": "A nil max list is replaced by {cpu, memory, ephemeral-storage} = MaxInt64; scalars stay absent.",
    },
    {
        "case": "ElasticQuota Without Min",
        "source": f"{EQ_TEST} TestNewElasticQuotaInfo",
        "args": {"namespace": "ns1", "max": {"cpu_milli": 100, "memory": 1000},
                 "min": None, "used": {"cpu_milli": 0, "memory": 0}},
        "expected": {"namespace": "ns1", "pods": [],
                     "max": {"cpu_milli": 100, "memory": 1000},
                     "min": {"cpu_milli": 0, "memory": 0, "ephemeral_storage": 0},
                     "used": {"cpu_milli": 0, "memory": 0}},
        "notes": "A nil min list is replaced by {cpu, memory, ephemeral-storage} = 0.",
    },
    {
        "case": "ElasticQuota Without Max and Min",
        "source": f"{EQ_TEST} TestNewElasticQuotaInfo",
        "args": {"namespace": "ns1", "max": None, "min": None,
                 "used": {"cpu_milli": 0, "memory": 0}},
        "expected": {"namespace": "ns1", "pods": [],
                     "max": {"cpu_milli": MAX_INT64, "memory": MAX_INT64, "ephemeral_storage": MAX_INT64},
                     "min": {"cpu_milli": 0, "memory": 0, "ephemeral_storage": 0},
                     "used": {"cpu_milli": 0, "memory": 0}},
        "notes": "",
    },
]

# =================================================================================================
# Coscheduling  (pkg/coscheduling/core/core_test.go, newest stored version)
# =================================================================================================

def _core_nodes():
    return [_node("node-a", cpu="4"), _node("node-b", cpu="4")]

_CORE_PREFILTER_NOTES = (
    "PodGroupManager.PreFilter(ctx, pod) -> error or nil (the plugin wraps an error as "
    "UnschedulableAndUnresolvable with err.Error() as the only reason). Objects (pending pods, the "
    "pod, PodGroups) are in a fake controller-runtime client; the pod lister (informer store) holds "
    "the pending pods AND the pod itself (newest version; older versions added only the pending "
    "pods); the snapshot holds the 2 nodes (cpu 4, pods 32 each) plus the pending pods, which have no "
    "nodeName (so they sit in a node-less NodeInfo that CheckClusterResource skips). permittedPG and "
    "backedOffPG are empty 10 s caches; scheduleTimeout 10 s. Only err == nil vs != nil is asserted; "
    "messages are from core.go.")

COSCHEDULING_CORE_PREFILTER = [
    {
        "case": "pod does not belong to any pg",
        "source": f"{CORE_TEST} TestPreFilter",
        "nodes": _core_nodes(),
        "pod": _pod("p", ""),
        "pending_pods": [
            _pod("p1", "ns", uid="p1", labels=_pgl("pg1")),
            _pod("p2", "ns", uid="p2", labels=_pgl("pg2")),
        ],
        "pod_groups": [_pg("pg1", "ns", 1), _pg("pg2", "ns", 1)],
        "expected": {"success": True, "message": None},
        "notes": _CORE_PREFILTER_NOTES + " Pod without the label (and without a namespace).",
    },
    {
        "case": "pod belongs to a non-existent pg",
        "source": f"{CORE_TEST} TestPreFilter",
        "nodes": _core_nodes(),
        "pod": _pod("p", "ns", uid="p", labels=_pgl("pg-non-existent")),
        "pending_pods": [],
        "pod_groups": [_pg("pg1", "ns", 1)],
        "expected": {"success": True, "message": None},
        "notes": _CORE_PREFILTER_NOTES + (" A label naming a missing PodGroup PASSES PreFilter "
                                          "(Permit later answers 'PodGroup not found')."),
    },
    {
        "case": "pod count less than minMember",
        "source": f"{CORE_TEST} TestPreFilter",
        "nodes": _core_nodes(),
        "pod": _pod("p", "ns", uid="p", labels=_pgl("pg1")),
        "pending_pods": [_pod("pg2-1", "ns", uid="p2-1", labels=_pgl("pg2"))],
        "pod_groups": [_pg("pg1", "ns", 2), _pg("pg2", "ns", 2)],
        "expected": {"success": False,
                     "code": "UnschedulableAndUnresolvable",
                     "message": "pre-filter pod p cannot find enough sibling pods, current pods number: 1, minMember of group: 2"},
        "notes": _CORE_PREFILTER_NOTES + (" pg1 has only the pod itself (1 < 2). With the older "
                                          "test wiring (pod not in the lister) the count would be 0."),
    },
    {
        "case": "pod count equal minMember",
        "source": f"{CORE_TEST} TestPreFilter",
        "nodes": _core_nodes(),
        "pod": _pod("p1a", "ns", uid="p1a", labels=_pgl("pg1")),
        "pending_pods": [
            _pod("p1b", "ns", uid="p1b", labels=_pgl("pg1")),
            _pod("p1c", "ns", uid="p1c", labels=_pgl("pg1")),
        ],
        "pod_groups": [_pg("pg1", "ns", 2), _pg("pg2", "ns", 2)],
        "expected": {"success": True, "message": None},
        "notes": _CORE_PREFILTER_NOTES + (" Data identical to the next row; with the pod itself in "
                                          "the lister the count is 3 (the name dates from the older "
                                          "wiring where it was 2)."),
    },
    {
        "case": "pod count more than minMember",
        "source": f"{CORE_TEST} TestPreFilter",
        "nodes": _core_nodes(),
        "pod": _pod("p1a", "ns", uid="p1a", labels=_pgl("pg1")),
        "pending_pods": [
            _pod("p1b", "ns", uid="p1b", labels=_pgl("pg1")),
            _pod("p1c", "ns", uid="p1c", labels=_pgl("pg1")),
        ],
        "pod_groups": [_pg("pg1", "ns", 2), _pg("pg2", "ns", 2)],
        "expected": {"success": True, "message": None},
        "notes": _CORE_PREFILTER_NOTES + " Same data as 'pod count equal minMember'.",
    },
    {
        "case": "gated pods but still meeting quorum (minMember < replicas)",
        "source": f"{CORE_TEST} TestPreFilter",
        "nodes": _core_nodes(),
        "pod": _pod("p1a", "ns", uid="p1a", labels=_pgl("pg1")),
        "pending_pods": [
            _pod("p1b", "ns", uid="p1b", labels=_pgl("pg1")),
            _pod("p1c", "ns", uid="p1c", labels=_pgl("pg1"), scheduling_gates=["example-gate"]),
        ],
        "pod_groups": [_pg("pg1", "ns", 2)],
        "expected": {"success": True, "message": None},
        "notes": _CORE_PREFILTER_NOTES + (" 3 pods, 1 gated -> 2 ungated >= minMember 2. The core.go "
                                          "version with the gate check is NOT in the stored index."),
    },
    {
        "case": "gated pods push group below quorum",
        "source": f"{CORE_TEST} TestPreFilter",
        "nodes": _core_nodes(),
        "pod": _pod("p1a", "ns", uid="p1a", labels=_pgl("pg1")),
        "pending_pods": [
            _pod("p1b", "ns", uid="p1b", labels=_pgl("pg1"), scheduling_gates=["example-gate"]),
            _pod("p1c", "ns", uid="p1c", labels=_pgl("pg1")),
        ],
        "pod_groups": [_pg("pg1", "ns", 3)],
        "expected": {"success": False, "code": "UnschedulableAndUnresolvable",
                     "message": "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup",
                     "message_verified": False},
        "notes": _CORE_PREFILTER_NOTES + (" 3 pods >= minMember 3 (sibling-count check passes), but "
                                          "only 2 ungated < 3. Message UNVERIFIED: taken from "
                                          "plugins-next.md section 5.2; the matching core.go is not "
                                          "in the stored index."),
    },
    {
        "case": "all sibling pods are gated",
        "source": f"{CORE_TEST} TestPreFilter",
        "nodes": _core_nodes(),
        "pod": _pod("p1a", "ns", uid="p1a", labels=_pgl("pg1")),
        "pending_pods": [
            _pod("p1b", "ns", uid="p1b", labels=_pgl("pg1"), scheduling_gates=["example-gate"]),
            _pod("p1c", "ns", uid="p1c", labels=_pgl("pg1"), scheduling_gates=["example-gate"]),
        ],
        "pod_groups": [_pg("pg1", "ns", 2)],
        "expected": {"success": False, "code": "UnschedulableAndUnresolvable",
                     "message": "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup",
                     "message_verified": False},
        "notes": _CORE_PREFILTER_NOTES + " Only the pod itself is ungated: 1 < 2. Message unverified (see above).",
    },
    {
        "case": "cluster's resource satisfies minResource",
        "source": f"{CORE_TEST} TestPreFilter",
        "nodes": _core_nodes(),
        "pod": _pod("p1a", "ns", uid="p1a", labels=_pgl("pg1")),
        "pending_pods": [
            _pod("p1b", "ns", uid="p1b", labels=_pgl("pg1")),
            _pod("p1c", "ns", uid="p1c", labels=_pgl("pg1")),
        ],
        "pod_groups": [_pg("pg1", "ns", 2, min_resources={"cpu": "6"})],
        "expected": {"success": True, "message": None},
        "notes": _CORE_PREFILTER_NOTES + (" Need {cpu 6, pods 2 (= minMember)} vs free 4+4 cpu summed "
                                          "over nodes -> ok (upstream comment: 'Although it'd fail in "
                                          "Filter()'; the check is a cluster-wide sum). The group is then "
                                          "cached in permittedPG for scheduleTimeout."),
    },
    {
        "case": "cluster's resource cannot satisfy minResource",
        "source": f"{CORE_TEST} TestPreFilter",
        "nodes": _core_nodes(),
        "pod": _pod("p1a", "ns", uid="p1a", labels=_pgl("pg1")),
        "pending_pods": [
            _pod("p1b", "ns", uid="p1b", labels=_pgl("pg1")),
            _pod("p1c", "ns", uid="p1c", labels=_pgl("pg1")),
        ],
        "pod_groups": [_pg("pg1", "ns", 2, min_resources={"cpu": "10"})],
        "expected": {"success": False, "code": "UnschedulableAndUnresolvable",
                     "message_prefix": "resource gap: ",
                     "remaining_gap": {"cpu_milli": 2000},
                     "message_go_rendering": "resource gap: map[cpu:{{2000 -3} {<nil>}  DecimalSI}]"},
        "notes": _CORE_PREFILTER_NOTES + (
            " Need cpu 10 - 4 - 4 -> 2 cpu left (pods satisfied by the first node and dropped). The "
            "message is fmt %v of a v1.ResourceList: Go prints the Quantity struct (String() has a "
            "pointer receiver), so 'message_go_rendering' is a derivation, not asserted upstream."),
    },
]

COSCHEDULING_CORE_PERMIT = [
    {
        "case": "pod does not belong to any pg",
        "source": f"{CORE_TEST} TestPermit",
        "nodes": [_node("node", cpu="4")],
        "pod": _pod("p", "ns", uid="p"),
        "existing_pods": [],
        "pod_groups": [_pg("pg1", "ns", 2)],
        "expected": {"status": "PodGroup not specified"},
        "notes": "PodGroupManager.Permit -> core.Status string constant; asserted exactly.",
    },
    {
        "case": "pod specifies a non-existent pg",
        "source": f"{CORE_TEST} TestPermit",
        "nodes": [_node("node", cpu="4")],
        "pod": _pod("p", "ns", uid="p", labels=_pgl("pg-non-existent")),
        "existing_pods": [],
        "pod_groups": [_pg("pg1", "ns", 2)],
        "expected": {"status": "PodGroup not found"},
        "notes": "",
    },
    {
        "case": "pod belongs to a pg that doesn't have quorum",
        "source": f"{CORE_TEST} TestPermit",
        "nodes": [_node("node", cpu="4")],
        "pod": _pod("p", "ns", uid="p", labels=_pgl("pg1")),
        "existing_pods": [],
        "pod_groups": [_pg("pg1", "ns", 2)],
        "expected": {"status": "Wait"},
        "notes": "First member: assigned {p} = 1 < 2 -> Wait (and the 'activate siblings' flag is set).",
    },
    {
        "case": "pod belongs to a pg that have quorum satisfied",
        "source": f"{CORE_TEST} TestPermit",
        "nodes": [_node("node", cpu="4")],
        "pod": _pod("p1a", "ns", uid="p1a", labels=_pgl("pg1")),
        "existing_pods": [_pod("p1b", "ns", uid="p1b", labels=_pgl("pg1"), node_name="node")],
        "pod_groups": [_pg("pg1", "ns", 2)],
        "expected": {"status": "Success"},
        "notes": ("Newest wiring: NewPodGroupManager + AddPodFactory(pgMgr) called for each existing "
                  "pod (a bound pod with the label -> assigned set {p1b}); Permit adds p1a -> 2 >= 2. "
                  "Older versions counted bound pods of the group in the snapshot instead "
                  "(assigned + 1 >= minMember); same expectation."),
    },
]

COSCHEDULING_CORE_CHECK_CLUSTER_RESOURCE = [
    {
        "case": "Cluster resource enough",
        "source": f"{CORE_TEST} TestCheckClusterResource",
        "nodes": [_node("node-a", cpu="3"), _node("node-b", cpu="3")],
        "existing_pods": [_pod("p1", "ns", uid="p1", node_name="node-a", requests={"cpu": "2"})],
        "min_resources": {"cpu": "4"},
        "pg_full_name": "ns/pg1",
        "expected": {"satisfied": True},
        "notes": ("CheckClusterResource(nodeInfos, minResources, \"ns/pg1\") called directly (no pods "
                  "entry is added here). Free per node = allocatable - requested, with pods of the "
                  "desired group removed first; the need is reduced node by node. minResources cpu "
                  "built as resource.NewQuantity(4, DecimalSI) = \"4\". Free 1 + 3 = 4 >= 4."),
    },
    {
        "case": "Cluster resource not enough",
        "source": f"{CORE_TEST} TestCheckClusterResource",
        "nodes": [_node("node-a", cpu="3"), _node("node-b", cpu="3")],
        "existing_pods": [
            _pod("p1", "ns", uid="p1", node_name="node-a", requests={"cpu": "2"}),
            _pod("p2", "ns", uid="p2", node_name="node-b", requests={"cpu": "1"}),
        ],
        "min_resources": {"cpu": "4"},
        "pg_full_name": "ns/pg1",
        "expected": {"satisfied": False, "message_prefix": "resource gap: ",
                     "remaining_gap": {"cpu_milli": 1000},
                     "message_go_rendering": "resource gap: map[cpu:{{1000 -3} {<nil>}  DecimalSI}]"},
        "notes": "Free 1 + 2 = 3 < 4. Message rendering derived, not asserted.",
    },
    {
        "case": "Cluster resource enough as p1's resource needs to be excluded from minResources",
        "source": f"{CORE_TEST} TestCheckClusterResource",
        "nodes": [_node("node-a", cpu="3"), _node("node-b", cpu="3")],
        "existing_pods": [
            _pod("p1", "ns", uid="p1", labels=_pgl("pg1"), node_name="node-a", requests={"cpu": "2"}),
            _pod("p2", "ns", uid="p2", node_name="node-b", requests={"cpu": "1"}),
        ],
        "min_resources": {"cpu": "4"},
        "pg_full_name": "ns/pg1",
        "expected": {"satisfied": True},
        "notes": ("p1 belongs to ns/pg1 itself, so its request is given back: free 3 + 2 = 5 >= 4 "
                  "(a group's own bound pods count as free for its minResources)."),
    },
]

COSCHEDULING_CORE_MARK_CLEAR_FAILURE = [
    {
        "case": "TestMarkAndClearPodGroupScheduleFailure",
        "source": f"{CORE_TEST} TestMarkAndClearPodGroupScheduleFailure",
        "pod_groups": [_pg("pg1", "ns", 3, creation_offset_s=-10)],
        "pod": _pod("p1", "ns", labels=_pgl("pg1")),
        "steps": [
            {"op": "GetCreationTimestamp(pod, now)", "expected": "== pg1 creationTimestamp (now-10s, truncated to the second)"},
            {"op": "MarkPodGroupScheduleFailure(\"ns/pg1\")"},
            {"op": "GetCreationTimestamp(pod, now)", "expected": "strictly after pg1 creationTimestamp (the failure time)"},
            {"op": "ClearPodGroupScheduleFailure(\"ns/pg1\")"},
            {"op": "GetCreationTimestamp(pod, now)", "expected": "== pg1 creationTimestamp again"},
        ],
        "notes": ("Only in the newest stored core_test.go; the core.go implementing "
                  "Mark/ClearPodGroupScheduleFailure (lastFailedSchedulePG, a sync.Map) is not in the "
                  "stored index. Creation time truncated to whole seconds because metav1.Time "
                  "serialization drops sub-second precision (fake client round-trip)."),
    },
]

# =================================================================================================
# Coscheduling  (pkg/coscheduling/coscheduling_test.go @ 2d20310)
# =================================================================================================

_LESS_NOTES = (
    "Coscheduling.Less(p1, p2) with a PodGroupManager over a fake client holding only the row's "
    "PodGroups. Order: higher priority first; then 'creation time' = the PodGroup's "
    "creationTimestamp if the pod's label names a PodGroup that exists IN THE POD'S NAMESPACE, else "
    "the pod's InitialAttemptTimestamp; equal times -> 'ns/name' lexical. PodGroup timestamps come "
    "back from the fake client truncated to whole seconds while InitialAttemptTimestamp keeps "
    "now's sub-second part (does not change any outcome here). initial_attempt_offset_s None = "
    "unset (only in rows decided by priority).")


def _lp(name, ns, prio, pg=None, iat=None):
    return {"namespace": ns, "name": name, "priority": prio,
            "labels": _pgl(pg) if pg else {}, "initial_attempt_offset_s": iat}


COSCHEDULING_LESS = [
    {"case": "p1.priority less than p2.priority", "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_LOW_PRIORITY), "p2": _lp("p2", "ns2", CO_HIGH_PRIORITY),
     "pod_groups": [], "expected": False, "notes": _LESS_NOTES},
    {"case": "p1.priority greater than p2.priority", "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_HIGH_PRIORITY), "p2": _lp("p2", "ns2", CO_LOW_PRIORITY),
     "pod_groups": [], "expected": True, "notes": _LESS_NOTES},
    {"case": "equal priority. p1 is added to schedulingQ earlier than p2", "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_HIGH_PRIORITY, iat=1), "p2": _lp("p2", "ns2", CO_HIGH_PRIORITY, iat=2),
     "pod_groups": [], "expected": True, "notes": _LESS_NOTES},
    {"case": "equal priority. p2 is added to schedulingQ earlier than p1", "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_HIGH_PRIORITY, iat=2), "p2": _lp("p2", "ns2", CO_HIGH_PRIORITY, iat=1),
     "pod_groups": [], "expected": False, "notes": _LESS_NOTES},
    {"case": "p1.priority less than p2.priority, p1 belongs to pg1", "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_LOW_PRIORITY, pg="pg1"), "p2": _lp("p2", "ns2", CO_HIGH_PRIORITY),
     "pod_groups": [_pg("pg1", "ns1")], "expected": False,
     "notes": _LESS_NOTES + " pg1 has minMember 0 and zero creation time (not reached)."},
    {"case": "p1.priority greater than p2.priority, p1 belongs to pg1", "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_HIGH_PRIORITY, pg="pg1"), "p2": _lp("p2", "ns2", CO_LOW_PRIORITY),
     "pod_groups": [_pg("pg1", "ns1")], "expected": True, "notes": _LESS_NOTES},
    {"case": "equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
     "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_HIGH_PRIORITY, pg="pg1", iat=1), "p2": _lp("p2", "ns2", CO_HIGH_PRIORITY, iat=2),
     "pod_groups": [_pg("pg1", "ns1", creation_offset_s=1)], "expected": True,
     "notes": _LESS_NOTES + " p1 -> pg1 time +1; p2 -> own +2."},
    {"case": "equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
     "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_HIGH_PRIORITY, pg="pg1", iat=2), "p2": _lp("p2", "ns2", CO_HIGH_PRIORITY, iat=1),
     "pod_groups": [_pg("pg1", "ns1", creation_offset_s=2)], "expected": False,
     "notes": _LESS_NOTES + " p1 -> pg1 time +2; p2 -> own +1."},
    {"case": "p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
     "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_LOW_PRIORITY, pg="pg1"), "p2": _lp("p2", "ns2", CO_HIGH_PRIORITY, pg="pg2"),
     "pod_groups": [_pg("pg1", "ns1", creation_offset_s=1), _pg("pg2", "ns2", creation_offset_s=2)],
     "expected": False, "notes": _LESS_NOTES},
    {"case": "p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2",
     "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_HIGH_PRIORITY, pg="pg1"), "p2": _lp("p2", "ns2", CO_LOW_PRIORITY, pg="pg1"),
     "pod_groups": [_pg("pg1", "ns1", creation_offset_s=1), _pg("pg2", "ns2", creation_offset_s=2)],
     "expected": True,
     "notes": _LESS_NOTES + " Despite the name, p2 carries label pg1 (which does not exist in ns2)."},
    {"case": "equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1 and p2 belongs to pg2",
     "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_HIGH_PRIORITY, pg="pg1", iat=1), "p2": _lp("p2", "ns2", CO_HIGH_PRIORITY, pg="pg2", iat=2),
     "pod_groups": [_pg("pg1", "ns1", creation_offset_s=1), _pg("pg2", "ns2", creation_offset_s=2)],
     "expected": True, "notes": _LESS_NOTES + " pg1 +1 < pg2 +2."},
    {"case": "equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg2 and p2 belongs to pg1",
     "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns", CO_LOW_PRIORITY, pg="pg2", iat=1), "p2": _lp("p2", "ns", CO_HIGH_PRIORITY, pg="pg1", iat=2),
     "pod_groups": [_pg("pg1", "ns", creation_offset_s=1), _pg("pg2", "ns", creation_offset_s=2)],
     "expected": False,
     "notes": _LESS_NOTES + (" Despite 'equal priority' in the name, p1 is LOW and p2 HIGH priority: "
                             "decided by priority alone (the group times would give the same answer).")},
    {"case": "equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
     "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_HIGH_PRIORITY, pg="pg2", iat=1), "p2": _lp("p2", "ns2", CO_HIGH_PRIORITY, pg="pg2", iat=1),
     "pod_groups": [_pg("pg1", "ns1", creation_offset_s=1), _pg("pg2", "ns2", creation_offset_s=2)],
     "expected": True,
     "notes": _LESS_NOTES + (" p1 carries label pg2, which does not exist in ns1 -> p1 uses its own "
                             "time +1; p2 -> ns2/pg2 time +2. NOT a name tie-break despite the case name.")},
    {"case": "equal priority and creation time, and p2 belong to pg2",
     "source": f"{CO_TEST} TestLess",
     "p1": _lp("p1", "ns1", CO_HIGH_PRIORITY, iat=1), "p2": _lp("p2", "ns2", CO_HIGH_PRIORITY, pg="pg2", iat=1),
     "pod_groups": [_pg("pg2", "ns2", creation_offset_s=2)],
     "expected": True,
     "notes": _LESS_NOTES + (" p1 own +1 vs p2's group +2 (equal InitialAttemptTimestamps, but p2 "
                             "uses its group's time). Not a name tie-break either.")},
]

COSCHEDULING_PERMIT = [
    {
        "case": "pods do not belong to any podGroup",
        "source": f"{CO_TEST} TestPermit",
        "nodes": [_node("node", cpu="4")],
        "pod": _pod("p", "ns", uid="p"),
        "pod_groups": [_pg("pg1", "ns", 1), _pg("pg2", "ns", 2)],
        "expected": {"code": "Success", "wait_seconds": 0},
        "notes": ("Coscheduling.Permit(ctx, state, pod, \"node\") with scheduleTimeout 10 s; "
                  "PodGroupManager over a snapshot with the node and NO pods (nothing assigned). "
                  "Only the code is asserted."),
    },
    {
        "case": "pods belong to a pg1, but quorum not satisfied",
        "source": f"{CO_TEST} TestPermit",
        "nodes": [_node("node", cpu="4")],
        "pod": _pod("p", "ns", uid="p", labels=_pgl("pg2")),
        "pod_groups": [_pg("pg1", "ns", 1), _pg("pg2", "ns", 2)],
        "expected": {"code": "Wait", "wait_seconds": 10},
        "notes": ("Despite the name the pod is in pg2 (minMember 2): 0 assigned + this pod < 2. Wait "
                  "timeout = pg.spec.scheduleTimeoutSeconds (unset) -> plugin scheduleTimeout 10 s "
                  "(derived; only the code is asserted)."),
    },
    {
        "case": "pods belong to a podGroup, and quorum satisfied",
        "source": f"{CO_TEST} TestPermit",
        "nodes": [_node("node", cpu="4")],
        "pod": _pod("p", "ns", uid="p", labels=_pgl("pg1")),
        "pod_groups": [_pg("pg1", "ns", 1), _pg("pg2", "ns", 2)],
        "expected": {"code": "Success", "wait_seconds": 0},
        "notes": "minMember 1: the pod alone reaches quorum; waiting pods of the group would be Allowed.",
    },
]

COSCHEDULING_POSTFILTER = [
    {
        "case": "pod does not belong to any pod group",
        "source": f"{CO_TEST} TestPostFilter",
        "nodes": [_node("node", cpu="4")],
        "filtered_node_statuses": {"node": "Success"},
        "pod": _pod("p", "ns", uid="p"),
        "existing_pods": [],
        "pod_groups": [_pg("pg1", "ns", 2)],
        "expected": {"code": "Unschedulable", "message": "can not find pod group"},
        "asserted": "status compared with reflect.DeepEqual (code and message exactly)",
        "notes": "A pod without the label gets this status too (GetPodGroup returns nil).",
    },
    {
        "case": "enough pods assigned, do not reject all",
        "source": f"{CO_TEST} TestPostFilter",
        "nodes": [_node("node", cpu="4")],
        "filtered_node_statuses": {"node": "Success"},
        "pod": _pod("p", "ns", uid="p", labels=_pgl("pg1")),
        "existing_pods": [_pod("p1", "ns", uid="p1", labels=_pgl("pg1"), node_name="node")],
        "pod_groups": [_pg("pg1", "ns", 1)],
        "expected": {"code": "Unschedulable", "message": None},
        "asserted": "status compared with reflect.DeepEqual: Unschedulable with NO reasons",
        "notes": ("Assigned = bound pods of ns/pg1 in the snapshot (p1 on node) = 1 >= minMember 1 -> "
                  "no group rejection. (The newest core counts an assignedPodsByPG set fed by the pod "
                  "informer + Permit instead; the matching coscheduling.go is not stored.)"),
    },
    {
        "case": "pod failed at filter phase, reject all pods",
        "source": f"{CO_TEST} TestPostFilter",
        "nodes": [_node("node", cpu="4")],
        "filtered_node_statuses": {"node": "Success"},
        "pod": _pod("p", "ns", uid="p", labels=_pgl("pg1")),
        "existing_pods": [_pod("p1", "ns", uid="p1", labels=_pgl("pg1"), node_name="node")],
        "pod_groups": [_pg("pg1", "ns", 2)],
        "expected": {"code": "Unschedulable",
                     "message": "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter"},
        "asserted": "status compared with reflect.DeepEqual (code and message exactly)",
        "notes": ("1 assigned of 2: unassigned fraction (2-1)/2 = 0.5 > 0.1 -> every waiting pod of the "
                  "group is rejected ('optimistic rejection in PostFilter'), permittedPG entry deleted; "
                  "no backoff (pgBackoff nil)."),
    },
]

COSCHEDULING_PODGROUP_BACKOFF = [
    {
        "case": "prevent pod falling into infinite scheduling loop",
        "source": f"{CO_TEST} TestPodGroupBackoffTime",
        "nodes": [_node("node", cpu="4")],
        "pods": [
            _pod("pod1", "ns", uid="pod1", labels=_pgl("pg1")),
            _pod("pod2", "ns", uid="pod2", labels=_pgl("pg1")),
            _pod("pod3", "ns", uid="pod3", labels=_pgl("pg1")),
        ],
        "pod_groups": [_pg("pg1", "ns", 3)],
        "config": {"pg_manager_schedule_timeout_seconds": 5, "plugin_schedule_timeout_seconds": 10,
                   "pod_group_backoff_seconds": 1},
        "steps": [
            {"op": "Permit", "pod": "pod1",
             "expected": {"code": "Wait", "pods_to_activate": ["ns/pod2", "ns/pod3"]}},
            {"op": "PostFilter", "pod": "pod2", "expected": None},
            {"op": "PreFilter", "pod": "pod3",
             "expected": {"code": "UnschedulableAndUnresolvable", "reasons": ["podGroup ns/pg1 failed recently"]}},
        ],
        "asserted": "Permit code Wait; PodsToActivate keys (sorted) exactly; PreFilter code and Reasons()[0] exactly",
        "notes": ("All three pods are in the pod informer (unbound) and in the snapshot's node-less "
                  "NodeInfo. Permit(pod1): first member, not quorum -> Wait and its siblings are put "
                  "in PodsToActivate (keys 'namespace/name'). PostFilter(pod2): 0 assigned of 3 -> "
                  "rejection; backoff applies because the label lists 3 pods >= minMember 3 -> "
                  "backedOffPG[ns/pg1] for 1 s. PreFilter(pod3) inside that second fails with the "
                  "backoff message (checked before the sibling count)."),
    },
]

# PostFilter threshold rows (podGroupRejectPercentage). NOT FOUND in any stored upstream version:
# the stored coscheduling.go hard-codes 0.1 and the stored coscheduling_test.go has no such table.
# Rows below are copied from /work/shared/reference/plugins-next.md section 5.4 item 3 only.
COSCHEDULING_POSTFILTER_THRESHOLD_UNVERIFIED = [
    {"case": "threshold 0.1, 9 of 10 assigned", "min_member": 10, "reject_percentage": 10, "assigned": 9,
     "expected": {"reject_group": False}},
    {"case": "threshold 0.1, 8 of 10 assigned", "min_member": 10, "reject_percentage": 10, "assigned": 8,
     "expected": {"reject_group": True}},
    {"case": "threshold 0, 9 of 10 assigned", "min_member": 10, "reject_percentage": 0, "assigned": 9,
     "expected": {"reject_group": True}},
    {"case": "threshold 1.0, 0 of 10 assigned", "min_member": 10, "reject_percentage": 100, "assigned": 0,
     "expected": {"reject_group": False}},
    {"case": "threshold 0.5, 6 of 10 assigned", "min_member": 10, "reject_percentage": 50, "assigned": 6,
     "expected": {"reject_group": False}},
    {"case": "threshold 0.5, 4 of 10 assigned", "min_member": 10, "reject_percentage": 50, "assigned": 4,
     "expected": {"reject_group": True}},
]
for _r in COSCHEDULING_POSTFILTER_THRESHOLD_UNVERIFIED:
    _r["source"] = "plugins-next.md section 5.4 item 3 (upstream table NOT in the stored index)"
    _r["verified_against_upstream_source"] = False
    _r["notes"] = ("Rule: no group rejection when (minMember - assigned) / minMember <= "
                   "percentage/100 (stored source: <= 0.1 hard-coded). A 'no rejection' outcome is "
                   "still Unschedulable with no message.")
del _r

COSCHEDULING_ARGS_DEFAULTS = {
    "permitWaitingTimeSeconds": 60,   # apis/config/v1/defaults.go @ 2bf86fe6 (verified)
    "podGroupBackoffSeconds": 0,      # same (verified); 0 = backoff off; negative -> New() error "parse arguments failed"
    "podGroupRejectPercentage": 10,   # UNVERIFIED: plugins-next.md only; stored coscheduling.go uses a literal 0.1
    "default_wait_time_seconds": 60,  # pkg/util/podgroup.go DefaultWaitTime, used when both pg.spec.scheduleTimeoutSeconds and the plugin timeout are unset/0
    "wait_timeout_precedence": ["podGroup.spec.scheduleTimeoutSeconds", "permitWaitingTimeSeconds (if non-zero)", "DefaultWaitTime 60s"],
    "permitted_pg_ttl": "scheduleTimeout (entries added with TTL = permitWaitingTimeSeconds)",
    "source": "apis/config/v1/defaults.go SetDefaults_CoschedulingArgs; pkg/util/podgroup.go GetWaitTimeDuration; pkg/coscheduling/coscheduling.go New",
}

# Exact message format strings from the stored plugin sources (Go fmt verbs kept).
MESSAGES = {
    "capacity.prefilter.over_max": ("pkg/capacityscheduling/capacity_scheduling.go PreFilter",
                                    "Pod %v/%v is rejected in PreFilter because ElasticQuota %v is more than Max"),
    "capacity.prefilter.over_total_min": ("pkg/capacityscheduling/capacity_scheduling.go PreFilter",
                                          "Pod %v/%v is rejected in PreFilter because total ElasticQuota used is more than min"),
    "capacity.prefilter.nodelist_error": ("pkg/capacityscheduling/capacity_scheduling.go PreFilter",
                                          "Error getting the nodelist: %v"),
    "capacity.victims.none": ("pkg/capacityscheduling/capacity_scheduling.go SelectVictimsOnNode",
                              "No victims found on node %v for preemptor pod %v"),
    "capacity.victims.quota": ("pkg/capacityscheduling/capacity_scheduling.go SelectVictimsOnNode",
                               "global quota max exceeded"),
    "capacity.victims.no_snapshot": ("pkg/capacityscheduling/capacity_scheduling.go SelectVictimsOnNode",
                                     "Failed to read elasticQuotaSnapshot from cycleState"),
    "capacity.victims.no_prefilter_state": ("pkg/capacityscheduling/capacity_scheduling.go SelectVictimsOnNode",
                                            "Failed to read preFilterState from cycleState"),
    "capacity.eligible.never": ("pkg/capacityscheduling/capacity_scheduling.go PodEligibleToPreemptOthers",
                                "not eligible due to preemptionPolicy=Never."),
    "capacity.eligible.no_state": ("pkg/capacityscheduling/capacity_scheduling.go PodEligibleToPreemptOthers",
                                   "not eligible due to failed to read from cycleState"),
    "capacity.eligible.terminating": ("pkg/capacityscheduling/capacity_scheduling.go PodEligibleToPreemptOthers",
                                      "not eligible due to a terminating pod on the nominated node."),
    "coscheduling.core.backoff": ("pkg/coscheduling/core/core.go PreFilter", "podGroup %v failed recently"),
    "coscheduling.core.list_error": ("pkg/coscheduling/core/core.go PreFilter", "podLister list pods failed: %w"),
    "coscheduling.core.siblings": ("pkg/coscheduling/core/core.go PreFilter",
                                   "pre-filter pod %v cannot find enough sibling pods, current pods number: %v, minMember of group: %v"),
    "coscheduling.core.gated_UNVERIFIED": ("plugins-next.md 5.2 (core.go version not stored)",
                                           "pre-filter pod %v cannot proceed due to gated pods in the same PodGroup"),
    "coscheduling.core.resource_gap": ("pkg/coscheduling/core/core.go CheckClusterResource", "resource gap: %v"),
    "coscheduling.core.status.not_specified": ("pkg/coscheduling/core/core.go Status", "PodGroup not specified"),
    "coscheduling.core.status.not_found": ("pkg/coscheduling/core/core.go Status", "PodGroup not found"),
    "coscheduling.core.status.success": ("pkg/coscheduling/core/core.go Status", "Success"),
    "coscheduling.core.status.wait": ("pkg/coscheduling/core/core.go Status", "Wait"),
    "coscheduling.permit.not_found": ("pkg/coscheduling/coscheduling.go Permit", "PodGroup not found"),
    "coscheduling.postfilter.no_group": ("pkg/coscheduling/coscheduling.go PostFilter", "can not find pod group"),
    "coscheduling.postfilter.rejected": ("pkg/coscheduling/coscheduling.go PostFilter",
                                         "PodGroup %v gets rejected due to Pod %v is unschedulable even after PostFilter"),
    "coscheduling.postfilter.waiting_reject": ("pkg/coscheduling/coscheduling.go PostFilter",
                                               "optimistic rejection in PostFilter"),
    "coscheduling.unreserve.waiting_reject": ("pkg/coscheduling/coscheduling.go Unreserve", "rejection in Unreserve"),
    "coscheduling.new.bad_backoff": ("pkg/coscheduling/coscheduling.go New", "parse arguments failed"),
}

ALL_TABLES = {
    "CAPACITY_PREFILTER": CAPACITY_PREFILTER,
    "CAPACITY_DRY_RUN_PREEMPTION": CAPACITY_DRY_RUN_PREEMPTION,
    "CAPACITY_POSTFILTER": CAPACITY_POSTFILTER,
    "CAPACITY_POD_ELIGIBLE_TO_PREEMPT_OTHERS": CAPACITY_POD_ELIGIBLE_TO_PREEMPT_OTHERS,
    "CAPACITY_RESERVE": CAPACITY_RESERVE,
    "CAPACITY_UNRESERVE": CAPACITY_UNRESERVE,
    "CAPACITY_ADD_ELASTIC_QUOTA": CAPACITY_ADD_ELASTIC_QUOTA,
    "CAPACITY_UPDATE_ELASTIC_QUOTA": CAPACITY_UPDATE_ELASTIC_QUOTA,
    "CAPACITY_DELETE_ELASTIC_QUOTA": CAPACITY_DELETE_ELASTIC_QUOTA,
    "CAPACITY_ADD_POD": CAPACITY_ADD_POD,
    "CAPACITY_UPDATE_POD": CAPACITY_UPDATE_POD,
    "CAPACITY_DELETE_POD": CAPACITY_DELETE_POD,
    "ELASTICQUOTA_RESERVE_RESOURCE": ELASTICQUOTA_RESERVE_RESOURCE,
    "ELASTICQUOTA_UNRESERVE_RESOURCE": ELASTICQUOTA_UNRESERVE_RESOURCE,
    "ELASTICQUOTA_USED_OVER_MIN_WITH": ELASTICQUOTA_USED_OVER_MIN_WITH,
    "ELASTICQUOTA_USED_OVER_MAX_WITH": ELASTICQUOTA_USED_OVER_MAX_WITH,
    "ELASTICQUOTA_USED_OVER_MIN": ELASTICQUOTA_USED_OVER_MIN,
    "ELASTICQUOTA_NEW_ELASTIC_QUOTA_INFO": ELASTICQUOTA_NEW_ELASTIC_QUOTA_INFO,
    "COSCHEDULING_CORE_PREFILTER": COSCHEDULING_CORE_PREFILTER,
    "COSCHEDULING_CORE_PERMIT": COSCHEDULING_CORE_PERMIT,
    "COSCHEDULING_CORE_CHECK_CLUSTER_RESOURCE": COSCHEDULING_CORE_CHECK_CLUSTER_RESOURCE,
    "COSCHEDULING_CORE_MARK_CLEAR_FAILURE": COSCHEDULING_CORE_MARK_CLEAR_FAILURE,
    "COSCHEDULING_LESS": COSCHEDULING_LESS,
    "COSCHEDULING_PERMIT": COSCHEDULING_PERMIT,
    "COSCHEDULING_POSTFILTER": COSCHEDULING_POSTFILTER,
    "COSCHEDULING_PODGROUP_BACKOFF": COSCHEDULING_PODGROUP_BACKOFF,
    "COSCHEDULING_POSTFILTER_THRESHOLD_UNVERIFIED": COSCHEDULING_POSTFILTER_THRESHOLD_UNVERIFIED,
}
