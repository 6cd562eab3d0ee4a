package chain

import (
	"bytes"
	"path/filepath"
	"strconv"
	"time"

	"github.com/m1nd/m1nd/gitstore"
)

// missionListHeader begins the mission listing file; the folder stamp the
// listing was read under follows it, quoted, on the same line.
const missionListHeader = "m1nd-missions-v1 "

// MissionListPath is where the listing of mission refs of the repository
// whose runtime dir is given is kept (a benchmark removes it to measure
// listing without it).
func MissionListPath(runtimeDir string) string {
	return filepath.Join(runtimeDir, "cache", "missions-v1")
}

// listMissions is every mission ref, ListRefs(MissionRefPrefix) with the
// stray names left out, through a listing kept in the runtime folder. The
// listing is used while the missions folder and packed-refs are as they
// were when it was read (gitstore.RefsFolderStamp), and it was kept only
// if both had been still for longer than a file-system clock tick before
// the read began. Every ref write, by git or by m1nd, renames a file into
// or out of that folder or replaces packed-refs, so an equal stamp means
// the same refs, and reading 100,000 loose refs is 300,000 system calls.
// Like the tray's heads reply, it cannot see a ref file rewritten in place
// by hand, which no git command does. A listing that cannot be read is
// ignored; one that cannot be written is skipped.
func listMissions(repo *gitstore.Repo) ([]gitstore.Ref, error) {
	path := MissionListPath(repo.RuntimeDir())
	before, stampErr := repo.RefsFolderStamp(MissionRefPrefix)
	if stampErr == nil {
		if refs, ok := readMissionList(path, before.Key); ok {
			return refs, nil
		}
	}
	start := time.Now()
	all, err := repo.ListRefs(MissionRefPrefix)
	if err != nil {
		return nil, err
	}
	refs := all[:0:0]
	for _, r := range all {
		if ValidMissionID(r.Name[len(MissionRefPrefix):]) {
			refs = append(refs, r)
		}
	}
	after, err := repo.RefsFolderStamp(MissionRefPrefix)
	if stampErr == nil && err == nil && after.Key == before.Key && before.SettledBefore(start) {
		writeMissionList(path, before.Key, refs)
	}
	return refs, nil
}

// readMissionList reads the listing kept under the stamp key; ok is false
// when there is none, it was kept under another stamp, or it is damaged.
func readMissionList(path, key string) ([]gitstore.Ref, bool) {
	data, err := gitstore.ReadRuntime(path, -1)
	if err != nil {
		return nil, false
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	quoted, isList := bytes.CutPrefix(first, []byte(missionListHeader))
	if kept, err := strconv.Unquote(string(quoted)); !isList || err != nil || kept != key {
		return nil, false
	}
	refs := make([]gitstore.Ref, 0, bytes.Count(rest, []byte("\n")))
	good := true
	ok := parseCacheLines(rest, func(h gitstore.Hash, id []byte) {
		if !ValidMissionID(string(id)) {
			good = false
		}
		refs = append(refs, gitstore.Ref{Name: MissionRefPrefix + string(id), Hash: h})
	})
	return refs, ok && good
}

// writeMissionList keeps refs, read under the stamp key, replacing the
// file atomically.
func writeMissionList(path, key string, refs []gitstore.Ref) {
	var buf bytes.Buffer
	buf.Grow(len(missionListHeader) + len(key) + 8 + len(refs)*58)
	buf.WriteString(missionListHeader + strconv.Quote(key) + "\n")
	for _, r := range refs {
		appendCacheLine(&buf, r.Hash, []byte(r.Name[len(MissionRefPrefix):]))
	}
	_ = gitstore.WriteFileAtomic(path, buf.Bytes(), 0o600) // a cache that cannot be written is skipped
}
