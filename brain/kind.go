package brain

import (
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
)

// StoreKind is the brain store: the one ref refs/m1nd/store, whose
// commits hold a tree (store.json and blocks/), each adding exactly 1 to
// store_version. A moved store is the writer's store_version_conflict.
var StoreKind = &chain.Kind{
	Name:       "store",
	Prefix:     StoreRef,
	Single:     true,
	ReadCommit: readStoreCommit,
	Follows:    storeFollows,
	Race:       chain.RaceStale,
}

func init() { chain.Register(StoreKind) }

// readStoreCommit decodes store.json of a store commit: its version is
// what the laws look at.
func readStoreCommit(objs gitstore.Objects, c *gitstore.Commit) (any, error) {
	body, err := objs.ReadFileInTree(c.Tree, StoreFile)
	var snap *Snapshot
	if err == nil {
		snap, err = DecodeStoreDoc(body)
	}
	if err != nil {
		return nil, gates.Refusef(gates.SchemaMismatch, "schema", "a store commit holds %s of %s: %v", StoreFile, StoreSchema, err)
	}
	return snap, nil
}

// storeFollows: each store commit adds exactly 1 to store_version, the
// first being version 1.
func storeFollows(prev, next *chain.Judged, _ chain.Env) error {
	want := int64(1)
	if prev != nil {
		want = prev.Value.(*Snapshot).StoreVersion + 1
	}
	if v := next.Value.(*Snapshot).StoreVersion; v != want {
		return gates.Refusef(gates.StoreVersionConflict, "store_version", "each store commit adds exactly 1 to store_version: this one says %d, want %d", v, want)
	}
	return nil
}
