package tray

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/ops"
)

// headsMemoPhases caps how many phase filters the memo holds replies for
// (a phase filter comes from the request).
const headsMemoPhases = 16

// headsMemo keeps the encoded heads reply (GET /api/mailbox?kind=mission)
// keyed by the mission refs' folder stamp: the page asks for it on every
// event and every load, and rebuilding it reads every ref and re-encodes
// every letter. Letters are immutable per commit, so an unchanged set of
// ref values is an unchanged reply; a reply is kept only once the refs
// have settled (gitstore.FolderStamp.SettledBefore).
type headsMemo struct {
	mu      sync.Mutex
	key     string
	settled bool
	replies map[string][]byte // phase filter → encoded reply
}

// headsReply answers the mission heads view, from the memo when the refs
// have not moved.
func (s *Server) headsReply(ctx context.Context, phase string) ([]byte, error) {
	start := time.Now()
	stamp, stampErr := s.repo.RefsFolderStamp(chain.MissionRefPrefix)
	if stampErr == nil {
		// Where a waiting mission stands in the queue leans on the
		// branches and on what runnerd's queue recorded.
		queued, err := s.flows.QueueStamp()
		if err != nil {
			return nil, err
		}
		stamp = stamp.Join(queued)
		// The heads carry the laws' verdicts, which lean on the store and
		// the keys (a landing, a gesture): their heads are part of the key.
		for _, ref := range []string{brain.StoreRef, brain.KeysRef} {
			h, _, err := s.repo.ReadRef(ref)
			if err != nil {
				return nil, err
			}
			stamp.Key += h.String() + "\n"
		}
	}
	if stampErr == nil {
		s.heads.mu.Lock()
		reply, ok := s.heads.replies[phase]
		ok = ok && s.heads.settled && s.heads.key == stamp.Key
		s.heads.mu.Unlock()
		if ok {
			return reply, nil
		}
	}
	view, err := s.flows.Heads(ctx, phase, false)
	if err != nil {
		return nil, err
	}
	queue, err := s.flows.Queue(ctx, view.Missions)
	if err != nil {
		return nil, err
	}
	queued, err := json.Marshal(queue)
	if err != nil {
		return nil, err
	}
	titles, err := s.flows.Titles(view.Missions)
	if err != nil {
		return nil, err
	}
	titled, err := json.Marshal(titles)
	if err != nil {
		return nil, err
	}
	reply := append(view.AppendJSON([]byte{'{'}), `,"landing_bell":`...)
	reply = strconv.AppendInt(reply, int64(ops.ReadyBell(view.Missions, queue)), 10)
	reply = append(append(reply, `,"queue":`...), queued...)
	reply = append(append(append(reply, `,"titles":`...), titled...), "}\n"...)
	if stampErr == nil {
		s.heads.mu.Lock()
		if s.heads.key != stamp.Key || s.heads.replies == nil {
			s.heads.key = stamp.Key
			s.heads.settled = stamp.SettledBefore(start)
			s.heads.replies = map[string][]byte{}
		}
		if s.heads.settled && len(s.heads.replies) < headsMemoPhases {
			s.heads.replies[phase] = reply
		}
		s.heads.mu.Unlock()
	}
	return reply, nil
}
