package mailbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
)

// An agent's delivery records — its cursor and its letters in flight —
// live in a folder of its own, <runtime>/agents/<agent>/, and nowhere
// else: so that runnerd can let a contained agent write its own records
// and no one else's (a folder is what the kernel's sandbox grants), and
// so that what is whose is plain to an operator reading the folder. They
// are caches of what the mail refs hold, never truth: an in-flight entry
// is read again from the commit it names, and one that no mail ref for
// the agent holds is dropped and reported (CheckRecords lists it for
// verify).

// AgentsFolder is the runtime folder's folder of per-agent folders.
const AgentsFolder = "agents"

// The records in an agent's folder.
const (
	cursorFile   = "cursor.json"
	inflightFile = "inflight.json"
	notedFile    = "noted.json" // the letters an MCP server told the agent of (Unnoted)
)

// AgentDir is agent's own folder in runtimeDir: its delivery cursor and
// its letters in flight.
func AgentDir(runtimeDir, agent string) (string, error) {
	name, err := chain.AgentRefName(agent)
	if err != nil {
		return "", err
	}
	return filepath.Join(runtimeDir, AgentsFolder, name), nil
}

// agentFile is one of agent's records; legacy is where releases before
// the per-agent folders kept it (mail/<folder>/<agent>.json), read while
// the new one is missing and removed when the new one is written; "" for
// a record those releases did not keep.
func agentFile(repo *gitstore.Repo, file, agent string) (path, legacy string, err error) {
	dir, err := AgentDir(repo.RuntimeDir(), agent)
	if err != nil {
		return "", "", err
	}
	folder := map[string]string{cursorFile: "cursors", inflightFile: "inflight"}[file]
	if folder == "" {
		return filepath.Join(dir, file), "", nil
	}
	return filepath.Join(dir, file), filepath.Join(repo.RuntimeDir(), "mail", folder, filepath.Base(dir)+".json"), nil
}

// readAgentJSON reads agent's record file into v; a missing record leaves
// v as it is. what names the record in errors, remedy what to do with a
// damaged one.
func readAgentJSON(repo *gitstore.Repo, file, agent, what, remedy string, v any) error {
	path, legacy, err := agentFile(repo, file, agent)
	if err != nil {
		return err
	}
	data, err := gitstore.ReadRuntime(path, 64<<20)
	if errors.Is(err, fs.ErrNotExist) && legacy != "" {
		path = legacy
		data, err = gitstore.ReadRuntime(path, 64<<20)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %s is damaged (%s): %w", what, path, remedy, err)
	}
	return nil
}

