package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
)

// benchStore measures the brain store on a repository with nBlocks
// top-level directories, rounds times per side.
func benchStore(work, bin string, nBlocks, rounds int) error {
	repo, err := partsRepo(work, "store", nBlocks)
	if err != nil {
		return err
	}
	// A twin without a store: the same post, without the block guard.
	twin, err := partsRepo(work, "nostore", nBlocks)
	if err != nil {
		return err
	}
	m1nd := func(dir string, args ...string) ([]byte, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			return out, fmt.Errorf("m1nd %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return out, nil
	}
	if _, err := m1nd(repo, "skeleton", "scan"); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "store: %d blocks, %d rounds per side …\n", nBlocks, rounds)
	ops := filepath.Join(work, "rename.json")
	blockFile := filepath.Join(work, "block.json")
	storeFile := filepath.Join(work, "store.json")
	var m1ndWrite, gitWrite, m1ndRead, gitRead, guarded, unguarded []time.Duration
	for r := 0; r < rounds; r++ {
		version := 2*r + 1 // each round writes twice: m1nd makes version+1, git version+2
		body := fmt.Sprintf(`[{"op":"rename","block_id":"sb_store_part000","name":"part zero %d"}]`, r)
		if err := os.WriteFile(ops, []byte(body), 0o644); err != nil {
			return err
		}
		start := time.Now()
		if _, err := m1nd(repo, "skeleton", "edit", "--expected-store-version", fmt.Sprint(version), ops); err != nil {
			return err
		}
		m1ndWrite = append(m1ndWrite, time.Since(start))

		// The same kind of write by hand: a changed block file and
		// store.json (prepared outside the timing, as m1nd computes them
		// inside), both trees, the commit and the ref CAS.
		if err := prepareSnapshot(repo, blockFile, storeFile, version+2); err != nil {
			return err
		}
		start = time.Now()
		if err := scriptStoreWrite(repo, blockFile, storeFile, version+2); err != nil {
			return err
		}
		gitWrite = append(gitWrite, time.Since(start))

		start = time.Now()
		if _, err := m1nd(repo, "blocks", "--json"); err != nil {
			return err
		}
		m1ndRead = append(m1ndRead, time.Since(start))
		start = time.Now()
		if err := gitStoreRead(repo); err != nil {
			return err
		}
		gitRead = append(gitRead, time.Since(start))

		block := fmt.Sprintf("sb_store_part%03d", r%nBlocks)
		start = time.Now()
		if _, err := m1nd(repo, "mission", "new", "--block", block); err != nil {
			return err
		}
		guarded = append(guarded, time.Since(start))
		start = time.Now()
		if _, err := m1nd(twin, "mission", "new", "--block", block); err != nil {
			return err
		}
		unguarded = append(unguarded, time.Since(start))
	}
	fmt.Printf("\n(c) the brain store, %d blocks, %d rounds per side\n", nBlocks, rounds)
	printRow("m1nd skeleton edit (one rename)", m1ndWrite)
	printRow("the same snapshot write as a git plumbing script", gitWrite)
	fmt.Printf("    ratio m1nd/git (median): %.2fx\n", float64(median(m1ndWrite))/float64(median(gitWrite)))
	printRow("m1nd blocks --json (whole store + colours)", m1ndRead)
	printRow("git ls-tree -r | git cat-file --batch", gitRead)
	fmt.Printf("    ratio m1nd/git (median): %.2fx\n", float64(median(m1ndRead))/float64(median(gitRead)))
	printRow("m1nd mission new, brain with a store", guarded)
	printRow("m1nd mission new, brain without one", unguarded)
	fmt.Printf("    the block guard's share (median): %.2fx\n", float64(median(guarded))/float64(median(unguarded)))
	addInfo("store write vs script", median(m1ndWrite), median(gitWrite))
	addInfo("store read vs git", median(m1ndRead), median(gitRead))
	return nil
}

// partsRepo makes a repository with n top-level directories of five files.
func partsRepo(work, name string, n int) (string, error) {
	repo, err := newRepo(work, name)
	if err != nil {
		return "", err
	}
	for i := 0; i < n; i++ {
		dir := filepath.Join(repo, fmt.Sprintf("part%03d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		for f := 0; f < 5; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), []byte("package p\n"), 0o644); err != nil {
				return "", err
			}
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "parts"}} {
		if _, err := gitOut(repo, nil, args...); err != nil {
			return "", err
		}
	}
	return repo, nil
}

// prepareSnapshot writes the block and store documents the plumbing
// script will store as version v.
func prepareSnapshot(repo, blockFile, storeFile string, v int) error {
	block, err := gitOut(repo, nil, "cat-file", "blob", chain.RefRoot+"store:blocks/sb_store_part001.json")
	if err != nil {
		return err
	}
	block = strings.Replace(block, `"name": "part001"`, fmt.Sprintf(`"name": "part one %d"`, v), 1)
	doc, err := gitOut(repo, nil, "cat-file", "blob", chain.RefRoot+"store:store.json")
	if err != nil {
		return err
	}
	doc = strings.Replace(doc, fmt.Sprintf(`"store_version": %d`, v-1), fmt.Sprintf(`"store_version": %d`, v), 1)
	if err := os.WriteFile(blockFile, []byte(block+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(storeFile, []byte(doc+"\n"), 0o644)
}

// storeWriteScript writes one store snapshot with git's plumbing: the
// changed block blob, the blocks tree, store.json, the root tree, the
// commit and the ref compare-and-swap.
const storeWriteScript = `set -e
old=$(git rev-parse refs/m1nd/store)
blob=$(git hash-object -w "$1")
blocks=$(git ls-tree "$old:blocks" | sed "s/^100644 blob [0-9a-f]*\tsb_store_part001.json$/100644 blob $blob\tsb_store_part001.json/" | git mktree)
doc=$(git hash-object -w "$2")
root=$(printf '040000 tree %s\tblocks\n100644 blob %s\tstore.json\n' "$blocks" "$doc" | git mktree)
commit=$(git commit-tree "$root" -p "$old" -m "store v$3: candidate_edit 1 op (owner)")
git update-ref refs/m1nd/store "$commit" "$old"`

func scriptStoreWrite(repo, blockFile, storeFile string, v int) error {
	cmd := exec.Command("bash", "-c", storeWriteScript, "store-write", blockFile, storeFile, fmt.Sprint(v))
	cmd.Dir = repo
	cmd.Env = gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("store write script: %v: %s", err, out)
	}
	return nil
}

// gitStoreRead reads every document of the current store with git.
func gitStoreRead(repo string) error {
	cmd := exec.Command("bash", "-c", `git ls-tree -r --format='%(objectname)' refs/m1nd/store | git cat-file --batch >/dev/null`)
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git store read: %v: %s", err, out)
	}
	return nil
}
