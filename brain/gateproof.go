package brain

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// A runner's merge_wait stands on its signature (DESIGN §10): PinsAt is
// the one judge of it, before it is written and wherever it is read
// (post, the git hooks, a remote's pre-receive, sync both ways, verify,
// the views), against the runner pins a human approved at Head. A
// merge_wait that names a runner stands only
//   - with an attestation by the key pin set vN approved for that runner,
//     over exactly this letter, its pin, commit, tree and gate (N is the
//     version the runner ran under, named in the attestation); and, when
//     that key was retired since, on a commit the retirement anchored
//     (made before it);
//   - or unsigned, on a commit anchored by the first set that approved a
//     key (written before runners signed).
//
// Anything else is refused unproven_gate. A merge_wait that names no
// runner is an agent's claim: it passes here, the views call it a claim,
// and the landed law never lands it as a proven gate.
type PinsAt struct {
	Objects gitstore.Objects
	Head    gitstore.Hash

	mu       sync.Mutex
	loaded   bool
	versions map[int64]*PinSet // every version of the chain at Head
	head     *PinSet
	err      error
	reach    anchorReach
}

// Pins is the pin set at Head (nil: none approved yet).
func (p *PinsAt) Pins() (*PinSet, error) {
	_, head, err := p.load()
	return head, err
}

// load reads every version of the pins chain at Head, once.
func (p *PinsAt) load() (map[int64]*PinSet, *PinSet, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loaded {
		return p.versions, p.head, p.err
	}
	p.loaded = true
	p.versions = map[int64]*PinSet{}
	for h := p.Head; !h.IsZero(); {
		c, err := p.Objects.ReadCommit(h)
		if err != nil {
			p.err = fmt.Errorf("%s at %s: %w", PinsRef, h, err)
			break
		}
		body, err := p.Objects.ReadFileInTree(c.Tree, PinsFile)
		if err != nil {
			p.err = fmt.Errorf("%s at %s: %w", PinsRef, h, err)
			break
		}
		set, err := DecodePinSet(body)
		if err != nil {
			p.err = fmt.Errorf("%s at %s: %w", PinsRef, h, err)
			break
		}
		if p.head == nil {
			p.head = set
		}
		p.versions[set.Version] = set
		if len(c.Parents) == 0 {
			break
		}
		h = c.Parents[0]
	}
	return p.versions, p.head, p.err
}

// CheckGateProof judges the gate of merge_wait letter l, whose commit is
// doc (chain.GateProofs).
func (p *PinsAt) CheckGateProof(doc *chain.Doc, l *chain.Letter) error {
	message := ""
	if doc.Meta != nil {
		message = doc.Meta.Message
	}
	agent, _ := chain.AgentOf(message)
	runner, err := chain.NamedRunner(l, agent)
	if err != nil || runner == "" {
		return err
	}
	att, signed, err := chain.AttestationOf(message)
	if err != nil {
		return err
	}
	versions, head, err := p.load()
	if err != nil {
		return err
	}
	if !signed {
		if ok, err := p.reach.anchored(p.Objects, head.beforeKeys(), doc); err != nil || ok {
			return err
		}
		return rules.Refusef(rules.UnprovenGate, "gate", "this merge_wait names runner %s but carries no signature of it: only runnerd posts a runner's merge_wait, signed with its key; an agent's own merge_wait names no runner (no runner_id, no runnerd emitter, not written as runnerd:…) and is shown as a claim", rules.Echo(runner))
	}
	if err := approvedGate(versions[att.Pins], runner, &att, l); err != nil {
		return err
	}
	st, err := chain.GateStatementOf(l, doc.Body, runner, att.Pins)
	if err != nil {
		return err
	}
	if err := rules.VerifyGate(att, st); err != nil {
		return err
	}
	if retired := head.RetiredKey(runner, att.Key); retired != nil {
		ok, err := p.reach.anchored(p.Objects, retired.Anchors, doc)
		if err != nil || ok {
			return err
		}
		return rules.Refusef(rules.UnprovenGate, "gate", "runner %s's key %s was retired in runner pins v%d: a retired key proves nothing made after its retirement", rules.Echo(runner), rules.RunnerKeyFingerprint(att.Key), retired.RetiredIn)
	}
	return nil
}