// writeAgentJSON replaces agent's record file with data (nil: removes it),
// and the release-before's copy with it.
func writeAgentJSON(repo *gitstore.Repo, file, agent string, data []byte) error {
	path, legacy, err := agentFile(repo, file, agent)
	if err != nil {
		return err
	}
	if data == nil {
		err = os.Remove(path)
	} else {
		err = gitstore.WriteFileAtomic(path, data, 0o600) // it makes the folder too
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if legacy == "" {
		return nil
	}
	if err := os.Remove(legacy); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// recordAgents lists the agents that have a record file, in their folder
// or where releases before kept it, sorted.
func recordAgents(repo *gitstore.Repo, file string) ([]string, error) {
	folder := map[string]string{cursorFile: "cursors", inflightFile: "inflight"}[file]
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		agent, err := chain.AgentFromRefName(name)
		if err == nil && !seen[agent] {
			seen[agent] = true
			out = append(out, agent)
		}
	}
	entries, err := os.ReadDir(filepath.Join(repo.RuntimeDir(), AgentsFolder))
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return nil, err // not a folder: CheckRecords reports it
	}
	for _, e := range entries {
		if _, err := os.Lstat(filepath.Join(repo.RuntimeDir(), AgentsFolder, e.Name(), file)); err == nil {
			add(e.Name())
		}
	}
	legacy, err := filepath.Glob(filepath.Join(repo.RuntimeDir(), "mail", folder, "*.json"))
	if err != nil {
		return nil, err
	}
	for _, p := range legacy {
		add(strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	sort.Strings(out)
	return out, nil
}

// Dropped is an entry of an agent's in-flight record that no mail ref for
// the agent holds: forged, or left by a ref rewritten since. It is never
// delivered; the hook reports it and verify lists it.
type Dropped struct {
	Agent  string `json:"agent"`
	Commit string `json:"commit"`
	Ref    string `json:"ref,omitempty"`
	Why    string `json:"why"`
}

// refChains remembers, per mail ref, the commits on its chain: one walk
// per ref per check.
type refChains struct {
	repo  *gitstore.Repo
	heads map[string]map[gitstore.Hash]chain.Doc
}

// doc is the document of commit h on ref's chain as the ref holds it now,
// ok false when the ref does not hold h.
func (rc *refChains) doc(ref string, h gitstore.Hash) (chain.Doc, bool, error) {
	if rc.heads == nil {
		rc.heads = map[string]map[gitstore.Hash]chain.Doc{}
	}
	on, ok := rc.heads[ref]
	if !ok {
		on = map[gitstore.Hash]chain.Doc{}
		head, has, err := rc.repo.ReadRef(ref)
		if err != nil {
			return chain.Doc{}, false, err
		}
		if has {
			docs, err := letters(rc.repo, ref, head)
			if err != nil {
				return chain.Doc{}, false, err
			}
			for _, d := range docs {
				on[d.Commit] = d
			}
		}
		rc.heads[ref] = on
	}
	d, ok := on[h]
	return d, ok, nil
}

// checkEntry reads f's letter again from the commit it names, as the mail
// ref addressed to agent holds it; why says what is wrong when it does
// not ("" when f now carries what the ref holds).
func (rc *refChains) checkEntry(agent string, f *InFlight) (why string, err error) {
	h, perr := gitstore.ParseHash(f.Commit)
	switch {
	case perr != nil:
		return "names no commit", nil
	case !addressedTo(f.Ref, agent):
		return fmt.Sprintf("names %s, which is no mail ref addressed to %s", clipRef(f.Ref), agent), nil
	}
	d, ok, err := rc.doc(f.Ref, h)
	if err != nil || !ok {
		return fmt.Sprintf("names commit %.12s, which %s does not hold", f.Commit, f.Ref), err
	}
	l, derr := Decode(d.Body)
	if derr != nil {
		return fmt.Sprintf("names commit %.12s of %s, whose letter does not read", f.Commit, f.Ref), nil
	}
	f.Stored = Stored{ID: d.ID, Letter: l, Ref: f.Ref, Commit: h}
	return "", nil
}

// clipRef is a ref name as a lesson may quote it.
func clipRef(ref string) string {
	if len(ref) > 120 {
		ref = ref[:120] + "…"
	}
	return fmt.Sprintf("%q", ref)
}

// verify replaces each entry's letter with the one its commit holds on
// the mail ref it names, and drops (returning) every entry no mail ref
// for agent holds: a hook injects only what a ref holds.
func (in *inflight) verify(repo *gitstore.Repo, agent string) ([]Dropped, error) {
	rc := &refChains{repo: repo}
	var dropped []Dropped
	seen := map[string]bool{}
	keep := func(list []InFlight) ([]InFlight, error) {
		kept := list[:0]
		for _, f := range list {
			why, err := rc.checkEntry(agent, &f)
			if err != nil {
				return nil, err
			}
			if why == "" && seen[f.Commit] {
				why = fmt.Sprintf("names commit %.12s of %s a second time", f.Commit, f.Ref)
			}
			seen[f.Commit] = true
			if why != "" {
				dropped = append(dropped, Dropped{Agent: agent, Commit: f.Commit, Ref: f.Ref, Why: why})
				continue
			}
			kept = append(kept, f)
		}
		return kept, nil
	}
	var err error
	if in.Turns, err = keep(in.Turns); err != nil {
		return nil, err
	}
	if in.Again, err = keep(in.Again); err != nil {
		return nil, err
	}
	if in.Undeliverable, err = keep(in.Undeliverable); err != nil {
		return nil, err
	}
	return dropped, nil
}

// RecordFault is a delivery record in the runtime folder that does not
// agree with the mail refs: what verify reports.
type RecordFault struct {
	Path   string
	Lesson string
}

// CheckRecords checks every agent's delivery records against the mail
// refs: a cursor names only mail refs addressed to its agent, each at a
// commit that ref holds (a ref rewound since is reported by Rewound), and
// an in-flight entry names a letter a mail ref for its agent holds. A
// record that is not a regular file or does not parse is a fault too,
// never a failure of the check.
func CheckRecords(repo *gitstore.Repo) ([]RecordFault, error) {
	var faults []RecordFault
	agents := filepath.Join(repo.RuntimeDir(), AgentsFolder)
	if fi, err := os.Lstat(agents); err == nil && !fi.IsDir() {
		faults = append(faults, RecordFault{Path: agents, Lesson: fmt.Sprintf("a %s where the agents' records folder should be: m1nd never reads it; remove it (m1nd makes the folder again)", gitstore.KindOf(fi.Mode()))})
	}
	rc := &refChains{repo: repo}
	cursors, err := recordAgents(repo, cursorFile)
	if err != nil {
		return nil, err
	}
	for _, agent := range cursors {
		path, _, _ := agentFile(repo, cursorFile, agent)
		cur, err := readCursor(repo, agent)
		if err != nil {
			faults = append(faults, recordFault(path, err))
			continue
		}
		refs := make([]string, 0, len(cur.Refs))
		for ref := range cur.Refs {
			refs = append(refs, ref)
		}
		sort.Strings(refs)
		for _, ref := range refs {
			f, err := cursorFault(rc, agent, ref, cur.Refs[ref])
			if err != nil {
				return nil, err
			}
			if f != "" {
				faults = append(faults, RecordFault{Path: path, Lesson: f})
			}
		}
	}
	inflights, err := recordAgents(repo, inflightFile)
	if err != nil {
		return nil, err
	}
	for _, agent := range inflights {
		path, _, _ := agentFile(repo, inflightFile, agent)
		in := &inflight{}
		if err := readAgentJSON(repo, inflightFile, agent, "letters in flight", "remove the file", in); err != nil {
			faults = append(faults, recordFault(path, err))
			continue
		}
		dropped, err := in.verify(repo, agent)
		if err != nil {
			return nil, err
		}
		for _, d := range dropped {
			faults = append(faults, RecordFault{Path: path, Lesson: fmt.Sprintf("an entry of %s's letters in flight %s: no hook delivers it (forged, or left by a ref rewritten since); remove the file, or run m1nd mail inbox --mark-read as %s", agent, d.Why, agent)})
		}
	}
	return faults, nil
}

// cursorFault says what is wrong with one entry of agent's cursor ("" for
// nothing): it must name a mail ref addressed to agent, and a commit this
// repository holds. A commit off the ref's chain is Rewound's to report
// (the ref was deleted and made again, or the cursor forged).
func cursorFault(rc *refChains, agent, ref, at string) (string, error) {
	h, err := gitstore.ParseHash(at)
	switch {
	case !addressedTo(ref, agent):
		return fmt.Sprintf("%s's delivery cursor names %s, which is no mail ref addressed to %s: it was written by hand or by another agent; remove the file (its letters are delivered again)", agent, clipRef(ref), agent), nil
	case err != nil:
		return fmt.Sprintf("%s's delivery cursor names no commit for %s: remove the file (its letters are delivered again)", agent, ref), nil
	}
	if _, ok, err := rc.doc(ref, h); err != nil || ok {
		return "", err
	}
	if _, err := rc.repo.ReadCommit(h); err != nil {
		return fmt.Sprintf("%s's delivery cursor puts %s at %.12s, a commit this repository does not hold: it was written by hand or by another agent, and hides letters from %s; remove the file (its letters are delivered again)", agent, ref, at, agent), nil
	}
	return "", nil
}

// recordLesson is the lesson of a record that cannot be read.
func recordLesson(err error) string {
	var nr *gitstore.NotRegularError
	if errors.As(err, &nr) {
		return fmt.Sprintf("a %s, not a regular file: m1nd never reads it; remove it", nr.Kind)
	}
	return err.Error()
}

// recordFault is the fault of a record that does not read, at path, or
// at the file the error names (the release-before's copy it fell back to).
func recordFault(path string, err error) RecordFault {
	var nr *gitstore.NotRegularError
	if errors.As(err, &nr) {
		path = nr.Path
	}
	return RecordFault{Path: path, Lesson: recordLesson(err)}
}
