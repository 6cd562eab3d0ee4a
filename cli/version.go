package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// buildVersion is what this binary knows of where it came from: the
// module version (-ldflags version, else the build info's, "dev" for a
// build from a checkout) and the VCS commit go build stamped, if any.
type buildVersion struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"` // "" when the build carries no VCS info (-buildvcs=false, go test)
	Modified bool   `json:"modified,omitempty"`
}

// ReadVersion reads the running binary's build info.
func ReadVersion() buildVersion {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return versionOf(version, bi)
}

// versionOf is ReadVersion over a given -ldflags version and build info.
func versionOf(ldflags string, bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Version: ldflags}
	if bi == nil {
		return v
	}
	if (v.Version == "" || v.Version == "dev") && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	return v
}

// String is the one line --version prints, e.g. "v0.4.0 (commit
// 1a2b3c4d5e6f)", "dev (commit 1a2b3c4d5e6f, modified)" or "dev (commit
// unknown)".
func (v buildVersion) String() string {
	if v.Commit == "" {
		return v.Version + " (commit unknown)"
	}
	c := v.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if v.Modified {
		return fmt.Sprintf("%s (commit %s, modified)", v.Version, c)
	}
	return fmt.Sprintf("%s (commit %s)", v.Version, c)
}

// versionOptions is what version runs on.
type versionOptions struct {
	IO   *IOStreams
	JSON bool
}

// newVersionCmd parses version; a test's runF sees the options instead of
// running it.
func newVersionCmd(inv *Invocation, runF func(context.Context, *versionOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print m1nd's version and the commit it was built from",
		Description: `Prints the module version ("dev" for a build from a checkout) and the
VCS commit go build stamped into the binary, "modified" when the checkout
had uncommitted changes. A build without VCS info (go build
-buildvcs=false, go test) says "commit unknown". m1nd --version prints the
same line.`,
		Flags:  []cli.Flag{JSONFlag},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			return RunWith(c.Context, &versionOptions{IO: inv.io, JSON: c.Bool("json")}, runF, runVersion)
		},
	}
}

// runVersion prints the line --version prints, after "m1nd version".
func runVersion(_ context.Context, opts *versionOptions) error {
	v := ReadVersion()
	return opts.IO.Reply(opts.JSON, v, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "m1nd version %s\n", v)
		return err
	})
}