// approvedGate refuses a signature set does not approve: runner, its key,
// the pin and the gate command merge_wait letter l names must be the ones
// the pin set the attestation names (set; nil when this brain lacks it)
// approved.
func approvedGate(set *PinSet, runner string, att *rules.Attestation, l *chain.Letter) error {
	if set == nil {
		return rules.Refusef(rules.UnprovenGate, "gate", "runner %s signed under runner pins v%d, which this brain does not hold (sync, then look again)", rules.Echo(runner), att.Pins)
	}
	approved := set.Runner(runner)
	switch {
	case approved == nil:
		return rules.Refusef(rules.UnprovenGate, "gate", "runner pins v%d approve no runner %s: its signature proves nothing", att.Pins, rules.Echo(runner))
	case approved.Key != att.Key:
		return rules.Refusef(rules.UnprovenGate, "gate", "the key that signed (%s) is not the one runner pins v%d approved for runner %s: an unapproved key proves nothing", rules.RunnerKeyFingerprint(att.Key), att.Pins, rules.Echo(runner))
	case l.ReceiptCandidate == nil || approved.Pin != l.ReceiptCandidate.Evidence.PinOf():
		return rules.Refusef(rules.UnprovenGate, "gate", "the pin this merge_wait names is not the one runner pins v%d approved for runner %s", att.Pins, rules.Echo(runner))
	case l.Gate == nil || approved.GateCommand != l.Gate.Command:
		return rules.Refusef(rules.UnprovenGate, "gate", "the gate command this merge_wait names is not runner %s's approved gate", rules.Echo(runner))
	}
	return nil
}

// CheckLandedGate judges the gate a landed letter lands (chain.GateProofs):
// mw's, signed by its runner; a claim or an unsigned runner's merge_wait
// only for a landing anchored before runners signed.
func (p *PinsAt) CheckLandedGate(mw *chain.Doc, l *chain.Letter, landed *chain.Doc) error {
	agent, _ := chain.AgentOf(mw.Meta.Message)
	runner, err := chain.NamedRunner(l, agent)
	if err != nil {
		return err
	}
	_, signed, err := chain.AttestationOf(mw.Meta.Message)
	if err != nil {
		return err
	}
	if runner != "" && signed {
		return p.CheckGateProof(mw, l)
	}
	_, head, err := p.load()
	if err != nil {
		return err
	}
	if ok, err := p.reach.anchored(p.Objects, head.beforeKeys(), landed); err != nil || ok {
		return err
	}
	if runner == "" {
		return rules.Refusef(rules.UnprovenGate, "phase", "%s", chain.ClaimLesson(agent))
	}
	return rules.Refusef(rules.UnprovenGate, "phase", "runner %s's merge_wait carries no signature (it was gated before runners signed): land it with m1nd land or the tray, which first has runnerd run the approved gate on exactly its tree", rules.Echo(runner))
}

// beforeKeys is the set's BeforeKeys, nil for no set.
func (p *PinSet) beforeKeys() Anchors {
	if p == nil {
		return nil
	}
	return p.BeforeKeys
}

// PinsNow is the judge of runners' signatures as the pins stand now.
func (s *Store) PinsNow() (*PinsAt, error) {
	head, _, err := s.Repo.ReadRef(PinsRef)
	if err != nil {
		return nil, err
	}
	return &PinsAt{Objects: s.Repo, Head: head}, nil
}

// CheckGateProof judges a merge_wait's gate against the runner pins as
// they stand now (chain.GateProofs, see PinsAt).
func (s *Store) CheckGateProof(doc *chain.Doc, l *chain.Letter) error {
	p, err := s.PinsNow()
	if err != nil {
		return err
	}
	return p.CheckGateProof(doc, l)
}

// CheckLandedGate judges the gate a landed letter lands against the runner
// pins as they stand now (chain.GateProofs, see PinsAt).
func (s *Store) CheckLandedGate(mw *chain.Doc, l *chain.Letter, landed *chain.Doc) error {
	p, err := s.PinsNow()
	if err != nil {
		return err
	}
	return p.CheckLandedGate(mw, l, landed)
}

// anchorReach answers whether a commit sits at or below an anchor of its
// ref, each anchor's first-parent line walked once (shared by parallel
// judges).
type anchorReach struct {
	mu      sync.Mutex
	reached map[string]map[gitstore.Hash]bool // ref+anchor → the commits at or below it
}

