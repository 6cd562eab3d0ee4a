package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestEveryVerbHasAnExample walks the command tree: every verb's --help
// shows at least one example line ("   m1nd …") that runs that verb, and
// every verb listed in examples exists.
func TestEveryVerbHasAnExample(t *testing.T) {
	inv := &Invocation{io: &IOStreams{}}
	app := newApp(inv, allCommands(inv, wholeCLI(inv)))
	exampleLine := regexp.MustCompile(`(?m)^   m1nd (.*)$`)
	seen := map[string]bool{}
	var walk func(parent string, cmds []*cli.Command)
	walk = func(parent string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := strings.TrimSpace(parent + " " + c.Name)
			if len(c.Subcommands) > 0 {
				walk(path, c.Subcommands)
				continue
			}
			seen[path] = true
			runsIt := false
			for _, m := range exampleLine.FindAllStringSubmatch(c.Description, -1) {
				words := strings.Fields(m[1])
				if len(words) >= 2 && words[0] == "-C" {
					words = words[2:]
				}
				if strings.HasPrefix(strings.Join(words, " ")+" ", path+" ") {
					runsIt = true
				}
			}
			if !runsIt {
				t.Errorf("m1nd %s --help shows no example (a line \"   m1nd %s …\"): add one to examples", path, path)
			}
		}
	}
	walk("", app.Commands)
	for _, e := range examples {
		path := e.path
		if !seen[path] {
			t.Errorf("examples lists %q, which is no verb", path)
		}
	}
}
