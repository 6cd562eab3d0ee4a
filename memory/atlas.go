package memory

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// AtlasPrefix is where shared documents live, one ref each.
const AtlasPrefix = chain.RefRoot + "atlas/"

// AtlasFile is the one file in an atlas commit's tree.
const AtlasFile = "doc.json"

// DocKinds are the kinds of shared document.
var DocKinds = []string{"plan", "part", "agreement", "open_item", "idea"}

// A shared document's states.
const (
	DocOpen     = "open"
	DocResolved = "resolved"
)

// Doc is one version of a shared document. Proof is the publisher's
// HMAC-SHA256, with their agent key, over the canonical bytes of the
// document without the proof: the publisher is proven, not declared.
type Doc struct {
	DocID     string `json:"doc_id"`
	Version   int64  `json:"version"`
	Kind      string `json:"kind"`
	Publisher string `json:"publisher"`
	State     string `json:"state"` // open | resolved
	Text      string `json:"text"`
	TS        string `json:"ts"`
	Proof     string `json:"proof,omitempty"`
}

// Canonical returns the document's canonical bytes, proof included: what
// its commit's doc.json holds.
func (d *Doc) Canonical() []byte { return d.canonical(true) }

func (d *Doc) canonical(withProof bool) []byte {
	c := *d
	if !withProof {
		c.Proof = ""
	}
	return chain.CanonicalJSON(&c)
}

// Keys are agent keys in the runtime dir: never a ref, never pushed.
type Keys struct {
	Dir string // <runtime>/keys
}

// KeysDir is where agent keys live in a runtime dir.
func KeysDir(runtimeDir string) string { return filepath.Join(runtimeDir, "keys") }

func (k Keys) path(agent string) (string, error) {
	name, err := chain.AgentRefName(agent)
	if err != nil {
		return "", err
	}
	return filepath.Join(k.Dir, name+".key"), nil
}

// Create writes a new key for agent (32 random bytes as hex, mode 0600).
// An existing key is never replaced.
func (k Keys) Create(agent string) (string, error) {
	path, err := k.path(agent)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(k.Dir, 0o700); err != nil {
		return "", err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("%s already has a key (%s); m1nd never replaces one", agent, path)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.WriteString(hex.EncodeToString(b[:]) + "\n"); err != nil {
		return "", err
	}
	return path, nil
}

// Load reads agent's key; ok is false when this machine has none.
func (k Keys) Load(agent string) ([]byte, bool, error) {
	path, err := k.path(agent)
	if err != nil {
		return nil, false, err
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return nil, false, fmt.Errorf("%s must be a plain file of mode 0600", path)
	}
	data, err := gitstore.ReadRuntime(path, 64<<10)
	if err != nil {
		return nil, false, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != 32 {
		return nil, false, fmt.Errorf("%s is malformed", path)
	}
	return key, true, nil
}

func prove(key []byte, d *Doc) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(d.canonical(false))
	return hex.EncodeToString(mac.Sum(nil))
}

// Proof is what a document's proof says here.
const (
	ProofVerified = "verified"
	ProofBad      = "bad"
	ProofUnknown  = "unknown" // the publisher's key is not on this machine
)

// CheckProof verifies a document's proof with its publisher's key, when
// this machine has it.
func (k Keys) CheckProof(d *Doc) (string, error) {
	key, ok, err := k.Load(d.Publisher)
	if err != nil || !ok {
		return ProofUnknown, err
	}
	if hmac.Equal([]byte(prove(key, d)), []byte(d.Proof)) {
		return ProofVerified, nil
	}
	return ProofBad, nil
}

// Atlas is a brain's shared documents.
type Atlas struct {
	Repo *gitstore.Repo
	Keys Keys
}

// DocRef names a document's ref.
func DocRef(id string) string { return AtlasPrefix + id }

// ValidDocID reports "atl_" followed by 12 lowercase hex digits.
func ValidDocID(id string) bool {
	rest, ok := strings.CutPrefix(id, "atl_")
	return ok && chain.ValidLetterID(rest)
}

// Read returns a document's newest version.
func (a *Atlas) Read(id string) (*Doc, gitstore.Hash, error) {
	if !ValidDocID(id) {
		return nil, gitstore.ZeroHash, invalid("doc_id", "a document id is atl_ and 12 hex digits")
	}
	head, ok, err := chain.Chain{Repo: a.Repo, Kind: AtlasKind, Ref: DocRef(id)}.Head()
	if err != nil {
		return nil, gitstore.ZeroHash, err
	}
	if !ok {
		return nil, gitstore.ZeroHash, invalid("doc_id", "no shared document %s", id)
	}
	d, err := DecodeDoc(head.Body)
	return d, head.Commit, err
}

// DecodeDoc parses a stored document: its canonical bytes (the proof
// covers them) and nothing else.
func DecodeDoc(data []byte) (*Doc, error) { return chain.DecodeAs[Doc](data, AtlasFile) }

func checkDoc(d *Doc) error {
	if !oneOf(d.Kind, DocKinds) {
		return invalid("kind", "kind is one of %s", strings.Join(DocKinds, ", "))
	}
	if strings.TrimSpace(d.Text) == "" || len(d.Text) > MaxText || rules.HasUnsafeText(d.Text) {
		return invalid("text", "a document's text is 1 to %d bytes of plain text", MaxText)
	}
	if !rules.ValidDocTime(d.TS) {
		return invalid("ts", "ts is an RFC 3339 timestamp, 1970 or later")
	}
	return nil
}

// Publish writes version 1 of a new document, proven with the publisher's key.
func (a *Atlas) Publish(ctx context.Context, publisher, kind, text string, now time.Time) (*Doc, error) {
	key, ok, err := a.Keys.Load(publisher)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, rules.Refusef(rules.BadPublisherProof, "publisher", "%s has no agent key on this machine: m1nd agent key create %s", publisher, publisher)
	}
	var idBytes [6]byte
	rand.Read(idBytes[:])
	d := &Doc{DocID: "atl_" + hex.EncodeToString(idBytes[:]), Version: 1, Kind: kind, Publisher: publisher, State: DocOpen, Text: text, TS: chain.Timestamp(now)}
	if err := checkDoc(d); err != nil {
		return nil, err
	}
	d.Proof = prove(key, d)
	return d, a.write(ctx, gitstore.ZeroHash, d)
}

