package tray

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/loopback"
)

// refPrefix is what the owner watches: every m1nd ref.
const refPrefix = chain.RefRoot

// hub watches refs/m1nd/ and tells every subscriber which refs moved,
// whoever moved them (m1nd, another process, plain git). It stamps the
// ref folders cheaply and lists refs only when the stamp changed, on the
// tick after a change (a second write in the same clock tick leaves the
// stamp as it was) and every few seconds as a safety net. Where the system
// watches folders (inotify) the stamp is taken only when a folder says it
// changed, so an idle tray reads no ref folder at all; elsewhere it is
// taken every tick. It watches only while someone listens: an owner with
// no tab open reads nothing.
type hub struct {
	repo     *gitstore.Repo
	interval time.Duration
	// queue stamps what the landing queue's view leans on beyond the m1nd
	// refs (the branches, runnerd's side records: ops.QueueStamp); a change
	// is told as a queue event. nil: none watched.
	queue func() (gitstore.FolderStamp, error)

	mu   sync.Mutex
	subs map[chan []string]string // the slot group each stream counts in (subscribe)
	stop context.CancelFunc       // the running watcher's, while subs is not empty

	// closed ends every stream: the server is shutting down, and a stream
	// would otherwise hold the stop for as long as its tab stays open.
	closed    chan struct{}
	closeOnce sync.Once
}

func newHub(repo *gitstore.Repo, interval time.Duration, queue func() (gitstore.FolderStamp, error)) *hub {
	return &hub{repo: repo, interval: interval, queue: queue, subs: map[chan []string]string{}, closed: make(chan struct{})}
}

// close ends every stream, now and to come (the browser reconnects to the
// next owner).
func (h *hub) close() {
	h.closeOnce.Do(func() { close(h.closed) })
}

// queueMoved is what a subscriber receives when the queue's view moved
// (a branch, a finding of runnerd's queue) rather than a ref of m1nd's.
var queueMoved = []string{}

// queueStamp is the queue's stamp now ("" when none is watched or it
// cannot be read).
func (h *hub) queueStamp() string {
	if h.queue == nil {
		return ""
	}
	st, err := h.queue()
	if err != nil {
		return ""
	}
	return st.Key
}

// MaxStreams caps the event streams an owner serves at once: each holds a
// connection and a goroutine, and a page needs one.
const MaxStreams = 64

// subscribe returns a channel of moved refs for a stream of group (a
// session, or the streams without one), or false when the group holds
// limit streams already or MaxStreams are served. The first subscriber
// starts the watcher from a listing taken before subscribe returns, so
// whatever moves afterwards is seen.
func (h *hub) subscribe(group string, limit int) (chan []string, bool) {
	ch := make(chan []string, 16)
	h.mu.Lock()
	defer h.mu.Unlock()
	in := 0
	for _, g := range h.subs {
		if g == group {
			in++
		}
	}
	if len(h.subs) >= MaxStreams || in >= limit {
		return nil, false
	}
	h.subs[ch] = group
	if h.stop == nil {
		var ctx context.Context
		ctx, h.stop = context.WithCancel(context.Background())
		began := time.Now()
		last, _ := h.list()
		cost := time.Since(began)
		stamp, _ := h.repo.RefsStamp(refPrefix)
		go h.run(ctx, last, cost, stamp.Key, h.queueStamp())
	}
	return ch, true
}

// unsubscribe drops ch; the last one out stops the watcher.
func (h *hub) unsubscribe(ch chan []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, ch)
	if len(h.subs) == 0 && h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

