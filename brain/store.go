package brain

import "github.com/m1nd/m1nd/gitstore"

// StoreRef is the ref whose commits are the brain store's snapshots.
const StoreRef = "refs/m1nd/store"

// StoreVersion returns the store's version: each accepted mutation is one
// commit on StoreRef, so the version is the length of its first-parent
// chain. ok is false when the brain has no store yet.
func StoreVersion(repo *gitstore.Repo) (version int64, ok bool, err error) {
	head, ok, err := repo.ReadRef(StoreRef)
	if err != nil || !ok {
		return 0, ok, err
	}
	err = repo.WalkFirstParent(head, func(gitstore.Hash, *gitstore.Commit) error {
		version++
		return nil
	})
	return version, err == nil, err
}
