package brain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/m1nd/m1nd/rules"
)

// memberPatternProblem says why p cannot be a membership entry, or "": a
// clean repo-relative path, a directory ending in "/", or a glob whose "**"
// segments stand alone.
func memberPatternProblem(p string) string {
	if problem := rules.RepoRelativeProblem(p); problem != "" {
		return problem
	}
	if strings.Contains(p, `\`) {
		return "uses \\ (member paths use /)"
	}
	trimmed := strings.TrimSuffix(p, "/")
	if trimmed == "" || path.Clean(trimmed) != trimmed || trimmed == "." {
		return "not a clean path"
	}
	stars := 0
	for _, seg := range strings.Split(trimmed, "/") {
		if seg == "**" {
			// Each ** multiplies the matcher's work; three is plenty.
			if stars++; stars > 3 {
				return `more than three "**" segments`
			}
			continue
		}
		if strings.Contains(seg, "**") {
			return `"**" must be a whole path segment`
		}
		if _, err := path.Match(seg, ""); err != nil {
			return "a malformed glob"
		}
	}
	return ""
}

// matchMember reports whether file (a repo-relative path at HEAD) is
// covered by the membership pattern p: "dir/" covers everything beneath
// dir, "**" matches any number of segments, other segments match as
// path.Match globs.
func matchMember(p, file string) bool {
	if dir, ok := strings.CutSuffix(p, "/"); ok {
		return matchSegments(strings.Split(dir, "/"), strings.Split(file, "/"), true)
	}
	return matchSegments(strings.Split(p, "/"), strings.Split(file, "/"), false)
}

// matchSegments matches pattern segments against path segments; prefix
// (a directory entry) needs the path to go on below the pattern.
func matchSegments(pat, segs []string, prefix bool) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegments(pat[1:], segs[i:], prefix) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	if prefix {
		return len(segs) > 0
	}
	return len(segs) == 0
}

// resolve returns the files at HEAD the block covers: matched by any
// primary or shared entry and by no excluded one, sorted.
func (b *Block) resolve(files []string) []string {
	var out []string
	for _, f := range files {
		if b.covers(f) {
			out = append(out, f)
		}
	}
	return out
}

// Covers reports whether file (a repository path) is one of the block's
// members.
func (b *Block) Covers(file string) bool { return b.covers(file) }

func (b *Block) covers(file string) bool {
	in := false
	for _, m := range b.Membership {
		if !matchMember(m.Path, file) {
			continue
		}
		if m.Role == RoleExcluded {
			return false
		}
		in = true
	}
	return in
}

// shares reports whether the block holds file through a shared entry.
func (b *Block) shares(file string) bool {
	for _, m := range b.Membership {
		if m.Role == RoleShared && matchMember(m.Path, file) {
			return true
		}
	}
	return false
}

// entry returns the index of the membership entry spelled exactly p, or -1.
func (b *Block) entry(p string) int {
	for i, m := range b.Membership {
		if m.Path == p {
			return i
		}
	}
	return -1
}

// fingerprint is sha256 over the block's resolved paths, sorted, one per
// line: it changes exactly when the set of files the block covers does.
func fingerprint(resolved []string) string {
	h := sha256.New()
	for _, f := range resolved {
		h.Write([]byte(f))
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Ownership is who covers which file at HEAD.
type Ownership struct {
	Owners    map[string][]string // file → block ids covering it
	Unmapped  []string            // files no block covers
	Contested []string            // files covered by several blocks that do not all share them
}

// ownership maps every file at HEAD to the blocks that cover it.
func ownership(blocks []*Block, files []string) Ownership {
	o := Ownership{Owners: map[string][]string{}}
	for _, f := range files {
		var owners []string
		allShare := true
		for _, b := range blocks {
			if b.covers(f) {
				owners = append(owners, b.BlockID)
				allShare = allShare && b.shares(f)
			}
		}
		switch {
		case len(owners) == 0:
			o.Unmapped = append(o.Unmapped, f)
		case len(owners) > 1 && !allShare:
			o.Contested = append(o.Contested, f)
		}
		o.Owners[f] = owners
	}
	return o
}

// topLevel groups files by their first path segment; files at the root
// are grouped under "".
func topLevel(files []string) (dirs map[string][]string, names []string) {
	dirs = map[string][]string{}
	for _, f := range files {
		dir, _, nested := strings.Cut(f, "/")
		if !nested {
			dir = ""
		}
		if _, seen := dirs[dir]; !seen {
			names = append(names, dir)
		}
		dirs[dir] = append(dirs[dir], f)
	}
	sort.Strings(names)
	return dirs, names
}

// Slug lowercases name and turns every run of other characters into "_",
// the way block and skeleton ids spell a repository or a directory.
func Slug(name string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(name) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	s := strings.TrimSuffix(b.String(), "_")
	if len(s) > 40 {
		s = strings.TrimSuffix(s[:40], "_")
	}
	return s
}

// repoSlug spells the brain in ids; a name with no letters or digits is "repo".
func repoSlug(brain string) string {
	if s := Slug(brain); s != "" {
		return s
	}
	return "repo"
}

// freeID returns base, or base_2, base_3, … — the first id not taken.
func freeID(base string, taken func(string) bool) string {
	id := base
	for n := 2; taken(id); n++ {
		id = fmt.Sprintf("%s_%d", base, n)
	}
	return id
}
