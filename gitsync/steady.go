package gitsync

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/m1nd/m1nd/gitstore"
)

// lastSeen is what a clean sync with a remote leaves in the runtime
// folder: a digest of the refs the remote holds after it, and the stamp
// of this clone's refs/m1nd/ folders taken before it read them (unchanged
// to its end, so nothing else wrote meanwhile). A sync that finds both
// as they were has nothing to take and nothing to push, and skips reading
// every ref: a steady sync of 1,000 missions read 2,000 ref files to learn
// that.
type lastSeen struct {
	Remote string `json:"remote_digest"`
	Local  string `json:"local_stamp"`
}

func seenPath(runtimeDir, remote string) string {
	return filepath.Join(runtimeDir, "sync", remote+".seen.json")
}

// digestRefs is a digest of refs by name and value (names relative to
// refs/m1nd/, as lsRemote and refMap give them).
func digestRefs(refs map[string]gitstore.Hash) string {
	names := make([]string, 0, len(refs))
	for name := range refs {
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		h.Write([]byte(name))
		h.Write([]byte{' '})
		h.Write([]byte(refs[name].String()))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// lastSeenOf reads the record of the last clean sync with remote; false
// when there is none, or it does not read (the sync then reads every ref).
func lastSeenOf(runtimeDir, remote string) (lastSeen, bool) {
	data, err := gitstore.ReadRuntime(seenPath(runtimeDir, remote), 4<<10)
	if err != nil {
		return lastSeen{}, false
	}
	var seen lastSeen
	if json.Unmarshal(data, &seen) != nil {
		return lastSeen{}, false
	}
	return seen, true
}

// matches reports whether the remote holds advertised and this clone's
// refs are as local stamps them, as the last clean sync left both.
func (seen lastSeen) matches(advertised map[string]gitstore.Hash, local gitstore.FolderStamp) bool {
	return seen.Local == local.Key && seen.Remote == digestRefs(advertised)
}

// recordSeen records a clean sync with remote, which left it holding
// remoteAfter, when no ref here was written between before (the stamp
// taken before the sync read this clone's refs, at began) and now, and
// the refs had settled by then; otherwise it forgets the last record, and
// the next sync reads every ref.
func recordSeen(repo *gitstore.Repo, remote string, remoteAfter map[string]gitstore.Hash, before gitstore.FolderStamp, began time.Time) error {
	path := seenPath(repo.RuntimeDir(), remote)
	after, err := repo.RefsStamp(Prefix)
	if err != nil || after.Key != before.Key || !before.SettledBefore(began) {
		return forgetSeen(repo.RuntimeDir(), remote)
	}
	data, err := json.Marshal(lastSeen{Remote: digestRefs(remoteAfter), Local: before.Key})
	if err != nil {
		return err
	}
	return gitstore.WriteFileAtomic(path, data, 0o600)
}

// forgetSeen drops the record of the last clean sync with remote.
func forgetSeen(runtimeDir, remote string) error {
	if err := os.Remove(seenPath(runtimeDir, remote)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