// Amend writes the next version of a document (new text, or resolved).
// Only its publisher may, proven by their key; a document whose current
// proof does not verify is refused rather than built upon.
func (a *Atlas) Amend(ctx context.Context, agent, id, text string, resolve bool, now time.Time) (*Doc, error) {
	cur, head, err := a.Read(id)
	if err != nil {
		return nil, err
	}
	if agent != cur.Publisher {
		return nil, rules.Refusef(rules.NotPublisher, "publisher", "%s was published by %s; only they amend or resolve it", id, cur.Publisher)
	}
	key, ok, err := a.Keys.Load(agent)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, rules.Refusef(rules.BadPublisherProof, "publisher", "%s has no agent key on this machine to prove the amendment", agent)
	}
	if !hmac.Equal([]byte(prove(key, cur)), []byte(cur.Proof)) {
		return nil, rules.Refusef(rules.BadPublisherProof, "proof", "the current version of %s does not carry %s's proof; it was not written by its publisher", id, agent)
	}
	next := *cur
	next.Version++
	next.TS = chain.Timestamp(now)
	if text != "" {
		next.Text = text
	}
	if resolve {
		next.State = DocResolved
	}
	if err := checkDoc(&next); err != nil {
		return nil, err
	}
	next.Proof = prove(key, &next)
	return &next, a.write(ctx, head, &next)
}

func (a *Atlas) write(ctx context.Context, parent gitstore.Hash, d *Doc) error {
	when, _ := time.Parse(time.RFC3339, d.TS)
	_, err := chain.Chain{Repo: a.Repo, Kind: AtlasKind, Ref: DocRef(d.DocID)}.Append(ctx, parent, d.Canonical(), chain.Commit{
		Agent: d.Publisher,
		When:  when,
		Doc:   d,
	})
	if errors.Is(err, chain.ErrLostRace) {
		return rules.Refusef(rules.StaleHead, "doc_id", "%s moved while this version was written; read it again", d.DocID)
	}
	return err
}

// List returns every document's newest version.
func (a *Atlas) List() ([]*Doc, error) {
	refs, err := a.Repo.ListRefs(AtlasPrefix)
	if err != nil {
		return nil, err
	}
	var out []*Doc
	for _, r := range refs {
		if d, _, err := a.Read(strings.TrimPrefix(r.Name, AtlasPrefix)); err == nil {
			out = append(out, d)
		}
	}
	return out, nil
}
