package laws

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strings"
	"sync"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// Verdicts are the laws' verdicts on refs at their heads, judged by the
// same walk as verify (every chain from its root) and kept by commit, so
// the views mark a head or a store that the laws refuse without judging
// every chain on every call. A verdict is kept with what it leaned on: a
// chain whose judging read the store (a landing) is judged again when the
// store moved, one that read the keys (a gesture) when the keys moved,
// and a chain whose head moved on from a sound head is judged from there.
// The file in the runtime folder is never truth: one that does not read
// is judged afresh.
type Verdicts struct {
	repo *gitstore.Repo
	path string

	mu      sync.Mutex
	store   gitstore.Hash // the heads the kept verdicts were judged under
	keys    gitstore.Hash
	pins    gitstore.Hash
	entries map[string]verdict
	dirty   bool
}

// verdict is one ref's verdict at head.
type verdict struct {
	head  gitstore.Hash
	store bool      // its judging read the store
	keys  bool      // its judging read the keys
	pins  bool      // its judging read the runner pins (a gate's signature)
	fault *RefFault // nil: the laws accept it
}

// VerdictsPath is where the verdicts of the repository whose runtime dir
// is given are kept.
func VerdictsPath(runtimeDir string) string {
	return filepath.Join(runtimeDir, "cache", "verdicts-v2")
}

// OpenVerdicts reads the kept verdicts of repo.
func OpenVerdicts(repo *gitstore.Repo) *Verdicts {
	v := &Verdicts{repo: repo, path: VerdictsPath(repo.RuntimeDir()), entries: map[string]verdict{}}
	v.load()
	return v
}

// Judge returns the laws' verdict on each ref at its head (heads[i] for
// refs[i]; ZeroHash for a ref that does not exist, which is sound), nil
// for a ref the laws accept. Chains not judged before are judged in
// parallel. Save keeps what was judged.
func (v *Verdicts) Judge(refs []string, heads []gitstore.Hash) ([]*RefFault, error) {
	return v.judge(refs, heads, false)
}

// JudgeFresh is Judge without the kept verdicts: every chain judged from
// its root now. A kept verdict sits in the runtime folder, which any
// process of this user may write, so it marks the views and nothing
// more: what a gesture or a landing builds on is judged fresh.
func (v *Verdicts) JudgeFresh(refs []string, heads []gitstore.Hash) ([]*RefFault, error) {
	return v.judge(refs, heads, true)
}

func (v *Verdicts) judge(refs []string, heads []gitstore.Hash, fresh bool) ([]*RefFault, error) {
	storeHead, _, err := v.repo.ReadRef(brain.StoreRef)
	if err != nil {
		return nil, err
	}
	keysHead, _, err := v.repo.ReadRef(brain.KeysRef)
	if err != nil {
		return nil, err
	}
	pinsHead, _, err := v.repo.ReadRef(brain.PinsRef)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	moved := moves{store: storeHead != v.store, keys: keysHead != v.keys, pins: pinsHead != v.pins}
	if moved.store || moved.keys || moved.pins {
		v.store, v.keys, v.pins, v.dirty = storeHead, keysHead, pinsHead, true
	}
	archiveHead, _, err := v.repo.ReadRef(chain.ArchiveRef)
	if err != nil {
		return nil, err
	}
	judge := &Laws{Env: chain.Env{RuntimeDir: v.repo.RuntimeDir()}, Kinds: Shipped(), StoreHead: storeHead, KeysHead: keysHead, ArchiveHead: archiveHead, PinsHead: pinsHead}
	store := brain.NewStoreAt(v.repo, storeHead) // one walk of the store for every landing judged
	out := make([]*RefFault, len(refs))
	jobs := v.planJobs(refs, heads, fresh, moved, out)
	if len(jobs) == 0 {
		return out, nil
	}
	if _, err := judge.Keys(v.repo); err != nil {
		return nil, err
	}
	results := make([]verdict, len(jobs))
	gitstore.Parallel(len(jobs), func(k int) {
		j := jobs[k]
		results[k] = v.judgeOne(judge, store, refs[j.i], heads[j.i], j)
	})
	for k, j := range jobs {
		v.entries[refs[j.i]] = results[k]
		out[j.i] = results[k].fault
	}
	v.dirty = true
	return out, nil
}

