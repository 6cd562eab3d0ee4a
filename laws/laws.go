package laws

import (
	"fmt"
	"strings"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/memory"
)

// Objects reads what the ref laws look at: a gitstore.Repo (m1nd verify)
// or a gitstore.CatFile (a git hook, whose pushed objects wait in git's
// quarantine).
type Objects interface {
	ReadCommit(h gitstore.Hash) (*gitstore.Commit, error)
	ReadFileInTree(tree gitstore.Hash, name string) ([]byte, error)
	TreeEntries(tree gitstore.Hash) ([]gitstore.TreeEntry, error)
	ReadBlob(h gitstore.Hash) ([]byte, error)
}

// Update is one ref moving from Old to New (ZeroHash for none).
type Update struct {
	Old, New gitstore.Hash
	Ref      string
}

// Kinds of m1nd ref, by what their commits hold.
const (
	kindMission = "mission"
	kindStore   = "store"
	kindMail    = "mail"
	kindMemory  = "memory"
	kindAtlas   = "atlas"
	kindOther   = "other" // conflicts and refs of later issues: not judged here
)

func kindOf(ref string) string {
	switch {
	case strings.HasPrefix(ref, chain.MissionRefPrefix):
		return kindMission
	case ref == brain.StoreRef:
		return kindStore
	case strings.HasPrefix(ref, mailbox.RefPrefix):
		return kindMail
	case strings.HasPrefix(ref, memory.RefPrefix):
		return kindMemory
	case strings.HasPrefix(ref, memory.AtlasPrefix):
		return kindAtlas
	}
	return kindOther
}

// RefFault is a ref law broken at one commit.
type RefFault struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit,omitempty"`
	Code   string `json:"refused"`
	Lesson string `json:"lesson"`
}

func (f *RefFault) Error() string {
	at := ""
	if f.Commit != "" {
		at = " at " + f.Commit[:12]
	}
	return fmt.Sprintf("%s%s: %s: %s", f.Ref, at, f.Code, f.Lesson)
}

func fault(u Update, commit gitstore.Hash, code gates.Code, format string, args ...any) *RefFault {
	f := &RefFault{Ref: u.Ref, Code: string(code), Lesson: fmt.Sprintf(format, args...)}
	if !commit.IsZero() {
		f.Commit = commit.String()
	}
	return f
}

// CheckUpdate applies the laws of m1nd history to one raw ref update:
// chains are append-only (no deletion of a mission, store, memory or
// atlas ref; no rewrite), and every new commit must be a valid link of its
// chain. packing says whether a deletion is `git pack-refs` removing the
// loose copy of a ref that lives on in packed-refs — no deletion at all.
func CheckUpdate(objs Objects, u Update, packing func(Update) bool) *RefFault {
	return Laws{Packing: packing}.Check(objs, u)
}

// Laws are the ref laws with what this machine knows: which deletions are
// pack-refs at work, and the agent keys that prove shared documents'
// publishers (a proof is checked where its publisher's key is present).
type Laws struct {
	Packing func(Update) bool
	Keys    *memory.Keys
}

// Check applies the laws to one update (see CheckUpdate).
func (laws Laws) Check(objs Objects, u Update) *RefFault {
	packing := laws.Packing
	if packing == nil {
		packing = noPacked
	}
	kind := kindOf(u.Ref)
	if kind == kindOther || (u.Old == u.New && !u.New.IsZero()) {
		return nil
	}
	if u.New.IsZero() {
		if packing(u) || kind == kindMail {
			return nil
		}
		return fault(u, gitstore.ZeroHash, gates.InvalidTransition, "m1nd history is append-only: deleting %s would bury its letters", u.Ref)
	}
	fresh, f := newCommits(objs, u)
	if f != nil || len(fresh) == 0 {
		return f
	}
	// Oldest first, each against the document before it, which is read
	// once: the old head's for the first new commit, then each new one's as
	// it was checked.
	var prev *checked
	if len(fresh[0].commit.Parents) == 1 {
		if prev, f = readPrevious(objs, u, kind, fresh[0]); f != nil {
			return f
		}
	}
	for _, l := range fresh {
		if prev, f = laws.checkLink(objs, u, kind, l, prev); f != nil {
			return f
		}
	}
	return nil
}