// run watches until ctx ends, from the listing last, which took listCost.
func (h *hub) run(ctx context.Context, last map[string]gitstore.Hash, listCost time.Duration, stamp, queued string) {
	settle, queueSettle := false, false
	tick := time.NewTicker(h.interval)
	defer tick.Stop()
	lastList := time.Now()
	wake, watched := h.repo.WatchRefs(ctx, refPrefix)
	for {
		woke := false
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case _, open := <-wake:
			woke = true
			if !open { // the watch ended before ctx did: poll
				wake, watched = nil, false
			}
		}
		// The queue's view: told on a change, and once more on the tick
		// after (a second write in the same clock tick leaves the stamp).
		if q := h.queueStamp(); q != queued || queueSettle {
			queueSettle = q != queued
			queued = q
			h.broadcast(queueMoved)
		}
		if watched && !woke && !settle && time.Since(lastList) < safetyEvery(listCost) {
			continue // no folder said it changed
		}
		now, err := h.repo.RefsStamp(refPrefix)
		if err != nil {
			continue
		}
		changed := now.Key != stamp
		if !changed && !settle && time.Since(lastList) < safetyEvery(listCost) {
			continue
		}
		stamp, settle = now.Key, changed
		lastList = time.Now()
		refs, err := h.list()
		listCost = time.Since(lastList)
		if err != nil {
			continue
		}
		if moved := diff(last, refs); len(moved) > 0 {
			h.broadcast(moved)
		}
		last = refs
	}
}

// safetyEvery is how long the watcher goes without listing the refs when
// the stamp says nothing moved: every 5 s, or less often when a listing
// costs more than 1/400 of that time, so a tray left open on a large
// brain spends under a quarter of a percent of a core on the safety net
// (listing 100,000 packed refs takes about 100 ms: one every 40 s).
func safetyEvery(listCost time.Duration) time.Duration {
	return max(5*time.Second, 400*listCost)
}

func (h *hub) list() (map[string]gitstore.Hash, error) {
	refs, err := h.repo.ListRefs(refPrefix)
	if err != nil {
		return nil, err
	}
	m := make(map[string]gitstore.Hash, len(refs))
	for _, r := range refs {
		m[r.Name] = r.Hash
	}
	return m, nil
}

func diff(a, b map[string]gitstore.Hash) []string {
	var moved []string
	for name, h := range b {
		if a[name] != h {
			moved = append(moved, name)
		}
	}
	for name := range a {
		if _, ok := b[name]; !ok {
			moved = append(moved, name)
		}
	}
	sort.Strings(moved)
	return moved
}

func (h *hub) broadcast(moved []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- moved:
		default: // a slow tab misses a beat; its next event makes it refetch anyway
		}
	}
}

// streamSlot is the group a stream counts in and the group's limit, with
// what a full one says. Before the brain's first key every stream shares
// MaxStreams, as the tray always did; from then on the human's session
// holds streams of its own, and the streams without one (another local
// process; a page not logged in, which reads and polls instead) share a
// few, so no flood of them takes the human's live view.
func (s *Server) streamSlot(r *http.Request) (group string, limit int, why string) {
	full := fmt.Sprintf("this owner already serves %d event streams; close a tray tab and reload", MaxStreams)
	keys, keyed, err := s.keyed()
	if err != nil || !keyed {
		return "", MaxStreams, full
	}
	if l := s.live(r, keys); l != nil {
		return "session " + l.id, sessionStreams, fmt.Sprintf("this session holds %d event streams already (or the owner serves %d); close a tray tab and reload", sessionStreams, MaxStreams)
	}
	return "", anonStreams, fmt.Sprintf("%d event streams without a session are served already; log in with the brain's passkey for a live view of your own", anonStreams)
}

// getEvents streams server-sent events: one `refs` event, `data:
// {"refs":[…]}`, per change of refs/m1nd/; a `queue` event when what the
// landing queue's view leans on moved (a branch, a finding of runnerd's
// queue); and a comment every 15 s to keep the line open.
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		loopback.WriteErr(w, loopback.Fail(http.StatusInternalServerError, "internal", "streaming is not supported here"))
		return
	}
	group, limit, why := s.streamSlot(r)
	ch, ok := s.events.subscribe(group, limit)
	if !ok {
		w.Header().Set("Retry-After", "30")
		loopback.WriteErr(w, loopback.Fail(http.StatusServiceUnavailable, "too_many_streams", why))
		return
	}
	defer s.events.unsubscribe(ch)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": m1nd owner events\n\n")
	flusher.Flush()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.events.closed:
			return
		case moved := <-ch:
			if len(moved) == 0 { // queueMoved
				fmt.Fprint(w, "event: queue\ndata: {}\n\n")
			} else {
				data, _ := json.Marshal(map[string][]string{"refs": moved})
				fmt.Fprintf(w, "event: refs\ndata: %s\n\n", data)
			}
			flusher.Flush()
		case <-keepAlive.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			flusher.Flush()
		}
	}
}
