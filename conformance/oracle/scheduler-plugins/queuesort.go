package main

import (
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// queuePair is two queued pods a case asks the profile's QueueSort to order: each pod with
// the time it first entered activeQ (Unix milliseconds).
type queuePair struct {
	A        json.RawMessage `json:"a"`
	B        json.RawMessage `json:"b"`
	AInitial int64           `json:"aInitialMs"`
	BInitial int64           `json:"bInitialMs"`
}

// queueSortAnswers is `Less(a, b)` of the profile's QueueSort for each of the case's pairs
// (none: nil).
func queueSortAnswers(f framework.Framework) ([]bool, error) {
	api.mu.Lock()
	pairs := api.pairs
	api.mu.Unlock()
	if len(pairs) == 0 {
		return nil, nil
	}
	less := f.QueueSortFunc()
	queued := func(raw json.RawMessage, ms int64) (*framework.QueuedPodInfo, error) {
		pod := &v1.Pod{}
		if err := json.Unmarshal(raw, pod); err != nil {
			return nil, fmt.Errorf("queued pod: %w", err)
		}
		info, err := framework.NewPodInfo(pod)
		if err != nil {
			return nil, err
		}
		at := time.UnixMilli(ms)
		return &framework.QueuedPodInfo{PodInfo: info, Timestamp: at, InitialAttemptTimestamp: &at}, nil
	}
	out := make([]bool, 0, len(pairs))
	for _, pair := range pairs {
		a, err := queued(pair.A, pair.AInitial)
		if err != nil {
			return nil, err
		}
		b, err := queued(pair.B, pair.BInitial)
		if err != nil {
			return nil, err
		}
		out = append(out, less(a, b))
	}
	return out, nil
}