// link is one commit of a chain, read once.
type link struct {
	hash   gitstore.Hash
	commit *gitstore.Commit
}

// checked is what a checked commit hands to the next one: its document,
// decoded once. nil before a chain's first commit.
type checked struct {
	letter   *chain.Letter // a mission commit's letter and its id
	letterID string
	version  int64       // a store commit's store_version
	doc      *memory.Doc // an atlas commit's document
}

// newCommits reads the commits from New back to (not including) Old along
// first parents and returns them oldest first; Old must be on that line,
// or the update rewrites history.
func newCommits(objs Objects, u Update) ([]link, *RefFault) {
	var out []link
	rewrite := !u.Old.IsZero()
	for h := u.New; !h.IsZero(); {
		if h == u.Old {
			rewrite = false
			break
		}
		c, err := objs.ReadCommit(h)
		if err != nil {
			return nil, fault(u, h, gates.InvalidLetter, "the commit cannot be read: %v", err)
		}
		if len(c.Parents) > 1 {
			return nil, fault(u, h, gates.InvalidLetter, "an m1nd chain has one parent per commit; this one has %d", len(c.Parents))
		}
		out = append(out, link{hash: h, commit: c})
		if len(out) > 1_000_000 {
			return nil, fault(u, h, gates.InvalidLetter, "the chain is too long to check")
		}
		if len(c.Parents) == 0 {
			break
		}
		h = c.Parents[0]
	}
	if rewrite {
		return nil, fault(u, u.New, gates.InvalidTransition, "this update rewrites %s: m1nd history only grows (the old head is not an ancestor of the new one)", u.Ref)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// readPrevious decodes the document of first's parent, the head the new
// commits extend, for the kinds whose links look back. It was judged when
// it was written, so it is read, not judged again.
func readPrevious(objs Objects, u Update, kind string, first link) (*checked, *RefFault) {
	if kind != kindMission && kind != kindStore && kind != kindAtlas {
		return nil, nil // mail and memory links stand alone
	}
	h := first.hash
	parent, err := objs.ReadCommit(first.commit.Parents[0])
	if err != nil {
		return nil, fault(u, h, gates.InvalidLetter, "the parent commit cannot be read: %v", err)
	}
	switch kind {
	case kindMission:
		body, err := objs.ReadFileInTree(parent.Tree, chain.LetterFile)
		if err != nil {
			return nil, fault(u, h, gates.InvalidLetter, "the previous commit holds no letter")
		}
		l, err := chain.DecodeLetter(body)
		if err != nil {
			return nil, fault(u, h, gates.InvalidLetter, "the previous letter does not decode")
		}
		return &checked{letter: l, letterID: chain.LetterID(body)}, nil
	case kindStore:
		snap, err := storeAt(objs, parent)
		if err != nil {
			return nil, fault(u, h, gates.SchemaMismatch, "the previous store commit does not read: %v", err)
		}
		return &checked{version: snap.StoreVersion}, nil
	default: // atlas
		body, err := objs.ReadFileInTree(parent.Tree, memory.AtlasFile)
		var d *memory.Doc
		if err == nil {
			d, err = memory.DecodeDoc(body)
		}
		if err != nil {
			return nil, fault(u, h, gates.InvalidLetter, "the previous version does not read")
		}
		return &checked{doc: d}, nil
	}
}

// checkLink checks one new commit of a chain against the document before
// it (prev, nil for a chain's first commit) and returns its own.
func (laws Laws) checkLink(objs Objects, u Update, kind string, l link, prev *checked) (*checked, *RefFault) {
	switch kind {
	case kindMission:
		return checkLetterLink(objs, u, l, prev)
	case kindStore:
		return checkStoreLink(objs, u, l, prev)
	case kindMail:
		return nil, checkMailLink(objs, u, l)
	case kindMemory:
		return nil, checkMemoryLink(objs, u, l)
	case kindAtlas:
		return laws.checkDocLink(objs, u, l, prev)
	}
	return nil, nil
}

func (laws Laws) checkDocLink(objs Objects, u Update, l link, prev *checked) (*checked, *RefFault) {
	h := l.hash
	d, _, f := atlasDoc.read(objs, u, h, l.commit)
	if f != nil {
		return nil, f
	}
	if memory.DocRef(d.DocID) != u.Ref {
		return nil, fault(u, h, gates.InvalidLetter, "%s does not hold this ref's document", memory.AtlasFile)
	}
	want := int64(1)
	if prev != nil {
		if prev.doc.Publisher != d.Publisher {
			return nil, fault(u, h, gates.NotPublisher, "%s was published by %s; a version by %s is refused", d.DocID, prev.doc.Publisher, gates.Echo(d.Publisher))
		}
		want = prev.doc.Version + 1
	}
	if d.Version != want {
		return nil, fault(u, h, gates.InvalidLetter, "each version adds 1: this one says %d, want %d", d.Version, want)
	}
	if laws.Keys != nil {
		if proof, err := laws.Keys.CheckProof(d); err == nil && proof == memory.ProofBad {
			return nil, fault(u, h, gates.BadPublisherProof, "the proof of %s v%d does not verify with %s's key", d.DocID, d.Version, d.Publisher)
		}
	}
	return &checked{doc: d}, nil
}

// onlyFile reads the document of a one-document commit (a letter, mail, a
// memory, a shared document): its tree holds exactly name, a plain file,
// and nothing else (DESIGN §4; chain.Append writes no other tree).
func onlyFile(objs Objects, c *gitstore.Commit, name string) ([]byte, error) {
	entries, err := objs.TreeEntries(c.Tree)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Name != name || (e.Mode != "100644" && e.Mode != "100755") {
			continue
		}
		if len(entries) > 1 {
			return nil, fmt.Errorf("the tree holds %d entries, not %s alone", len(entries), name)
		}
		return objs.ReadBlob(e.Hash)
	}
	return nil, gitstore.ErrNoSuchFile
}

// asFault is the fault at commit h for an error of a document check: a
// refusal keeps its code and lesson, anything else is invalid_letter.
func asFault(u Update, h gitstore.Hash, err error) *RefFault {
	if err == nil {
		return nil
	}
	if r, ok := gates.AsRefusal(err); ok {
		return fault(u, h, r.Code, "%s", r.Lesson)
	}
	return fault(u, h, gates.InvalidLetter, "%v", err)
}

// document is a kind of one-document commit: its tree holds file, which
// decodes and validates, in the canonical bytes that the document's id is
// the sha256 of.
type document[D any] struct {
	what     string // "a mission commit", for lessons
	file     string
	decode   func([]byte) (D, error)
	validate func(D) error // nil: decoding is the whole check
}

var (
	letterDoc = document[*chain.Letter]{"a mission commit", chain.LetterFile, chain.DecodeLetter, chain.Validate}
	mailDoc   = document[*mailbox.Letter]{"a mail commit", mailbox.File, mailbox.Decode, mailbox.Validate}
	memoryDoc = document[*memory.Event]{"a memory commit", memory.File, memory.Decode, memory.Validate}
	atlasDoc  = document[*memory.Doc]{"an atlas commit", memory.AtlasFile, memory.DecodeDoc, nil}
)

// read checks commit c's document and returns it with its bytes.
func (d document[D]) read(objs Objects, u Update, h gitstore.Hash, c *gitstore.Commit) (D, []byte, *RefFault) {
	var none D
	body, err := onlyFile(objs, c, d.file)
	if err != nil {
		return none, nil, fault(u, h, gates.InvalidLetter, "%s holds %s: %v", d.what, d.file, err)
	}
	doc, err := d.decode(body)
	if err == nil && d.validate != nil {
		err = d.validate(doc)
	}
	if err == nil { // a letter decodes from any spacing; every document is stored canonical
		err = chain.CheckCanonical(body, doc, d.file)
	}
	if f := asFault(u, h, err); f != nil {
		return none, nil, f
	}
	return doc, body, nil
}

func checkLetterLink(objs Objects, u Update, lk link, prev *checked) (*checked, *RefFault) {
	h := lk.hash
	l, body, f := letterDoc.read(objs, u, h, lk.commit)
	if f != nil {
		return nil, f
	}
	id := strings.TrimPrefix(u.Ref, chain.MissionRefPrefix)
	if l.MissionID != id {
		return nil, fault(u, h, gates.InvalidLetter, "the letter belongs to %s, not %s", gates.Echo(l.MissionID), id)
	}
	var head *chain.Letter
	headID := ""
	if prev != nil {
		head, headID = prev.letter, prev.letterID
	}
	// The post laws of chain, steps 6 and 7, on the letter before.
	for _, err := range []error{chain.CheckExtends(l, head, headID), chain.CheckTransition(l, head)} {
		if f := asFault(u, h, err); f != nil {
			return nil, f
		}
	}
	if l.Phase == chain.PhaseArchived && !hasTrailer(lk.commit.Message, "M1nd-Origin", gates.OriginHumanUI) {
		return nil, fault(u, h, gates.HumanGestureRequired, "an archived letter is a human gesture: its commit carries M1nd-Origin: human-ui (the tray or m1nd mission archive makes it)")
	}
	return &checked{letter: l, letterID: chain.LetterID(body)}, nil
}

func hasTrailer(message, key, value string) bool {
	for _, line := range strings.Split(message, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), key) && strings.TrimSpace(v) == value {
			return true
		}
	}
	return false
}