// judgeJob is one ref left for judge to judge.
type judgeJob struct {
	i    int
	from gitstore.Hash // a sound head the ref moved on from
	was  verdict
}

// moves says which of the refs that verdicts lean on moved since they
// were kept.
type moves struct{ store, keys, pins bool }

// planJobs sets out[i] to the kept verdict of each ref that has one still
// good, and returns a job for every other ref that exists. A kept verdict
// is good at the same head when nothing its judging read has moved; a
// sound one whose ref moved on lets the job judge from it. v.mu is held.
func (v *Verdicts) planJobs(refs []string, heads []gitstore.Hash, fresh bool, moved moves, out []*RefFault) []judgeJob {
	var jobs []judgeJob
	for i, ref := range refs {
		if heads[i].IsZero() {
			continue
		}
		e, ok := v.entries[ref]
		ok = ok && !fresh
		leaned := (e.store && moved.store) || (e.keys && moved.keys) || (e.pins && moved.pins) // what its judging read has moved
		stale := !ok || e.head != heads[i] || leaned
		if !stale {
			out[i] = e.fault
			continue
		}
		j := judgeJob{i: i}
		if ok && e.fault == nil && e.head != heads[i] && !leaned {
			j.from, j.was = e.head, e
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// judgeOne judges ref at head, from j.from when it names a sound head.
// Each job has its own leaning landings and gestures, so its verdict
// records what this chain's judging read and no other's.
func (v *Verdicts) judgeOne(judge *Laws, store *brain.StoreAt, ref string, head gitstore.Hash, j judgeJob) verdict {
	env := judge.Env
	lean := &leaning{Landings: store}
	lean.Gestures = &leaningGestures{Gestures: judge.gestureJudge(v.repo)}
	gatesLean := &leaningGates{GateProofs: judge.gateJudge(v.repo)}
	env.Landings, env.Gestures, env.Gates = lean, lean.Gestures, gatesLean
	local := &Laws{Env: env, Kinds: judge.Kinds, StoreHead: judge.StoreHead, KeysHead: judge.KeysHead, ArchiveHead: judge.ArchiveHead, PinsHead: judge.PinsHead}
	var f *RefFault
	if !j.from.IsZero() {
		f = local.Check(v.repo, Update{Old: j.from, New: head, Ref: ref})
		if f != nil && f.Code == string(rules.InvalidTransition) && strings.Contains(f.Lesson, "rewrites") {
			f = local.Check(v.repo, Update{New: head, Ref: ref}) // not on from's line: judged whole
		}
	} else {
		f = local.Check(v.repo, Update{New: head, Ref: ref})
	}
	return verdict{head: head, fault: f, store: lean.read() || j.was.store, keys: lean.Gestures.(*leaningGestures).read() || j.was.keys, pins: gatesLean.read() || j.was.pins}
}

// JudgeRefFresh is JudgeFresh of one ref at its head now.
func (v *Verdicts) JudgeRefFresh(ref string) (*RefFault, error) {
	head, _, err := v.repo.ReadRef(ref)
	if err != nil {
		return nil, err
	}
	faults, err := v.JudgeFresh([]string{ref}, []gitstore.Hash{head})
	if err != nil {
		return nil, err
	}
	return faults[0], nil
}

// Save writes the verdicts judged since they were read, if any; a cache
// that cannot be written is skipped.
func (v *Verdicts) Save() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.dirty {
		return
	}
	var buf bytes.Buffer
	buf.WriteString("store " + v.store.String() + " keys " + v.keys.String() + " pins " + v.pins.String() + "\n")
	for ref, e := range v.entries {
		flags := ""
		if e.store {
			flags += "s"
		}
		if e.keys {
			flags += "k"
		}
		if e.pins {
			flags += "p"
		}
		if flags == "" {
			flags = "-"
		}
		line := ref + " " + e.head.String() + " " + flags
		if e.fault != nil {
			commit := e.fault.Commit
			if commit == "" {
				commit = "-"
			}
			line += " " + commit + " " + e.fault.Code + " " + rules.OneLine(e.fault.Lesson)
		}
		buf.WriteString(line + "\n")
	}
	if err := gitstore.WriteFileAtomic(v.path, buf.Bytes(), 0o600); err == nil {
		v.dirty = false
	}
}

// load reads the kept verdicts; a file that does not read is dropped.
func (v *Verdicts) load() {
	f, err := gitstore.OpenRuntime(v.path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	bad := func() {
		v.entries, v.store, v.keys, v.pins = map[string]verdict{}, gitstore.ZeroHash, gitstore.ZeroHash, gitstore.ZeroHash
	}
	if !sc.Scan() {
		return
	}
	head := strings.Fields(sc.Text())
	if len(head) != 6 || head[0] != "store" || head[2] != "keys" || head[4] != "pins" {
		return
	}
	var err1, err2, err3 error
	v.store, err1 = gitstore.ParseHash(head[1])
	v.keys, err2 = gitstore.ParseHash(head[3])
	v.pins, err3 = gitstore.ParseHash(head[5])
	if err1 != nil || err2 != nil || err3 != nil {
		bad()
		return
	}
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 6)
		if len(fields) != 3 && len(fields) != 6 || !strings.HasPrefix(fields[0], "refs/") {
			bad()
			return
		}
		h, err := gitstore.ParseHash(fields[1])
		if err != nil {
			bad()
			return
		}
		e := verdict{head: h, store: strings.Contains(fields[2], "s"), keys: strings.Contains(fields[2], "k"), pins: strings.Contains(fields[2], "p")}
		if len(fields) == 6 {
			e.fault = &RefFault{Ref: fields[0], Commit: fields[3], Code: fields[4], Lesson: fields[5]}
			if e.fault.Commit == "-" {
				e.fault.Commit = ""
			}
		}
		v.entries[fields[0]] = e
	}
	if sc.Err() != nil {
		bad()
	}
}

// leant notes whether a judging read what a wrapper stands before: the
// store, the keys or the runner pins, whose change then reopens the
// verdict.
type leant struct {
	mu  sync.Mutex
	did bool
}

func (l *leant) mark() {
	l.mu.Lock()
	l.did = true
	l.mu.Unlock()
}

func (l *leant) read() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.did
}

// leaning notes whether a judging read the store.
type leaning struct {
	chain.Landings
	Gestures chain.Gestures
	leant
}

func (l *leaning) CheckLanding(claim chain.LandingClaim) error {
	l.mark()
	return l.Landings.CheckLanding(claim)
}

// leaningGestures notes whether a judging read the keys.
type leaningGestures struct {
	chain.Gestures
	leant
}

func (l *leaningGestures) CheckCommit(doc *chain.Doc, gesture string, change []byte) error {
	l.mark()
	return l.Gestures.CheckCommit(doc, gesture, change)
}

// leaningGates notes whether a judging read the runner pins.
type leaningGates struct {
	chain.GateProofs
	leant
}

func (l *leaningGates) CheckGateProof(doc *chain.Doc, letter *chain.Letter) error {
	l.mark()
	return l.GateProofs.CheckGateProof(doc, letter)
}

func (l *leaningGates) CheckLandedGate(mw *chain.Doc, letter *chain.Letter, landed *chain.Doc) error {
	l.mark()
	return l.GateProofs.CheckLandedGate(mw, letter, landed)
}
