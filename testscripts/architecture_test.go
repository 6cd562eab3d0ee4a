package testscripts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// layoutRow is one row of docs/architecture.md's package table.
type layoutRow struct{ floor, pkg string }

// readLayout reads the package table of docs/architecture.md, top to
// bottom: the rows whose second cell is a package in backquotes.
func readLayout(t *testing.T) []layoutRow {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| ([a-z ]+) \\| `([a-z0-9/-]+)` \\| .+ \\|$")
	var rows []layoutRow
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			rows = append(rows, layoutRow{floor: m[1], pkg: m[2]})
		}
	}
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md lists no package")
	}
	return rows
}

// listedPackage is what go list says of one package of the module.
type listedPackage struct {
	ImportPath string
	Imports    []string
}

// TestArchitecture holds the import graph to docs/architecture.md: every
// package of the module is listed once, every row is a package, and a
// package's own files import only packages listed below it.
func TestArchitecture(t *testing.T) {
	rows := readLayout(t)
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/m1nd/m1nd/"
	pkgs := map[string][]string{} // package → the module's packages it imports
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		var ours []string
		for _, imp := range p.Imports {
			if rest, ok := strings.CutPrefix(imp, module); ok {
				ours = append(ours, rest)
			}
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = ours
	}
	at := map[string]int{}
	for i, r := range rows {
		if _, dup := at[r.pkg]; dup {
			t.Errorf("docs/architecture.md lists %s twice", r.pkg)
		}
		at[r.pkg] = i
		if _, ok := pkgs[r.pkg]; !ok {
			t.Errorf("docs/architecture.md lists %s, which is no package of the module", r.pkg)
		}
	}
	var names []string
	for name := range pkgs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		i, ok := at[name]
		if !ok {
			t.Errorf("package %s is not in docs/architecture.md: give it a row, its floor and its job", name)
			continue
		}
		for _, imp := range pkgs[name] {
			if j, ok := at[imp]; ok && j <= i {
				t.Errorf("%s (%s) imports %s (%s), which the layout lists above it: move the import or the row", name, rows[i].floor, imp, rows[j].floor)
			}
		}
	}
}