// storeAt decodes store.json of a store commit.
func storeAt(objs Objects, c *gitstore.Commit) (*brain.Snapshot, error) {
	body, err := objs.ReadFileInTree(c.Tree, brain.StoreFile)
	if err != nil {
		return nil, err
	}
	return brain.DecodeStoreDoc(body)
}

func checkStoreLink(objs Objects, u Update, l link, prev *checked) (*checked, *RefFault) {
	snap, err := storeAt(objs, l.commit)
	if err != nil {
		return nil, fault(u, l.hash, gates.SchemaMismatch, "a store commit holds %s of %s: %v", brain.StoreFile, brain.StoreSchema, err)
	}
	want := int64(1)
	if prev != nil {
		want = prev.version + 1
	}
	if snap.StoreVersion != want {
		return nil, fault(u, l.hash, gates.StoreVersionConflict, "each store commit adds exactly 1 to store_version: this one says %d, want %d", snap.StoreVersion, want)
	}
	return &checked{version: snap.StoreVersion}, nil
}

func checkMailLink(objs Objects, u Update, lk link) *RefFault {
	l, _, f := mailDoc.read(objs, u, lk.hash, lk.commit)
	if f != nil {
		return f
	}
	if want, err := mailbox.Ref(l.To, l.Agent); err != nil || want != u.Ref {
		return fault(u, lk.hash, gates.InvalidLetter, "a letter from %s to %s belongs on %s", l.Agent, l.To, want)
	}
	return nil
}

