package brain

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
)

// DisplayName is the brain's name as letters carry it in brain_ref: `git
// config m1nd.brain` when set, else the basename of the MAIN worktree's root
// (also when called from a linked worktree), case-sensitive. A bare
// repository is named after its folder without a ".git" suffix.
func DisplayName(repo *gitstore.Repo) (string, error) {
	if name, ok := repo.ConfigValue("m1nd", "brain"); ok {
		name = strings.TrimSpace(name)
		if err := checkName(name); err != nil {
			return "", fmt.Errorf("git config m1nd.brain: %w", err)
		}
		return name, nil
	}
	root := repo.MainWorkTree()
	name := filepath.Base(root)
	if root == "" {
		name = strings.TrimSuffix(filepath.Base(repo.CommonDir()), ".git")
	}
	if err := checkName(name); err != nil {
		return "", fmt.Errorf("brain name from %s: %w (set one with git config m1nd.brain NAME)", root, err)
	}
	return name, nil
}

func checkName(name string) error {
	if problem := gates.DisplayNameProblem(name); problem != "" {
		return fmt.Errorf("%q cannot name a brain: %s", name, problem)
	}
	return nil
}
