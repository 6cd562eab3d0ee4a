package brain

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// DisplayName is the brain's name as letters carry it in brain_ref.
//
// A registered brain (refs/m1nd/brain: m1nd init registers one, or adopts
// the remote's) is named by its registration. Otherwise:
//
// A brain with no missions yet is named by `git config m1nd.brain` when set,
// else by the basename of the MAIN worktree's root (also when called from a
// linked worktree), case-sensitive; a bare repository after its folder
// without a ".git" suffix.
//
// Once missions exist the name is fixed: every letter carries it. It is
// read from the missions (and remembered in the runtime folder), so a
// moved or renamed folder changes nothing, and a `git config m1nd.brain`
// naming another brain is refused brain_mismatch with what to do — never a
// rename that half works (letters refused, a serve showing the old name).
func DisplayName(repo *gitstore.Repo) (string, error) {
	configured, fromConfig, err := configuredName(repo)
	if err != nil {
		return "", err
	}
	// A registered brain (refs/m1nd/brain, carried by sync) is named by its
	// registration in every clone, whatever its folder is called.
	if name, ok, err := registeredName(repo); err != nil {
		return "", fmt.Errorf("the brain's registration: %w", err)
	} else if ok {
		if fromConfig && configured != name {
			return "", rules.Refusef(rules.BrainMismatch, "brain",
				"this brain is registered as %q (refs/m1nd/brain); git config m1nd.brain says %q: set it back (git config m1nd.brain %s) or unset it", name, configured, name)
		}
		return name, nil
	}
	fixed, ok, err := FixedName(repo)
	if err != nil || !ok {
		return configured, err
	}
	if fromConfig && configured != fixed {
		return "", rules.Refusef(rules.BrainMismatch, "brain",
			"this brain is %q: its letters carry that name, which is fixed once missions exist; git config m1nd.brain says %q: set it back (git config m1nd.brain %s) or unset it", fixed, configured, fixed)
	}
	return fixed, nil
}

// configuredName is the name a brain without missions takes, and whether
// it came from git config.
func configuredName(repo *gitstore.Repo) (string, bool, error) {
	if name, ok := repo.ConfigValue("m1nd", "brain"); ok {
		name = strings.TrimSpace(name)
		if err := checkName(name); err != nil {
			return "", true, fmt.Errorf("git config m1nd.brain: %w", err)
		}
		return name, true, nil
	}
	root := repo.MainWorkTree()
	name := filepath.Base(root)
	if root == "" {
		name = strings.TrimSuffix(filepath.Base(repo.CommonDir()), ".git")
	}
	if err := checkName(name); err != nil {
		return "", false, fmt.Errorf("brain name from %s: %w (set one with git config m1nd.brain NAME)", root, err)
	}
	return name, false, nil
}

// nameFile remembers, in the runtime folder, the name a brain's missions
// carry, so it is read from one small file and not from a mission.
const nameFile = "brain-name"

// FixedName is the name a brain's letters carry, once it has missions; ok
// is false while it has none.
func FixedName(repo *gitstore.Repo) (name string, ok bool, err error) {
	path := filepath.Join(repo.RuntimeDir(), nameFile)
	if b, err := gitstore.ReadRegular(path, 256); err == nil {
		if name := strings.TrimSpace(string(b)); checkName(name) == nil {
			return name, true, nil
		}
	}
	refs, err := repo.ListRefs(chain.MissionRefPrefix)
	if err != nil {
		return "", false, err
	}
	for _, r := range refs {
		doc, found, err := (chain.Chain{Repo: repo, Kind: chain.MissionKind, Ref: r.Name}).Head()
		if err != nil || !found {
			continue
		}
		var l struct {
			BrainRef string `json:"brain_ref"`
		}
		if json.Unmarshal(doc.Body, &l) != nil || checkName(l.BrainRef) != nil {
			continue
		}
		// Remembered for the next call; a runtime folder that cannot be
		// written only costs this read again.
		gitstore.WriteFileAtomic(path, []byte(l.BrainRef+"\n"), 0o600)
		return l.BrainRef, true, nil
	}
	return "", false, nil
}

// registeredFile remembers, in the runtime folder, the registration's
// commit and name: every m1nd command asks for the brain's name, and
// reading the registration's blob opens the object store (about a
// millisecond); the ref alone is one small file.
const registeredFile = "brain-registered"

// registeredName is the registered name, from registeredFile while it
// names the registration's head, else from the registration itself.
func registeredName(repo *gitstore.Repo) (string, bool, error) {
	head, ok, err := repo.ReadRef(RegistrationRef)
	if err != nil || !ok {
		return "", false, err
	}
	path := filepath.Join(repo.RuntimeDir(), registeredFile)
	if b, err := gitstore.ReadRuntime(path, 512); err == nil {
		if h, name, found := strings.Cut(strings.TrimSpace(string(b)), " "); found && h == head.String() && checkName(name) == nil {
			return name, true, nil
		}
	}
	reg, ok, err := Registered(repo)
	if err != nil || !ok {
		return "", ok, err
	}
	// A runtime folder that cannot be written only costs this read again.
	gitstore.WriteFileAtomic(path, []byte(head.String()+" "+reg.Name+"\n"), 0o600)
	return reg.Name, true, nil
}

func checkName(name string) error {
	if problem := rules.DisplayNameProblem(name); problem != "" {
		return fmt.Errorf("%q cannot name a brain: %s", name, problem)
	}
	return nil
}