func checkMemoryLink(objs Objects, u Update, lk link) *RefFault {
	e, _, f := memoryDoc.read(objs, u, lk.hash, lk.commit)
	if f != nil {
		return f
	}
	if want, err := memory.Ref(e.Agent); err != nil || want != u.Ref {
		return fault(u, lk.hash, gates.InvalidLetter, "a memory of %s belongs on %s", e.Agent, want)
	}
	return nil
}

// Verify checks every chain under refs/m1nd/ from its root, as the hooks
// would have checked each update. It returns the faults found.
func Verify(repo *gitstore.Repo) ([]*RefFault, int, error) {
	refs, symbolic, err := repo.ListRefsAndSymbolic("refs/m1nd/")
	if err != nil {
		return nil, 0, err
	}
	var faults []*RefFault
	for _, name := range symbolic {
		faults = append(faults, &RefFault{Ref: name, Code: string(gates.InvalidLetter), Lesson: "a symbolic ref (git symbolic-ref made it): m1nd refs hold commits; point it back at its chain with git update-ref --no-deref"})
	}
	checked := len(symbolic)
	laws := Laws{Keys: &memory.Keys{Dir: memory.KeysDir(repo.RuntimeDir())}}
	for _, r := range refs {
		if kindOf(r.Name) == kindOther {
			continue
		}
		checked++
		if kindOf(r.Name) == kindMission && !chain.ValidMissionID(strings.TrimPrefix(r.Name, chain.MissionRefPrefix)) {
			faults = append(faults, &RefFault{Ref: r.Name, Code: string(gates.InvalidLetter), Lesson: "not a mission id"})
			continue
		}
		if f := laws.Check(repo, Update{New: r.Hash, Ref: r.Name}); f != nil {
			faults = append(faults, f)
		}
	}
	return faults, checked, nil
}

func noPacked(Update) bool { return false }
