package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Modes as git sets them (git's calc_shared_perm and adjust_shared_perm):
// a file is created with its base mode less the umask, then, in a shared
// repository (core.sharedRepository), the sharing bits are added, or, for
// an octal setting, the mode is replaced by it. Objects another user of a
// shared repository cannot read are corrupt to their git.

// sharedPerm is core.sharedRepository as git reads it: 0 for umask (the
// default), a positive tweak ORed in (0660 group, 0664 everybody), or a
// negative exact mode (an octal value such as 0640).
func sharedPerm(value string, set bool) int {
	if !set {
		return 0
	}
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "", "umask", "false", "no", "off", "0":
		return 0
	case "group", "true", "yes", "on", "1":
		return 0o660
	case "all", "world", "everybody", "2":
		return 0o664
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(value), 8, 32); err == nil && n > 0 && n&0o600 == 0o600 {
		return -int(n & 0o666)
	}
	return 0
}

// sharedMode is git's calc_shared_perm: the mode a file or folder of this
// repository gets once created with mode (the umask already applied).
func sharedMode(shared int, mode fs.FileMode) fs.FileMode {
	if shared == 0 {
		return mode
	}
	tweak := shared
	if shared < 0 {
		tweak = -shared
	}
	perm := int(mode.Perm())
	if perm&0o200 == 0 {
		tweak &^= 0o222
	}
	if perm&0o100 != 0 {
		tweak |= (tweak & 0o444) >> 2
	}
	if shared < 0 {
		perm = tweak
	} else {
		perm |= tweak
	}
	out := mode&^fs.ModePerm | fs.FileMode(perm)
	if mode.IsDir() {
		out |= fs.ModeSetgid // git keeps a shared repository's group on new folders
	}
	return out
}

// shared reads the repository's core.sharedRepository.
func (r *Repo) shared() int {
	return sharedPerm(r.ConfigValue("core", "sharedRepository"))
}

// adjustShared gives path the mode git would: the shared bits of a shared
// repository added to what the umask left. In a repository that is not
// shared, nothing changes.
func (r *Repo) adjustShared(path string) error {
	shared := r.shared()
	if shared == 0 {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	want := sharedMode(shared, fi.Mode())
	if want == fi.Mode() {
		return nil
	}
	return os.Chmod(path, want&(fs.ModePerm|fs.ModeSetgid))
}

// mkdirShared makes dir and its missing parents as git would: 0777 less
// the umask, each with the shared bits of a shared repository.
func (r *Repo) mkdirShared(dir string) error {
	var err error
	// git prunes a ref folder it emptied (pack-refs, gc, a deletion),
	// possibly a parent just made here: make the path again, as git does.
	for range 5 {
		if err = r.mkdirSharedOnce(dir); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

func (r *Repo) mkdirSharedOnce(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := r.mkdirSharedOnce(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o777); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // made meanwhile by another writer
		}
		return err
	}
	return r.adjustShared(dir)
}