// anchored reports whether doc's commit is the anchor of its ref in
// anchors or one of the anchor's first-parent ancestors. A commit being
// written (zero) is anchored nowhere.
func (r *anchorReach) anchored(objs gitstore.Objects, anchors Anchors, doc *chain.Doc) (bool, error) {
	at, ok := anchors[doc.Ref]
	if !ok || doc.Commit.IsZero() {
		return false, nil
	}
	key := doc.Ref + " " + at
	r.mu.Lock()
	defer r.mu.Unlock()
	reach, ok := r.reached[key]
	if !ok {
		reach = map[gitstore.Hash]bool{}
		for h, err := gitstore.ParseHash(at); err == nil && !h.IsZero(); {
			reach[h] = true
			c, err := objs.ReadCommit(h)
			if err != nil || len(c.Parents) == 0 {
				break // an anchor this side never held anchors nothing here
			}
			h = c.Parents[0]
		}
		if r.reached == nil {
			r.reached = map[string]map[gitstore.Hash]bool{}
		}
		r.reached[key] = reach
	}
	return reach[doc.Commit], nil
}

// gateSigners is what a pin set change anchors: per mission ref, its head
// now, and the runner keys that signed a merge_wait in its chain ("" for
// a runner's merge_wait written before runners signed).
type gateSigners map[string]struct {
	head gitstore.Hash
	keys map[string]bool // runner + " " + key
}

// scanGateSigners reads every mission chain, live or folded, for the
// runner merge_waits it holds and who signed them. A pin set change does
// it once, when it retires a key or approves the first one.
func scanGateSigners(ctx context.Context, repo *gitstore.Repo) (gateSigners, error) {
	heads := map[string]gitstore.Hash{}
	refs, err := repo.ListRefs(chain.MissionRefPrefix)
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		if id := strings.TrimPrefix(r.Name, chain.MissionRefPrefix); chain.ValidMissionID(id) {
			heads[id] = r.Hash
		}
	}
	if err := addFolded(repo, heads, func(chain.Folded) bool { return true }); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(heads))
	for id := range heads {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := gateSigners{}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ref := chain.MissionRefPrefix + id
		keys := map[string]bool{}
		err := chain.Chain{Repo: repo, Kind: chain.MissionKind, Ref: ref}.Walk(heads[id], func(d chain.Doc) error {
			if key, ok := gateSignerOf(d); ok {
				keys[key] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(keys) > 0 {
			out[ref] = struct {
				head gitstore.Hash
				keys map[string]bool
			}{heads[id], keys}
		}
	}
	return out, nil
}

// gateSignerOf says who a mission letter's gate stands on, when it is a
// merge_wait that names a tested tree: runner + " " + key for a runner's
// signed one, "" for a claim or a runner's unsigned one (written before
// runners signed their gates).
func gateSignerOf(d chain.Doc) (string, bool) {
	l, err := chain.DecodeStoredHead(d.Body)
	if err != nil || l.Phase != chain.PhaseMergeWait {
		return "", false
	}
	agent, _ := chain.AgentOf(d.Meta.Message)
	runner, err := chain.NamedRunner(l, agent)
	if err != nil {
		return "", false
	}
	if runner == "" {
		if l.ReceiptCandidate == nil {
			return "", false
		}
		_, tree := l.ReceiptCandidate.Evidence.Tested()
		return "", tree != ""
	}
	att, signed, err := chain.AttestationOf(d.Meta.Message)
	switch {
	case err != nil:
		return "", false
	case signed:
		return runner + " " + att.Key, true
	}
	return "", true
}

// addFolded adds to heads (by mission id) the archived head of each
// mission folded into the archive (chain.ArchiveRef) that keep wants and
// heads does not hold: a folded mission is read as a live one.
func addFolded(repo *gitstore.Repo, heads map[string]gitstore.Hash, keep func(chain.Folded) bool) error {
	archiveHead, _, err := repo.ReadRef(chain.ArchiveRef)
	if err != nil {
		return err
	}
	folded, err := chain.ArchiveIndex(repo, archiveHead)
	if err != nil {
		return err
	}
	for id, m := range folded {
		if _, live := heads[id]; live || !keep(m) {
			continue
		}
		if heads[id], err = gitstore.ParseHash(m.Head); err != nil {
			return err
		}
	}
	return nil
}

// anchorsOf are the heads of the missions whose chains hold a merge_wait
// signed as key says (runner + " " + key; "" for unsigned).
func (g gateSigners) anchorsOf(key string) Anchors {
	out := Anchors{}
	for ref, m := range g {
		if m.keys[key] {
			out[ref] = m.head.String()
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
